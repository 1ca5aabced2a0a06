// Command agentfs-node is the engine as a Node.js addon (agentfs.node,
// built with -buildmode=c-shared): sdk-ts loads it to run the engine
// inside the Node process. It speaks the stdio protocol of
// spec/PROTOCOL.md over memory instead of a pipe (rpc.Local), and answers
// short calls synchronously on the JavaScript thread, which removes the
// process round trip from every small call.
//
// Build: go build -buildmode=c-shared -o agentfs.node ./cmd/agentfs-node
package main

/*
#cgo CFLAGS: -O2
// Node-API's functions come from the node binary that loads the addon.
// Leaving them unresolved also lets "go build ./..." link this package
// as a (useless) executable, so the module builds and vets as a whole.
#cgo LDFLAGS: -Wl,--unresolved-symbols=ignore-all
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"context"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
)

const (
	inPlaceMin = 64 << 10 // files read into JavaScript's memory from this size
	headRoom   = 32       // bytes before the data for the Result's header (at most 22)
)

type conn struct {
	local *rpc.Local
	link  *C.agentfs_link
}

var (
	mu    sync.Mutex
	conns = map[uint32]*conn{}
	next  uint32
)

func lookup(h C.uint32_t) *conn {
	mu.Lock()
	defer mu.Unlock()
	return conns[uint32(h)]
}

//export agentfsStart
func agentfsStart(link *C.agentfs_link) C.uint32_t {
	c := &conn{link: link}
	mu.Lock()
	next++
	h := next
	conns[h] = c
	mu.Unlock()
	c.local = rpc.ServeLocal(context.Background(), core.Version, os.Stderr, func(p []byte) {
		if len(p) > 0 {
			C.agentfs_send(link, unsafe.Pointer(&p[0]), C.size_t(len(p)), 0)
		}
	})
	go func() {
		msg := "the agentfs engine has finished"
		if err := c.local.Wait(); err != nil {
			msg = "the agentfs engine stopped: " + err.Error()
		}
		mu.Lock()
		delete(conns, h)
		mu.Unlock()
		cmsg := C.CString(msg)
		C.agentfs_send(link, unsafe.Pointer(cmsg), C.size_t(len(msg)), 1)
		C.free(unsafe.Pointer(cmsg))
		C.agentfs_release(link)
		// A large call leaves garbage that Go would only hand back to
		// the system later; this process is Node's, so return it now.
		debug.FreeOSMemory()
	}()
	return C.uint32_t(h)
}

//export agentfsWrite
func agentfsWrite(h C.uint32_t, p unsafe.Pointer, n C.size_t) {
	if c := lookup(h); c != nil && n > 0 {
		c.local.Write(unsafe.Slice((*byte)(p), int(n)))
	}
}

//export agentfsEnd
func agentfsEnd(h C.uint32_t) {
	if c := lookup(h); c != nil {
		c.local.CloseWrite()
	}
}

//export agentfsHello
func agentfsHello(env C.napi_env, h C.uint32_t, p unsafe.Pointer, n C.size_t) C.napi_value {
	c := lookup(h)
	if c == nil {
		return nil // the engine has finished: its last words are on their way
	}
	// Node's memory, valid during this call: decoding copies what the
	// agent keeps.
	answer := c.local.Hello(unsafe.Slice((*byte)(p), int(n)))
	return C.agentfs_result(env, unsafe.Pointer(&answer[0]), C.size_t(len(answer)), nil, 0)
}

//export agentfsLink
func agentfsLink(h C.uint32_t) *C.agentfs_link {
	if c := lookup(h); c != nil {
		return c.link
	}
	return nil
}

//export agentfsSubmit
func agentfsSubmit(h C.uint32_t, id C.uint32_t, m unsafe.Pointer, mn C.size_t, p unsafe.Pointer, pn C.size_t, d unsafe.Pointer, dn C.size_t) {
	c := lookup(h)
	if c == nil {
		return
	}
	var head, data []byte
	if pn > 0 {
		head = unsafe.Slice((*byte)(p), int(pn)) // copied by Submit
	}
	if dn > 0 {
		// Node's memory, which the SDK keeps alive until the answer.
		data = unsafe.Slice((*byte)(d), int(dn))
	}
	c.local.Submit(uint64(id), string(unsafe.Slice((*byte)(m), int(mn))), head, data)
}

//export agentfsCall
func agentfsCall(env C.napi_env, h C.uint32_t, m unsafe.Pointer, mn C.size_t, p unsafe.Pointer, pn C.size_t) C.napi_value {
	c := lookup(h)
	var head, data []byte
	method := string(unsafe.Slice((*byte)(m), int(mn)))
	if c == nil {
		head = rpc.UnavailableResult(method + ": the agent is closed")
	} else {
		// The payload is Node's memory, valid during this call: decoding
		// copies what the call keeps.
		var payload []byte
		if pn > 0 {
			payload = unsafe.Slice((*byte)(p), int(pn))
		}
		// A large file is read straight into a JavaScript ArrayBuffer,
		// with room before it for the Result's header: the answer is a
		// view of that buffer and nothing is copied.
		var ab C.napi_value
		var base unsafe.Pointer
		alloc := func(n int) []byte {
			if n < inPlaceMin || base != nil {
				return nil
			}
			if base = C.agentfs_alloc(env, C.size_t(n+headRoom), &ab); base == nil {
				return nil
			}
			return unsafe.Slice((*byte)(unsafe.Add(base, headRoom)), n)
		}
		head, data = c.local.CallSyncInto(method, payload, alloc)
		if base != nil && len(data) > 0 && unsafe.Pointer(&data[0]) == unsafe.Add(base, headRoom) && len(head) <= headRoom {
			off := headRoom - len(head)
			copy(unsafe.Slice((*byte)(unsafe.Add(base, off)), len(head)), head)
			return C.agentfs_view(env, ab, C.size_t(off), C.size_t(len(head)+len(data)))
		}
	}
	var dp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	return C.agentfs_result(env, unsafe.Pointer(&head[0]), C.size_t(len(head)), dp, C.size_t(len(data)))
}

func main() {}
