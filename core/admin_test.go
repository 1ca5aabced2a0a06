package core_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func newAgent(t *testing.T) *core.Agent {
	t.Helper()
	a, err := core.Open(context.Background(), filepath.Join(t.TempDir(), "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func mustWrite(t *testing.T, a *core.Agent, p, content string) {
	ctx := t.Context()
	t.Helper()
	if err := a.FS.WriteFile(ctx, p, []byte(content), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
}

func TestAgent_SnapshotRestore(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t)
	mustWrite(t, a, "/d/keep.txt", "v1")
	if err := a.KV.Set(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSnapshot(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	if s.Size == 0 {
		t.Fatalf("snapshot size 0")
	}
	if _, err := a.CreateSnapshot(ctx, "before"); !errors.Is(err, core.ErrSnapshotExists) {
		t.Fatalf("second CreateSnapshot error = %v, want ErrSnapshotExists", err)
	}
	mustWrite(t, a, "/d/keep.txt", "v2")
	mustWrite(t, a, "/new.txt", "x")
	if err := a.KV.Set(ctx, "k", 2); err != nil {
		t.Fatal(err)
	}
	if err := a.RestoreSnapshot(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	got, err := a.FS.ReadFile(ctx, "/d/keep.txt")
	if err != nil || string(got) != "v1" {
		t.Fatalf("after restore ReadFile = %q, %v; want v1", got, err)
	}
	if _, err := a.FS.Stat(ctx, "/new.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after restore Stat(/new.txt) err = %v, want not exist", err)
	}
	var k int
	if err := a.KV.Get(ctx, "k", &k); err != nil || k != 1 {
		t.Fatalf("after restore kv k = %d, %v; want 1", k, err)
	}
	list, err := a.Snapshots(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "before" {
		t.Fatalf("Snapshots = %+v, %v; want [before]", list, err)
	}
	if err := a.RestoreSnapshot(ctx, "nope"); !errors.Is(err, core.ErrSnapshotNotFound) {
		t.Fatalf("RestoreSnapshot(nope) = %v, want ErrSnapshotNotFound", err)
	}
	// Writes after a restore work and new inodes do not collide.
	mustWrite(t, a, "/after.txt", "ok")
	rep, err := a.Fsck(ctx, false)
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck after restore: %+v, %v", rep, err)
	}
}

func TestAgent_FsckFindsAndRepairs(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t)
	mustWrite(t, a, "/a/f.txt", strings.Repeat("x", 10000))
	rep, err := a.Fsck(ctx, false)
	if err != nil || !rep.Clean() {
		t.Fatalf("fresh fsck = %+v, %v", rep, err)
	}
	// Damage: an orphan inode with data, a wrong nlink, a chunk beyond EOF.
	err = a.DB.Write(ctx, func(c *store.Conn) error {
		for _, q := range []string{
			"INSERT INTO fs_inode (ino, mode, nlink, size, atime, mtime, ctime) VALUES (999, 33188, 1, 3, 0, 0, 0)",
			"INSERT INTO fs_data (ino, chunk_index, data) VALUES (999, 0, x'616263')",
			"UPDATE fs_inode SET nlink = 5 WHERE ino = (SELECT ino FROM fs_dentry WHERE name = 'f.txt')",
			"INSERT INTO fs_data (ino, chunk_index, data) SELECT ino, 50, x'00' FROM fs_dentry WHERE name = 'f.txt'",
		} {
			if _, err := c.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = a.Fsck(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, p := range rep.Problems {
		rules[p.Rule] = true
	}
	for _, want := range []string{"orphan", "nlink", "chunk-beyond-size"} {
		if !rules[want] {
			t.Errorf("fsck did not report %s; got %+v", want, rep.Problems)
		}
	}
	rep, err = a.Fsck(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() || rep.Repaired == 0 {
		t.Fatalf("after repair: %+v", rep)
	}
	got, err := a.FS.ReadFile(ctx, "/a/f.txt")
	if err != nil || len(got) != 10000 {
		t.Fatalf("file after repair: len %d, %v", len(got), err)
	}
}

// oldLayout creates a database in an AgentFS layout older than 0.4.
func oldLayout(t *testing.T, version string) string {
	t.Helper()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "old.db")
	db, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	inode := `CREATE TABLE fs_inode (ino INTEGER PRIMARY KEY AUTOINCREMENT, mode INTEGER NOT NULL, uid INTEGER NOT NULL DEFAULT 0, gid INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL DEFAULT 0, atime INTEGER NOT NULL, mtime INTEGER NOT NULL, ctime INTEGER NOT NULL)`
	if version == "0.2" {
		inode = `CREATE TABLE fs_inode (ino INTEGER PRIMARY KEY AUTOINCREMENT, mode INTEGER NOT NULL, nlink INTEGER NOT NULL DEFAULT 0, uid INTEGER NOT NULL DEFAULT 0, gid INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL DEFAULT 0, atime INTEGER NOT NULL, mtime INTEGER NOT NULL, ctime INTEGER NOT NULL)`
	}
	nl, nl1 := "", ""
	if version == "0.2" {
		nl, nl1 = ", nlink", ", 1"
	}
	err = db.Write(ctx, func(c *store.Conn) error {
		for _, q := range []string{
			`CREATE TABLE fs_config (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
			inode,
			`CREATE TABLE fs_dentry (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, parent_ino INTEGER NOT NULL, ino INTEGER NOT NULL, UNIQUE(parent_ino, name))`,
			`CREATE TABLE fs_data (ino INTEGER NOT NULL, chunk_index INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (ino, chunk_index))`,
			`CREATE TABLE fs_symlink (ino INTEGER PRIMARY KEY, target TEXT NOT NULL)`,
			`INSERT INTO fs_config VALUES ('chunk_size', '4096')`,
			`INSERT INTO fs_inode (ino, mode` + nl + `, size, atime, mtime, ctime) VALUES (1, 16877` + nl1 + `, 0, 1, 1, 1)`,
			`INSERT INTO fs_inode (ino, mode` + nl + `, size, atime, mtime, ctime) VALUES (2, 33188` + nl1 + `, 5, 1, 1, 1)`,
			`INSERT INTO fs_dentry (name, parent_ino, ino) VALUES ('hello.txt', 1, 2)`,
			`INSERT INTO fs_data VALUES (2, 0, x'68656c6c6f')`,
		} {
			if _, err := c.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMigrate_OldLayouts(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"0.0", "0.2"} {
		t.Run(v, func(t *testing.T) {
			p := oldLayout(t, v)
			if _, err := core.Open(ctx, p, core.Options{}); !errors.Is(err, schema.ErrNeedsMigration) {
				t.Fatalf("Open of %s layout: err = %v, want ErrNeedsMigration", v, err)
			}
			res, err := core.Migrate(ctx, p, core.MigrateOptions{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.From.AgentFSVersion != v || len(res.Steps) == 0 || res.Backup != "" {
				t.Fatalf("dry run = %+v", res)
			}
			if _, err := core.Open(ctx, p, core.Options{}); !errors.Is(err, schema.ErrNeedsMigration) {
				t.Fatalf("dry run changed the database: %v", err)
			}
			res, err = core.Migrate(ctx, p, core.MigrateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(res.Backup); err != nil {
				t.Fatalf("backup missing: %v", err)
			}
			a, err := core.Open(ctx, p, core.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			got, err := a.FS.ReadFile(ctx, "/hello.txt")
			if err != nil || string(got) != "hello" {
				t.Fatalf("ReadFile after migrate = %q, %v", got, err)
			}
			st, err := a.FS.Stat(ctx, "/hello.txt")
			if err != nil || st.Nlink != 1 {
				t.Fatalf("Stat after migrate = %+v, %v; want nlink 1", st, err)
			}
			if rep, err := a.Fsck(ctx, false); err != nil || !rep.Clean() {
				t.Fatalf("fsck after migrate = %+v, %v", rep, err)
			}
			res, err = core.Migrate(ctx, p, core.MigrateOptions{})
			if err != nil || len(res.Steps) != 0 {
				t.Fatalf("second migrate = %+v, %v; want no steps", res, err)
			}
		})
	}
}

// An encrypted database of an old layout migrates with its key, and its
// backup is encrypted too; without the key nothing changes.
func TestMigrate_Encrypted(t *testing.T) {
	ctx := context.Background()
	plain := oldLayout(t, "0.2")
	p := filepath.Join(t.TempDir(), "enc.db")
	enc := &store.Encryption{Cipher: "aes256gcm", Key: bytes.Repeat([]byte{7}, 32)}
	if err := store.Convert(ctx, plain, p, nil, enc, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	if _, err := core.Migrate(ctx, p, core.MigrateOptions{}); !errors.Is(err, store.ErrNeedKey) {
		t.Fatalf("Migrate without the key = %v, want ErrNeedKey", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("a refused migrate changed the file")
	}
	res, err := core.Migrate(ctx, p, core.MigrateOptions{Encryption: enc})
	if err != nil || len(res.Steps) == 0 {
		t.Fatalf("Migrate with the key = %+v, %v", res, err)
	}
	for _, f := range []string{p, res.Backup} {
		b, err := os.ReadFile(f)
		if err != nil || bytes.Contains(b, []byte("SQLite format 3")) || bytes.Contains(b, []byte("hello")) {
			t.Fatalf("%s holds plaintext (%v)", f, err)
		}
	}
	a, err := core.Open(ctx, p, core.Options{Encryption: enc})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got, err := a.FS.ReadFile(ctx, "/hello.txt"); err != nil || string(got) != "hello" {
		t.Fatalf("ReadFile after migrate = %q, %v", got, err)
	}
}

// The prefix listing of the kv store must be a range scan of the primary
// key index, not a LIKE scan of the table.
func TestKV_ListIsRangeScan(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t)
	var plan []string
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		rows, err := c.Query("EXPLAIN QUERY PLAN SELECT CAST(key AS BLOB), CAST(value AS BLOB) FROM kv_store WHERE key >= ? AND key < CAST(? AS TEXT) ORDER BY key", "user:", []byte("user;"))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, notused int64
			var detail []byte
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				return err
			}
			plan = append(plan, string(detail))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "SEARCH kv_store USING INDEX") || !strings.Contains(got, "key>? AND key<?") {
		t.Fatalf("query plan = %q, want a SEARCH on the key index with a range", got)
	}
}

// A snapshot taken while another connection keeps writing is a consistent
// database: fsck-clean, every file whole.
func TestAgent_SnapshotWhileWriting(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "live.db")
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w, err := core.Open(ctx, p, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			content := strings.Repeat(fmt.Sprintf("gen %06d|", i), 1000) // 11 KB, several chunks
			if err := w.FS.WriteFile(ctx, fmt.Sprintf("/w/f%d", i%20), []byte(content), vfs.WriteOptions{CreateParents: true}); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	var snaps []core.Snapshot
	for i := 0; i < 3; i++ {
		s, err := a.CreateSnapshot(ctx, fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		sa, err := core.Open(ctx, s.Path, core.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := sa.Fsck(ctx, false); err != nil || !rep.Clean() {
			t.Fatalf("snapshot %s fsck: %+v, %v", s.Name, rep, err)
		}
		names, err := sa.FS.Readdir(ctx, "/w")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			data, err := sa.FS.ReadFile(ctx, "/w/"+n)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Repeat(string(data[:11]), 1000)
			if string(data) != want {
				t.Fatalf("snapshot %s: /w/%s is torn (%d bytes)", s.Name, n, len(data))
			}
		}
		sa.Close()
	}
}

// Only the last chunk of a file may be short (SPEC.md, writing rule).
// Growing a file by truncate and then writing past the old end used to
// leave the old last chunk short in the middle of the file.
func TestAgent_ChunkRuleAfterGrowingTruncate(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t)
	cs := a.FS.ChunkSize()
	for _, grow := range []int64{20000, 3 << 20} {
		data := bytes.Repeat([]byte("0123456789"), 500) // 5000 bytes: chunk 1 short
		if err := a.FS.WriteFile(ctx, "/f", data, vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := a.FS.Truncate(ctx, "/f", grow); err != nil {
			t.Fatal(err)
		}
		h, err := a.FS.Open(ctx, "/f", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(append(data, make([]byte, grow-int64(len(data)))...), "x\n"...)
		got, err := a.FS.ReadFile(ctx, "/f")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("grow to %d: content differs (len %d, %v)", grow, len(got), err)
		}
		var short int
		err = a.DB.Do(ctx, func(c *store.Conn) error {
			return c.QueryRow(`SELECT COUNT(*) FROM fs_data x JOIN fs_inode i ON i.ino = x.ino
				WHERE length(x.data) < ? AND x.chunk_index < (i.size - 1) / ?`, cs, cs).Scan(&short)
		})
		if err != nil || short != 0 {
			t.Errorf("grow to %d: %d short chunks before the last (%v)", grow, short, err)
		}
		if rep, err := a.Fsck(ctx, false); err != nil || !rep.Clean() {
			t.Errorf("grow to %d: fsck %+v %v", grow, rep, err)
		}
	}
}

// fsck finds a short chunk in the middle of a file (as older engines
// wrote them) and pads it with zeros, which changes no content.
func TestAgent_FsckPadsShortChunks(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t)
	mustWrite(t, a, "/f", strings.Repeat("y", 10000))
	err := a.DB.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("UPDATE fs_data SET data = substr(data, 1, 100) WHERE chunk_index = 1 AND ino = (SELECT ino FROM fs_dentry WHERE name = 'f')")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	a.FS.Invalidate()
	before, err := a.FS.ReadFile(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Fsck(ctx, false)
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Rule != "chunk-short" || !rep.Problems[0].Repairable {
		t.Fatalf("fsck of a short middle chunk: %+v %v", rep, err)
	}
	if rep, err = a.Fsck(ctx, true); err != nil || !rep.Clean() || rep.Repaired != 1 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	after, err := a.FS.ReadFile(ctx, "/f")
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("repair changed the content (%v)", err)
	}
}
