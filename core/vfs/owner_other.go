//go:build !linux && !js

package vfs

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// Without /proc, a staging inode names its writer by host name and
// process id; a writer is dead when no process has that id (a reused id
// keeps a dead writer's staging inode until fsck --repair or a reboot of
// that process id's owner).

var ownerOnce struct {
	sync.Once
	host, tok string
}

func ownerToken() string {
	ownerOnce.Do(func() {
		ownerOnce.host, _ = os.Hostname()
		ownerOnce.tok = "unix:" + ownerOnce.host + ":" + strconv.Itoa(os.Getpid())
	})
	return ownerOnce.tok
}

func ownerAlive(tok string) bool {
	ownerToken()
	i := strings.LastIndexByte(tok, ':')
	if !strings.HasPrefix(tok, "unix:") || i < 0 || tok[len("unix:"):i] != ownerOnce.host {
		return false
	}
	pid, err := strconv.Atoi(tok[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	return processAlive(pid)
}
