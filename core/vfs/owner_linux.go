package vfs

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A staging inode names its writer by this machine's boot id, the
// process id and the process's start time (in clock ticks since boot):
// a pid reused by another process after the writer died has another
// start time, and after a reboot every writer is gone. A database in WAL
// mode is only ever shared by processes of one machine (SQLite's shared
// memory), so that is enough to tell a live writer from a dead one.

var ownerOnce struct {
	sync.Once
	boot, tok string
}

func ownerToken() string {
	ownerOnce.Do(func() {
		b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
		ownerOnce.boot = strings.TrimSpace(string(b))
		pid := os.Getpid()
		ownerOnce.tok = "linux:" + ownerOnce.boot + ":" + strconv.Itoa(pid) + ":" + procStart(pid)
	})
	return ownerOnce.tok
}

// procStart is field 22 of /proc/PID/stat (starttime), "" when the
// process does not exist.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 { // fields 3..22
		return ""
	}
	return f[19]
}

// ownerAlive reports whether the process named by tok (another process's
// token) may still be running.
func ownerAlive(tok string) bool {
	ownerToken()
	p := strings.Split(tok, ":")
	if len(p) != 4 || p[0] != "linux" || p[1] != ownerOnce.boot || p[3] == "" {
		return false // another machine, another boot, or unreadable
	}
	pid, err := strconv.Atoi(p[2])
	if err != nil || pid <= 0 {
		return false
	}
	return procStart(pid) == p[3]
}
