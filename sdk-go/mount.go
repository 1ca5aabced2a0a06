package agentfs

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"

	"github.com/agentfs-go/agentfs/core/mount"
)

// Mount is the agent's filesystem mounted on a host directory (FUSE), the
// escape hatch from the in-process sandbox: any native program (git, a
// compiler, tar) runs over the agent's files at Path, and what it writes
// is in the agent, through the same engine, when it returns. Unmount ends
// it.
type Mount struct {
	// Path is the mount point, absolute.
	Path string

	srv  *mount.Server
	temp bool // Path was made by MountSandbox: Unmount removes it
	a    *AgentFS

	mu   sync.Mutex
	done bool
}

// MountOptions tune MountSandbox.
type MountOptions struct {
	// Dir is the host directory to mount on (it must exist and be
	// empty); empty: a new temporary directory, removed by Unmount.
	Dir string
	// Logger receives the engine errors a FUSE reply can only call EIO
	// (default: discarded).
	Logger *log.Logger
}

// MountSandbox mounts the agent's filesystem on a host directory so that
// real Linux processes run over it (agentOS's mountSandbox; the CLI's
// `agentfs mount`, served here, in this process, by the same engine).
// It needs Linux with /dev/fuse (and fusermount3 when not root).
//
// The kernel caches what it read for up to a few seconds: write through
// the mount while it is in use, or expect changes made meanwhile through
// FS() to show in the mount late. After Unmount, everything the programs
// wrote is in the agent.
func (a *AgentFS) MountSandbox(opts MountOptions) (*Mount, error) {
	dir, temp := opts.Dir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "agentfs-mount-")
		if err != nil {
			return nil, err
		}
		dir, temp = d, true
	}
	lg := opts.Logger
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	srv, err := mount.Mount(dir, a.agent.FS, mount.Options{FsName: a.agent.Path(), Logger: lg})
	if err != nil {
		if temp {
			os.Remove(dir)
		}
		return nil, fmt.Errorf("agentfs: mountSandbox: %w", err)
	}
	m := &Mount{Path: srv.Dir(), srv: srv, temp: temp, a: a}
	a.mmu.Lock()
	if a.mounts == nil {
		a.mounts = map[*Mount]struct{}{}
	}
	a.mounts[m] = struct{}{}
	a.mmu.Unlock()
	return m, nil
}

// Unmount unmounts the directory (removing it when MountSandbox made it).
// It fails with EBUSY while a process still uses the mount (a shell whose
// working directory it is, an open file); once it succeeded, later calls
// return nil.
func (m *Mount) Unmount() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return nil
	}
	if err := m.srv.Unmount(); err != nil {
		return fmt.Errorf("agentfs: unmount %s: %w", m.Path, err)
	}
	m.done = true
	m.a.mmu.Lock()
	delete(m.a.mounts, m)
	m.a.mmu.Unlock()
	if m.temp {
		return os.Remove(m.Path)
	}
	return nil
}

// unmountAll ends the agent's mounts before its database closes.
func (a *AgentFS) unmountAll() error {
	a.mmu.Lock()
	ms := make([]*Mount, 0, len(a.mounts))
	for m := range a.mounts {
		ms = append(ms, m)
	}
	a.mmu.Unlock()
	var errs []error
	for _, m := range ms {
		errs = append(errs, m.Unmount())
	}
	return errors.Join(errs...)
}
