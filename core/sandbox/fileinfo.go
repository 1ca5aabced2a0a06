package sandbox

import (
	"io/fs"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// fileInfo presents a vfs.Stat to the shell interpreter.
type fileInfo struct {
	name string
	st   vfs.Stat
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.st.Size }
func (fi fileInfo) Mode() fs.FileMode  { return fi.st.FileMode() }
func (fi fileInfo) ModTime() time.Time { return fi.st.Mtime }
func (fi fileInfo) IsDir() bool        { return fi.st.IsDir() }

// Sys is a *syscall.Stat_t where the platform has one: the interpreter's
// -O and -G tests read it (see sys_unix.go).
func (fi fileInfo) Sys() any { return sysStat(fi.st) }
