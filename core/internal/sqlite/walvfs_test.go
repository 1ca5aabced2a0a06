//go:build cgo

package sqlite_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// openWAL opens path in WAL mode with the store's settings that matter
// here: synchronous=NORMAL and no checkpoints on commit, so that every
// frame written stays in the -wal file.
func openWAL(t *testing.T, path string, pragmas ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, p := range append(pragmas, "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA wal_autocheckpoint = 0") {
		if _, err := db.Exec(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	return db
}

// copyWithWAL copies the database file at path and its -wal (not the
// -shm) into a new directory, and returns the copy's path.
func copyWithWAL(t *testing.T, path string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cp
}

// recovered copies the database file and its -wal (not the -shm) into
// a new directory and opens the copy: SQLite rebuilds the WAL index from
// the log, checking every frame's header and checksum, and keeps only
// the transactions whose frames are all there and valid.
func recovered(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, "file:"+copyWithWAL(t, path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The log written through walvfs.c (a frame's header and page in one
// write) is the log SQLite would write: a copy of the files taken after
// many small commits recovers every one of them. It is also what a
// process that crashed right after a commit leaves behind.
func TestWALFramesMerged(t *testing.T) {
	if sqlite.WALVFSName() == "" {
		t.Skip("no unix VFS: SQLite's default VFS writes the log")
	}
	path := filepath.Join(t.TempDir(), "t.db")
	db := openWAL(t, path)
	before := sqlite.WALUnmerged()
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, v BLOB); CREATE INDEX t_name ON t(name)"); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		if _, err := db.Exec("INSERT INTO t (name, v) VALUES (?, ?)", fmt.Sprintf("n%d", i%7), bytes.Repeat([]byte{byte(i)}, 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if h := sqlite.WALHeld(); h != 0 {
		t.Fatalf("%d bytes of frames held after the commits", h)
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no log to recover from: %v", err)
	}
	var count, sum int64
	if err := recovered(t, path).QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != n*100+n*(n-1)/2 {
		t.Fatalf("recovered %d rows (%d bytes), want %d (%d)", count, sum, n, n*100+n*(n-1)/2)
	}
	if d := sqlite.WALUnmerged() - before; d != 0 {
		t.Fatalf("%d frame headers were held and then written alone", d)
	}
}

// Large transactions (a 3 MiB value: hundreds of frames) go out in
// several writes, each below the unix VFS's largest, also with SQLite's
// largest pages.
func TestWALLargeTransaction(t *testing.T) {
	if sqlite.WALVFSName() == "" {
		t.Skip("no unix VFS: SQLite's default VFS writes the log")
	}
	for _, pageSize := range []int{4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			db := openWAL(t, path, fmt.Sprintf("PRAGMA page_size = %d", pageSize))
			before := sqlite.WALUnmerged()
			if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
				t.Fatal(err)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
			for i := range 3 {
				if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", int64(i), big[i:]); err != nil {
					t.Fatal(err)
				}
			}
			var ps, count, sum int64
			rdb := recovered(t, path)
			if err := rdb.QueryRow("PRAGMA page_size").Scan(&ps); err != nil || ps != int64(pageSize) {
				t.Fatalf("page size %d, %v; want %d", ps, err, pageSize)
			}
			if err := rdb.QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&count, &sum); err != nil {
				t.Fatal(err)
			}
			if want := int64(3*len(big) - 3); count != 3 || sum != want {
				t.Fatalf("recovered %d rows of %d bytes in all; want 3, %d", count, sum, want)
			}
			if d := sqlite.WALUnmerged() - before; d != 0 {
				t.Fatalf("%d frame headers were held and then written alone", d)
			}
		})
	}
}

// A transaction larger than the page cache spills pages into the log
// before its commit, and writes some of them again: SQLite then rewrites
// those frames' pages and, at the commit, the headers of the frames after
// them (checksums), each after reading the frame. Those header writes go
// out as they come, and the copy still recovers the whole transaction.
func TestWALSpillRewrite(t *testing.T) {
	if sqlite.WALVFSName() == "" {
		t.Skip("no unix VFS: SQLite's default VFS writes the log")
	}
	path := filepath.Join(t.TempDir(), "t.db")
	db := openWAL(t, path)
	if _, err := db.Exec("PRAGMA cache_size = 10"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	before := sqlite.WALUnmerged()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	for i := range n {
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?)", int64(i), bytes.Repeat([]byte{1}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	// Every row again, after the cache has spilled their pages.
	if _, err := tx.Exec("UPDATE t SET v = zeroblob(900 + id % 3)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := range int64(n) {
		want += 900 + i%3
	}
	var count, sum int64
	if err := recovered(t, path).QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != want {
		t.Fatalf("recovered %d rows of %d bytes in all; want %d, %d", count, sum, n, want)
	}
	if d := sqlite.WALUnmerged() - before; d != 0 {
		t.Fatalf("%d frame headers were held and then written alone", d)
	}
}

// WALFrames reports each commit's log length once: after a commit that
// SQLite reports (a statement stepped to its end), not after one it does
// not (INSERT ... RETURNING commits at its reset), nor twice.
func TestWALFrames(t *testing.T) {
	db := openWAL(t, filepath.Join(t.TempDir(), "t.db"))
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var frames func() (int64, bool)
	c.Raw(func(dc any) error {
		if w, ok := dc.(interface{ WALFrames() func() (int64, bool) }); ok {
			frames = w.WALFrames()
		}
		return nil
	})
	if frames == nil {
		t.Fatal("the driver's connection has no WALFrames")
	}
	if n, ok := frames(); ok {
		t.Fatalf("before any commit: %d frames reported", n)
	}
	if _, err := c.ExecContext(t.Context(), "CREATE TABLE t (id INTEGER PRIMARY KEY, v)"); err != nil {
		t.Fatal(err)
	}
	n1, ok := frames()
	if !ok || n1 <= 0 {
		t.Fatalf("after a commit: %d, %v", n1, ok)
	}
	if n, ok := frames(); ok {
		t.Fatalf("reported twice: %d", n)
	}
	if _, err := c.ExecContext(t.Context(), "INSERT INTO t (v) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if n2, ok := frames(); !ok || n2 <= n1 {
		t.Fatalf("after a second commit: %d, %v (first %d)", n2, ok, n1)
	}
	var id int64
	if err := c.QueryRowContext(t.Context(), "INSERT INTO t (v) VALUES (2) RETURNING id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if n, ok := frames(); ok {
		t.Fatalf("a commit at reset reported %d frames", n)
	}
}

// A transaction that spilled pages into the log and then rolled back
// leaves nothing held: the frames it wrote are in the file (as SQLite
// wrote them) before its write lock is released, so they cannot land
// later on the frames of the next writer (here another connection) that
// reuses their place in the log.
func TestWALRollbackAfterSpill(t *testing.T) {
	if sqlite.WALVFSName() == "" {
		t.Skip("no unix VFS: SQLite's default VFS writes the log")
	}
	path := filepath.Join(t.TempDir(), "t.db")
	a := openWAL(t, path)
	if _, err := a.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("PRAGMA cache_size = 10"); err != nil {
		t.Fatal(err)
	}
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?)", int64(i), bytes.Repeat([]byte{9}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if h := sqlite.WALHeld(); h != 0 {
		t.Fatalf("%d bytes of frames held after the rollback", h)
	}
	b := openWAL(t, path)
	for i := range 50 {
		if _, err := b.Exec("INSERT INTO t VALUES (?, ?)", int64(1000+i), bytes.Repeat([]byte{7}, 500)); err != nil {
			t.Fatal(err)
		}
	}
	// a uses its log again (reads, then writes).
	var n int64
	if err := a.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 50 {
		t.Fatalf("a sees %d rows, %v; want 50", n, err)
	}
	if _, err := a.Exec("INSERT INTO t VALUES (5000, x'01')"); err != nil {
		t.Fatal(err)
	}
	var count, sum int64
	if err := recovered(t, path).QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != 51 || sum != 50*500+1 {
		t.Fatalf("recovered %d rows of %d bytes; want 51, %d", count, sum, 50*500+1)
	}
}
