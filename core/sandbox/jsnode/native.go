package jsnode

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/url"
)

var startTime = time.Now()

// maxSingleAlloc bounds one buffer, typed array or string built at once
// when the run has no memory budget of its own.
const maxSingleAlloc = 1 << 30

func init() {
	// A backtracking regular expression (goja uses regexp2 for those Go's
	// regexp cannot run) does not see goja's interrupt: bound every match
	// so that the sandbox's wall time takes effect after it. A match cut
	// short reports no match.
	regexp2.DefaultMatchTimeout = 5 * time.Second
}

// setupBuffer installs goja_nodejs's Buffer (a Uint8Array subclass with
// the encodings) and URL/URLSearchParams as globals; the prelude adds the
// rest of Buffer's common API.
func (n *node) setupBuffer() error {
	rt := n.rt
	mod := rt.NewObject()
	mod.Set("exports", rt.NewObject())
	buffer.Require(rt, mod)
	rt.Set("Buffer", mod.Get("exports").ToObject(rt).Get("Buffer"))
	umod := rt.NewObject()
	umod.Set("exports", rt.NewObject())
	url.Require(rt, umod)
	ue := umod.Get("exports").ToObject(rt)
	rt.Set("URL", ue.Get("URL"))
	rt.Set("URLSearchParams", ue.Get("URLSearchParams"))
	n.native.Set("urlModule", ue)
	return nil
}

func (n *node) bindNative() {
	rt := n.rt
	nat := n.native
	nat.Set("write", func(call goja.FunctionCall) goja.Value {
		n.write(int(call.Argument(0).ToInteger()), n.bytesArg(call.Argument(1)))
		return goja.Undefined()
	})
	nat.Set("cwd", func(goja.FunctionCall) goja.Value { return rt.ToValue(n.cwd) })
	nat.Set("chdir", func(call goja.FunctionCall) goja.Value {
		p := n.abs(call.Argument(0).String())
		st, err := n.c.FS.Stat(p)
		if err == nil && !st.IsDir() {
			err = syscall.ENOTDIR
		}
		if err != nil {
			n.fsError(err, "chdir", p)
		}
		n.cwd = p
		return goja.Undefined()
	})
	env := rt.NewObject()
	if n.c.Environ != nil {
		for _, kv := range n.c.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env.Set(k, v)
			}
		}
	}
	nat.Set("env", env)
	nat.Set("version", Version)
	nat.Set("user", map[string]any{"name": n.c.ID.User, "uid": n.c.ID.UID, "gid": n.c.ID.GID, "hostname": n.c.ID.Hostname})
	nat.Set("exit", func(call goja.FunctionCall) goja.Value {
		// Uncatchable: the interrupt unwinds every frame, try/finally
		// included, like the end of the process.
		rt.Interrupt(exitSignal{code: int(call.Argument(0).ToInteger()) & 0xff})
		panic(rt.NewGoError(errExit))
	})
	nat.Set("hrtime", func(goja.FunctionCall) goja.Value {
		return rt.ToValue(float64(time.Since(startTime).Nanoseconds()))
	})
	nat.Set("now", func(goja.FunctionCall) goja.Value {
		if n.c.Now != nil {
			return rt.ToValue(n.c.Now().UnixMilli())
		}
		return rt.ToValue(time.Now().UnixMilli())
	})
	fsObj := rt.NewObject()
	n.bindFS(fsObj)
	nat.Set("fs", fsObj)

	// Timers live in the Go loop; the prelude wraps ids in Timeout
	// objects.
	nat.Set("setTimer", func(call goja.FunctionCall) goja.Value {
		fn := call.Argument(0)
		if _, ok := goja.AssertFunction(fn); !ok {
			panic(n.typeError("ERR_INVALID_ARG_TYPE", "The \"callback\" argument must be of type function. Received "+fn.String()))
		}
		ms := call.Argument(1).ToFloat()
		if !(ms >= 1) || ms > 2147483647 { // NaN, < 1 and too large are 1, as in Node
			ms = 1
		}
		var args []goja.Value
		if a, ok := call.Argument(3).Export().([]any); ok {
			for _, x := range a {
				args = append(args, rt.ToValue(x))
			}
		}
		if o, ok := call.Argument(3).(*goja.Object); ok {
			args = args[:0]
			l := int(o.Get("length").ToInteger())
			for i := 0; i < l; i++ {
				args = append(args, o.Get(itoa(i)))
			}
		}
		d := time.Duration(ms * float64(time.Millisecond))
		t := &timer{id: n.nextSeq(), delay: d, when: time.Now().Add(d), interval: call.Argument(2).ToBoolean(), ref: true, fn: fn, args: args}
		t.seq = t.id
		n.timers.push(t)
		n.timerByID[t.id] = t
		return rt.ToValue(t.id)
	})
	nat.Set("clearTimer", func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		if t := n.timerByID[id]; t != nil {
			t.cleared = true
			delete(n.timerByID, id)
		}
		return goja.Undefined()
	})
	nat.Set("refTimer", func(call goja.FunctionCall) goja.Value {
		if t := n.timerByID[call.Argument(0).ToInteger()]; t != nil {
			t.ref = call.Argument(1).ToBoolean()
		}
		return goja.Undefined()
	})
	nat.Set("refreshTimer", func(call goja.FunctionCall) goja.Value {
		if t := n.timerByID[call.Argument(0).ToInteger()]; t != nil {
			t.when = time.Now().Add(t.delay)
			t.seq = n.nextSeq()
			n.timers.push(t) // re-sorts; the older entry is the same pointer
			n.dedupeTimers()
		}
		return goja.Undefined()
	})
	nat.Set("setImmediate", func(call goja.FunctionCall) goja.Value {
		im := &immediate{fn: call.Argument(0)}
		if o, ok := call.Argument(1).(*goja.Object); ok {
			l := int(o.Get("length").ToInteger())
			for i := 0; i < l; i++ {
				im.args = append(im.args, o.Get(itoa(i)))
			}
		}
		n.immediates = append(n.immediates, im)
		return rt.ToValue(im)
	})
	nat.Set("clearImmediate", func(call goja.FunctionCall) goja.Value {
		if im, ok := call.Argument(0).Export().(*immediate); ok {
			im.cleared = true
		}
		return goja.Undefined()
	})
	nat.Set("require", func(call goja.FunctionCall) goja.Value {
		return n.requireFrom(call.Argument(0).String(), call.Argument(1).String())
	})
	nat.Set("resolve", func(call goja.FunctionCall) goja.Value {
		return rt.ToValue(n.resolveFrom(call.Argument(0).String(), call.Argument(1).String()))
	})
	nat.Set("isBuiltin", func(call goja.FunctionCall) goja.Value {
		_, ok := n.builtins[strings.TrimPrefix(call.Argument(0).String(), "node:")]
		return rt.ToValue(ok)
	})
	nat.Set("hash", func(call goja.FunctionCall) goja.Value {
		var h hash.Hash
		switch strings.ToLower(call.Argument(0).String()) {
		case "md5":
			h = md5.New()
		case "sha1":
			h = sha1.New()
		case "sha256":
			h = sha256.New()
		case "sha384":
			h = sha512.New384()
		case "sha512":
			h = sha512.New()
		default:
			panic(rt.NewGoError(errDigest))
		}
		h.Write(n.bytesArg(call.Argument(1)))
		return n.buf(h.Sum(nil))
	})
	nat.Set("randomBytes", func(call goja.FunctionCall) goja.Value {
		k := call.Argument(0).ToInteger()
		if k < 0 || k > 1<<20 {
			panic(rt.NewTypeError("randomBytes: size out of range"))
		}
		b := make([]byte, k)
		rand.Read(b)
		return n.buf(b)
	})
	nat.Set("utf8Decode", func(call goja.FunctionCall) goja.Value {
		return rt.ToValue(string(bytes.ToValidUTF8(n.bytesArg(call.Argument(0)), []byte("\uFFFD"))))
	})
	nat.Set("utf8Encode", func(call goja.FunctionCall) goja.Value {
		return n.buf([]byte(call.Argument(0).String()))
	})
	nat.Set("basename", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Base(call.Argument(0).String())) })
	nat.Set("maxAlloc", func(goja.FunctionCall) goja.Value {
		limit := int64(maxSingleAlloc)
		if m := n.c.Mem.Max(); m > 0 {
			limit = min(limit, m-n.c.Mem.Used())
		}
		return rt.ToValue(limit)
	})
	nat.Set("promiseState", func(call goja.FunctionCall) goja.Value {
		p, ok := call.Argument(0).Export().(*goja.Promise)
		if !ok {
			return rt.NewArray("pending")
		}
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return rt.NewArray("fulfilled", p.Result())
		case goja.PromiseStateRejected:
			return rt.NewArray("rejected", p.Result())
		}
		return rt.NewArray("pending")
	})
	n.bindProc()
}

// dedupeTimers drops a timer's older entry after refresh re-queued it.
func (n *node) dedupeTimers() {
	seen := map[*timer]bool{}
	out := n.timers[:0]
	// The heap is sorted; keep the entry whose seq is the timer's own.
	for _, t := range n.timers {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	n.timers = out
}

func itoa(i int) string { return strconv.Itoa(i) }

type jsErr string

func (e jsErr) Error() string { return string(e) }

const (
	errExit   = jsErr("process.exit")
	errDigest = jsErr("Digest method not supported")
)
