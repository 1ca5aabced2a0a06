package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// groupDB opens a database with a table t(x) and group commit on, and a
// second handle on the same file standing for another process.
func groupDB(t *testing.T, delay time.Duration) (db, other *store.DB) {
	t.Helper()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("CREATE TABLE t (x INTEGER)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	other, err = store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	db.SetGroupCommit(delay)
	return db, other
}

func insert(t *testing.T, db *store.DB, x int) {
	t.Helper()
	if err := db.Write(context.Background(), func(c *store.Conn) error {
		_, err := c.Exec("INSERT INTO t VALUES (?)", x)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// rows lists t through the primary connection (Do) or a reader (Query).
func rows(t *testing.T, db *store.DB, reader bool) []int {
	t.Helper()
	var out []int
	run := db.Do
	if reader {
		run = db.Query
	}
	if err := run(context.Background(), func(c *store.Conn) error {
		r, err := c.Query("SELECT x FROM t ORDER BY x")
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var x int
			r.Scan(&x)
			out = append(out, x)
		}
		return r.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGroupCommit_Visibility: writes of a group are visible at once on the
// primary connection, to others after the commit (at most the delay
// later), and a read on a reader connection commits first.
func TestGroupCommit_Visibility(t *testing.T) {
	db, other := groupDB(t, time.Hour)
	insert(t, db, 1)
	insert(t, db, 2)
	if got := rows(t, db, false); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("primary sees %v", got)
	}
	if got := rows(t, other, true); len(got) != 0 {
		t.Errorf("another connection sees the open group: %v", got)
	}
	if got := rows(t, db, true); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("reader connection sees %v", got)
	}
	if got := rows(t, other, true); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("after the reader's commit another connection sees %v", got)
	}
	insert(t, db, 3)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, other, true); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("after Flush: %v", got)
	}

	// The delay bounds how long a group stays open.
	db2, other2 := groupDB(t, 20*time.Millisecond)
	insert(t, db2, 7)
	deadline := time.Now().Add(5 * time.Second)
	for len(rows(t, other2, true)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("group not committed 5 s after a 20 ms delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Another process can write once the group committed.
	insert(t, other2, 8)
	if got := rows(t, db2, false); !slices.Equal(got, []int{7, 8}) {
		t.Errorf("after the other's write: %v", got)
	}
}

// TestGroupCommit_FailingOperation: an operation that fails (or panics)
// inside a group undoes its own changes only.
func TestGroupCommit_FailingOperation(t *testing.T) {
	ctx := context.Background()
	db, other := groupDB(t, time.Hour)
	insert(t, db, 1)
	boom := errors.New("boom")
	err := db.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("INSERT INTO t VALUES (2)"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want boom", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic not passed on")
			}
		}()
		db.Write(ctx, func(c *store.Conn) error {
			c.Exec("INSERT INTO t VALUES (3)")
			panic("in fn")
		})
	}()
	insert(t, db, 4)
	if got := rows(t, db, false); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("primary sees %v, want [1 4]", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, other, true); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("after Close another connection sees %v, want [1 4]", got)
	}
}

// TestGroupCommit_Off: turning group commit off commits the open group and
// makes every Write commit on its own again.
func TestGroupCommit_Off(t *testing.T) {
	db, other := groupDB(t, time.Hour)
	insert(t, db, 1)
	db.SetGroupCommit(0)
	if got := rows(t, other, true); !slices.Equal(got, []int{1}) {
		t.Errorf("after SetGroupCommit(0): %v", got)
	}
	insert(t, db, 2)
	if got := rows(t, other, true); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("without group commit: %v", got)
	}
}

// TestGroupCommit_LostGroup: when a group's COMMIT fails (here a deferred
// foreign key, the one failure a test can cause on demand), every
// operation of the group is rolled back, the OnGroupLost hook hears of
// it, and the failure is reported once: by the Flush that tried, or, when
// the commit timer tried, by the next Flush (as a kernel reports a failed
// writeback at the next fsync or close).
func TestGroupCommit_LostGroup(t *testing.T) {
	ctx := context.Background()
	for _, byTimer := range []bool{false, true} {
		db, other := groupDB(t, time.Hour)
		if byTimer {
			db.SetGroupCommit(20 * time.Millisecond)
		}
		var mu sync.Mutex
		var heard []error
		db.OnGroupLost(func(err error) { mu.Lock(); heard = append(heard, err); mu.Unlock() })
		nHeard := func() int { mu.Lock(); defer mu.Unlock(); return len(heard) }
		if err := db.Raw(ctx, func(c *store.Conn) error {
			for _, q := range []string{
				"PRAGMA foreign_keys = ON",
				"CREATE TABLE p (id INTEGER PRIMARY KEY)",
				"CREATE TABLE c (x INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)",
			} {
				if _, err := c.Exec(q); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		insert(t, db, 1)
		if err := db.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("INSERT INTO c VALUES (42)") // no parent: fails at COMMIT
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if byTimer {
			deadline := time.Now().Add(5 * time.Second)
			for nHeard() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		err := db.Flush()
		if err == nil {
			t.Fatalf("byTimer=%v: Flush after a failed commit: nil error", byTimer)
		}
		if nHeard() != 1 || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Errorf("byTimer=%v: hook heard %v", byTimer, heard)
		}
		if err := db.Flush(); err != nil {
			t.Errorf("byTimer=%v: the loss is reported twice: %v", byTimer, err)
		}
		if got := rows(t, db, false); len(got) != 0 {
			t.Errorf("byTimer=%v: rows of the lost group still there: %v", byTimer, got)
		}
		if got := rows(t, other, false); len(got) != 0 {
			t.Errorf("byTimer=%v: another connection sees %v", byTimer, got)
		}
		// The next group works.
		insert(t, db, 2)
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, other, false); !slices.Equal(got, []int{2}) {
			t.Errorf("byTimer=%v: after the loss: %v", byTimer, got)
		}
	}
}
