//go:build linux

package nsrun

import (
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttack_ConfineThread installs the strict filter on a thread of its
// own (which dies with its goroutine, locked) and checks what it refuses
// and what it lets through; the rest of the test process stays free.
func TestAttack_ConfineThread(t *testing.T) {
	if auditArch == 0 {
		t.Skip("skipping: no system call filter for " + runtime.GOARCH)
	}
	type outcome struct {
		name string
		err  error
	}
	ch := make(chan []outcome)
	go func() {
		// Never unlocked: the confined thread exits with the goroutine.
		runtime.LockOSThread()
		var out []outcome
		add := func(name string, err error) { out = append(out, outcome{name, err}) }
		_, err := Confine(Policy{NoUnixSockets: true, NoUserNamespaces: true})
		add("confine", err)
		session := int64(unix.KEY_SPEC_SESSION_KEYRING)
		_, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(session), 0)
		add("keyctl", e)
		_, _, e = unix.RawSyscall(unix.SYS_FINIT_MODULE, 0, 0, 0)
		add("finit_module", e)
		add("mount", syscall.Mount("tmpfs", "/nonexistent", "tmpfs", 0, ""))
		add("mknod chr", syscall.Mknod("/nonexistent/x", syscall.S_IFCHR|0o600, 0))
		_, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		add("socket unix", err)
		_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
		add("unshare user", e)
		_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		add("clone3", e)
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
		}
		add("socketpair", err)
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fd)
		}
		add("socket inet", err)
		b, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		if err == nil && b != 1 {
			err = syscall.EINVAL
		}
		add("no_new_privs", err)
		ch <- out
	}()
	want := map[string]error{
		"confine": nil, "keyctl": syscall.EPERM, "finit_module": syscall.EPERM, "mount": syscall.EPERM,
		"mknod chr": syscall.EPERM, "socket unix": syscall.EPERM, "unshare user": syscall.EPERM,
		"clone3": syscall.ENOSYS, "socketpair": nil, "socket inet": nil, "no_new_privs": nil,
	}
	for _, o := range <-ch {
		var got error = o.err
		if e, ok := o.err.(syscall.Errno); ok && e == 0 {
			got = nil
		}
		if got != want[o.name] {
			t.Errorf("%s: %v, want %v", o.name, got, want[o.name])
		}
	}
	// This goroutine's thread has no filter.
	session := int64(unix.KEY_SPEC_SESSION_KEYRING)
	if _, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(session), 0); e == syscall.EPERM {
		t.Error("the filter reached another thread")
	}
}
