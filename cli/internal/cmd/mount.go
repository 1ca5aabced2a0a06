package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core/mount"
)

func init() { register(newMountCmd) }

// readyFDEnv names the descriptor on which a background mount server
// reports "ok" (or the reason it failed) to the command that started it.
const readyFDEnv = "AGENTFS_MOUNT_READY_FD"

// mountFlags are the options of one mount.
type mountFlags struct {
	autoUnmount bool
	allowOther  bool
	debug       bool
	uid, gid    int64
}

// args renders the flags for the re-executed server.
func (f mountFlags) args() []string {
	var a []string
	if f.autoUnmount {
		a = append(a, "--auto-unmount")
	}
	if f.allowOther {
		a = append(a, "--allow-other")
	}
	if f.debug {
		a = append(a, "--debug")
	}
	if f.uid >= 0 {
		a = append(a, "--uid", strconv.FormatInt(f.uid, 10))
	}
	if f.gid >= 0 {
		a = append(a, "--gid", strconv.FormatInt(f.gid, 10))
	}
	return a
}

func (f mountFlags) options(source string) (mount.Options, error) {
	o := mount.Options{FsName: source, AllowOther: f.allowOther, Debug: f.debug}
	for _, v := range []struct {
		name string
		n    int64
		dst  **uint32
	}{{"--uid", f.uid, &o.UID}, {"--gid", f.gid, &o.GID}} {
		if v.n < -1 || v.n > 1<<32-2 {
			return o, exitError{code: 2, msg: fmt.Sprintf("%s %d: not a valid id", v.name, v.n)}
		}
		if v.n >= 0 {
			id := uint32(v.n)
			*v.dst = &id
		}
	}
	return o, nil
}

func newMountCmd() *cobra.Command {
	var foreground bool
	var watch string
	fl := mountFlags{uid: -1, gid: -1}
	c := &cobra.Command{
		Use:   "mount [ID_OR_PATH DIR]",
		Short: "Mount an agent filesystem on a directory (FUSE on Linux, NFS on macOS); without arguments, list mounts",
		Long: `Mount the filesystem of an agent database on DIR with FUSE, so that any
program can use it. The command returns once the mount is ready and the
filesystem is served in the background until "agentfs umount DIR"; with -f
it is served in the foreground until unmounted or interrupted.

The database stays usable by other processes while mounted: their changes
show through the mount within a fraction of a second, and what is written
through the mount is in the database when the writing program closes the
file (or calls fsync). --debug (with -f) logs every FUSE request.

Without arguments, lists the agentfs mounts (from /proc/self/mounts).

Needs /dev/fuse; as root the mount system call is used, otherwise
fusermount3 (Debian package fuse3).

On macOS the filesystem is served over NFSv3 on a loopback port and
mounted with the system's NFS client (mount_nfs); --uid, --gid and
--allow-other are FUSE-only. Windows has no mounts: use "agentfs serve nfs"
or "agentfs sh".`,
		Example: `  agentfs mount my-agent /mnt/agent
  agentfs mount .agentfs/my-agent.db ./work -f
  agentfs mount
  agentfs umount /mnt/agent`,
		Args: func(c *cobra.Command, args []string) error {
			if watch != "" || len(args) == 0 || len(args) == 2 {
				return nil
			}
			return usageError(c, "mount takes ID_OR_PATH and DIR, or nothing to list mounts")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case watch != "":
				return autoUnmountWatch(watch)
			case len(args) == 0:
				return listMounts(cmd.OutOrStdout())
			}
			if _, err := fl.options(""); err != nil {
				return err
			}
			if fl.debug && !foreground {
				return usageError(cmd, "--debug logs to standard error: use it with -f")
			}
			dir, err := mountDir(args[1])
			if err != nil {
				return err
			}
			if foreground {
				return serveMount(cmd, args[0], dir, fl)
			}
			// Open once here so that a missing or unreadable database is
			// reported with the usual message and hint.
			a, err := openAgent(cmd, args[0])
			if err != nil {
				return err
			}
			path := a.Path()
			a.Close()
			srv, err := startMountServer(path, dir, fl)
			if err != nil {
				return err
			}
			srv.Process.Release()
			fmt.Fprintf(cmd.OutOrStdout(), "Mounted %s on %s\n  Unmount with: agentfs umount %s\n", path, dir, dir)
			return nil
		},
	}
	c.Flags().BoolVarP(&foreground, "foreground", "f", false, "serve in the foreground until unmounted or interrupted")
	c.Flags().BoolVar(&fl.autoUnmount, "auto-unmount", false, "unmount automatically when the server process ends, even if killed")
	c.Flags().BoolVar(&fl.allowOther, "allow-other", false, "let other users use the mount (needs user_allow_other in /etc/fuse.conf unless root)")
	c.Flags().BoolVar(&fl.debug, "debug", false, "log every FUSE request and reply to standard error (with -f)")
	c.Flags().Int64Var(&fl.uid, "uid", -1, "report this user id as the owner of every file")
	c.Flags().Int64Var(&fl.gid, "gid", -1, "report this group id as the group of every file")
	c.Flags().StringVar(&watch, "auto-unmount-watch", "", "internal: unmount DIR when the server holding descriptor 3 ends")
	c.Flags().MarkHidden("auto-unmount-watch")
	return c
}

// mountDir checks the mount point and makes it absolute.
func mountDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", userError{msg: fmt.Sprintf("mount point %s does not exist", dir), hint: "mkdir -p " + dir}
		}
		return "", err
	}
	if !st.IsDir() {
		return "", userError{msg: fmt.Sprintf("mount point %s is not a directory", dir), hint: "mount on an empty directory"}
	}
	if err := mountSupported(); err != nil {
		return "", err
	}
	if m, ok, _ := mount.Find(abs); ok {
		return "", userError{msg: fmt.Sprintf("%s is already an agentfs mount (of %s)", dir, m.Source), hint: "agentfs umount " + dir}
	}
	return abs, nil
}

// listMounts prints "DATABASE on DIR" for each agentfs mount.
func listMounts(w io.Writer) error {
	list, err := mount.List()
	if err != nil {
		return err
	}
	for _, m := range list {
		fmt.Fprintf(w, "%s on %s\n", m.Source, m.Dir)
	}
	return nil
}

// startMountServer starts "agentfs mount -f" detached (own session, no
// terminal) and returns once the mount is ready, or with the reason the
// server gave for failing.
func startMountServer(dbPath, dir string, fl mountFlags) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	args := append([]string{"--durability", durability, "mount", dbPath, dir, "--foreground"}, fl.args()...)
	srv := exec.Command(exe, args...)
	kenv, err := keyEnvFor()
	if err != nil {
		return nil, err
	}
	srv.Env = append(append(os.Environ(), readyFDEnv+"=3"), kenv...)
	srv.ExtraFiles = []*os.File{pw}
	srv.Dir = "/"
	srv.SysProcAttr = detached()
	err = srv.Start()
	pw.Close()
	if err != nil {
		return nil, err
	}
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadString('\n')
		ch <- answer{strings.TrimSpace(line), err}
	}()
	select {
	case a := <-ch:
		if a.line == "ok" {
			return srv, nil
		}
		werr := srv.Wait()
		if a.line != "" {
			return nil, errors.New(a.line)
		}
		return nil, fmt.Errorf("mount server exited before the mount was ready (%v)", werr)
	case <-time.After(60 * time.Second):
		srv.Process.Kill()
		srv.Wait()
		return nil, fmt.Errorf("mount of %s on %s not ready after 60 s", dbPath, dir)
	}
}

// serveMount mounts and serves in this process until unmounted or
// interrupted. When started by startMountServer it reports readiness on
// the descriptor named by AGENTFS_MOUNT_READY_FD.
func serveMount(cmd *cobra.Command, idOrPath, dir string, fl mountFlags) error {
	var ready *os.File
	if fd := os.Getenv(readyFDEnv); fd != "" {
		os.Unsetenv(readyFDEnv)
		if n, err := strconv.Atoi(fd); err == nil {
			ready = os.NewFile(uintptr(n), "ready")
		}
	}
	fail := func(err error) error {
		if ready != nil {
			// The starting command prints the message; say it once.
			fmt.Fprintln(ready, strings.ReplaceAll(describe(err), "\n", " "))
			ready.Close()
			return exitError{code: 1}
		}
		return err
	}
	a, err := openAgent(cmd, idOrPath)
	if err != nil {
		return fail(err)
	}
	defer a.Close()
	opts, err := fl.options(a.Path())
	if err != nil {
		return fail(err)
	}
	// Catch signals before the mount exists: one arriving in between must
	// unmount, not kill the server and leave a dead mount behind.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	srv, err := mountFS(dir, a, opts)
	if err != nil {
		return fail(err)
	}
	if fl.autoUnmount {
		if err := startAutoUnmountWatch(dir); err != nil {
			srv.Unmount()
			return fail(err)
		}
	}
	// Listed by "agentfs ps"; a server killed before removing its entry
	// leaves it to "agentfs prune".
	if os.Getenv(noRegistryEnv) == "" {
		if remove, err := registry.Add(registry.Entry{Kind: registry.KindMount, DB: a.Path(), Dir: dir}); err == nil {
			defer remove()
		}
	}
	// A signal that came while mounting is handled now.
	forced := make(chan struct{})
	var forceOnce sync.Once
	go func() {
		for range sig {
			if err := srv.Unmount(); err != nil {
				// Busy: detach now; the server ends with its last user,
				// but not later than a few seconds from now, so that a
				// stuck user cannot keep the process alive.
				unmountDir(dir, true)
				time.AfterFunc(detachGrace, func() { forceOnce.Do(func() { close(forced) }) })
			}
		}
	}()
	if ready != nil {
		fmt.Fprintln(ready, "ok")
		ready.Close()
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "Mounted %s on %s (Ctrl-C or agentfs umount %s to stop)\n", a.Path(), dir, dir)
	}
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-forced:
		fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: %s was still in use %s after detaching; stopping the server\n", dir, detachGrace)
	}
	return nil
}

// detachGrace is how long a server whose mount was lazily detached keeps
// serving the processes still inside it before it stops.
const detachGrace = 5 * time.Second

// startAutoUnmountWatch starts a detached watcher process that holds the
// read end of a pipe whose write end only this process has: when this
// process ends, however it ends, the watcher reads EOF and unmounts dir
// if the mount is still there.
func startAutoUnmountWatch(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	w := exec.Command(exe, "mount", "--auto-unmount-watch", dir)
	w.ExtraFiles = []*os.File{pr}
	w.Dir = "/"
	w.SysProcAttr = detached()
	if err := w.Start(); err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	pr.Close()
	w.Process.Release()
	// Kept open (and inherited by nobody: close-on-exec) until exit.
	autoUnmountPipe = pw
	return nil
}

// autoUnmountPipe holds the write end so that no finalizer closes it.
//
//lint:ignore U1000 only written: holding the reference is its purpose
var autoUnmountPipe *os.File

// autoUnmountWatch is the watcher: it waits for EOF on descriptor 3, then
// unmounts dir if the same mount is still there.
func autoUnmountWatch(dir string) error {
	m, ok, err := mount.Find(dir)
	if err != nil || !ok {
		return err
	}
	pipe := os.NewFile(3, "server")
	io.Copy(io.Discard, pipe)
	now, ok, err := mount.Find(dir)
	if err != nil || !ok || now.ID != m.ID {
		return err
	}
	return mount.Unmount(dir, true)
}
