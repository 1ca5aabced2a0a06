//go:build js

package main

import (
	"context"
	"io"
	"os"
	"sync"
	"syscall/js"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
)

// main puts the engine's functions on globalThis.__agentfsWasm (the
// interface of sdk-ts's addon link, plus the database's bytes) and waits
// for calls. Byte arguments are Uint8Arrays; handles are numbers.
//
//	start(onData) -> handle          onData(bytes) per output, onData(null, message) at the end
//	write(handle, bytes)             stdio protocol bytes to the engine
//	end(handle)                      no more bytes: the engine finishes
//	call(handle, method, payload) -> bytes   one call answered now (an agentfs.v1.Result)
//	callIn(handle, methodLen, payloadLen) -> number | bytes   call through the shared buffers
//	buffers(req, resp)               the shared buffers of callIn (Uint8Arrays)
//	submit(handle, id, method, head, data?)  one call answered by a Result frame
//
// plus the functions of databaseFuncs: load/save/drop of in-memory
// databases (memory_js.go), or attach/detach of the host's SQL storage
// in the Workers build (host_js.go, tag agentfs_workers); and fileFuncs
// (pagefile_js.go): databases written in place through a browser's OPFS
// synchronous access handles (none in the Workers build).
func main() {
	api := js.Global().Get("Object").New()
	funcs := map[string]func(args []js.Value) any{
		"start": start, "write": write, "end": end, "call": call, "submit": submit,
		"callIn": callIn, "buffers": buffers,
	}
	for name, fn := range databaseFuncs { // memory_js.go or host_js.go
		funcs[name] = fn
	}
	for name, fn := range funcs {
		api.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) any { return fn(args) }))
	}
	api.Set("version", core.Version)
	js.Global().Set("__agentfsWasm", api)
	select {}
}

var (
	mu    sync.Mutex
	conns = map[int]*rpc.Local{}
	next  int
)

func lookup(h js.Value) *rpc.Local {
	mu.Lock()
	defer mu.Unlock()
	return conns[h.Int()]
}

// bytesOf copies a Uint8Array into Go memory (undefined or null: nil).
func bytesOf(v js.Value) []byte {
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	b := make([]byte, v.Get("byteLength").Int())
	js.CopyBytesToGo(b, v)
	return b
}

var uint8Array = js.Global().Get("Uint8Array")

// jsBytes copies head and data, one after the other, into a new
// Uint8Array. Each crossing into JavaScript costs microseconds, so a short
// answer crosses once (joined in Go); a large one (file data) is not
// copied twice: it crosses in two pieces.
func jsBytes(head, data []byte) js.Value {
	u := uint8Array.New(len(head) + len(data))
	switch {
	case len(data) == 0:
		if len(head) > 0 {
			js.CopyBytesToJS(u, head)
		}
	case len(data) < 64<<10:
		js.CopyBytesToJS(u, append(head[:len(head):len(head)], data...))
	default:
		if len(head) > 0 {
			js.CopyBytesToJS(u.Call("subarray", 0, len(head)), head)
		}
		js.CopyBytesToJS(u.Call("subarray", len(head)), data)
	}
	return u
}

func start(args []js.Value) any {
	onData := args[0]
	l := rpc.ServeLocal(context.Background(), core.Version, logWriter{}, func(p []byte) {
		if len(p) > 0 {
			onData.Invoke(jsBytes(p, nil))
		}
	})
	mu.Lock()
	next++
	h := next
	conns[h] = l
	mu.Unlock()
	go func() {
		msg := "the agentfs engine has finished"
		if err := l.Wait(); err != nil {
			msg = "the agentfs engine stopped: " + err.Error()
		}
		mu.Lock()
		delete(conns, h)
		mu.Unlock()
		onData.Invoke(js.Null(), msg)
	}()
	return h
}

func write(args []js.Value) any {
	if l := lookup(args[0]); l != nil {
		if p := bytesOf(args[1]); len(p) > 0 {
			l.Write(p)
		}
	}
	return nil
}

func end(args []js.Value) any {
	if l := lookup(args[0]); l != nil {
		l.CloseWrite()
	}
	return nil
}

func call(args []js.Value) any {
	method := string(bytesOf(args[1]))
	l := lookup(args[0])
	if l == nil {
		return jsBytes(rpc.UnavailableResult(method+": the agent is closed"), nil)
	}
	head, data := l.CallSync(method, bytesOf(args[2]))
	return jsBytes(head, data)
}

// The shared buffers of callIn, set by JavaScript (buffers): it writes a
// call's method and payload into req and passes their lengths; a short
// answer comes back in resp, and callIn answers its length. So a call
// takes and makes only numbers: each JavaScript object that Go receives
// or creates (a Uint8Array argument, a new answer array) costs a
// reference with a finalizer, whose bookkeeping was about a third of an
// empty call's time in workerd.
var (
	shared  sync.Mutex
	req     js.Value
	resp    js.Value
	respCap int
	scratch []byte
)

func buffers(args []js.Value) any {
	shared.Lock()
	defer shared.Unlock()
	req, resp = args[0], args[1]
	respCap = resp.Length()
	return nil
}

// callIn is call with the method and payload in the shared req buffer:
// it answers the Result's length when it fits in resp (written there),
// else the Result as a new Uint8Array.
func callIn(args []js.Value) any {
	ml, pl := args[1].Int(), args[2].Int()
	if ml < 0 || pl < 0 {
		return jsBytes(rpc.UnavailableResult("callIn: negative length"), nil)
	}
	in := make([]byte, ml+pl)
	shared.Lock()
	n := 0
	if req.Truthy() {
		n = js.CopyBytesToGo(in, req)
	}
	shared.Unlock()
	if n < len(in) {
		return jsBytes(rpc.UnavailableResult("callIn: the request is larger than the shared buffer"), nil)
	}
	method := string(in[:ml])
	l := lookup(args[0])
	if l == nil {
		return jsBytes(rpc.UnavailableResult(method+": the agent is closed"), nil)
	}
	head, data := l.CallSync(method, in[ml:ml+pl:ml+pl])
	// The lock covers resp and scratch from here: a call answered while
	// this one ran (a nested one) has already been read by JavaScript.
	shared.Lock()
	defer shared.Unlock()
	if n := len(head) + len(data); n <= respCap {
		if len(data) == 0 { // the usual case: CallSync joined them
			js.CopyBytesToJS(resp, head)
			return n
		}
		scratch = append(append(scratch[:0], head...), data...)
		js.CopyBytesToJS(resp, scratch)
		if cap(scratch) > 64<<10 {
			scratch = nil
		}
		return n
	}
	return jsBytes(head, data)
}

func submit(args []js.Value) any {
	if l := lookup(args[0]); l != nil {
		var data []byte
		if len(args) > 4 {
			data = bytesOf(args[4])
		}
		l.Submit(uint64(args[1].Int()), string(bytesOf(args[2])), bytesOf(args[3]), data)
	}
	return nil
}

// errorValue is {error: message, code} (a POSIX name), which the
// JavaScript side raises as an Error.
func errorValue(err error) any {
	code := "EIO"
	if os.IsNotExist(err) {
		code = "ENOENT"
	}
	return map[string]any{"error": err.Error(), "code": code}
}

// logWriter sends the engine's log lines to console.error.
type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	js.Global().Get("console").Call("error", string(p))
	return len(p), nil
}

var _ io.Writer = logWriter{}
