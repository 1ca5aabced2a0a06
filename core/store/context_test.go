//go:build !js

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// A write whose context is cancelled midway stops before its next
// statement and rolls back whole; an operation whose context is already
// done does not run at all.
func TestContext_CancelRollsBackWrite(t *testing.T) {
	db, _ := openStore(t)
	if err := db.Write(t.Context(), func(c *store.Conn) error {
		_, err := c.Exec("CREATE TABLE t (v INTEGER)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	err := db.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("INSERT INTO t VALUES (1)"); err != nil {
			return err
		}
		cancel()
		_, err := c.Exec("INSERT INTO t VALUES (2)")
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("write after cancel = %v, want context.Canceled", err)
	}
	var n int
	if err := db.Do(t.Context(), func(c *store.Conn) error {
		return c.QueryRow("SELECT count(*) FROM t").Scan(&n)
	}); err != nil || n != 0 {
		t.Fatalf("rows after the cancelled write = %d, %v; want 0 (rolled back)", n, err)
	}

	ran := false
	for name, op := range map[string]func(context.Context, func(*store.Conn) error) error{
		"Do": db.Do, "Write": db.Write, "Query": db.Query,
	} {
		if err := op(ctx, func(*store.Conn) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
			t.Errorf("%s with a done context = %v (ran %v), want context.Canceled without running", name, err, ran)
		}
	}
	expired, stop := context.WithDeadline(t.Context(), time.Unix(1, 0))
	defer stop()
	if err := db.Do(expired, func(*store.Conn) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Do past its deadline = %v, want context.DeadlineExceeded", err)
	}
}
