//go:build linux

package cmd

// Attacks on the isolation of "agentfs run": each test tries, from inside
// the sandbox, what an attack found or what a sandboxed command could try
// next, and checks that it fails and that the host saw nothing.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe runs one attack probe in the sandbox (helper "probe KIND[:ARG]")
// and describes its outcome as "KIND[:ARG]: RESULT", RESULT being "ok",
// "connected", an errno name or a value.
func probe(a string) string {
	kind, arg, _ := strings.Cut(a, ":")
	res := func(err error) string { return a + ": " + probeErr(err) }
	switch kind {
	case "unix", "abstract":
		addr := arg
		if kind == "abstract" {
			addr = "@" + arg
		}
		c, err := net.DialTimeout("unix", addr, 5*time.Second)
		if err != nil {
			return res(err)
		}
		c.Close()
		return a + ": connected"
	case "tcp":
		c, err := net.DialTimeout("tcp", arg, 5*time.Second)
		if err != nil {
			return res(err)
		}
		c.Close()
		return a + ": connected"
	case "write":
		// No O_CREAT: a missing device is ENOENT, not EROFS.
		f, err := os.OpenFile(arg, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write([]byte("agentfs attack probe\n"))
			f.Close()
		}
		return res(err)
	case "create":
		return res(os.WriteFile(arg, []byte("x"), 0o644))
	case "read":
		// A few bytes: devices such as /dev/urandom never end.
		f, err := os.Open(arg)
		if err == nil {
			_, err = f.Read(make([]byte, 64))
			if errors.Is(err, io.EOF) {
				err = nil
			}
			f.Close()
		}
		return res(err)
	case "ls":
		ents, err := os.ReadDir(arg)
		if err != nil {
			return res(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return a + ": [" + strings.Join(names, " ") + "]"
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			return a + ": unset"
		}
		return a + ": " + v
	case "kill":
		pid, _ := strconv.Atoi(arg)
		return res(syscall.Kill(pid, 0))
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		err := syscall.PtraceAttach(pid)
		if err == nil {
			syscall.PtraceDetach(pid)
		}
		return res(err)
	case "init_module":
		empty := []byte{0}
		_, _, e := unix.RawSyscall(unix.SYS_INIT_MODULE, 0, 0, uintptr(unsafe.Pointer(&empty[0])))
		return res(errnoOrNil(e))
	case "finit_module":
		empty := []byte{0}
		_, _, e := unix.RawSyscall(unix.SYS_FINIT_MODULE, 0, uintptr(unsafe.Pointer(&empty[0])), 0)
		return res(errnoOrNil(e))
	case "keyctl":
		// KEYCTL_GET_KEYRING_ID of the session keyring (the host's):
		// allowed to any process without a filter.
		session := int64(unix.KEY_SPEC_SESSION_KEYRING)
		_, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(session), 0)
		return res(errnoOrNil(e))
	case "io_uring":
		var params [120]byte
		fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		return res(errnoOrNil(e))
	case "mount":
		return res(syscall.Mount("tmpfs", arg, "tmpfs", 0, ""))
	case "nested-mount":
		// A user namespace of its own makes the child root of a new
		// mount namespace: only the filter stops its mount.
		exe, _ := os.Executable()
		c := &exec.Cmd{Path: exe, Args: []string{helperName, "nested-mount"}}
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
		out, err := c.Output()
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return a + ": clone " + probeErr(err)
		}
		return a + ": " + strings.TrimSpace(string(out))
	case "mknod":
		return res(syscall.Mknod(arg, syscall.S_IFCHR|0o600, int(unix.Mkdev(1, 11))))
	case "socket":
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fd)
		}
		return res(err)
	case "socketpair":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
		}
		return res(err)
	case "shmget":
		key, _ := strconv.Atoi(arg)
		_, _, e := unix.RawSyscall(unix.SYS_SHMGET, uintptr(key), 0, 0)
		return res(errnoOrNil(e))
	case "sethostname":
		return res(syscall.Sethostname([]byte(arg)))
	case "status":
		b, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == arg {
				return a + ": " + strings.TrimSpace(v)
			}
		}
		return a + ": missing"
	}
	return a + ": unknown probe"
}

// probeErr names err's errno (ECONNREFUSED), "ok" for nil.
func probeErr(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
	}
	return errName(err)
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// attackProject is sandboxProject for the attack tests, which also need
// the namespaces a run is made of: without them (a container that
// forbids them) the tests skip, saying so, instead of failing on the
// environment. CI has them.
func attackProject(t *testing.T) string {
	t.Helper()
	dir := sandboxProject(t)
	c := exec.Command("true")
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
		syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP}
	if err := c.Run(); err != nil {
		t.Skipf("skipping: this system refuses the namespaces agentfs run needs (mount, PID, network, IPC, UTS, cgroup): %v", err)
	}
	return dir
}

// probeRun runs the helper's probes in a sandbox with the run flags and
// returns the output lines by probe.
func probeRun(t *testing.T, flags []string, probes ...string) map[string]string {
	t.Helper()
	args := append(append([]string{"run"}, flags...), append([]string{"--", "./" + helperName, "probe"}, probes...)...)
	r := run(t, "", args...)
	if r.code != 0 {
		t.Fatalf("agentfs %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), r.code, r.out, r.err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			out[k] = v
		}
	}
	return out
}

// wantProbes checks each probe's outcome against one of the accepted
// ones.
func wantProbes(t *testing.T, what string, got map[string]string, want map[string][]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ok := false
		for _, w := range want[k] {
			if got[k] == w {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: %s gave %q, want one of %q", what, k, got[k], want[k])
		}
	}
}

// bothUserns runs f with and without the sandbox's user namespace (root
// in a container that forbids them gets the second).
func bothUserns(t *testing.T, f func(t *testing.T)) {
	for _, userns := range []string{"on", "off"} {
		t.Run("userns-"+userns, func(t *testing.T) {
			t.Setenv("AGENTFS_RUN_USERNS", userns)
			f(t)
		})
	}
}

// kmsgHas reports whether the kernel log holds marker (read without
// blocking, from the start of the buffer).
func kmsgHas(t *testing.T, marker string) bool {
	t.Helper()
	// Raw descriptor calls: an *os.File would wait in the poller
	// instead of returning EAGAIN at the end of the log.
	fd, err := syscall.Open("/dev/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Logf("cannot read the host's kernel log (%v): only the failed write is checked", err)
		return false
	}
	defer syscall.Close(fd)
	buf := make([]byte, 8192)
	for {
		n, err := syscall.Read(fd, buf)
		if n > 0 && bytes.Contains(buf[:n], []byte(marker)) {
			return true
		}
		// EPIPE: records overwritten meanwhile; go on. EAGAIN: the end.
		if err == syscall.EPIPE || err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
	}
}

// TestAttack_Run_DevKmsg: the attack wrote the host's kernel log through
// /dev/kmsg. The sandbox's /dev is its own minimal set: no kmsg, no
// disks, no memory, no FUSE or KVM; what is there works.
func TestAttack_Run_DevKmsg(t *testing.T) {
	attackProject(t)
	var want []string
	for _, n := range []string{"full", "null", "random", "tty", "urandom", "zero"} {
		if _, err := os.Stat("/dev/" + n); err == nil {
			want = append(want, n)
		}
	}
	want = append(want, "fd", "ptmx", "pts", "shm", "stderr", "stdin", "stdout")
	sort.Strings(want)
	bothUserns(t, func(t *testing.T) {
		got := probeRun(t, []string{"--no-network"}, "write:/dev/kmsg", "read:/dev/mem", "read:/dev/port",
			"write:/dev/loop0", "write:/dev/vda", "write:/dev/sda", "read:/dev/fuse", "ls:/dev",
			"write:/dev/null", "read:/dev/urandom", "mknod:/tmp/kmsg", "mknod:/dev/shm/kmsg")
		wantProbes(t, "the sandbox's /dev", got, map[string][]string{
			"write:/dev/kmsg": {"ENOENT"}, "read:/dev/mem": {"ENOENT"}, "read:/dev/port": {"ENOENT"},
			"write:/dev/loop0": {"ENOENT"}, "write:/dev/vda": {"ENOENT"}, "write:/dev/sda": {"ENOENT"},
			"read:/dev/fuse": {"ENOENT"}, "ls:/dev": {"[" + strings.Join(want, " ") + "]"},
			"write:/dev/null": {"ok"}, "read:/dev/urandom": {"ok"},
			// A node of the kernel log made elsewhere: refused.
			"mknod:/tmp/kmsg": {"EPERM"}, "mknod:/dev/shm/kmsg": {"EPERM"},
		})
	})
	// The probe wrote a line of its own; the host's log does not have it.
	if kmsgHas(t, "agentfs attack probe") {
		t.Error("the host's kernel log holds the sandbox's line")
	}
}

// unixListener listens on a UNIX socket at path and counts the
// connections it accepts.
func unixListener(t *testing.T, network, path string) *atomic.Int32 {
	t.Helper()
	ln, err := net.Listen(network, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return &n
}

// TestAttack_Run_HostUnixSocket: the attack connected to a host
// daemon's UNIX socket: a read-only mount does not stop connect(2). In
// the sandbox the host's sockets are hidden under /dev/null, /run is its
// own, and only sockets below --allow paths stay reachable.
func TestAttack_Run_HostUnixSocket(t *testing.T) {
	attackProject(t)
	seen, err := os.MkdirTemp("/var/tmp", "agentfs-sock-")
	if err != nil {
		t.Skip("skipping: no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(seen) })
	allowed := filepath.Join(seen, "allowed")
	if err := os.Mkdir(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	hostSock := filepath.Join(seen, "daemon.sock")
	allowedSock := filepath.Join(allowed, "ok.sock")
	runSock := fmt.Sprintf("/run/agentfs-test-%d.sock", os.Getpid())
	hostN := unixListener(t, "unix", hostSock)
	allowedN := unixListener(t, "unix", allowedSock)
	runN := unixListener(t, "unix", runSock)
	for _, flags := range [][]string{{"--no-network"}, nil} {
		got := probeRun(t, append(flags, "--allow", allowed), "unix:"+hostSock, "unix:"+runSock, "unix:"+allowedSock, "write:"+hostSock)
		wantProbes(t, fmt.Sprintf("host sockets, flags %q", flags), got, map[string][]string{
			"unix:" + hostSock: {"ECONNREFUSED"}, "unix:" + runSock: {"ENOENT"},
			"unix:" + allowedSock: {"connected"},
			// What covers it: /dev/null.
			"write:" + hostSock: {"ok"},
		})
	}
	if n := hostN.Load() + runN.Load(); n != 0 {
		t.Errorf("the host's listeners accepted %d connections from the sandbox", n)
	}
	if n := allowedN.Load(); n != 2 {
		t.Errorf("the listener below --allow accepted %d connections, want 2", n)
	}
}

// TestAttack_Run_AbstractSocket: abstract UNIX sockets have no file to
// hide. A network namespace of its own (--no-network) has none of the
// host's; with the host's network, Landlock's scope (Linux 6.12+) keeps
// them out of reach.
func TestAttack_Run_AbstractSocket(t *testing.T) {
	attackProject(t)
	name := fmt.Sprintf("agentfs-test-%d", os.Getpid())
	n := unixListener(t, "unix", "@"+name)
	got := probeRun(t, []string{"--no-network"}, "abstract:"+name)
	wantProbes(t, "abstract socket, --no-network", got, map[string][]string{"abstract:" + name: {"ECONNREFUSED"}})
	if abi, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || abi < 6 {
		t.Logf("Landlock ABI %d (%v): this kernel cannot scope abstract sockets; the host network's case is not checked", abi, e)
	} else {
		got = probeRun(t, nil, "abstract:"+name)
		wantProbes(t, "abstract socket, host network", got, map[string][]string{"abstract:" + name: {"EPERM"}})
	}
	if c := n.Load(); c != 0 {
		t.Errorf("the host's abstract listener accepted %d connections", c)
	}
}

// TestAttack_Run_ProcSys: kernel settings, sysrq, sysfs and the hostname
// cannot be changed from the sandbox; the host's hostname stays.
func TestAttack_Run_ProcSys(t *testing.T) {
	attackProject(t)
	host, _ := os.Hostname()
	bothUserns(t, func(t *testing.T) {
		got := probeRun(t, nil, "write:/proc/sys/kernel/hostname", "write:/proc/sys/vm/drop_caches",
			"write:/proc/sysrq-trigger", "write:/sys/kernel/uevent_helper", "write:/proc/self/uid_map",
			"sethostname:pwned", "read:/proc/kcore", "read:/proc/keys")
		wantProbes(t, "kernel settings", got, map[string][]string{
			"write:/proc/sys/kernel/hostname": {"EROFS"}, "write:/proc/sys/vm/drop_caches": {"EROFS"},
			"write:/proc/sysrq-trigger": {"EROFS", "ENOENT"}, "write:/sys/kernel/uevent_helper": {"EROFS", "ENOENT"},
			"write:/proc/self/uid_map": {"EROFS"}, "sethostname:pwned": {"EPERM"},
			// Covered by /dev/null, or absent from this kernel.
			"read:/proc/kcore": {"ok", "ENOENT"}, "read:/proc/keys": {"ok", "ENOENT"},
		})
	})
	if now, _ := os.Hostname(); now != host {
		t.Errorf("the host's hostname changed: %q, was %q", now, host)
	}
}

// TestAttack_Run_SyscallFilter: kernel modules, the keyring, io_uring,
// mounts (even in a user namespace of the command's own) are refused by
// the filter, with or without the sandbox's user namespace.
func TestAttack_Run_SyscallFilter(t *testing.T) {
	attackProject(t)
	bothUserns(t, func(t *testing.T) {
		got := probeRun(t, nil, "status:Seccomp", "status:NoNewPrivs", "init_module", "finit_module", "keyctl",
			"io_uring", "mount:/tmp", "nested-mount", "socketpair", "socket")
		wantProbes(t, "system calls", got, map[string][]string{
			"status:Seccomp": {"2"}, "status:NoNewPrivs": {"1"},
			"init_module": {"EPERM"}, "finit_module": {"EPERM"}, "keyctl": {"EPERM"}, "io_uring": {"EPERM"},
			"mount:/tmp": {"EPERM"}, "nested-mount": {"EPERM"},
			// Not refused by default: the sandbox's own sockets.
			"socketpair": {"ok"}, "socket": {"ok"},
		})
	})
}

// TestAttack_Run_HostProcesses: a host process is out of sight: no
// signal, no ptrace; and System V IPC objects of the host are not there.
func TestAttack_Run_HostProcesses(t *testing.T) {
	attackProject(t)
	pid, _ := startBystander(t, nil)
	const key = 0x4a6f7321
	id, _, e := unix.RawSyscall(unix.SYS_SHMGET, key, 4096, unix.IPC_CREAT|0o666)
	if e != 0 {
		t.Fatalf("shmget on the host: %v", e)
	}
	t.Cleanup(func() { unix.RawSyscall(unix.SYS_SHMCTL, id, unix.IPC_RMID, 0) })
	p := strconv.Itoa(pid)
	bothUserns(t, func(t *testing.T) {
		got := probeRun(t, nil, "kill:"+p, "ptrace:"+p, "shmget:"+strconv.Itoa(key))
		wantProbes(t, "host processes", got, map[string][]string{
			"kill:" + p: {"ESRCH"}, "ptrace:" + p: {"ESRCH"}, "shmget:" + strconv.Itoa(key): {"ENOENT"},
		})
	})
	b, _ := os.ReadFile("/proc/" + p + "/status")
	if !strings.Contains(string(b), "TracerPid:\t0\n") {
		t.Errorf("the bystander is traced:\n%s", b)
	}
}

// TestAttack_Run_Strict: the strict profile passes no host variable but
// PATH, TERM, LANG and --env ones, shows empty homes, has no network and
// no UNIX sockets or user namespaces.
func TestAttack_Run_Strict(t *testing.T) {
	attackProject(t)
	home, err := os.MkdirTemp("/var/tmp", "agentfs-home-")
	if err != nil {
		t.Skip("skipping: no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(secret), 0o700)
	if err := os.WriteFile(secret, []byte("private key"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("AGENTFS_TEST_TOKEN", "s3cret")
	t.Setenv("AGENTFS_TEST_PASSED", "given")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sock, err := os.MkdirTemp("/var/tmp", "agentfs-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	n := unixListener(t, "unix", filepath.Join(sock, "s"))
	got := probeRun(t, []string{"--strict", "--env", "AGENTFS_TEST_PASSED", "--env", "SET_HERE=v"},
		"env:AGENTFS_TEST_TOKEN", "env:AGENTFS_TEST_PASSED", "env:SET_HERE", "env:HOME", "env:AGENTFS",
		"read:"+secret, "ls:"+home, "ls:/root", "ls:/home", "ls:/home/agent", "create:/home/agent/x",
		"tcp:"+ln.Addr().String(), "socket", "socketpair", "unix:"+filepath.Join(sock, "s"), "nested-mount")
	wantProbes(t, "--strict", got, map[string][]string{
		"env:AGENTFS_TEST_TOKEN": {"unset"}, "env:AGENTFS_TEST_PASSED": {"given"}, "env:SET_HERE": {"v"},
		"env:HOME": {"/home/agent"}, "env:AGENTFS": {"1"},
		"read:" + secret: {"ENOENT"}, "ls:" + home: {"ENOENT", "[]"}, "ls:/root": {"[]"},
		"ls:/home": {"[agent]"}, "ls:/home/agent": {"[]"}, "create:/home/agent/x": {"ok"},
		"tcp:" + ln.Addr().String(): {"ENETUNREACH"},
		"socket":                    {"EPERM"}, "socketpair": {"ok"}, "unix:" + filepath.Join(sock, "s"): {"EPERM"},
		"nested-mount": {"clone EPERM"},
	})
	if c := n.Load(); c != 0 {
		t.Errorf("the host's listener accepted %d connections", c)
	}
	// Without --strict the host's variables are there.
	got = probeRun(t, nil, "env:AGENTFS_TEST_TOKEN")
	wantProbes(t, "default profile", got, map[string][]string{"env:AGENTFS_TEST_TOKEN": {"s3cret"}})
}

// TestRunEnvFlag: --env NAME of an unset variable is an error with a
// next step, before any session is made.
func TestRunEnvFlag(t *testing.T) {
	attackProject(t)
	os.Unsetenv("AGENTFS_TEST_UNSET")
	wantFail(t, 1, []string{"run", "--session", "e", "--env", "AGENTFS_TEST_UNSET", "--", "true"}, "--env AGENTFS_TEST_UNSET: not set here", "Try: export AGENTFS_TEST_UNSET")
	wantFail(t, 1, []string{"run", "--env", "=x", "--", "true"}, "not a variable name")
	if _, err := os.Stat(".agentfs/e.db"); err == nil {
		t.Error("a session was made for a run with a bad --env")
	}
	if env := mergeEnv([]string{"A=1", "B=2"}, []string{"A=3", "C=4"}); strings.Join(env, ",") != "B=2,A=3,C=4" {
		t.Errorf("mergeEnv: %q", env)
	}
}
