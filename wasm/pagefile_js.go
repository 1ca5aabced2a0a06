//go:build js && !agentfs_workers

package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/agentfs-go/agentfs/core/store"
	"syscall/js"
)

// fileFuncs are the engine's functions for databases in host files:
//
//	attachFiles(path, db, journal)   the database at path is these OPFS sync access handles, written in place
//	detachFiles(path)                forget them (after its agents closed)
//	rollback(db, journal, key?, cipher?) -> bytes   a database's bytes with its hot rollback journal played back (an encrypted one with its key)
var fileFuncs = map[string]func(args []js.Value) any{"attachFiles": attachFiles, "detachFiles": detachFiles, "rollback": rollback}

// The in-memory build's engine also has the file functions.
func init() {
	for name, fn := range fileFuncs {
		databaseFuncs[name] = fn
	}
}

func attachFiles(args []js.Value) any {
	store.AttachFiles(args[0].String(), newSyncHandle(args[1]), newSyncHandle(args[2]))
	return nil
}

func detachFiles(args []js.Value) any {
	store.DetachFiles(args[0].String())
	return nil
}

func rollback(args []js.Value) any {
	var e *store.Encryption
	if len(args) > 2 {
		if key := bytesOf(args[2]); len(key) > 0 {
			e = &store.Encryption{Key: key}
			if len(args) > 3 && args[3].Type() == js.TypeString {
				e.Cipher = args[3].String()
			}
		}
	}
	b, err := store.RollBack(bytesOf(args[0]), bytesOf(args[1]), e)
	if err != nil {
		return errorValue(err)
	}
	return jsBytes(b, nil)
}

// syncHandle is a browser's FileSystemSyncAccessHandle (OPFS, dedicated
// workers only) as the engine's store.PageFile: SQLite's page reads and
// writes go straight to the file, synchronously.
type syncHandle struct {
	mu      sync.Mutex // the scratch buffer is shared by the database's connections
	h       js.Value
	scratch js.Value // a reused Uint8Array: one allocation per size, not per page
	at      js.Value // {at: offset}, reused
}

func newSyncHandle(h js.Value) *syncHandle {
	return &syncHandle{h: h, scratch: uint8Array.New(64 << 10), at: js.Global().Get("Object").New()}
}

// buf is a Uint8Array view of n bytes.
func (s *syncHandle) buf(n int) js.Value {
	if s.scratch.Get("byteLength").Int() < n {
		s.scratch = uint8Array.New(n)
	}
	return s.scratch.Call("subarray", 0, n)
}

// call invokes a method of the handle; a JavaScript exception (a closed
// handle, a full disk: QuotaExceededError) becomes an error for SQLite
// instead of a panic of the engine.
func (s *syncHandle) call(method string, args ...any) (v js.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("OPFS %s: %v", method, r)
		}
	}()
	return s.h.Call(method, args...), nil
}

func (s *syncHandle) ReadAt(b []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.buf(len(b))
	s.at.Set("at", off)
	v, err := s.call("read", u, s.at)
	if err != nil {
		return 0, err
	}
	n := v.Int()
	if n > 0 {
		js.CopyBytesToGo(b[:n], u.Call("subarray", 0, n))
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (s *syncHandle) WriteAt(b []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.buf(len(b))
	js.CopyBytesToJS(u, b)
	s.at.Set("at", off)
	v, err := s.call("write", u, s.at)
	if err != nil {
		return 0, err
	}
	if n := v.Int(); n < len(b) {
		return n, io.ErrShortWrite
	}
	return len(b), nil
}

func (s *syncHandle) Truncate(size int64) error {
	_, err := s.call("truncate", size)
	return err
}

func (s *syncHandle) Size() (int64, error) {
	v, err := s.call("getSize")
	if err != nil {
		return 0, err
	}
	return int64(v.Int()), nil
}

func (s *syncHandle) Sync() error {
	_, err := s.call("flush")
	return err
}
