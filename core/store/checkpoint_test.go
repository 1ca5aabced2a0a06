//go:build !js

package store_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/internal/rawsql"
	"github.com/agentfs-go/agentfs/core/store"
)

// openStore opens a new database, closed when the test ends.
func openStore(t *testing.T) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// walFrames reads how many frames the WAL holds and how many of them are
// in the database file, from a connection of its own.
func walFrames(t *testing.T, path string) (logFrames, moved int64) {
	t.Helper()
	db, err := rawsql.Open("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy int64
	// A PASSIVE checkpoint with nothing new to copy only reports.
	if err := db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &moved); err != nil {
		t.Fatal(err)
	}
	return logFrames, moved
}

// Commits do not checkpoint; the background checkpointer copies the WAL
// into the database file soon after.
func TestCheckpoint_InBackground(t *testing.T) {
	ctx := context.Background()
	db, path := openStore(t)
	blob := make([]byte, 1<<20)
	err := db.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("CREATE TABLE t (x)"); err != nil {
			return err
		}
		for range 8 { // 8 MiB: past SQLite's automatic checkpoint at 1000 pages
			if _, err := c.Exec("INSERT INTO t VALUES (?)", blob); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		logFrames, moved := walFrames(t, path)
		if logFrames >= 2000 && moved == logFrames {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("WAL frames %d, copied %d: the background checkpoint did not run", logFrames, moved)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A writer that never pauses would keep a PASSIVE checkpoint from ever
// restarting the WAL; once it passes walLimit frames a write checkpoints
// first and restarts it, so the WAL stays bounded by walLimit plus what
// is written while a checkpoint runs, not by what is written in all.
func TestCheckpoint_WALBoundedUnderSustainedWrites(t *testing.T) {
	defer store.SetWALLimit(store.SetWALLimit(256))
	ctx := context.Background()
	db, path := openStore(t)
	if err := db.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("CREATE TABLE t (x)"); return err }); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 64<<10)
	var biggest int64
	for i := range 1536 { // 96 MiB in 64 KiB transactions, back to back
		if err := db.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("INSERT INTO t VALUES (?)", blob)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if i%32 == 0 {
			if st, err := os.Stat(path + "-wal"); err == nil {
				biggest = max(biggest, st.Size())
			}
		}
	}
	if biggest > 4<<20 {
		t.Fatalf("WAL file grew to %d MiB while 96 MiB were written; it should restart", biggest>>20)
	}
	t.Logf("largest WAL file: %.1f MiB", float64(biggest)/(1<<20))
}

// An explicit checkpoint leaves the database file complete and the WAL
// empty on disk: the footprint after Checkpoint is the database alone.
func TestCheckpoint_ExplicitTruncatesWAL(t *testing.T) {
	db, path := openStore(t)
	ctx := context.Background()
	blob := make([]byte, 1<<20)
	if err := db.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		err := db.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("INSERT OR REPLACE INTO t(k, v) VALUES (?, ?)", i, blob)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path + "-wal")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err == nil && st.Size() != 0 {
		t.Errorf("WAL is %d bytes after an explicit checkpoint, want 0", st.Size())
	}
}

// An explicit checkpoint right after a commit meets the background
// checkpointer the commit woke; it waits for it instead of answering busy
// and leaving the WAL at full size (what the bench's "after d +
// checkpoint" row once showed: a 72 MiB WAL beside a 72 MiB database).
func TestCheckpoint_ExplicitWaitsForBackground(t *testing.T) {
	db, path := openStore(t)
	ctx := context.Background()
	blob := make([]byte, 256<<10)
	if err := db.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		for j := range 4 {
			if err := db.Write(ctx, func(c *store.Conn) error {
				_, err := c.Exec("INSERT OR REPLACE INTO t(k, v) VALUES (?, ?)", i*4+j, blob)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if st, err := os.Stat(path + "-wal"); err == nil && st.Size() != 0 {
			t.Fatalf("round %d: WAL is %d bytes after an explicit checkpoint, want 0", i, st.Size())
		}
	}
}

// shmFrames reads the WAL's length in frames (mxFrame) from the wal-index
// header, without a connection: a checkpoint of the test's own would
// compete with the background checkpointer.
func shmFrames(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path + "-shm")
	if err != nil || len(b) < 20 {
		t.Fatalf("wal-index: %v (%d bytes)", err, len(b))
	}
	return int64(binary.NativeEndian.Uint32(b[16:]))
}

// Past half of walLimit, a background pass that copied all but its own
// commits asks the next write to checkpoint the short rest and restart the
// WAL: a writer of small commits never waits for the WAL to reach the
// bound and a whole checkpoint in line.
func TestCheckpoint_RestartsBeforeTheBound(t *testing.T) {
	defer store.SetWALLimit(store.SetWALLimit(256))
	ctx := context.Background()
	db, path := openStore(t)
	write := func(blob []byte) {
		t.Helper()
		if err := db.Write(ctx, func(c *store.Conn) error {
			_, err := c.Exec("INSERT INTO t VALUES (?)", blob)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(ctx, func(c *store.Conn) error { _, err := c.Exec("CREATE TABLE t (x)"); return err }); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 32<<10) // 8 frames and some
	for shmFrames(t, path) <= 128+16 {
		write(blob)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !db.RestartAsked() {
		if time.Now().After(deadline) {
			t.Fatalf("WAL of %d frames (limit 256): no background pass asked for a restart", shmFrames(t, path))
		}
		write(nil) // a small commit wakes the checkpointer
		time.Sleep(10 * time.Millisecond)
	}
	before := shmFrames(t, path)
	write(nil)
	if after := shmFrames(t, path); after >= before || before > 256 {
		t.Fatalf("WAL of %d frames, then %d after the next write: want a restart before the bound of 256", before, after)
	}
}
