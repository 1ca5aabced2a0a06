package cmd

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// detached is the process attribute of a background server: its own
// process group, without the console, so that Ctrl-C in the terminal does
// not reach it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}

// processGone reports whether no process has this id: opening it fails
// with ERROR_INVALID_PARAMETER.
func processGone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259 // STILL_ACTIVE
	return code != stillActive
}

// databaseUser reports no other user: Windows' locks belong to handles,
// and SQLite's byte ranges there cannot be queried without taking them.
func databaseUser(path string) (pid int, inUse bool) { return 0, false }
