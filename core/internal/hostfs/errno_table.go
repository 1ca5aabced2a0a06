//go:build js || windows

package hostfs

import "syscall"

// ErrnoName is the symbolic name of an error number ("ENOENT"), "" for
// one the engine does not produce. GOOS=js numbers errors as Linux does;
// Windows has no errno names of its own, and the syscall package gives the
// POSIX ones invented numbers, which this table maps back.
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
