package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core/store"
)

// Paths with URI metacharacters must name exactly the file asked for.
func TestOpen_PathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"x#1", "x?y", "a b", "pct%41", "ünï"} {
		d := filepath.Join(t.TempDir(), dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, "a.db")
		db, err := store.Open(ctx, p, store.Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", p, err)
		}
		err = db.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("CREATE TABLE t (x)")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Fatalf("database file %q: %v (size %v)", p, err, st)
		}
	}
}

func TestWrite_RollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "a.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec := func(q string) {
		if err := db.Write(ctx, func(c *store.Conn) error { _, err := c.Exec(q); return err }); err != nil {
			t.Fatal(err)
		}
	}
	mustExec("CREATE TABLE t (x)")
	err = db.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("INSERT INTO t VALUES (1)"); err != nil {
			return err
		}
		_, err := c.Exec("INSERT INTO nope VALUES (1)")
		return err
	})
	if err == nil {
		t.Fatal("Write with a failing statement succeeded")
	}
	var n int
	if err := db.Do(ctx, func(c *store.Conn) error { return c.QueryRow("SELECT COUNT(*) FROM t").Scan(&n) }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("rows after failed Write = %d, want 0", n)
	}
}

func TestDataVersion_SeesOtherConnections(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	a, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	version := func(db *store.DB) (v int64) {
		db.Do(ctx, func(c *store.Conn) error { v = c.DataVersion(); return nil })
		return v
	}
	v0 := version(a)
	if err := a.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("CREATE TABLE t (x)"); return err }); err != nil {
		t.Fatal(err)
	}
	if v1 := version(a); v1 != v0 {
		t.Fatalf("own commit changed data version %d -> %d", v0, v1)
	}
	if err := b.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("INSERT INTO t VALUES (1)"); return err }); err != nil {
		t.Fatal(err)
	}
	if v2 := version(a); v2 == v0 {
		t.Fatalf("other connection's commit left data version at %d", v2)
	}
}

// When another connection commits between the data version a read
// trusted and its first statement, the read runs again from the start
// with the new version, so cached answers and query results never mix.
func TestDo_RerunsOnStaleSnapshot(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	a, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("CREATE TABLE t (x)"); return err }); err != nil {
		t.Fatal(err)
	}
	runs := 0
	var versions []int64
	var n int
	err = a.Do(ctx, func(c *store.Conn) error {
		runs++
		versions = append(versions, c.DataVersion())
		if runs == 1 {
			// Another connection commits after the version was read.
			if err := b.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("INSERT INTO t VALUES (1)"); return err }); err != nil {
				return err
			}
		}
		return c.QueryRow("SELECT COUNT(*) FROM t").Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || versions[0] == versions[1] || n != 1 {
		t.Fatalf("runs %d, versions %v, count %d; want 2 runs with different versions and count 1", runs, versions, n)
	}
	// A read answered without statements runs once.
	runs = 0
	if err := a.Do(ctx, func(c *store.Conn) error { runs++; return nil }); err != nil || runs != 1 {
		t.Fatalf("cache-only read: runs %d, err %v", runs, err)
	}
}
