package store

import (
	"context"
	"fmt"
	"time"
)

// Group commit.
//
// A commit costs far more than the statements of a small operation: on
// this machine an UPDATE inside a transaction takes about 3 µs, the same
// UPDATE in a transaction of its own (BEGIN IMMEDIATE ... COMMIT, WAL
// append, WAL index update) about 35 µs. A FUSE mount sends many small
// operations in a row (untarring one file is a create, a write, three
// setattrs, a flush and a release), so it lets consecutive writes share one
// transaction: the first Write of a group begins it, each Write runs inside
// a savepoint (so that a failing operation still undoes exactly its own
// changes), and the group commits at the latest maxDelay after it began,
// or before anything that must see it from outside the primary connection:
// a read on a reader connection, Raw (Sync, checkpoints), Close.
//
// What changes for other processes: they see the group's changes when it
// commits, at most maxDelay late, and a writer among them waits for the
// write lock at most that long. What changes for a crash: the operations
// of a group not yet committed are lost together, as if they had never
// returned (like data in a kernel's writeback cache). A failing COMMIT
// rolls the whole group back; DataVersion then changes, so callers'
// caches drop what the lost operations taught them.

// groupState is the open group, guarded by DB.mu.
type groupState struct {
	delay time.Duration
	open  bool
	gen   uint64 // which group a commit timer belongs to
	dv    int64  // data version read when the group began
	lost  int64  // groups whose COMMIT failed (added to DataVersion)
	// lostErr is why the last group was lost, kept until Flush reports it
	// (like a kernel's writeback error, reported by the next fsync/close).
	lostErr error
	onLost  func(error) // OnGroupLost
	ops     int         // operations of the open group that returned success
}

// OnGroupLost sets fn to be called (under the DB's lock: fn must not use
// the DB) each time a group is rolled back after some of its operations
// had returned success, with the reason. A mount logs it: programs were
// told those operations happened.
func (db *DB) OnGroupLost(fn func(error)) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.group.onLost = fn
}

// loseGroup rolls the open group back after err. The caller holds db.mu.
// Only a group with operations that returned success is a loss to report.
func (db *DB) loseGroup(c *Conn, err error) {
	db.rollback(c)
	g := &db.group
	g.open = false
	db.groupOpen.Store(false)
	g.lost++
	if g.ops == 0 {
		return
	}
	err = fmt.Errorf("group commit: operations since the last commit were rolled back: %w", classify(err))
	g.lostErr = err
	db.groupLost.Store(true)
	if g.onLost != nil {
		g.onLost(err)
	}
}

// SetGroupCommit makes consecutive Writes share one transaction that
// commits at most maxDelay after it began (see above). 0 turns it off
// (committing an open group first).
func (db *DB) SetGroupCommit(maxDelay time.Duration) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.setGroupCommit(maxDelay)
}

func (db *DB) setGroupCommit(maxDelay time.Duration) {
	if maxDelay <= 0 {
		db.commitGroup()
	}
	db.group.delay = max(maxDelay, 0)
}

// commitGroup commits the open group, if any. The caller holds db.mu.
func (db *DB) commitGroup() error {
	if !db.group.open {
		return nil
	}
	if db.primary == nil {
		db.group.open = false
		db.groupOpen.Store(false)
		return ErrClosed
	}
	if _, err := db.primary.ExecContext(context.Background(), "COMMIT"); err != nil {
		db.loseGroup(&Conn{c: db.primary}, err)
		db.committed()
		return classify(err) // reported again by the caller's takeLostErr if it lost operations
	}
	db.group.open = false
	db.groupOpen.Store(false)
	db.committed()
	return nil
}

// takeLostErr returns the error that lost the last group, once. The
// caller holds db.mu.
func (db *DB) takeLostErr() error {
	err := db.group.lostErr
	db.group.lostErr = nil
	db.groupLost.Store(false)
	return err
}

// Flush commits the open group now. It fails if the group could not
// commit, or if an earlier group was lost since the last Flush (its
// commit timer failed, or an operation could not undo itself): the
// caller's close or fsync then reports what a program was told had
// happened and did not.
func (db *DB) Flush() error {
	if !db.groupOpen.Load() && !db.groupLost.Load() {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.commitGroup()
	return db.takeLostErr()
}

// groupWrite is Write when group commit is on; the caller holds db.mu.
func (db *DB) groupWrite(ctx context.Context, fn func(c *Conn) error) (err error) {
	g := &db.group
	c := &Conn{c: db.primary, ctx: context.WithoutCancel(ctx), caller: ctx}
	if !g.open {
		db.catchUp(c.ctx)
		if err := db.begin(c); err != nil {
			return err
		}
		if err := db.readDataVersion(c); err != nil {
			db.rollback(c)
			return err
		}
		g.open, g.dv, g.ops = true, c.dv, 0
		db.groupOpen.Store(true)
		g.gen++
		gen := g.gen
		time.AfterFunc(g.delay, func() {
			db.mu.Lock()
			defer db.mu.Unlock()
			if g.open && g.gen == gen {
				db.commitGroup()
			}
		})
	}
	// Nobody else can commit while the group holds the write lock: the
	// version read when it began is still current.
	c.dv, c.lost = g.dv, g.lost
	if _, err := c.c.ExecContext(c.ctx, "SAVEPOINT op"); err != nil {
		// The group's transaction is unusable: end it.
		db.loseGroup(c, err)
		return classify(err)
	}
	undo := func() {
		if _, err := c.c.ExecContext(context.Background(), "ROLLBACK TO op"); err != nil {
			db.loseGroup(c, err)
			return
		}
		c.c.ExecContext(context.Background(), "RELEASE op")
	}
	defer func() {
		if p := recover(); p != nil {
			undo()
			panic(p)
		}
		if err != nil {
			undo()
			return
		}
		if _, rerr := c.c.ExecContext(c.ctx, "RELEASE op"); rerr != nil {
			undo()
			err = classify(rerr)
			return
		}
		g.ops++
	}()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fn(c)
}

// flushForReaders commits an open group before a read on a reader
// connection, which would not see it otherwise.
func (db *DB) flushForReaders() {
	if db.groupOpen.Load() {
		db.Flush()
	}
}
