package hostfs

import (
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Atime, Mtime and Ctime are a stat's times.
func Atime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atim.Unix()) }
func Mtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtim.Unix()) }
func Ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }

// errNoAttr is what getxattr(2) answers for a missing attribute.
const errNoAttr = unix.ENODATA

// hostPolicy reports the extended attributes that belong to the host, not
// the file: security.* (SELinux labels, capabilities) and system.* (ACLs).
func hostPolicy(name string) bool {
	return strings.HasPrefix(name, "security.") || strings.HasPrefix(name, "system.")
}
