//go:build !js

// Native only: it checks the database file and the host directories,
// which the WebAssembly build (databases in memory) does not have.

package core_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// fuzzSeeds are the attacks of query_test.go and their variations; the
// corpus in testdata/fuzz/FuzzQuery holds more, and `go test` runs all.
var fuzzSeeds = []string{
	"SELECT writefile('pwned', 'pwned')",
	"select writefile('/tmp/x','pwned')",
	"SELECT readfile('/etc/passwd')",
	"SELECT name FROM fsdir('.')",
	"SELECT count(*) FROM fsdir('.')",
	"SELECT load_extension('./evil')",
	"ATTACH 'other.db' AS o",
	"ATTACH 'file:other.db?mode=rwc' AS o; CREATE TABLE o.t(x)",
	"VACUUM INTO 'copy.db'",
	"PRAGMA journal_mode = delete",
	"PRAGMA query_only = 0",
	"PRAGMA writable_schema = 1",
	"CREATE TEMP TABLE t AS SELECT * FROM kv_store",
	"SELECT 1; DELETE FROM kv_store",
	"DELETE FROM kv_store",
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
	"SELECT key, json_extract(value, '$') FROM kv_store WHERE key LIKE 'k%'",
	"SELECT * FROM fs_inode JOIN fs_dentry USING (ino)",
	"PRAGMA table_info(fs_inode)",
	"SELECT * FROM pragma_table_info('kv_store')",
	"WITH fsdir AS (SELECT 1) SELECT count(*) FROM fsdir",
	"SELECT * FROM sqlite_dbpage",
	"SELECT sha3_query('SELECT writefile(''pwned'', 1)')",
	"REINDEX",
	"BEGIN; SELECT 1",
}

// FuzzQuery feeds SQL to Agent.Query and checks that nothing outside the
// result happened: no panic, no new file in the working directory or
// beside the database, the database file unchanged and consistent.
func FuzzQuery(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	ctx := context.Background()
	work := f.TempDir()
	f.Chdir(work) // relative paths of writefile/ATTACH would land here
	dbDir := f.TempDir()
	a, err := core.Open(ctx, filepath.Join(dbDir, "a.db"), core.Options{Create: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { a.Close() })
	if err := a.KV.Set(ctx, "k1", map[string]any{"a": 1}); err != nil {
		f.Fatal(err)
	}
	if err := a.FS.WriteFile(ctx, "/f.txt", []byte("data"), vfs.WriteOptions{}); err != nil {
		f.Fatal(err)
	}
	// The whole database in its file (the hash below covers the WAL too,
	// but the background checkpointer would move pages between them). A
	// background checkpoint running at the same moment makes this one
	// busy: try again.
	for i := 0; ; i++ {
		err := a.Checkpoint(ctx)
		if err == nil {
			break
		}
		if i == 100 {
			f.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	listing := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			f.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	hash := func() [32]byte {
		b, err := os.ReadFile(filepath.Join(dbDir, "a.db"))
		if err != nil {
			f.Fatal(err)
		}
		w, _ := os.ReadFile(filepath.Join(dbDir, "a.db-wal"))
		return sha256.Sum256(append(b, w...))
	}
	workBefore, dbBefore, sum := listing(work), listing(dbDir), hash()

	f.Fuzz(func(t *testing.T, sql string) {
		// The budget keeps each input short; errors are expected, what
		// matters is what else happened.
		_ = a.Query(ctx, sql, nil, core.QueryLimits{Steps: 2_000_000, MaxBytes: 1 << 20}, func([]string, []any) error { return nil })
		if got := listing(work); !slices.Equal(got, workBefore) {
			t.Fatalf("%q: the working directory now holds %v", sql, got)
		}
		if got := listing(dbDir); !slices.Equal(got, dbBefore) {
			t.Fatalf("%q: the database directory now holds %v", sql, got)
		}
		if hash() != sum {
			t.Fatalf("%q: the database file changed", sql)
		}
		rep, err := a.Fsck(ctx, false)
		if err != nil || !rep.Clean() {
			t.Fatalf("%q: fsck: %v %v", sql, rep, err)
		}
	})
}
