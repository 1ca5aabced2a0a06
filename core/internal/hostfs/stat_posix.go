//go:build unix || js

package hostfs

import "syscall"

// StatBuf is a host stat(2) result, what an overlay records of its base
// directory's entries.
type StatBuf = syscall.Stat_t

// Lstat, Stat and Fstat are the host's stat calls.
func Lstat(path string, st *StatBuf) error { return syscall.Lstat(path, st) }
func Stat(path string, st *StatBuf) error  { return syscall.Stat(path, st) }
func Fstat(fd uintptr, st *StatBuf) error  { return syscall.Fstat(int(fd), st) }

// ODirectory is O_DIRECTORY in the os.O_* flags the engine takes.
const ODirectory = syscall.O_DIRECTORY
