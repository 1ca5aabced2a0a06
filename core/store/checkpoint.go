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
// never lets happen: the WAL would grow without bound. Some write has to
// wait while the last frames are copied. Copying them once the WAL had
// reached its bound stalled a writer of small commits (tools.record)
// 10-40 ms every thousand records, most of it an fsync of the 16 MiB of
// WAL that synchronous=NORMAL had left unsynced. So that wait is kept
// short:
//
//   - a commit that grew the WAL by walLimit/8 frames since the last
//     background pass wakes the checkpointer at once, instead of after
//     checkpointEvery: each pass syncs and copies a few MiB at most;
//   - once a pass ends with the WAL past walLimit/2 frames, all of it
//     copied but what was committed during the pass, the next write
//     checkpoints that short rest on the primary connection, under the
//     write lock, and the WAL restarts there. A write that finds a pass
//     running does not wait for it: the pass ends by asking again;
//   - only a WAL past walLimit frames (a reader's snapshot held the
//     passes back, or the checkpointer could not keep up) makes the next
//     write wait for a background pass in progress and checkpoint all of
//     the rest in line, as SQLite's own automatic checkpoint would. Its
//     length is read from the wal-index header in the -shm file, a
//     documented format.
//
// Checkpoints stay SQLite's own, with their syncs: durability and crash
// safety are those of SQLite's WAL.

// Other processes keep their own settings (SQLite's default checkpoints
// on their commits), which is harmless: checkpoints of any connection
// are compatible with each other.

// checkpointEvery is the least pause between two background checkpoints.
const checkpointEvery = 50 * time.Millisecond

// walLimit is how many frames (pages) the WAL may hold before the next
// write waits for a whole checkpoint in line: 16 MiB of 4 KiB pages, the
// size the WAL file is cut back to after it restarts (journal_size_limit).
// Past half of it, writes restart the WAL after a short checkpoint; every
// eighth of it, the background checkpointer runs early.
var walLimit int64 = 4096

// checkpointer is the background checkpointer of a writable DB.
type checkpointer struct {
	kick    chan struct{} // wakes it after a commit
	urgent  chan struct{} // ends its pause between passes: the WAL grew fast
	stop    chan struct{} // closed to stop it
	done    chan struct{} // closed when it has stopped
	limit   int64         // walLimit when it started
	long    atomic.Bool   // the WAL was seen longer than limit frames
	ready   atomic.Bool   // a pass left the WAL past limit/2 frames with only its own commits to copy
	next    atomic.Int64  // WAL length at which a commit wakes it early
	mu      sync.Mutex    // held while a checkpoint runs
	shmPath string
	shm     *os.File // the wal-index, for the WAL's length, opened at the first commit
	// frames takes the WAL's length as the driver reported it at the
	// primary connection's last commit (internal/sqlite's WALFrames),
	// nil when the driver cannot: the length is then read from shm, a
	// pread per commit.
	frames func() (int64, bool)
}

// walFrames is the number of valid frames in the WAL (mxFrame) right
// after a commit of the primary connection: as the driver reported it for
// that commit, or else read from the first copy of the wal-index header,
// a 32-bit integer in the host's byte order at offset 16 of the -shm file.
func (cp *checkpointer) walFrames() (int64, bool) {
	if cp.frames != nil {
		if n, ok := cp.frames(); ok {
			return n, true
		}
	}
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
	if !walMode || db.opts.ReadOnly || db.opts.building || db.primary == nil || db.readers == nil {
		return
	}
	// The pragma answers with the value now in force.
	var pages int64
	if err := db.primary.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint = 0").Scan(&pages); err != nil || pages != 0 {
		return
	}
	cp := &checkpointer{kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), limit: walLimit}
	cp.restarted()
	cp.shmPath = db.path + "-shm"
	// After the pragma, which sets the WAL hook that WALFrames replaces.
	db.primary.Raw(func(dc any) error {
		if w, ok := dc.(interface{ WALFrames() func() (int64, bool) }); ok {
			cp.frames = w.WALFrames()
		}
		return nil
	})
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

// restarted notes a WAL that restarts (or is empty): nothing to ask of
// the next write, and the next early pass after limit/8 frames.
func (cp *checkpointer) restarted() {
	cp.long.Store(false)
	cp.ready.Store(false)
	cp.next.Store(max(cp.limit/8, 1))
}

// committed wakes the background checkpointer after a commit, at once if
// the WAL grew by limit/8 frames since its last pass, and notes a WAL
// grown past walLimit.
func (db *DB) committed() {
	if cp := db.ckpt; cp != nil {
		select {
		case cp.kick <- struct{}{}:
		default:
		}
		if n, ok := cp.walFrames(); ok {
			if n > cp.limit {
				cp.long.Store(true)
			}
			if n >= cp.next.Load() {
				select {
				case cp.urgent <- struct{}{}:
				default:
				}
			}
		}
	}
}

// catchUp checkpoints on the primary connection, so that the write about
// to begin restarts the WAL, when a background pass asked for it (the rest
// to copy is short) or when the WAL has grown past walLimit. The caller
// holds db.mu, outside any transaction.
func (db *DB) catchUp(ctx context.Context) {
	cp := db.ckpt
	if cp == nil {
		return
	}
	switch {
	case cp.long.Load():
		cp.mu.Lock() // wait for a background checkpoint in progress
	case cp.ready.Load():
		if !cp.mu.TryLock() {
			return // a pass is running: it asks again when it ends
		}
		cp.ready.Store(false)
	default:
		return
	}
	defer cp.mu.Unlock()
	if busy, logFrames, moved, err := checkpointOn(ctx, db.primary); err == nil && busy == 0 && moved == logFrames {
		cp.restarted()
	}
}

// checkpointOn runs a PASSIVE checkpoint on conn and returns SQLite's
// answer: busy, frames in the WAL, frames copied into the database file.
func checkpointOn(ctx context.Context, conn *sql.Conn) (busy, logFrames, moved int64, err error) {
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &moved)
	return busy, logFrames, moved, err
}

// runCheckpoints runs a PASSIVE checkpoint after commits on a connection
// of the reader pool, at most every checkpointEvery unless the WAL grows
// fast, until stop closes.
func (db *DB) runCheckpoints(cp *checkpointer) {
	defer close(cp.done)
	for {
		select {
		case <-cp.kick:
		case <-cp.stop:
			return
		}
		select { // a wake-up for the pass about to run
		case <-cp.urgent:
		default:
		}
		if conn, err := db.readers.Conn(context.Background()); err == nil {
			cp.mu.Lock()
			_, logFrames, moved, err := checkpointOn(context.Background(), conn)
			if err == nil {
				cp.next.Store(logFrames + max(cp.limit/8, 1))
				switch {
				case logFrames > cp.limit:
					cp.long.Store(true)
				case logFrames > cp.limit/2 && moved == logFrames:
					cp.ready.Store(true)
				}
			}
			cp.mu.Unlock()
			conn.Close()
		}
		// While a write is asked to restart the WAL, a pass beside it
		// would only make it skip its turn: the WAL growing fast wakes
		// the next one only after the restart.
		pause := time.NewTimer(checkpointEvery)
	wait:
		for {
			select {
			case <-pause.C:
				break wait
			case <-cp.urgent:
				if !cp.ready.Load() {
					pause.Stop()
					break wait
				}
			case <-cp.stop:
				pause.Stop()
				return
			}
		}
	}
}
