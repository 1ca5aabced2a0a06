package vfs

import (
	"fmt"
	"syscall"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
)

// The names of modes, file types and errors that every door prints: the
// CLI, the sandbox's ls and stat, the MCP tools, the overlay's diff and
// the SDKs' agent tools all call these, so they cannot disagree.

// ModeString renders a POSIX mode as ls -l does: "drwxr-xr-x",
// "-rwsr-x--T".
func ModeString(mode uint32) string {
	b := []byte("----------")
	b[0] = typeLetters[mode&schema.ModeType]
	if b[0] == 0 || b[0] == 'f' {
		b[0] = '-'
	}
	const rwx = "rwxrwxrwx"
	for i := range 9 {
		if mode&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	special := func(bit uint32, i int, set, unset byte) {
		if mode&bit != 0 {
			if b[i] == 'x' {
				b[i] = set
			} else {
				b[i] = unset
			}
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}

var typeLetters = map[uint32]byte{
	schema.ModeRegular: 'f', schema.ModeDir: 'd', schema.ModeSymlink: 'l', schema.ModeFIFO: 'p',
	schema.ModeChar: 'c', schema.ModeBlock: 'b', schema.ModeSocket: 's',
}

// TypeName is the short name of a mode's file type in tool outputs and
// diffs: file, dir, symlink, fifo, char, block or socket ("mode-NNN" for
// a type the format does not define).
func TypeName(mode uint32) string {
	switch mode & schema.ModeType {
	case schema.ModeRegular:
		return "file"
	case schema.ModeDir:
		return "dir"
	case schema.ModeSymlink:
		return "symlink"
	case schema.ModeFIFO:
		return "fifo"
	case schema.ModeChar:
		return "char"
	case schema.ModeBlock:
		return "block"
	case schema.ModeSocket:
		return "socket"
	}
	return fmt.Sprintf("mode-%o", mode&schema.ModeType)
}

// ModeString is ModeString(s.Mode).
func (s Stat) ModeString() string { return ModeString(s.Mode) }

// TypeName is TypeName(s.Mode).
func (s Stat) TypeName() string { return TypeName(s.Mode) }

// FileType is the file type as GNU stat's %F and `agentfs fs stat` print
// it: "regular file", "regular empty file", "directory", "symbolic link",
// "fifo", "character special file", "block special file", "socket".
func (s Stat) FileType() string {
	switch s.Type() {
	case schema.ModeDir:
		return "directory"
	case schema.ModeSymlink:
		return "symbolic link"
	case schema.ModeFIFO:
		return "fifo"
	case schema.ModeChar:
		return "character special file"
	case schema.ModeBlock:
		return "block special file"
	case schema.ModeSocket:
		return "socket"
	}
	if s.Size == 0 {
		return "regular empty file"
	}
	return "regular file"
}

// ErrnoName is the symbolic name of a POSIX error number ("ENOENT"), or
// "errno N" for a number without one.
func ErrnoName(e syscall.Errno) string {
	if n := hostfs.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}
