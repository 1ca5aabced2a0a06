//go:build !linux

package mount

import (
	"errors"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// ErrUnsupported is what Mount answers outside Linux: FUSE serving is
// built on Linux's /dev/fuse protocol. On macOS the CLI mounts through
// the system's NFS client instead (core/nfsserver).
var ErrUnsupported = errors.New("FUSE mounts need Linux")

// Server is a mounted filesystem; outside Linux there is none.
type Server struct{ dir string }

// Mount fails outside Linux with ErrUnsupported.
func Mount(dir string, fsys *vfs.FS, opts Options) (*Server, error) {
	return nil, ErrUnsupported
}

// Dir is the mount point.
func (s *Server) Dir() string { return s.dir }

// Wait returns at once: nothing is served.
func (s *Server) Wait() {}

// Unmount fails: nothing is mounted.
func (s *Server) Unmount() error { return ErrNotMounted }

// List returns no FUSE mounts: there are none outside Linux.
func List() ([]Info, error) { return nil, nil }

// Find finds no FUSE mount at dir.
func Find(dir string) (Info, bool, error) { return Info{}, false, nil }

// Unmount answers ErrNotMounted: no FUSE mount exists outside Linux.
func Unmount(dir string, lazy bool) error { return ErrNotMounted }
