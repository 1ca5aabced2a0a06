//go:build cgo

package sqlite_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// sharedLockHeld says whether this process holds a POSIX lock on the
// database file at path at SQLite's SHARED range (/proc/locks).
func sharedLockHeld(t *testing.T, path string) bool {
	t.Helper()
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skip("no /proc/locks")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	// "1: POSIX  ADVISORY  READ 1234 fe:00:5678 1073741826 1073742335"
	who := fmt.Sprintf(" %d ", os.Getpid())
	file := fmt.Sprintf(":%d 1073741826 ", s.Ino)
	for _, l := range strings.Split(string(locks), "\n") {
		if strings.Contains(l, "POSIX") && strings.Contains(l, who) && strings.Contains(l, file) {
			return true
		}
	}
	return false
}

// A File reads the database as it is, and closing it leaves the locks of
// this process's connections on the file in place (closing an *os.File
// of it does not).
func TestFile_KeepsTheProcessLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db := openWAL(t, path)
	if _, err := db.Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if !sharedLockHeld(t, path) {
		t.Fatal("the connection holds no shared lock on its database in WAL mode")
	}
	f, err := sqlite.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 16)
	if n, err := f.ReadAt(head, 0); n != 16 || err != nil || string(head) != "SQLite format 3\x00" {
		t.Fatalf("ReadAt = %d, %v, %q", n, err, head)
	}
	size, err := f.Size()
	if err != nil || size == 0 {
		t.Fatalf("Size = %d, %v", size, err)
	}
	tail := make([]byte, 10)
	if n, err := f.ReadAt(tail, size-4); n != 4 || err != io.EOF {
		t.Fatalf("ReadAt across the end = %d, %v; want 4, EOF", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
	if !sharedLockHeld(t, path) {
		t.Fatal("closing a File released the connection's lock")
	}
	whole, err := os.ReadFile(path) // what the engine no longer does
	if err != nil || !bytes.HasPrefix(whole, head) {
		t.Fatal(err)
	}
	if sharedLockHeld(t, path) {
		t.Fatal("the check cannot see a lock released: closing an *os.File kept it")
	}
}

func TestFile_Missing(t *testing.T) {
	_, err := sqlite.OpenFile(filepath.Join(t.TempDir(), "none.db"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenFile of a missing file = %v, want ErrNotExist", err)
	}
}
