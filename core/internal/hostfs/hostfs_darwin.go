package hostfs

import (
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Atime, Mtime and Ctime are a stat's times (macOS names them *timespec).
func Atime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atimespec.Unix()) }
func Mtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtimespec.Unix()) }
func Ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Unix()) }

// errNoAttr is what getxattr(2) answers for a missing attribute on macOS.
const errNoAttr = unix.ENOATTR

// hostPolicy reports the extended attributes that belong to the host, not
// the file: com.apple.* (quarantine, provenance, Finder and security
// metadata).
func hostPolicy(name string) bool { return strings.HasPrefix(name, "com.apple.") }
