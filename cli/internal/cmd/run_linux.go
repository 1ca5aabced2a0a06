package cmd

// The sandbox of "agentfs run" is three processes of this binary:
//
//	agentfs run            host namespaces: registry entry, signal
//	  |                    forwarding, exit status, hints
//	  +- stage init        new user namespace (unless unavailable and root),
//	  |    |               new mount namespace M1 [, new network namespace]:
//	  |    |               M1 is a private copy of the host's mounts
//	  |    +- agentfs mount -f DB STAGING   the session's FUSE server, in M1,
//	  |    |               so it sees the host directory at its own path
//	  |    +- stage exec   new mount namespace M2 (a copy of M1): everything
//	  |                    read-only, private /tmp, the FUSE mount bound on
//	  |                    the working directory, --allow paths writable;
//	  |                    then exec of CMD
//
// The server cannot live in M2: there the working directory is its own
// mount, and reading the host directory below it would loop back into the
// server. Both mount namespaces die with their processes, and the FUSE
// mount with them: a run leaves nothing mounted on the host.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/nsrun"
	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core"
)

// forwarded are the signals passed on to the sandboxed command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runSession runs cfg's command in the sandbox and returns its status.
func runSession(cmd *cobra.Command, cfg runConfig) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	staging, err := os.MkdirTemp("", "agentfs-run-")
	if err != nil {
		return err
	}
	// Empty on the host: the mount on it exists only in the sandbox.
	defer os.Remove(staging)
	cfg.Staging = staging
	remove, err := registry.Add(registry.Entry{Kind: registry.KindRun, Session: cfg.Session, DB: cfg.DB,
		Dir: cfg.Workdir, Staging: staging, Command: cfg.Command})
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "agentfs: warning: not listed by agentfs ps:", err)
	} else {
		defer remove()
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, forwarded...)
	defer signal.Stop(sig)

	start := func(userns bool) (*exec.Cmd, error) {
		c := exec.Command(exe, "run", "--internal-stage", "init")
		c.Env = append(os.Environ(), runConfigEnv+"="+string(b))
		c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		c.ExtraFiles = []*os.File{pw}
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGTERM}
		if cfg.NoNetwork {
			attr.Cloneflags |= syscall.CLONE_NEWNET
		}
		if userns {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = idMaps(os.Geteuid(), "/proc/self/uid_map")
			attr.GidMappings = idMaps(os.Getegid(), "/proc/self/gid_map")
			// An unprivileged user may map its group only after
			// giving up setgroups(2) in the namespace.
			attr.GidMappingsEnableSetgroups = os.Geteuid() == 0
			if os.Geteuid() != 0 {
				// The user keeps its uid in the namespace; mounting
				// there takes CAP_SYS_ADMIN of the namespace, which
				// survives the exec of the stages as an ambient
				// capability (the command's stage drops it).
				attr.AmbientCaps = []uintptr{capSysAdmin}
			}
		}
		c.SysProcAttr = attr
		return c, c.Start()
	}
	// AGENTFS_RUN_USERNS=off skips the user namespace (root only): for
	// containers that allow user namespaces but break mounts in them.
	userns := os.Getenv("AGENTFS_RUN_USERNS") != "off" || os.Geteuid() != 0
	c, err := start(userns)
	if err != nil && userns && os.Geteuid() == 0 {
		// Root in a container that forbids user namespaces: a mount
		// namespace alone does the same, with real root inside.
		var err2 error
		if c, err2 = start(false); err2 == nil {
			err = nil
		}
	}
	pw.Close()
	if err != nil {
		if cfg.New {
			removeSession(cfg)
		}
		return usernsError(err)
	}
	statusCh := make(chan *runStatus, 1)
	go func() {
		var st *runStatus
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var s runStatus
			if json.Unmarshal(sc.Bytes(), &s) == nil && st == nil {
				st = &s
			}
		}
		statusCh <- st
	}()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				c.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	code := waitStatus(c.Wait())
	close(done)
	st := <-statusCh
	if st != nil {
		// The command never ran: a session made for it goes.
		if cfg.New {
			removeSession(cfg)
		}
		if st.Hint != "" {
			return userError{msg: st.Msg, hint: st.Hint}
		}
		return exitError{code: st.Code, msg: st.Msg}
	}
	printRunHints(cmd, cfg)
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}

// capSysAdmin is CAP_SYS_ADMIN.
const capSysAdmin = 21

// idMaps maps ids into the new user namespace. Root keeps every id it
// has; an ordinary user may map its own id only, and keeps it: files
// look the same inside and out, and what the overlay records of the host
// directory (owners) means the same to "agentfs diff" and "commit" on
// the host.
func idMaps(self int, file string) []syscall.SysProcIDMap {
	if os.Geteuid() == 0 {
		if b, err := os.ReadFile(file); err == nil {
			var out []syscall.SysProcIDMap
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) != 3 {
					continue
				}
				in, err1 := strconv.Atoi(f[0])
				n, err2 := strconv.Atoi(f[2])
				if err1 == nil && err2 == nil {
					out = append(out, syscall.SysProcIDMap{ContainerID: in, HostID: in, Size: n})
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	return []syscall.SysProcIDMap{{ContainerID: self, HostID: self, Size: 1}}
}

// usernsError explains why the sandbox could not be made.
func usernsError(err error) error {
	msg := fmt.Sprintf("cannot create the sandbox's user namespace: %v", err)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		// Not "fork/exec /path/to/agentfs: ...": the exec is fine.
		msg = fmt.Sprintf("cannot create the sandbox's user namespace: %s (%s)", errno.Error(), errnoName(errno))
	}
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	switch {
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return userError{msg: msg + " (the kernel forbids unprivileged user namespaces: kernel.unprivileged_userns_clone = 0)",
			hint: "sudo sysctl -w kernel.unprivileged_userns_clone=1, or run agentfs run as root"}
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return userError{msg: msg + " (AppArmor restricts unprivileged user namespaces: kernel.apparmor_restrict_unprivileged_userns = 1)",
			hint: "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile with \"userns,\" for agentfs), or run as root"}
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return userError{msg: msg + " (user.max_user_namespaces = 0)",
			hint: "sudo sysctl -w user.max_user_namespaces=15000, or run agentfs run as root"}
	}
	return userError{msg: msg + " (in a container, its seccomp or AppArmor profile may forbid them)",
		hint: "run agentfs run as root, or start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (Docker/Podman)"}
}

// fuseUsable checks that this user can open /dev/fuse.
func fuseUsable() error {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	switch {
	case err == nil:
		f.Close()
		return nil
	case errors.Is(err, os.ErrNotExist):
		return userError{msg: "FUSE is not available: /dev/fuse is missing", hint: "modprobe fuse (in a container: run it with --device /dev/fuse)"}
	case errors.Is(err, os.ErrPermission):
		return userError{msg: "FUSE is not available to this user: /dev/fuse: permission denied", hint: "sudo chmod 0666 /dev/fuse (most distributions ship it so), or run as root"}
	}
	return err
}

// waitStatus turns the result of Wait into an exit status: 128+N for a
// process ended by signal N.
func waitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// stageStatus opens the status pipe a stage inherited as descriptor 3
// and keeps it from the programs the stage starts.
func stageStatus() *os.File {
	syscall.CloseOnExec(3)
	return os.NewFile(3, "status")
}

// reportStage writes a failure on the status pipe and ends the stage.
func reportStage(status *os.File, code int, err error) error {
	st := runStatus{Code: code, Msg: describe(err), Hint: hint(err)}
	b, _ := json.Marshal(st)
	status.Write(append(b, '\n'))
	return exitError{code: code}
}

// runStageInit is the first process in the namespaces: it starts the
// FUSE server and the command's stage, forwards signals, and stops the
// server when the command has ended.
func runStageInit(cmd *cobra.Command) error {
	status := stageStatus()
	defer status.Close()
	cfg, err := readRunConfig()
	if err != nil {
		return reportStage(status, 1, err)
	}
	durability = cfg.Durability
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, forwarded...)
	// The FUSE mount must stay in this namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return reportStage(status, 1, fmt.Errorf("make mounts private: %w", err))
	}
	os.Setenv(noRegistryEnv, "1")
	srv, err := startMountServer(cfg.DB, cfg.Staging, mountFlags{uid: -1, gid: -1})
	os.Unsetenv(noRegistryEnv)
	if err != nil {
		return reportStage(status, 1, userError{msg: "mount the session: " + describe(err),
			hint: "FUSE inside a user namespace needs Linux >= 4.18; in a container give it /dev/fuse and, as root, try AGENTFS_RUN_USERNS=off (or --cap-add SYS_ADMIN)"})
	}
	stopServer := func() {
		if err := unmountAndWait(cfg.Staging, srv); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "agentfs: warning:", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		stopServer()
		return reportStage(status, 1, err)
	}
	b, _ := json.Marshal(cfg)
	c := exec.Command(exe, "run", "--internal-stage", "exec")
	c.Env = append(os.Environ(), runConfigEnv+"="+string(b))
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.ExtraFiles = []*os.File{status}
	// The command leads its own process group; on a terminal, that group
	// is the foreground one, so ^C reaches the command (and only it,
	// once), as in a shell.
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fg := foregroundTTY()
	if fg {
		attr.Foreground, attr.Ctty = true, 0
	}
	c.SysProcAttr = attr
	if err := c.Start(); err != nil {
		stopServer()
		return reportStage(status, 1, err)
	}
	status.Close()
	ns := mountNS(c.Process.Pid)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				// To the group, as a terminal would.
				syscall.Kill(-c.Process.Pid, s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	var code int
	if fg {
		code = waitJob(c.Process.Pid)
		takeTTYBack()
	} else {
		code = waitStatus(c.Wait())
	}
	close(done)
	// The sandbox ends with its command: what it left running would
	// keep the session mounted.
	killNamespace(ns)
	stopServer()
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}

// runStageExec builds the sandbox's mount table and becomes the command.
func runStageExec(cmd *cobra.Command) error {
	status := stageStatus()
	cfg, err := readRunConfig()
	if err != nil {
		return reportStage(status, 1, err)
	}
	err = nsrun.Setup(nsrun.Layout{Workdir: cfg.Workdir, Overlay: cfg.Staging, Allow: cfg.Allow,
		Host: []string{filepath.Join(cfg.Workdir, core.DefaultDir)}, PrivateDirs: []string{"/tmp", "/dev/shm"}})
	if err != nil {
		return reportStage(status, 1, fmt.Errorf("set up the sandbox: %w", err))
	}
	// The working directory is a new mount now.
	if err := os.Chdir(cfg.Workdir); err != nil {
		return reportStage(status, 1, err)
	}
	os.Setenv("AGENTFS", "1")
	os.Setenv("AGENTFS_SANDBOX", "linux-namespace")
	os.Setenv("AGENTFS_SESSION", cfg.Session)
	if err := dropCapabilities(); err != nil {
		return reportStage(status, 1, err)
	}
	path, err := exec.LookPath(cfg.Command[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return reportStage(status, 127, fmt.Errorf("%s: command not found", cfg.Command[0]))
	}
	err = syscall.Exec(path, cfg.Command, os.Environ())
	return reportStage(status, 126, fmt.Errorf("%s: %w", cfg.Command[0], err))
}

// dropCapabilities keeps the command from undoing the sandbox. An
// ordinary user's command gets no capability at all (the ambient one the
// stages used goes). Root's command stays root of the namespace, without
// the capabilities that would reach around it: CAP_SYS_ADMIN (remount
// read-write, unmount the overlay, setns) and CAP_SYS_PTRACE (with it,
// /proc/PID/root of the FUSE server or of init leads into their mount
// namespace, where the host directory is writable; without it, the
// kernel refuses because their capabilities exceed the command's), and
// the ones that matter only outside a user namespace. They are dropped
// from the bounding set, so no later exec gets them back.
func dropCapabilities() error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("drop capabilities: %w", e)
	}
	if os.Geteuid() != 0 {
		// No capabilities after exec: nothing to bound (and no
		// CAP_SETPCAP to do it with).
		return nil
	}
	for _, c := range []uintptr{
		19, // CAP_SYS_PTRACE
		21, // CAP_SYS_ADMIN
		16, // CAP_SYS_MODULE
		17, // CAP_SYS_RAWIO
		22, // CAP_SYS_BOOT
		25, // CAP_SYS_TIME
		32, // CAP_MAC_OVERRIDE
		33, // CAP_MAC_ADMIN
		34, // CAP_SYSLOG
		38, // CAP_PERFMON
		39, // CAP_BPF
		40, // CAP_CHECKPOINT_RESTORE
	} {
		// EINVAL: a kernel older than the capability.
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, c, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
			return fmt.Errorf("drop capability %d: %w", c, e)
		}
	}
	return nil
}

// prctl options.
const (
	prCapbsetDrop        = 24 // PR_CAPBSET_DROP
	prCapAmbient         = 47 // PR_CAP_AMBIENT
	prCapAmbientClearAll = 4  // PR_CAP_AMBIENT_CLEAR_ALL
)

// waitJob waits for the command's stage on a terminal, with job control:
// when ^Z stops the command, the terminal goes back to agentfs's process
// group and that group stops too, so the user's shell sees its job
// stopped; when the shell continues it in the foreground, the command
// gets the terminal back and continues. Returns the exit status.
func waitJob(pid int) int {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 1
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		case ws.Stopped():
			takeTTYBack()
			syscall.Kill(0, syscall.SIGSTOP)
			// Continued: in the foreground again, hand the
			// terminal back; in the background (bg), not.
			if foregroundTTY() {
				setTTYForeground(pid)
			}
			syscall.Kill(-pid, syscall.SIGCONT)
		}
	}
}

// setTTYForeground makes process group pgrp the terminal's foreground
// group.
func setTTYForeground(pgrp int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	p := int32(pgrp)
	syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&p)))
}

// foregroundTTY reports whether stdin is a terminal whose foreground
// process group is ours (not a run started in the background).
func foregroundTTY() bool {
	var pgrp int32
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	return e == 0 && int(pgrp) == syscall.Getpgrp()
}

// takeTTYBack makes our process group the terminal's foreground group
// again. A background group doing so gets SIGTTOU unless it ignores it.
func takeTTYBack() { setTTYForeground(syscall.Getpgrp()) }

// mountNS names the mount namespace of pid ("mnt:[4026532...]").
func mountNS(pid int) string {
	s, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	return s
}

// killNamespace kills every process left in the mount namespace ns, and
// waits (a little) until they are gone.
func killNamespace(ns string) {
	if ns == "" {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if mountNS(pid) == ns {
				left++
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
