//go:build js

package hostfs

import (
	"syscall"
	"time"
)

// ONoFollow is Linux's O_NOFOLLOW, the value the engine's callers send.
const ONoFollow = 0o400000

// Atime, Mtime and Ctime are a stat's times.
func Atime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atime, st.AtimeNsec) }
func Mtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtime, st.MtimeNsec) }
func Ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctime, st.CtimeNsec) }

// Mknod: the host's file API cannot make special files.
func Mknod(path string, mode uint32, dev int) error { return syscall.ENOSYS }

// FreeBytes: unknown (an in-memory database grows as memory allows).
func FreeBytes(path string) int64 { return 0 }

// Xattrs: the host's file API has no extended attributes.
func Xattrs(path string) ([]Xattr, error) { return nil, nil }

// ErrnoName is the symbolic name of an error number ("ENOENT"), "" for
// one the engine does not produce. GOOS=js numbers errors as Linux does.
func ErrnoName(e syscall.Errno) string { return errnoNames[e] }

var errnoNames = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.EIO: "EIO", syscall.E2BIG: "E2BIG",
	syscall.EBADF: "EBADF", syscall.EAGAIN: "EAGAIN", syscall.ENOMEM: "ENOMEM", syscall.EACCES: "EACCES",
	syscall.EFAULT: "EFAULT", syscall.EBUSY: "EBUSY", syscall.EEXIST: "EEXIST", syscall.EXDEV: "EXDEV",
	syscall.ENODEV: "ENODEV", syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR", syscall.EINVAL: "EINVAL",
	syscall.ENFILE: "ENFILE", syscall.EMFILE: "EMFILE", syscall.EFBIG: "EFBIG", syscall.ENOSPC: "ENOSPC",
	syscall.ESPIPE: "ESPIPE", syscall.EROFS: "EROFS", syscall.EMLINK: "EMLINK", syscall.ERANGE: "ERANGE",
	syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.ENOSYS: "ENOSYS", syscall.ENOTEMPTY: "ENOTEMPTY",
	syscall.ELOOP: "ELOOP", syscall.ENODATA: "ENODATA", syscall.EOVERFLOW: "EOVERFLOW",
	syscall.EILSEQ: "EILSEQ", syscall.ENOTSUP: "ENOTSUP", syscall.ESTALE: "ESTALE",
	syscall.ECANCELED: "ECANCELED", syscall.ETIMEDOUT: "ETIMEDOUT",
}
