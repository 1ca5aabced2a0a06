//go:build unix

package cmd

import (
	"errors"
	"os"
	"syscall"
)

// detached is the process attribute of a background server: its own
// session, so that the terminal's signals and hangup do not reach it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// processGone reports whether no process has this id (signal 0 checks
// without sending).
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// SQLite's lock bytes in a database file (its unix VFS, and ncruces'):
// the pending byte at 1 GiB, the reserved byte after it, then the shared
// range.
const (
	sqlitePendingByte = 0x40000000
	sqliteSharedEnd   = sqlitePendingByte + 2 + 510
)

// databaseUser reports whether another process holds a SQLite lock on the
// database file at path (every connection in WAL mode holds a shared one
// while it is open), and its pid when the lock says (-1: an open file
// description lock, which names none). Call it only while this process
// has no connection to path: closing the descriptor it opens would drop
// such a connection's locks.
func databaseUser(path string) (pid int, inUse bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sqlitePendingByte, Len: sqliteSharedEnd - sqlitePendingByte}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0, false
	}
	return int(lk.Pid), true
}
