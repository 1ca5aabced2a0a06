//go:build darwin

package hostcopy

import (
	"os"
	"syscall"
	"time"
)

// hostAtime is the access time of a host file.
func hostAtime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Atimespec.Sec), int64(st.Atimespec.Nsec))
	}
	return fi.ModTime()
}

// Lchtimes would set the times of a symlink itself; the syscall package
// has no lutimes on this system, so symlink times are not kept.
func Lchtimes(string, time.Time, time.Time) error { return nil }
