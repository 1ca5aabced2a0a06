//go:build linux

package nsrun

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
	sysMknod  = 0 // arm64 has mknodat only
)

var deniedArch = []uintptr{unix.SYS_KEXEC_FILE_LOAD, unix.SYS_NFSSERVCTL}
