//go:build linux

package hostcopy

import (
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// hostAtime is the access time of a host file.
func hostAtime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec)) // int32 on 32-bit systems
	}
	return fi.ModTime()
}

// Lchtimes sets the times of a host path without following a final
// symlink (utimensat with AT_SYMLINK_NOFOLLOW).
func Lchtimes(p string, atime, mtime time.Time) error {
	b, err := syscall.BytePtrFromString(p)
	if err != nil {
		return &fs.PathError{Op: "utimensat", Path: p, Err: err}
	}
	const atSymlinkNofollow = 0x100
	cwd := -100 // AT_FDCWD
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(atime.UnixNano()), syscall.NsecToTimespec(mtime.UnixNano())}
	_, _, e := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(cwd), uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(&ts[0])), atSymlinkNofollow, 0, 0)
	if e != 0 {
		return &fs.PathError{Op: "utimensat", Path: p, Err: e}
	}
	return nil
}
