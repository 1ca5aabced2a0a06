//go:build linux

package nsrun

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks the x32 ABI's system call numbers.
	x32Bit   = 0x40000000
	sysMknod = unix.SYS_MKNOD
)

// deniedArch adds the x86-64 only ones: port I/O, the old module and
// sysctl calls, uselib, nfsservctl; kexec_file_load (not on every
// architecture).
var deniedArch = []uintptr{
	unix.SYS_KEXEC_FILE_LOAD, unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_CREATE_MODULE,
	unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE, unix.SYS__SYSCTL, unix.SYS_NFSSERVCTL,
}
