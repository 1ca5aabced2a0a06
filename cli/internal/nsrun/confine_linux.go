package nsrun

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Policy is what Confine forbids the sandboxed command, beyond its mount
// table and namespaces.
type Policy struct {
	// NoUnixSockets refuses socket(AF_UNIX) (socketpair stays): no
	// connection to any UNIX socket, of the host or the sandbox's own,
	// and so none to a host socket created after the sandbox started.
	NoUnixSockets bool
	// NoUserNamespaces refuses new user namespaces (unshare, clone with
	// CLONE_NEWUSER; clone3, whose flags a filter cannot read, answers
	// ENOSYS so that C libraries fall back to clone): the kernel code a
	// namespace's root may reach stays out of reach.
	NoUserNamespaces bool
}

// Confinement says what Confine put in place.
type Confinement struct {
	// Seccomp: the system call filter is installed.
	Seccomp bool
	// AbstractScoped: Landlock keeps abstract UNIX sockets created
	// outside the sandbox out of reach (Linux 6.12+).
	AbstractScoped bool
}

// ErrNoSeccomp is returned on architectures without a filter here.
var ErrNoSeccomp = errors.New("no system call filter for this architecture")

// Confine restricts the calling thread, and every process it starts from
// now on, for good: no_new_privs, a Landlock scope for abstract UNIX
// sockets where the kernel has it, and a seccomp filter refusing the
// system calls a sandboxed command has no business making (see
// deniedSyscalls). The caller must have locked its goroutine to the
// thread (runtime.LockOSThread) and start the command from it: all three
// belong to the thread, so the rest of the Go process stays free.
func Confine(p Policy) (Confinement, error) {
	var c Confinement
	// Required for an unprivileged filter and Landlock domain; and with
	// it no set-user-ID program gains privileges inside (none could
	// anyway: the sandbox maps no other user).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return c, fmt.Errorf("no_new_privs: %w", err)
	}
	scoped, err := scopeAbstractSockets()
	if err != nil {
		return c, err
	}
	c.AbstractScoped = scoped
	prog, err := filter(p)
	if err != nil {
		return c, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Without SECCOMP_FILTER_FLAG_TSYNC: this thread only.
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return c, fmt.Errorf("install the system call filter: %w", e)
	}
	runtime.KeepAlive(prog)
	c.Seccomp = true
	return c, nil
}

// scopeAbstractSockets puts the thread in a Landlock domain that handles
// no file access but scopes abstract UNIX sockets (ABI 6, Linux 6.12):
// connecting to one bound outside the domain fails with EPERM. Abstract
// sockets have no file to hide and live in the network namespace, which
// a run without --no-network shares with the host (X11, D-Bus and
// container runtimes listen there). False when the kernel lacks it.
func scopeAbstractSockets() (bool, error) {
	abi, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 || int(abi) < 6 {
		// ENOSYS, EOPNOTSUPP (Landlock not enabled): nothing to do.
		return false, nil
	}
	attr := struct{ fs, net, scoped uint64 }{scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}
	fd, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return false, fmt.Errorf("landlock ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	if _, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return false, fmt.Errorf("landlock restrict: %w", e)
	}
	return true, nil
}

// deniedCommon are refused with EPERM on every architecture: loading
// kernel code or a new kernel (modules, kexec, BPF), reading kernel
// memory or logs, the kernel keyring (the caller's session keyring is
// shared with the host: keyctl would read its keys), filesystem handles
// (open_by_handle_at walks around every mount; with CAP_DAC_READ_SEARCH
// it opens any inode of the filesystem), mount and namespace changes (the
// sandbox's mount table is final: not even a nested user namespace may
// mount), io_uring (its operations run without passing this filter),
// swap, reboot, clocks, accounting and quotas.
var deniedCommon = []uintptr{
	unix.SYS_KEXEC_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_SYSLOG,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT,
	unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR, unix.SYS_SETNS,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_VHANGUP,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME,
}

// BPF instruction classes and fields (linux/filter.h).
const (
	bpfLD   = 0x00
	bpfALU  = 0x04
	bpfJMP  = 0x05
	bpfRET  = 0x06
	bpfW    = 0x00
	bpfABS  = 0x20
	bpfAND  = 0x50
	bpfJEQ  = 0x10
	bpfJGE  = 0x30
	bpfJSET = 0x40
	bpfK    = 0x00
)

// Offsets in struct seccomp_data: nr, arch, and the low 32 bits of each
// argument (little-endian: the architectures with a filter here).
const (
	offNr   = 0
	offArch = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) }

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// argRule refuses syscall nr (with ret) when argument arg, masked with
// mask (0: unmasked), equals value, or with jset has any bit of value.
type argRule struct {
	nr          uintptr
	arg         int
	mask, value uint32
	jset        bool
	ret         uint32
}

type prog []unix.SockFilter

func (p *prog) stmt(code uint16, k uint32) { *p = append(*p, unix.SockFilter{Code: code, K: k}) }
func (p *prog) jump(code uint16, k uint32, jt, jf uint8) {
	*p = append(*p, unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k})
}

// filter builds the program: another architecture's system calls (a
// 32-bit program, whose numbers differ) kill the process, the native
// ones are checked against the lists, the rest is allowed.
func filter(p Policy) ([]unix.SockFilter, error) {
	if auditArch == 0 {
		return nil, ErrNoSeccomp
	}
	var f prog
	f.stmt(bpfLD|bpfW|bpfABS, offArch)
	f.jump(bpfJMP|bpfJEQ|bpfK, auditArch, 1, 0)
	f.stmt(bpfRET|bpfK, retKill)
	f.stmt(bpfLD|bpfW|bpfABS, offNr)
	if x32Bit != 0 {
		// x32 system calls: the native architecture with another
		// numbering.
		f.jump(bpfJMP|bpfJGE|bpfK, x32Bit, 0, 1)
		f.stmt(bpfRET|bpfK, retKill)
	}
	deny := func(nr uintptr, ret uint32) {
		f.jump(bpfJMP|bpfJEQ|bpfK, uint32(nr), 0, 1)
		f.stmt(bpfRET|bpfK, ret)
	}
	for _, nr := range append(append([]uintptr(nil), deniedCommon...), deniedArch...) {
		deny(nr, retEPERM)
	}
	rules := append([]argRule(nil), mknodRules...)
	if p.NoUnixSockets {
		rules = append(rules, argRule{nr: unix.SYS_SOCKET, arg: 0, value: unix.AF_UNIX, ret: retEPERM})
	}
	if p.NoUserNamespaces {
		deny(unix.SYS_CLONE3, retNOSYS)
		rules = append(rules,
			argRule{nr: unix.SYS_UNSHARE, arg: 0, value: unix.CLONE_NEWUSER, jset: true, ret: retEPERM},
			argRule{nr: unix.SYS_CLONE, arg: 0, value: unix.CLONE_NEWUSER, jset: true, ret: retEPERM})
	}
	for _, r := range rules {
		// nr? load the argument, [mask it,] compare, refuse; reload nr.
		n := 4
		if r.mask != 0 {
			n++
		}
		f.jump(bpfJMP|bpfJEQ|bpfK, uint32(r.nr), 0, uint8(n))
		f.stmt(bpfLD|bpfW|bpfABS, offArg(r.arg))
		if r.mask != 0 {
			f.stmt(bpfALU|bpfAND|bpfK, r.mask)
		}
		if r.jset {
			f.jump(bpfJMP|bpfJSET|bpfK, r.value, 0, 1)
		} else {
			f.jump(bpfJMP|bpfJEQ|bpfK, r.value, 0, 1)
		}
		f.stmt(bpfRET|bpfK, r.ret)
		f.stmt(bpfLD|bpfW|bpfABS, offNr)
	}
	f.stmt(bpfRET|bpfK, retAllow)
	if len(f) > 4096 {
		return nil, fmt.Errorf("system call filter too long: %d instructions", len(f))
	}
	return f, nil
}

// mknodRules refuse character and block device nodes (regular files,
// FIFOs and sockets stay): the devices of the minimal /dev are all the
// sandbox may open. Without a user namespace root keeps CAP_MKNOD
// otherwise, and a node made in an --allow path would open any device.
var mknodRules = func() []argRule {
	var out []argRule
	for _, m := range []struct {
		nr  uintptr
		arg int
	}{{unix.SYS_MKNODAT, 2}, {sysMknod, 1}} {
		if m.nr == 0 {
			continue
		}
		for _, t := range []uint32{unix.S_IFCHR, unix.S_IFBLK} {
			out = append(out, argRule{nr: m.nr, arg: m.arg, mask: unix.S_IFMT, value: t, ret: retEPERM})
		}
	}
	return out
}()
