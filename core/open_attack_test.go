//go:build !js

package core_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/internal/rawsql"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// foreignDB writes a SQLite file of another application (rollback
// journal, one table), as a user's own database would be.
func foreignDB(t *testing.T, path string) {
	t.Helper()
	db, err := rawsql.Open("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)", "INSERT INTO invoices (total) VALUES (12.5)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// dirNames lists a directory, so a test sees every file an open left.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A file that Open refuses stays byte for byte what it was, whatever the
// options, and gains no -wal/-journal beside it.
func TestAttack_Open_RefusedFileUnchanged(t *testing.T) {
	ctx := context.Background()
	random := make([]byte, 8192)
	rand.Read(random)
	cases := map[string]struct {
		make func(t *testing.T, p string)
		want error
	}{
		"foreign": {foreignDB, core.ErrNotAgentFS},
		"empty":   {func(t *testing.T, p string) { os.WriteFile(p, nil, 0o644) }, core.ErrNotAgentFS},
		"random":  {func(t *testing.T, p string) { os.WriteFile(p, random, 0o644) }, store.ErrNotADatabase},
		"newer": {func(t *testing.T, p string) {
			a, err := core.Open(ctx, p, core.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			a.DB.Write(ctx, func(c *store.Conn) error {
				_, err := c.Exec("UPDATE fs_config SET value = '0.9' WHERE key = 'schema_version'")
				return err
			})
			a.Close()
		}, schema.ErrTooNew},
	}
	for name, tc := range cases {
		for _, opts := range []core.Options{{}, {ReadOnly: true}, {Create: true}} {
			if name == "empty" && opts.Create {
				continue // an empty file is filled by an open with Create
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "x.db")
			tc.make(t, p)
			before, names := fileHash(t, p), dirNames(t, dir)
			_, err := core.Open(ctx, p, opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s %+v: Open = %v, want %v", name, opts, err, tc.want)
			}
			if fileHash(t, p) != before {
				t.Errorf("%s %+v: the refused file changed", name, opts)
			}
			// A database in WAL mode gets the -shm (and an empty -wal) that
			// any SQLite reader creates; nothing else appears.
			for _, n := range dirNames(t, dir) {
				if st, _ := os.Stat(filepath.Join(dir, n)); !strings.Contains(strings.Join(names, ","), n) &&
					!(name == "newer" && (n == "x.db-shm" || n == "x.db-wal" && st.Size() == 0)) {
					t.Errorf("%s %+v: %s appeared beside the refused file", name, opts, n)
				}
			}
		}
	}
}

// An invalid option is refused before any file exists; a retry with a
// valid one succeeds.
func TestAttack_Open_InvalidChunkSizeCreatesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "agents", "x.db")
	for _, cs := range []int{3, -1, 1 << 30} {
		_, err := core.Open(ctx, p, core.Options{Create: true, ChunkSize: cs})
		if !errors.Is(err, core.ErrInvalidOption) || !strings.Contains(err.Error(), "512") {
			t.Fatalf("chunk size %d: %v, want ErrInvalidOption stating the range", cs, err)
		}
	}
	if _, err := core.Open(ctx, p, core.Options{Create: true, PageSize: 1000}); !errors.Is(err, core.ErrInvalidOption) {
		t.Fatalf("page size 1000: %v", err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("refused creations left %v", got)
	}
	a, err := core.Open(ctx, p, core.Options{Create: true, ChunkSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Info.ChunkSize != 1024 {
		t.Fatalf("chunk size %d", a.Info.ChunkSize)
	}
}

// A creation that fails halfway (here: the overlay's base is missing,
// found only while the schema is written) leaves no file, not even a
// temporary one, and a retry creates the database.
func TestAttack_Open_FailedCreateLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "x.db")
	_, err := core.Open(ctx, p, core.Options{Create: true, Base: filepath.Join(dir, "missing")})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open with a missing base = %v, want ENOENT", err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("the failed creation left %v", got)
	}
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := dirNames(t, dir); strings.Join(got, ",") != "x.db" {
		t.Fatalf("after creation: %v, want x.db alone", got)
	}
}

// Two opens with Create racing on one missing path both succeed, on the
// same database: the loser of the creation opens the winner's file.
func TestAttack_Open_ConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "x.db")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			a, err := core.Open(ctx, p, core.Options{Create: true})
			if err == nil {
				err = a.FS.WriteFile(ctx, "/f", []byte("x"), vfs.WriteOptions{})
				a.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A truncated database is reported as damaged, with what to do, not as
// a failing pragma.
func TestAttack_Open_TruncatedIsDamaged(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "x.db")
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		a.FS.WriteFile(ctx, "/f"+string(rune('a'+i%26))+strings.Repeat("x", i), make([]byte, 5000), vfs.WriteOptions{})
	}
	a.Close()
	st, _ := os.Stat(p)
	if err := os.Truncate(p, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []core.Options{{}, {ReadOnly: true}} {
		a, err := core.Open(ctx, p, opts)
		if err == nil {
			// SQLite may only notice the damage when it reads a page.
			_, err = a.FS.Readdir(ctx, "/")
			if err == nil {
				_, err = a.FS.ReadFile(ctx, "/fz"+strings.Repeat("x", 25))
			}
			a.Close()
		}
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "database is damaged") || strings.Contains(err.Error(), "PRAGMA") {
			t.Fatalf("%+v: %v, want ErrCorrupt without the pragma", opts, err)
		}
	}
}

// The messages of refused files say what the file is, once.
func TestAttack_Open_RefusalMessages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rnd := filepath.Join(dir, "r.db")
	b := make([]byte, 4096)
	rand.Read(b)
	os.WriteFile(rnd, b, 0o644)
	empty := filepath.Join(dir, "e.db")
	os.WriteFile(empty, nil, 0o644)
	_, err := core.Open(ctx, rnd, core.Options{})
	if err == nil || strings.Count(err.Error(), "not an AgentFS database") != 1 || strings.Contains(err.Error(), "PRAGMA") {
		t.Fatalf("random bytes: %v", err)
	}
	_, err = core.Open(ctx, empty, core.Options{})
	if err == nil || strings.Contains(err.Error(), "Create") || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty file: %v", err)
	}
}

// Ids map to file names: the rule refuses everything that is not one
// plain name, and says why.
func TestAttack_ID_Rule(t *testing.T) {
	for _, id := range []string{".", "..", "a.b", "../x", "/etc/passwd", "a/b", "a\x00b", "", " x", "a\nb", ".hidden", strings.Repeat("a", core.MaxIDLength+1)} {
		if core.ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
		err := core.CheckID(id)
		if !errors.Is(err, core.ErrInvalidID) {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
	long := core.CheckID(strings.Repeat("a", 300))
	if !errors.Is(long, syscall.ENAMETOOLONG) || !strings.Contains(long.Error(), "128") {
		t.Errorf("300-byte id: %v, want ENAMETOOLONG stating the limit", long)
	}
	if err := core.CheckID("."); strings.Contains(err.Error(), "digits, '.'") {
		t.Errorf("the message allows what the rule refuses: %v", err)
	}
	for _, id := range []string{"a", "my-agent_2", strings.Repeat("z", core.MaxIDLength)} {
		if err := core.CheckID(id); err != nil || !core.ValidID(id) {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
	// The longest id still leaves room for every derived name.
	p := filepath.Join(t.TempDir(), strings.Repeat("z", core.MaxIDLength)+".db")
	a, err := core.Open(context.Background(), p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.CreateSnapshot(context.Background(), strings.Repeat("s", 100)); err != nil {
		t.Fatal(err)
	}
}

// roMount bind-mounts dir read-only on a new directory, or skips the
// test where mounting is not permitted.
func roMount(t *testing.T, dir string) string {
	t.Helper()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "--bind", dir, mnt).CombinedOutput(); err != nil {
		t.Skipf("bind mount not permitted here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("read-only remount not permitted here: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(mnt, "probe"), nil, 0o644); err == nil {
		t.Skip("the read-only mount accepts writes")
	}
	return mnt
}

// A database on read-only media is readable by a read-only open: a clean
// one (no WAL) through SQLite's immutable mode, one whose -wal and -shm
// are there through them; a -wal with changes but no -shm cannot be read
// in place and the error says how to proceed.
func TestAttack_Open_ReadOnlyMedia(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	p := filepath.Join(src, "a.db")
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	a.FS.WriteFile(ctx, "/hello", []byte("world"), vfs.WriteOptions{})
	a.Close()
	mnt := roMount(t, src)
	read := func() (string, error) {
		a, err := core.Open(ctx, filepath.Join(mnt, "a.db"), core.Options{ReadOnly: true})
		if err != nil {
			return "", err
		}
		defer a.Close()
		b, err := a.FS.ReadFile(ctx, "/hello")
		return string(b), err
	}
	if got, err := read(); err != nil || got != "world" {
		t.Fatalf("clean database on read-only media: %q, %v", got, err)
	}
	if _, err := core.Open(ctx, filepath.Join(mnt, "a.db"), core.Options{}); !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EACCES) && err == nil {
		t.Fatalf("writable open on read-only media succeeded")
	}

	// Leave committed changes in the -wal (and its -shm), as a process
	// that was killed does.
	w, err := core.Open(ctx, p, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.DB.Write(ctx, func(c *store.Conn) error { return nil })
	if err := w.FS.WriteFile(ctx, "/hello", []byte("again"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(p + "-wal")
	shm, _ := os.ReadFile(p + "-shm")
	w.Close()
	if len(wal) == 0 {
		t.Skip("no WAL frames to leave behind")
	}
	os.WriteFile(p+"-wal", wal, 0o644)
	os.WriteFile(p+"-shm", shm, 0o644)
	if got, err := read(); err != nil || got != "again" {
		t.Fatalf("with -wal and -shm on read-only media: %q, %v", got, err)
	}
	os.Remove(p + "-shm")
	if _, err := read(); !errors.Is(err, store.ErrCantRead) || !strings.Contains(err.Error(), "copy") {
		t.Fatalf("with -wal and no -shm: %v, want ErrCantRead saying to copy", err)
	}
}

// fsck reports a schema_version that is not this layout's ('abc', a
// number, an empty string) and repairs it to the version the columns
// show.
func TestAttack_Open_FsckSchemaVersion(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"'abc'", "''", "4", "'0.4 '", "x'00'"} {
		p := filepath.Join(t.TempDir(), "x.db")
		a, err := core.Open(ctx, p, core.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		a.DB.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("UPDATE fs_config SET value = " + v + " WHERE key = 'schema_version'")
			return err
		})
		rep, err := a.Fsck(ctx, false)
		if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Rule != "schema-version" || !rep.Problems[0].Repairable {
			t.Fatalf("schema_version %s: %+v, %v", v, rep, err)
		}
		if rep, err = a.Fsck(ctx, true); err != nil || !rep.Clean() || rep.Repaired != 1 {
			t.Fatalf("schema_version %s after repair: %+v, %v", v, rep, err)
		}
		a.Close()
	}
}

// An unknown or finished tool call is named in words, and still matches
// the sentinels callers test for.
func TestAttack_Open_ToolCallMessages(t *testing.T) {
	ctx := context.Background()
	a, err := core.Open(ctx, filepath.Join(t.TempDir(), "x.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.Tools.Success(ctx, 999, nil)
	if !errors.Is(err, toolcalls.ErrNotFound) || err.Error() != "no tool call with id 999" {
		t.Fatalf("finish 999: %v", err)
	}
	if _, err := a.Tools.Get(ctx, 999); err == nil || err.Error() != "no tool call with id 999" {
		t.Fatalf("get 999: %v", err)
	}
	id, _ := a.Tools.Start(ctx, "x", nil)
	a.Tools.Success(ctx, id, nil)
	err = a.Tools.Fail(ctx, id, "late")
	if !errors.Is(err, toolcalls.ErrFinished) || errors.Is(err, toolcalls.ErrNotFound) || !strings.Contains(err.Error(), "already finished (success)") {
		t.Fatalf("finish twice: %v", err)
	}
}

// A directory, or a path that cannot name a file, is refused with its
// own errno instead of "not a database" or a made-up ENOENT.
func TestAttack_Open_PathErrnos(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := map[string]syscall.Errno{
		dir: syscall.EISDIR,
		filepath.Join(dir, strings.Repeat("n", 300)+".db"): syscall.ENAMETOOLONG,
		filepath.Join(dir, "a\x00b.db"):                    syscall.EINVAL,
	}
	for p, want := range cases {
		for _, opts := range []core.Options{{}, {Create: true}, {ReadOnly: true}} {
			if _, err := core.Open(ctx, p, opts); !errors.Is(err, want) {
				t.Errorf("Open(%.40q, %+v) = %v, want %v", p, opts, err, want)
			}
		}
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("refused opens left %v", got)
	}
}

// migrate refuses a file that is no AgentFS database without writing to
// it, as Open does.
func TestAttack_Open_MigrateRefusedFileUnchanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "x.db")
	foreignDB(t, p)
	before := fileHash(t, p)
	for _, dry := range []bool{true, false} {
		if _, err := core.Migrate(ctx, p, core.MigrateOptions{DryRun: dry}); !errors.Is(err, core.ErrNotAgentFS) {
			t.Fatalf("Migrate(dry %v) = %v, want ErrNotAgentFS", dry, err)
		}
	}
	if fileHash(t, p) != before || len(dirNames(t, dir)) != 1 {
		t.Fatalf("migrate changed the refused file: %v", dirNames(t, dir))
	}
}
