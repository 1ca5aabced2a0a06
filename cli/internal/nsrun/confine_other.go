//go:build linux && !amd64 && !arm64

package nsrun

// No filter for this architecture (Confine returns ErrNoSeccomp).
const (
	auditArch = 0
	x32Bit    = 0
	sysMknod  = 0
)

var deniedArch []uintptr
