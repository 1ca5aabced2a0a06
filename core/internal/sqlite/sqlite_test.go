//go:build cgo

package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, "file:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// Every storage class comes back as the type callers scan: int64,
// float64, string, []byte (an empty blob is not NULL), nil.
func TestValues(t *testing.T) {
	db := openDB(t)
	if _, err := db.Exec("CREATE TABLE t (a, b, c, d, e, f); CREATE TABLE u (x);"); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte{1, 2, 3}, 100000)
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", int64(-7), 2.5, "tëxt", []byte{}, nil, big); err != nil {
		t.Fatal(err)
	}
	var a, b, c, d, e, f any
	if err := db.QueryRow("SELECT a, b, c, d, e, f FROM t").Scan(&a, &b, &c, &d, &e, &f); err != nil {
		t.Fatal(err)
	}
	if a != int64(-7) || b != 2.5 || c != "tëxt" || e != nil {
		t.Fatalf("values = %#v %#v %#v %#v", a, b, c, e)
	}
	if bd, ok := d.([]byte); !ok || bd == nil || len(bd) != 0 {
		t.Fatalf("empty blob = %#v, want []byte{}", d)
	}
	if bf, ok := f.([]byte); !ok || !bytes.Equal(bf, big) {
		t.Fatal("large blob differs")
	}
	// A date-like text stays text.
	var s any
	if err := db.QueryRow("SELECT '2024-01-02 03:04:05'").Scan(&s); err != nil || s != "2024-01-02 03:04:05" {
		t.Fatalf("date-like text = %#v, %v", s, err)
	}
}

// A statement runs again from the cache with other arguments, also while
// rows of the same statement are still open (it then prepares a second
// copy), and arguments past the statement's parameters are ignored.
func TestStatementCache(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v)"); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // more distinct statements than the cache holds
		q := fmt.Sprintf("INSERT INTO t (k, v) VALUES (?, ?) -- %d", i%290)
		r, err := conn.ExecContext(ctx, q, int64(i), fmt.Sprint("v", i), "ignored")
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := r.LastInsertId(); id != int64(i) {
			t.Fatalf("LastInsertId = %d, want %d", id, i)
		}
	}
	const q = "SELECT k, v FROM t WHERE k >= ? ORDER BY k LIMIT 3"
	outer, err := conn.QueryContext(ctx, q, int64(10))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for outer.Next() {
		var k int64
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		var k2 int64
		if err := conn.QueryRowContext(ctx, q, int64(200)).Scan(&k2, new(string)); err != nil || k2 != 200 {
			t.Fatalf("nested query = %d, %v", k2, err)
		}
		if k != int64(10+n) || v != fmt.Sprint("v", k) {
			t.Fatalf("row %d = %d %q", n, k, v)
		}
		n++
	}
	if err := outer.Err(); err != nil || n != 3 {
		t.Fatalf("outer rows: %d, %v", n, err)
	}
	outer.Close()
}

// Errors carry SQLite's message and code; a failing statement leaves the
// connection usable.
func TestErrors(t *testing.T) {
	db := openDB(t)
	_, err := db.Exec("INSERT INTO missing VALUES (1)")
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Primary() != 1 || se.Error() != "no such table: missing" {
		t.Fatalf("err = %#v", err)
	}
	if _, err := db.Exec("CREATE TABLE t (x UNIQUE)"); err != nil {
		t.Fatal(err)
	}
	db.Exec("INSERT INTO t VALUES (1)")
	_, err = db.Exec("INSERT INTO t VALUES (?)", int64(1))
	if !errors.As(err, &se) || se.Primary() != 19 { // SQLITE_CONSTRAINT
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (?)", int64(2)); err != nil {
		t.Fatalf("after an error: %v", err)
	}
	if _, err := db.Exec("SELECT ?; SELECT 2", int64(1)); err == nil {
		t.Fatal("two statements with arguments: want an error")
	}
}

// Blobs come out in SQLite's memory: a []byte destination gets its own
// copy that later rows do not touch; a RawBytes one is valid until Next.
func TestBlobsOutliveTheirRow(t *testing.T) {
	db := openDB(t)
	if _, err := db.Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, b BLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", int64(i), bytes.Repeat([]byte{byte('a' + i)}, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query("SELECT b FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]byte
	for rows.Next() {
		var b []byte
		var raw sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		if err := rows.Scan(&raw); err != nil { // last: it holds the row
			t.Fatal(err)
		}
		if !bytes.Equal(raw, b) {
			t.Fatal("RawBytes and []byte differ")
		}
		kept = append(kept, b)
	}
	rows.Close()
	for i, b := range kept {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte('a' + i)}, 5000)) {
			t.Fatalf("row %d changed after later rows were read", i)
		}
	}
}

// A query takes one statement: text after it must be blank or comments
// (as SQLite's tokenizer reads them), else ErrMultipleStatements.
func TestOneStatement(t *testing.T) {
	db := openDB(t)
	for _, q := range []string{"SELECT 1;", "SELECT 1; -- done", "SELECT 1 /* a */ ; /* b */ ;;"} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil || n != 1 {
			t.Errorf("%q: %d, %v", q, n, err)
		}
	}
	for _, q := range []string{"SELECT 1; SELECT 2", "SELECT 1; -- x\nSELECT 2", "SELECT 1; garbage"} {
		if _, err := db.Query(q, 1); !errors.Is(err, sqlite.ErrMultipleStatements) {
			t.Errorf("%q: %v, want ErrMultipleStatements", q, err)
		}
	}
}

// guarded returns a connection of db guarded by auth.
func guarded(t *testing.T, db *sql.DB, auth sqlite.Authorizer) (*sql.Conn, sqlite.Guarded) {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var g sqlite.Guarded
	if err := c.Raw(func(dc any) error {
		g = dc.(sqlite.Guarded)
		return g.Guard(auth, 1<<20)
	}); err != nil {
		t.Fatal(err)
	}
	return c, g
}

// A guarded connection asks its authorizer at every prepare, refuses
// statements that may write and attachments, and stops a statement on
// its step budget or on Stop; the next Arm makes it usable again.
func TestGuard(t *testing.T) {
	db := openDB(t)
	if _, err := db.Exec("CREATE TABLE t (x); CREATE INDEX tx ON t(x); INSERT INTO t VALUES (1);"); err != nil {
		t.Fatal(err)
	}
	var asked []int
	c, g := guarded(t, db, func(action int, a, b, schema, inner string) bool {
		asked = append(asked, action)
		return action != 31 || b != "upper" // every function but upper
	})
	ctx := context.Background()
	var n int
	for i := 0; i < 2; i++ { // prepared anew each time: asked again
		if err := c.QueryRowContext(ctx, "SELECT x FROM t").Scan(&n); err != nil || n != 1 {
			t.Fatalf("read: %d, %v", n, err)
		}
	}
	if len(asked) < 4 {
		t.Errorf("authorizer asked %v for two prepares", asked)
	}
	var e *sqlite.Error
	if err := c.QueryRowContext(ctx, "SELECT upper('a')").Scan(new(string)); err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Errorf("refused function: %v, want not authorized", err)
	}
	if _, err := c.QueryContext(ctx, "REINDEX"); !errors.Is(err, sqlite.ErrNotReadOnly) {
		t.Errorf("REINDEX: %v, want ErrNotReadOnly", err)
	}
	if _, err := c.ExecContext(ctx, "ATTACH ':memory:' AS m"); err == nil || !strings.Contains(err.Error(), "attached") {
		t.Errorf("ATTACH: %v, want too many attached databases", err)
	}
	endless := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
	g.Arm(100_000)
	if err := c.QueryRowContext(ctx, endless).Scan(&n); !errors.As(err, &e) || e.Primary() != 9 {
		t.Errorf("over budget: %v, want SQLITE_INTERRUPT", err)
	}
	if budget, stopped := g.Stopped(); !budget || stopped {
		t.Errorf("Stopped() = %v, %v after the budget", budget, stopped)
	}
	g.Arm(1 << 62)
	g.Stop()
	if err := c.QueryRowContext(ctx, endless).Scan(&n); !errors.As(err, &e) || e.Primary() != 9 {
		t.Errorf("stopped: %v, want SQLITE_INTERRUPT", err)
	}
	if budget, stopped := g.Stopped(); budget || !stopped {
		t.Errorf("Stopped() = %v, %v after Stop", budget, stopped)
	}
	g.Arm(1 << 62)
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Errorf("after a new Arm: %d, %v", n, err)
	}
}
