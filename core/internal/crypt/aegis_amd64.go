//go:build !purego

package crypt

import "golang.org/x/sys/cpu"

// aegisAsm: AES-NI. The kernels use nothing else beyond SSE2, which every
// amd64 CPU has.
var aegisAsm = cpu.X86.HasAES
