//go:build !purego

package crypt

import "golang.org/x/sys/cpu"

// aegisAsm: the ARMv8 crypto extension's AESE and AESMC.
var aegisAsm = cpu.ARM64.HasAES
