package vfs

import (
	"errors"
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
//
// It uses errors.As so that errors joined with errors.Join or wrapped by
// fmt.Errorf with several %w verbs (Unwrap() []error) are searched too; a
// plain walk of the single-Unwrap chain missed those.
func Errno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}
