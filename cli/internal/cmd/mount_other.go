//go:build !linux && !darwin

package cmd

import (
	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mount"
)

// mountedFS is a served mount: Wait returns once it is unmounted.
type mountedFS interface {
	Wait()
	Unmount() error
}

// errNoMounts says in one line what works instead where the system has
// neither FUSE nor an NFS client agentfs can drive.
var errNoMounts = userError{
	msg:  "agentfs mount needs Linux (FUSE) or macOS (NFS)",
	hint: "agentfs serve nfs ID serves the files to an NFS client; agentfs sh ID works on them in-process",
}

func mountSupported() error { return errNoMounts }

func mountFS(string, *core.Agent, mount.Options) (mountedFS, error) { return nil, errNoMounts }

// unmountDir: nothing can be mounted here.
func unmountDir(string, bool) error { return mount.ErrNotMounted }
