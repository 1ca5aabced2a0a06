package vfs

import "os"

// processAlive: under GOOS=js no other process shares the database, so
// only this one is alive.
func processAlive(pid int) bool { return pid == os.Getpid() }
