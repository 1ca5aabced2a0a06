package mount

import (
	"errors"
	"strconv"
	"strings"
)

// Info describes one agentfs mount of the mount table.
type Info struct {
	ID      int    // mount ID (/proc/self/mountinfo)
	Dir     string // mount point
	Source  string // the database path (FsName)
	Options string // per-superblock options
}

// UnescapeField decodes the octal escapes (\040 for a space) of a field of
// the mount table (/proc/self/mountinfo).
func UnescapeField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ErrNotMounted is returned by Unmount for a directory without an
// agentfs mount.
var ErrNotMounted = errors.New("not an agentfs mount")
