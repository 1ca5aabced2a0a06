package cmd

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func sum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Files that are not agent databases stay byte-identical after every
// command refused them, and the message is one line with a next step.
func TestAttack_Open_CLIRefusedFileUnchanged(t *testing.T) {
	t.Chdir(t.TempDir())
	// The engine's SQLite driver, registered by the store this binary links.
	db, err := sql.Open("agentfs-sqlite", "file:foreign.db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.WriteFile("empty.db", nil, 0o644)
	os.WriteFile("random.db", []byte(strings.Repeat("\x91not sqlite at all", 500)), 0o644)
	want := map[string]string{
		"foreign.db": "not an AgentFS database: it holds another application's tables",
		"empty.db":   "not an AgentFS database: it is empty",
		"random.db":  "not an AgentFS database: not SQLite at all, or encrypted",
	}
	for f, msg := range want {
		before := sum(t, f)
		for _, args := range [][]string{{"fs", f, "ls"}, {"fs", f, "write", "/x", "y"}, {"kv", f, "set", "k", "1"}, {"fsck", f}, {"fsck", f, "--repair"}, {"query", f, "SELECT 1"}, {"timeline", f}} {
			r := wantFail(t, 1, args, msg, "  Try: check the path")
			if strings.Count(r.err, "not an AgentFS database") != 1 || strings.Contains(r.err, "Create") || strings.Contains(r.err, "PRAGMA") {
				t.Errorf("%v: stderr %q", args, r.err)
			}
		}
		if sum(t, f) != before {
			t.Errorf("%s changed after refused commands", f)
		}
		if _, err := os.Stat(f + "-wal"); err == nil {
			t.Errorf("%s got a -wal", f)
		}
	}
}

// A refused init leaves nothing, a retry succeeds, and an invalid option
// does not let --force remove the database it would replace.
func TestAttack_Open_CLIInitInvalidOptions(t *testing.T) {
	t.Chdir(t.TempDir())
	wantFail(t, 1, []string{"init", "x", "--chunk-size", "3"}, "chunk size 3: must be from 512 to 1048576 bytes", "  Try: agentfs init x")
	if _, err := os.Stat(".agentfs/x.db"); err == nil {
		t.Fatal("a refused init left .agentfs/x.db")
	}
	if ents, _ := os.ReadDir(".agentfs"); len(ents) != 0 {
		t.Fatalf("a refused init left %d files", len(ents))
	}
	mustRun(t, "init", "x")
	mustRun(t, "fs", "x", "write", "/keep", "me")
	wantFail(t, 1, []string{"init", "x", "--force", "--page-size", "1000"}, "page size 1000")
	if out := mustRun(t, "fs", "x", "cat", "/keep"); out != "me" {
		t.Fatalf("--force with a refused option replaced the database: %q", out)
	}
}

// A truncated database is "damaged", with snapshots and fsck as the way
// out, not a failing pragma.
func TestAttack_Open_CLIDamagedDatabase(t *testing.T) {
	newAgent(t)
	for i := range 40 {
		mustRun(t, "fs", "t", "write", "/f"+strings.Repeat("x", i), strings.Repeat("data", 2000))
	}
	st, _ := os.Stat(".agentfs/t.db")
	os.Truncate(".agentfs/t.db", st.Size()/3)
	r := wantFail(t, 1, []string{"fs", "t", "cat", "/f" + strings.Repeat("x", 39)}, "database is damaged", "agentfs snapshot t restore NAME", "agentfs fsck t --repair")
	if strings.Contains(r.err, "PRAGMA") {
		t.Errorf("stderr names a pragma: %q", r.err)
	}
}

// Ids that are no file name are refused with the rule they break; a
// 300-byte one names the limit.
func TestAttack_ID_CLI(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, id := range []string{".", "..", "a.b", "a/b", "../x"} {
		r := wantFail(t, 1, []string{"init", id}, "invalid agent id", "use letters, digits, '_' and '-' only")
		if strings.Contains(r.err, "digits, '.'") {
			t.Errorf("init %q: %q", id, r.err)
		}
	}
	long := strings.Repeat("a", 300)
	wantFail(t, 1, []string{"init", long}, "at most 128", "ENAMETOOLONG")
	wantFail(t, 1, []string{"fs", long, "ls"}, "at most 128")
	wantFail(t, 1, []string{"fs", "no such", "ls"}, "invalid agent id \"no such\"")
	if ents, _ := os.ReadDir(".agentfs"); len(ents) != 0 {
		t.Fatalf("refused ids left %d files", len(ents))
	}
}

// fs ls never prints a control character raw: a newline in a name would
// forge an entry, an escape sequence would reach the terminal.
func TestAttack_ID_CLILsQuotesNames(t *testing.T) {
	ctx := t.Context()
	newAgent(t)
	a, err := core.Open(context.Background(), ".agentfs/t.db", core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a\nf forged", "esc\x1b[31m", "it's", "plain name", "bad\xffutf8"} {
		if err := a.FS.WriteFile(ctx, "/"+n, []byte("x"), vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.FS.Symlink(ctx, "t\tgt", "/link\n"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	checkOut(t, "ls", mustRun(t, "fs", "t", "ls"), lines(
		`f 'a'$'\n''f forged'`,
		`f 'bad'$'\377''utf8'`,
		`f 'esc'$'\033''[31m'`,
		`f 'it'\''s'`,
		`l 'link'$'\n'`,
		`f plain name`,
	))
	if out := mustRun(t, "fs", "t", "ls", "-l"); !strings.Contains(out, `'link'$'\n' -> 't'$'\t''gt'`) || strings.ContainsAny(out, "\x1b\t") {
		t.Errorf("ls -l: %q", out)
	}
	if out := mustRun(t, "fs", "t", "ls", "--literal"); !strings.Contains(out, "f a\nf forged\n") {
		t.Errorf("ls --literal: %q", out)
	}
	mustRun(t, "kv", "t", "set", "k\ney", "1")
	checkOut(t, "kv ls", mustRun(t, "kv", "t", "ls"), lines(`'k'$'\n''ey'	1`))
}

// The quoting is a shell word: bash reads it back as the exact name.
func TestAttack_ID_QuoteNameRoundTrip(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, n := range []string{"a\nb", "x'y", "\x1b[0m", "\xff\xfe", "tab\there", "é ok\n", "''", "$'\\n'", "a b\x7f"} {
		if !needsQuoting(n) {
			t.Errorf("%q is printed raw", n)
		}
		out, err := exec.Command(bash, "-c", "printf %s "+quoteName(n)).Output()
		if err != nil || string(out) != n {
			t.Errorf("quoteName(%q) = %s, read back as %q (%v)", n, quoteName(n), out, err)
		}
	}
}

// Commands that only read work on a database whose directory and file
// cannot be written (a read-only bind mount): cat, ls, stat, kv, query,
// fsck, timeline, snapshot list, export.
func TestAttack_Open_CLIReadOnlyMedia(t *testing.T) {
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/hello", "world")
	mustRun(t, "kv", "t", "set", "k", "1")
	mustRun(t, "tools", "t", "start", "search")
	src, _ := filepath.Abs(".agentfs")
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "--bind", "-o", "ro", src, mnt).CombinedOutput(); err != nil {
		t.Skipf("bind mount not permitted: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	exec.Command("mount", "-o", "remount,bind,ro", mnt).Run()
	if err := os.WriteFile(filepath.Join(mnt, "probe"), nil, 0o644); err == nil {
		t.Skip("the mount accepts writes")
	}
	db := filepath.Join(mnt, "t.db")
	before := sum(t, db)
	if out := mustRun(t, "fs", db, "cat", "/hello"); out != "world" {
		t.Errorf("cat: %q", out)
	}
	mustRun(t, "fs", db, "ls")
	mustRun(t, "fs", db, "stat", "/hello")
	if out := mustRun(t, "kv", db, "get", "k"); strings.TrimSpace(out) != "1" {
		t.Errorf("kv get: %q", out)
	}
	mustRun(t, "kv", db, "ls")
	mustRun(t, "query", db, "SELECT count(*) FROM fs_inode")
	mustRun(t, "fsck", db)
	mustRun(t, "timeline", db)
	mustRun(t, "snapshot", db, "list")
	mustRun(t, "fs", db, "export", "/", t.TempDir())
	wantFail(t, 1, []string{"fs", db, "write", "/x", "y"})
	if sum(t, db) != before {
		t.Error("the database changed")
	}
}

// The timeline table shows no control character raw: a tool name with
// an escape sequence is printed as \x1b.
func TestAttack_ID_CLITimelineControls(t *testing.T) {
	newAgent(t)
	mustRun(t, "tools", "t", "start", "evil\x1b[2Jname\x07")
	out := mustRun(t, "timeline", "t")
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `evil\x1b[2Jname\x07`) {
		t.Errorf("timeline: %q", out)
	}
}

// init --force checks everything (here a missing --base) before it touches
// the old database, and a successful --force leaves exactly the new
// database: no temporary or set-aside files, no old snapshots, no old WAL.
func TestAttack_Open_CLIInitForceReplacesWhole(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "x")
	mustRun(t, "fs", "x", "write", "/keep", "me")
	mustRun(t, "snapshot", "x", "create", "s1")
	wantFail(t, 1, []string{"init", "x", "--force", "--base", "/no/such/dir"}, "base directory /no/such/dir")
	if out := mustRun(t, "fs", "x", "cat", "/keep"); out != "me" {
		t.Fatalf("--force with a missing base replaced the database: %q", out)
	}
	mustRun(t, "init", "x", "--force")
	ents, err := os.ReadDir(".agentfs")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "x.db" {
		t.Fatalf(".agentfs after init --force = %q, want only x.db", names)
	}
	wantFail(t, 1, []string{"fs", "x", "cat", "/keep"}, "ENOENT")
}
