package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Background checkpoints.
//
// SQLite checkpoints automatically in the COMMIT that grows the WAL past
// 1000 pages: that commit copies the WAL into the database file and fsyncs
// both before it returns. A 64 MiB writeFile paid for its data twice that
// way (110-140 MiB/s; 170-210 MiB/s without), a burst of small writes
// stalled every 1000 pages for tens of milliseconds, and a bulk copy
// through a FUSE mount spent most of its time there. So no connection of
// ours checkpoints on commit (wal_autocheckpoint = 0): a goroutine runs
// PASSIVE checkpoints on a reader connection after commits, which never
// block the writer, and commits only wake it.
//
// The WAL restarts from its beginning only at a write that finds all of
// it copied, which a checkpoint running beside a writer that never pauses
// never lets happen: the WAL would grow without bound. So after a commit
// that leaves the WAL longer than walLimit frames (its length is read
// from the wal-index header in the -shm file, a documented format), the
// next write first waits for a background checkpoint in progress, then
// checkpoints on the primary connection, under the write lock, as
// SQLite's own automatic checkpoint would (cheap when the background one
// has copied most of it), and the WAL restarts there.
//
// Other processes keep their own settings (SQLite's default checkpoints
// on their commits), which is harmless: checkpoints of any connection
// are compatible with each other.

// checkpointEvery is the least pause between two background checkpoints.
const checkpointEvery = 50 * time.Millisecond

// walLimit is how many frames (pages) the WAL may hold before the next
// write checkpoints in line: 16 MiB of 4 KiB pages, the size the WAL file
// is cut back to after it restarts (journal_size_limit).
var walLimit int64 = 4096

// checkpointer is the background checkpointer of a writable DB.
type checkpointer struct {
	kick    chan struct{} // wakes it after a commit
	stop    chan struct{} // closed to stop it
	done    chan struct{} // closed when it has stopped
	limit   int64         // walLimit when it started
	long    atomic.Bool   // the WAL was seen longer than limit frames
	mu      sync.Mutex    // held while a checkpoint runs
	shmPath string
	shm     *os.File // the wal-index, for the WAL's length, opened at the first commit
}

// walFrames reads the number of valid frames in the WAL (mxFrame) from the
// first copy of the wal-index header: a 32-bit integer in the host's byte
// order at offset 16 of the -shm file.
func (cp *checkpointer) walFrames() (int64, bool) {
	if cp.shm == nil {
		// SQLite creates the file at the first transaction.
		f, err := os.Open(cp.shmPath)
		if err != nil {
			return 0, false
		}
		cp.shm = f
	}
	var b [4]byte
	if _, err := cp.shm.ReadAt(b[:], 16); err != nil {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint32(b[:])), true
}

// startCheckpointer turns off checkpoints on commit for the primary
// connection and starts the background checkpointer. Without it (a
// read-only database, or the pragma refused) SQLite's own stay on.
func (db *DB) startCheckpointer(ctx context.Context) {
	if !walMode || db.opts.ReadOnly || db.primary == nil || db.readers == nil {
		return
	}
	// The pragma answers with the value now in force.
	var pages int64
	if err := db.primary.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint = 0").Scan(&pages); err != nil || pages != 0 {
		return
	}
	cp := &checkpointer{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), limit: walLimit}
	cp.shmPath = db.path + "-shm"
	db.ckpt = cp
	go db.runCheckpoints(cp)
}

// stopCheckpointer stops the background checkpointer and waits for it.
// The caller holds db.mu.
func (db *DB) stopCheckpointer() {
	if cp := db.ckpt; cp != nil {
		close(cp.stop)
		<-cp.done
		if cp.shm != nil {
			cp.shm.Close()
		}
		db.ckpt = nil
	}
}

// committed wakes the background checkpointer after a commit and notes a
// WAL grown past walLimit.
func (db *DB) committed() {
	if cp := db.ckpt; cp != nil {
		select {
		case cp.kick <- struct{}{}:
		default:
		}
		if n, ok := cp.walFrames(); ok && n > cp.limit {
			cp.long.Store(true)
		}
	}
}

// catchUp checkpoints on the primary connection when the WAL has grown
// past walLimit, so that the write about to begin restarts it. The caller
// holds db.mu, outside any transaction.
func (db *DB) catchUp(ctx context.Context) {
	if cp := db.ckpt; cp != nil && cp.long.Load() {
		cp.mu.Lock() // wait for a background checkpoint in progress
		defer cp.mu.Unlock()
		if busy, logFrames, moved, err := checkpointOn(ctx, db.primary); err == nil && busy == 0 && moved == logFrames {
			cp.long.Store(false)
		}
	}
}

// checkpointOn runs a PASSIVE checkpoint on conn and returns SQLite's
// answer: busy, frames in the WAL, frames copied into the database file.
func checkpointOn(ctx context.Context, conn *sql.Conn) (busy, logFrames, moved int64, err error) {
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &moved)
	return busy, logFrames, moved, err
}

// runCheckpoints runs a PASSIVE checkpoint after commits, at most every
// checkpointEvery, on a connection of the reader pool, until stop closes.
func (db *DB) runCheckpoints(cp *checkpointer) {
	defer close(cp.done)
	for {
		select {
		case <-cp.kick:
		case <-cp.stop:
			return
		}
		if conn, err := db.readers.Conn(context.Background()); err == nil {
			cp.mu.Lock()
			if _, logFrames, _, err := checkpointOn(context.Background(), conn); err == nil && logFrames > cp.limit {
				cp.long.Store(true)
			}
			cp.mu.Unlock()
			conn.Close()
		}
		select {
		case <-time.After(checkpointEvery):
		case <-cp.stop:
			return
		}
	}
}
