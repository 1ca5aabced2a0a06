package cmd

// The sandbox of "agentfs run" is four processes, three of them this
// binary:
//
//	agentfs run            host namespaces: registry entry, signal
//	  |                    forwarding, exit status, hints
//	  +- stage init        new user namespace (unless unavailable and root),
//	  |    |               new mount namespace M1 [, new network namespace]:
//	  |    |               M1 is a private copy of the host's mounts
//	  |    +- agentfs mount -f DB STAGING   the session's FUSE server, in M1,
//	  |    |               so it sees the host directory at its own path
//	  |    +- stage exec   new PID namespace, whose pid 1 it is, and new
//	  |         |          mount namespace M2 (a copy of M1): everything
//	  |         |          read-only, private /tmp, a procfs of its own on
//	  |         |          /proc, the FUSE mount bound on the working
//	  |         |          directory, --allow paths writable
//	  |         +- CMD     its child, leader of its own process group
//
// The server cannot live in M2: there the working directory is its own
// mount, and reading the host directory below it would loop back into the
// server. Both mount namespaces die with their processes, and the FUSE
// mount with them: a run leaves nothing mounted on the host.
//
// The PID namespace keeps the host's processes out of the sandbox's
// sight: with the host's /proc, /proc/PID/cwd and /proc/PID/root of any
// process of the same user (and of capabilities no greater than the
// command's) lead to the writable host filesystem. The sandbox's /proc
// shows stage exec and CMD's processes only; stage init and the server,
// whose M1 shows the host writable, are outside it.
//
// Stage exec stays as the namespace's init instead of becoming CMD,
// because pid 1 of a namespace is special: the kernel ignores signals it
// has no handler for (a shell's "kill $$" would not end a CMD that is
// pid 1), orphans are reparented to it (someone must reap them), and when
// it exits the kernel kills everything else in the namespace. So stage
// exec starts CMD, reaps every process, passes on the signals it gets
// (from stage init, which passes on agentfs run's) to CMD's process
// group, and when CMD ends kills what is left and exits with CMD's status
// (128+N for signal N). On a terminal, CMD's group is the foreground one;
// when CMD stops (^Z), stage exec, which the stop cannot reach, tells
// stage init over a socket (descriptor 4); stage init takes the terminal
// back and stops itself and agentfs run, so the user's shell sees the job
// stopped; continued, it answers whether it is in the foreground, and
// stage exec gives CMD the terminal back and continues it.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/nsrun"
	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// forwarded are the signals passed on to the sandboxed command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runSession runs cfg's command in the sandbox and returns its status.
func runSession(cmd *cobra.Command, cfg runConfig) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The stages open the session database: the key goes to them in
	// their environment (never argv), and each takes it out of its own
	// environment before the command starts (addKeyFlags).
	kenv, err := keyEnvFor()
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
	cfg.HostSockets = hostSockets()
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
		c.Env = append(append(os.Environ(), runConfigEnv+"="+string(b)), kenv...)
		c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		c.ExtraFiles = []*os.File{pw}
		// IPC: the host's System V shared memory, semaphores and
		// message queues (root's, with the same uid) out of reach. UTS:
		// a hostname of its own. Cgroup: /proc/self/cgroup does not
		// show the host's hierarchy.
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP, Pdeathsig: syscall.SIGTERM}
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
		msg = fmt.Sprintf("cannot create the sandbox's user namespace: %s (%s)", errno.Error(), vfs.ErrnoName(errno))
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
	// The command leads its own process group; on a terminal, that group
	// is the foreground one, so ^C reaches the command (and only it,
	// once), as in a shell. Stage exec sets that up inside the PID
	// namespace; here it gets a group of its own.
	var job, jobRemote *os.File
	if foregroundTTY() {
		if job, jobRemote, err = socketPair(); err != nil {
			stopServer()
			return reportStage(status, 1, err)
		}
		defer job.Close()
		cfg.Job = true
	}
	b, _ := json.Marshal(cfg)
	kenv, _ := keyEnvFor()
	c := exec.Command(exe, "run", "--internal-stage", "exec")
	c.Env = append(append(os.Environ(), runConfigEnv+"="+string(b)), kenv...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.ExtraFiles = []*os.File{status}
	if jobRemote != nil {
		c.ExtraFiles = append(c.ExtraFiles, jobRemote)
	}
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = c.Start()
	if jobRemote != nil {
		jobRemote.Close()
	}
	if err != nil {
		stopServer()
		return reportStage(status, 1, err)
	}
	status.Close()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				// To the sandbox's init, which passes it on to the
				// command's group, as a terminal would.
				c.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	var code int
	if job != nil {
		code = waitJob(c, job)
		takeTTYBack()
	} else {
		code = waitStatus(c.Wait())
	}
	close(done)
	// Nothing of the sandbox is left: when its init exits, the kernel
	// kills the rest of the PID namespace (and Wait returns after that).
	stopServer()
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}

// socketPair makes a connected pair of stream sockets.
func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "job"), os.NewFile(uintptr(fds[1]), "job"), nil
}

// runStageExec is pid 1 of the sandbox's PID namespace: it builds the
// sandbox's mount table, starts the command and stays as its init (see
// the top of this file).
func runStageExec(cmd *cobra.Command) error {
	// Capabilities belong to a thread: those dropped below must be
	// dropped on the thread that starts the command.
	runtime.LockOSThread()
	status := stageStatus()
	cfg, err := readRunConfig()
	if err != nil {
		return reportStage(status, 1, err)
	}
	// Everything below assumes a PID namespace of its own: without it
	// the host's processes would be in sight, and the kill of every
	// other process at the end (kill -1) would reach the whole host.
	if os.Getpid() != 1 {
		return reportStage(status, 1, errors.New("the sandbox's init is not pid 1 of a PID namespace of its own"))
	}
	var job *os.File
	if cfg.Job {
		syscall.CloseOnExec(4)
		job = os.NewFile(4, "job")
	}
	// As pid 1, the runtime's default for SIGTERM (exit by raising it
	// again) would not work: the kernel ignores it. Caught, the signals
	// wait here until the command can have them.
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, forwarded...)
	layout, home := sandboxLayout(cfg)
	if err := nsrun.Setup(layout); err != nil {
		return reportStage(status, 1, fmt.Errorf("set up the sandbox: %w", err))
	}
	// A procfs of this PID namespace over the host's: no host process in
	// sight. Read-only like the rest, with the flags the kernel insists
	// on in a user namespace (those of the host's /proc).
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC|syscall.MS_RDONLY, ""); err != nil {
		return reportStage(status, 1, userError{msg: fmt.Sprintf("mount the sandbox's /proc: %s (%s)", describe(err), vfs.ErrnoName(err.(syscall.Errno))),
			hint: "in a container whose /proc is partly masked the kernel refuses a new /proc in a user namespace: as root, try AGENTFS_RUN_USERNS=off"})
	}
	if err := maskProc(); err != nil {
		return reportStage(status, 1, err)
	}
	// The working directory is a new mount now.
	if err := os.Chdir(cfg.Workdir); err != nil {
		return reportStage(status, 1, err)
	}
	env := commandEnv(cfg, home)
	if err := dropCapabilities(!cfg.NoNetwork); err != nil {
		return reportStage(status, 1, err)
	}
	// The search uses the command's PATH (scrubbed or not).
	os.Setenv("PATH", envValue(env, "PATH"))
	path, err := exec.LookPath(cfg.Command[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return reportStage(status, 127, fmt.Errorf("%s: command not found", cfg.Command[0]))
	}
	// Not dumpable: the command cannot open this process's /proc
	// entries (its capabilities exceed the command's anyway).
	syscall.RawSyscall6(syscall.SYS_PRCTL, prSetDumpable, 0, 0, 0, 0, 0)
	// Last: the filter and no_new_privs hold for this thread and the
	// command it starts, not for the rest of this process.
	_, err = nsrun.Confine(nsrun.Policy{NoUnixSockets: cfg.Strict, NoUserNamespaces: cfg.Strict})
	if errors.Is(err, nsrun.ErrNoSeccomp) && !cfg.Strict {
		fmt.Fprintf(os.Stderr, "agentfs: warning: %v (%s): the sandbox refuses no system calls\n", err, runtime.GOARCH)
	} else if err != nil {
		return reportStage(status, 1, fmt.Errorf("confine the sandbox: %w", err))
	}
	p, err := os.StartProcess(path, cfg.Command, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Foreground: cfg.Job, Ctty: 0},
	})
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return reportStage(status, 126, fmt.Errorf("%s: %w", cfg.Command[0], err))
	}
	status.Close()
	go func() {
		for s := range sig {
			syscall.Kill(-p.Pid, s.(syscall.Signal))
		}
	}()
	if code := reapAll(p.Pid, job); code != 0 {
		return exitError{code: code}
	}
	return nil
}

// reapAll waits, as the PID namespace's init, for every process until
// none is left, and returns the status of the command (pid). When the
// command ends, what it left running is killed. With job, a stop of the
// command is reported on job and the command continued on the answer.
func reapAll(pid int, job *os.File) int {
	code := -1
	for {
		var ws syscall.WaitStatus
		opts := 0
		if job != nil && code < 0 {
			opts = syscall.WUNTRACED
		}
		w, err := syscall.Wait4(-1, &ws, opts, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// ECHILD: the namespace is empty.
			break
		}
		if w != pid || code >= 0 {
			continue
		}
		switch {
		case ws.Stopped():
			continueJob(pid, job)
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			code = 128 + int(ws.Signal())
		}
		if code >= 0 && os.Getpid() == 1 {
			// From pid 1, -1 is every other process of the namespace
			// (from any other process it would be the host's).
			syscall.Kill(-1, syscall.SIGKILL)
		}
	}
	if code < 0 {
		code = 1
	}
	return code
}

// continueJob reports a stop of the command to stage init and, when
// stage init is continued, continues the command, with the terminal if
// stage init is in the foreground ('f') and without it in the background
// ('b'). A lost stage init leaves the command stopped: the kernel kills
// the namespace when stage init dies (parent-death signal).
func continueJob(pid int, job *os.File) {
	if _, err := job.Write([]byte{'s'}); err != nil {
		return
	}
	b := make([]byte, 1)
	if _, err := job.Read(b); err != nil {
		return
	}
	if b[0] == 'f' {
		setTTYForeground(pid)
	}
	syscall.Kill(-pid, syscall.SIGCONT)
}

// dropCapabilities keeps the command from undoing the sandbox (with
// hostNetwork, root without a user namespace also loses the network
// administration and raw sockets of the host's network namespace). An
// ordinary user's command gets no capability at all (the ambient one the
// stages used goes). Root's command stays root of the namespace, without
// the capabilities that would reach around it: CAP_SYS_ADMIN (remount
// read-write, unmount the overlay, setns) and CAP_SYS_PTRACE (with it,
// /proc/PID/root of the FUSE server or of init leads into their mount
// namespace, where the host directory is writable; without it, the
// kernel refuses because their capabilities exceed the command's), and
// the ones that matter only outside a user namespace. They are dropped
// from the bounding set, so no later exec gets them back.
func dropCapabilities(hostNetwork bool) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("drop capabilities: %w", e)
	}
	if os.Geteuid() != 0 {
		// No capabilities after exec: nothing to bound (and no
		// CAP_SETPCAP to do it with).
		return nil
	}
	drop := []uintptr{
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
		27, // CAP_MKNOD: no device nodes (the filter refuses them too)
		9,  // CAP_LINUX_IMMUTABLE: no immutable files in --allow paths
		20, // CAP_SYS_PACCT
		26, // CAP_SYS_TTY_CONFIG
		30, // CAP_AUDIT_CONTROL
		37, // CAP_AUDIT_READ
		35, // CAP_WAKE_ALARM
		36, // CAP_BLOCK_SUSPEND
	}
	if hostNetwork {
		// Without a user namespace and without --no-network, root
		// would configure the host's interfaces and firewall, and read
		// every packet of the host with a raw socket.
		drop = append(drop, 12, 13) // CAP_NET_ADMIN, CAP_NET_RAW
	}
	for _, c := range drop {
		// EINVAL: a kernel older than the capability.
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, c, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
			return fmt.Errorf("drop capability %d: %w", c, e)
		}
	}
	return nil
}

// prctl options.
const (
	prSetDumpable        = 4  // PR_SET_DUMPABLE
	prCapbsetDrop        = 24 // PR_CAPBSET_DROP
	prCapAmbient         = 47 // PR_CAP_AMBIENT
	prCapAmbientClearAll = 4  // PR_CAP_AMBIENT_CLEAR_ALL
)

// waitJob waits for the sandbox's init c on a terminal, with job control:
// when the command stops (^Z), init says so on job; then the terminal
// goes back to agentfs's process group and that group stops too, so the
// user's shell sees its job stopped; when the shell continues it, init
// learns whether in the foreground (the command gets the terminal back)
// or in the background (bg), and continues the command. Returns the exit
// status.
func waitJob(c *exec.Cmd, job *os.File) int {
	exited := make(chan int, 1)
	go func() { exited <- waitStatus(c.Wait()) }()
	stops := make(chan struct{})
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := job.Read(b); err != nil {
				return
			}
			stops <- struct{}{}
		}
	}()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	for {
		select {
		case code := <-exited:
			return code
		case <-stops:
			takeTTYBack()
			select {
			case <-cont:
			default:
			}
			syscall.Kill(0, syscall.SIGSTOP)
			// The stop reaches this thread when the kernel gets to it,
			// possibly after kill returned: wait for the continue.
			<-cont
			answer := []byte{'b'}
			if foregroundTTY() {
				answer[0] = 'f'
			}
			job.Write(answer)
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
