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
