package hostfs

import (
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// Windows has no stat(2): inode numbers, modes, owners and device numbers
// of host files, which an overlay over a host directory (init --base, run)
// records of its base, do not exist there. The engine itself (a database
// file, its filesystem, kv and tool calls) needs none of this; an overlay
// over a host directory answers ENOSYS.

// StatBuf has the fields of a Unix stat(2) result that the engine reads.
type StatBuf struct {
	Dev, Ino, Rdev        uint64
	Mode, Nlink, Uid, Gid uint32
	Size, Blksize, Blocks int64
}

// Lstat, Stat and Fstat: not on Windows.
func Lstat(path string, st *StatBuf) error { return syscall.ENOSYS }
func Stat(path string, st *StatBuf) error  { return syscall.ENOSYS }
func Fstat(fd uintptr, st *StatBuf) error  { return syscall.ENOSYS }

// Atime, Mtime and Ctime: no StatBuf is ever filled on Windows.
func Atime(st *StatBuf) time.Time { return time.Time{} }
func Mtime(st *StatBuf) time.Time { return time.Time{} }
func Ctime(st *StatBuf) time.Time { return time.Time{} }

// ONoFollow and ODirectory are Linux's O_NOFOLLOW and O_DIRECTORY, the
// values the engine's callers send (Windows' os.O_* flags have neither and
// use none of these bits).
const (
	ONoFollow  = 0o400000
	ODirectory = 0o200000
)

// Mknod: Windows has no device nodes, FIFOs or sockets in its file system.
func Mknod(path string, mode uint32, dev int) error { return syscall.ENOSYS }

// FreeBytes is the space available to us on the volume holding path, 0 if
// unknown.
func FreeBytes(path string) int64 {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0
	}
	return int64(avail)
}

// Xattrs: host extended attributes are not read on Windows.
func Xattrs(path string) ([]Xattr, error) { return nil, nil }
