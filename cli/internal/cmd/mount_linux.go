package cmd

import (
	"os"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mount"
)

// mountedFS is a served mount: Wait returns once it is unmounted.
type mountedFS interface {
	Wait()
	Unmount() error
}

// mountSupported: on Linux, agentfs mount is FUSE and needs /dev/fuse.
func mountSupported() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return userError{msg: "FUSE is not available: /dev/fuse is missing", hint: "modprobe fuse (in a container: run it with --device /dev/fuse)"}
	}
	return nil
}

// mountFS mounts the agent's filesystem on dir with FUSE.
func mountFS(dir string, a *core.Agent, opts mount.Options) (mountedFS, error) {
	srv, err := mount.Mount(dir, a.FS, opts)
	if err != nil {
		if os.Geteuid() != 0 {
			return nil, userError{msg: err.Error(), hint: "run as root, or install fusermount3 (apt-get install fuse3)"}
		}
		return nil, err
	}
	return srv, nil
}

// unmountDir unmounts the agentfs FUSE mount at dir (lazy: detach even if
// in use).
func unmountDir(dir string, lazy bool) error { return mount.Unmount(dir, lazy) }
