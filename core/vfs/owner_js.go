package vfs

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// Under GOOS=js the database lives in this process's memory: no other
// process writes it, so any staging inode that is not this process's is
// garbage.

var ownerOnce struct {
	sync.Once
	tok string
}

func ownerToken() string {
	ownerOnce.Do(func() {
		var b [16]byte
		rand.Read(b[:])
		ownerOnce.tok = "js:" + hex.EncodeToString(b[:])
	})
	return ownerOnce.tok
}

func ownerAlive(string) bool { return false }
