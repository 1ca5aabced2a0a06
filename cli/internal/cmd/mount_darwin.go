package cmd

// On macOS, agentfs mount serves the agent's filesystem over NFSv3 on a
// loopback port (core/nfsserver, the server of "agentfs serve nfs") and
// mounts it with the system's NFS client, mount_nfs, as Turso's AgentFS
// does: macOS has no FUSE of its own. The server process lives as long as
// the mount; "agentfs umount DIR" (or umount DIR) ends both.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mount"
	"github.com/agentfs-go/agentfs/core/nfsserver"
)

const (
	mountNFS = "/sbin/mount_nfs"
	umount   = "/sbin/umount"
	// nfsSource is what mount(8) lists as the source of our mounts.
	nfsSource = "127.0.0.1:/"
)

// mountedFS is a served mount: Wait returns once it is unmounted.
type mountedFS interface {
	Wait()
	Unmount() error
}

func mountSupported() error {
	if _, err := os.Stat(mountNFS); err != nil {
		return userError{msg: "agentfs mount on macOS needs the system's NFS client (" + mountNFS + "), which is missing", hint: "agentfs serve nfs ID serves the files to another NFS client; agentfs sh ID works on them in-process"}
	}
	return nil
}

// nfsMount is one served NFS mount.
type nfsMount struct {
	dir    string
	cancel context.CancelFunc
	served chan error
	done   chan struct{}
	once   sync.Once
}

func mountFS(dir string, a *core.Agent, opts mount.Options) (mountedFS, error) {
	if opts.UID != nil || opts.GID != nil || opts.AllowOther {
		return nil, userError{msg: "--uid, --gid and --allow-other are FUSE options (Linux)", hint: "mount without them; the NFS mount shows the owners stored in the database"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &nfsMount{dir: dir, cancel: cancel, served: make(chan error, 1), done: make(chan struct{})}
	go func() { m.served <- nfsserver.ServeFS(ctx, ln, a.FS, nfsserver.Options{}) }()
	port := ln.Addr().(*net.TCPAddr).Port
	// vers=3 over TCP, MOUNT on the same port (no portmapper); nolocks:
	// the server has no NLM; actimeo=1: other processes may change the
	// database, as the server's FSSTAT cache hint says.
	o := fmt.Sprintf("vers=3,tcp,port=%d,mountport=%d,nolocks,actimeo=1", port, port)
	if out, err := exec.Command(mountNFS, "-o", o, nfsSource, dir).CombinedOutput(); err != nil {
		cancel()
		<-m.served
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return nil, userError{msg: "mount_nfs failed: " + msg, hint: "agentfs serve nfs ID serves the files without mounting them"}
	}
	go m.watch()
	return m, nil
}

// watch ends the server once dir is no longer our NFS mount (unmounted
// by agentfs umount, umount or Finder's eject).
func (m *nfsMount) watch() {
	for {
		select {
		case <-m.done:
			return
		case <-time.After(500 * time.Millisecond):
		}
		if ok, err := isAgentNFSMount(m.dir); err == nil && !ok {
			m.stop()
			return
		}
	}
}

func (m *nfsMount) stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.served
		close(m.done)
	})
}

func (m *nfsMount) Wait() { <-m.done }

func (m *nfsMount) Unmount() error {
	if err := runUmount(m.dir, false); err != nil {
		return err
	}
	m.stop()
	return nil
}

// isAgentNFSMount reports whether dir is the mount point of an NFS mount
// of 127.0.0.1:/, the kind agentfs mount makes.
func isAgentNFSMount(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // /tmp is /private/tmp
	}
	var st unix.Statfs_t
	if err := unix.Statfs(abs, &st); err != nil {
		return false, err
	}
	return unix.ByteSliceToString(st.Fstypename[:]) == "nfs" &&
		unix.ByteSliceToString(st.Mntonname[:]) == abs &&
		unix.ByteSliceToString(st.Mntfromname[:]) == nfsSource, nil
}

// unmountDir unmounts the agentfs NFS mount at dir; lazy forces it (umount
// -f) even while in use.
func unmountDir(dir string, lazy bool) error {
	if ok, _ := isAgentNFSMount(dir); !ok {
		return mount.ErrNotMounted
	}
	return runUmount(dir, lazy)
}

func runUmount(dir string, force bool) error {
	args := []string{dir}
	if force {
		args = []string{"-f", dir}
	}
	out, err := exec.Command(umount, args...).CombinedOutput()
	if err == nil {
		return nil
	}
	if bytes.Contains(bytes.ToLower(out), []byte("busy")) {
		return fmt.Errorf("%w: %s", syscall.EBUSY, strings.TrimSpace(string(out)))
	}
	return errors.New("umount: " + strings.TrimSpace(string(out)))
}
