//go:build unix

package cmd

import (
	"errors"
	"syscall"
)

// detached is the process attribute of a background server: its own
// session, so that the terminal's signals and hangup do not reach it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// processGone reports whether no process has this id (signal 0 checks
// without sending).
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
