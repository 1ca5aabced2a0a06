package vfs

import (
	"io/fs"
	"syscall"
)

// pathErr builds the error every operation returns: a *fs.PathError
// wrapping a syscall.Errno, so errors.Is(err, fs.ErrNotExist) works and
// errors.As gives the errno.
func pathErr(op, path string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: path, Err: errno}
}

// errnoOf extracts the errno from an error made by this package, or 0.
func errnoOf(err error) syscall.Errno {
	if pe, ok := err.(*fs.PathError); ok {
		if e, ok := pe.Err.(syscall.Errno); ok {
			return e
		}
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return 0
}

// Errno returns the POSIX error number carried by err, or 0 when err is
// not a filesystem error (for example a database failure).
func Errno(err error) syscall.Errno {
	for err != nil {
		if e := errnoOf(err); e != 0 {
			return e
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0
		}
		err = u.Unwrap()
	}
	return 0
}
