package jsnode

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// spawnOpts are the options child_process passes down (see prelude.js).
type spawnOpts struct {
	Cwd     string
	Env     map[string]string
	HasEnv  bool
	Input   []byte
	Inherit bool
}

func (n *node) spawnOptions(v goja.Value) spawnOpts {
	var o spawnOpts
	obj, ok := v.(*goja.Object)
	if !ok {
		return o
	}
	if c := obj.Get("cwd"); c != nil && !goja.IsUndefined(c) && !goja.IsNull(c) {
		o.Cwd = n.abs(c.String())
	}
	if e, ok := obj.Get("env").(*goja.Object); ok {
		o.HasEnv = true
		o.Env = map[string]string{}
		for _, k := range e.Keys() {
			if v := e.Get(k); v != nil && !goja.IsUndefined(v) {
				o.Env[k] = v.String()
			}
		}
	}
	if in := obj.Get("input"); in != nil && !goja.IsUndefined(in) && !goja.IsNull(in) {
		o.Input = n.bytesArg(in)
	}
	if v := obj.Get("inherit"); v != nil {
		o.Inherit = v.ToBoolean()
	}
	return o
}

func (n *node) invocation(args []string, o spawnOpts) commands.Invocation {
	inv := commands.Invocation{Args: args, Dir: o.Cwd}
	if inv.Dir == "" {
		inv.Dir = n.cwd
	}
	if o.HasEnv {
		for k, v := range o.Env {
			inv.Env = append(inv.Env, k+"="+v)
		}
	}
	return inv
}

func (n *node) bindProc() {
	rt := n.rt
	// spawnSync(args, opts) -> {status, stdout, stderr}: the command runs
	// through the sandbox (its shell for "sh -c"), with its policy and
	// limits, while the script waits.
	n.native.Set("spawnSync", func(call goja.FunctionCall) goja.Value {
		var args []string
		if err := rt.ExportTo(call.Argument(0), &args); err != nil || len(args) == 0 {
			panic(n.typeError("ERR_INVALID_ARG_TYPE", "The \"command\" argument must be of type string"))
		}
		o := n.spawnOptions(call.Argument(1))
		inv := n.invocation(args, o)
		var stdout, stderr bytes.Buffer
		inv.Stdin = bytes.NewReader(o.Input)
		inv.Stdout, inv.Stderr = &limitedBuffer{b: &stdout, n: n}, &limitedBuffer{b: &stderr, n: n}
		if o.Inherit {
			inv.Stdout, inv.Stderr = n.c.Stdout, n.c.Stderr
		}
		status := n.c.Exec(n.ctx, inv)
		if n.ctx.Err() != nil {
			rt.Interrupt(cancelSignal{})
		}
		res := rt.NewObject()
		res.Set("status", status)
		res.Set("stdout", n.buf(stdout.Bytes()))
		res.Set("stderr", n.buf(stderr.Bytes()))
		return res
	})
	// spawn(args, opts, onData(fd, buf), onExit(status)) -> {write, end,
	// kill}: the command runs in its own goroutine and its output reaches
	// the script through the event loop as it is produced.
	n.native.Set("spawn", func(call goja.FunctionCall) goja.Value {
		var args []string
		if err := rt.ExportTo(call.Argument(0), &args); err != nil || len(args) == 0 {
			panic(n.typeError("ERR_INVALID_ARG_TYPE", "The \"command\" argument must be of type string"))
		}
		o := n.spawnOptions(call.Argument(1))
		onData, onExit := call.Argument(2), call.Argument(3)
		inv := n.invocation(args, o)
		in := newPipe()
		// Closed when the script ends, so that a child still reading
		// its stdin sees EOF and close() does not wait for it forever.
		n.pipes = append(n.pipes, in)
		if o.Input != nil {
			in.write(o.Input)
			in.close()
		}
		inv.Stdin = in
		ctx, cancel := context.WithCancel(n.ctx)
		mk := func(fd int) io.Writer {
			return writerFunc(func(p []byte) (int, error) {
				if ctx.Err() != nil {
					return 0, commands.ErrStop
				}
				if err := n.c.Mem.Check(int64(len(p))); err != nil {
					return 0, err
				}
				b := append([]byte(nil), p...)
				n.postData(func() {
					n.callFn(onData, rt.ToValue(fd), n.buf(b))
				})
				return len(p), nil
			})
		}
		inv.Stdout, inv.Stderr = mk(1), mk(2)
		n.startAsync(func() {
			status := n.c.Exec(ctx, inv)
			cancel()
			n.postDone(func() {
				n.callFn(onExit, rt.ToValue(status))
			})
		})
		h := rt.NewObject()
		h.Set("write", func(call goja.FunctionCall) goja.Value {
			in.write(append([]byte(nil), n.bytesArg(call.Argument(0))...))
			return rt.ToValue(true)
		})
		h.Set("end", func(goja.FunctionCall) goja.Value { in.close(); return goja.Undefined() })
		h.Set("kill", func(goja.FunctionCall) goja.Value { cancel(); in.close(); return rt.ToValue(true) })
		return h
	})
	n.native.Set("fetch", func(call goja.FunctionCall) goja.Value {
		method := strings.ToUpper(call.Argument(0).String())
		rawURL := call.Argument(1).String()
		var hdrs [][]string
		rt.ExportTo(call.Argument(2), &hdrs)
		var body []byte
		if b := call.Argument(3); !goja.IsUndefined(b) && !goja.IsNull(b) {
			body = append([]byte(nil), n.bytesArg(b)...)
		}
		cb := call.Argument(4)
		n.startAsync(func() {
			res, err := n.doFetch(method, rawURL, hdrs, body)
			n.postDone(func() {
				if err != nil {
					n.callFn(cb, rt.ToValue(err.Error()), goja.Undefined())
					return
				}
				o := rt.NewObject()
				o.Set("status", res.status)
				o.Set("statusText", res.statusText)
				o.Set("url", res.url)
				o.Set("redirected", res.redirected)
				o.Set("headers", res.headers)
				o.Set("body", n.buf(res.body))
				n.callFn(cb, goja.Null(), o)
			})
		})
		return goja.Undefined()
	})
}

// callFn calls a JavaScript function from a posted result; errors
// propagate to the loop's guard.
func (n *node) callFn(fn goja.Value, args ...goja.Value) {
	if _, err := n.runTask(goja.Undefined(), append([]goja.Value{fn}, args...)...); err != nil {
		panic(err)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// limitedBuffer collects a child's output within the memory budget.
type limitedBuffer struct {
	b *bytes.Buffer
	n *node
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if err := l.n.c.Mem.Check(int64(l.b.Len() + len(p))); err != nil {
		return 0, err
	}
	return l.b.Write(p)
}

// pipe is a child's stdin: writes never block the event loop.
type pipe struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    bytes.Buffer
	closed bool
}

func newPipe() *pipe {
	p := &pipe{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *pipe) write(b []byte) {
	p.mu.Lock()
	if !p.closed {
		p.buf.Write(b)
	}
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipe) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.buf.Len() == 0 && !p.closed {
		p.cond.Wait()
	}
	if p.buf.Len() == 0 {
		return 0, io.EOF
	}
	return p.buf.Read(b)
}

type fetchResult struct {
	status     int
	statusText string
	url        string
	redirected bool
	headers    [][]string
	body       []byte
}

// doFetch makes a request under the sandbox's network policy, exactly as
// curl does: every hop of a redirect is matched against the rules, the
// rule's headers are set last, private addresses are refused unless the
// rule allows them, and the body is bounded.
func (n *node) doFetch(method, rawURL string, hdrs [][]string, body []byte) (*fetchResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, errors.New("Invalid URL: " + rawURL)
	}
	net := n.c.Net
	ctx := n.ctx
	if net != nil && net.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, net.Timeout)
		defer cancel()
	}
	origHost := u.Host
	redirected := false
	for hops := 0; ; hops++ {
		if hops > 20 {
			return nil, errors.New("redirect count exceeded")
		}
		rule, err := net.Match(method, u)
		if err != nil {
			return nil, err
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
		if err != nil {
			return nil, err
		}
		for _, kv := range hdrs {
			if len(kv) != 2 {
				continue
			}
			if hops > 0 && u.Host != origHost && (strings.EqualFold(kv[0], "Authorization") || strings.EqualFold(kv[0], "Cookie")) {
				continue
			}
			req.Header.Add(kv[0], kv[1])
		}
		if req.Header.Get("User-Agent") == "" {
			req.Header.Set("User-Agent", "node (agentfs sandbox)")
		}
		for k, v := range rule.Headers {
			req.Header.Del(k)
			if strings.EqualFold(k, "Host") {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		tr := rule.Transport()
		client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			tr.CloseIdleConnections()
			return nil, err
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode <= 399 && loc != "" {
			next, err := u.Parse(loc)
			resp.Body.Close()
			tr.CloseIdleConnections()
			if err != nil {
				return nil, err
			}
			if resp.StatusCode == 303 || ((resp.StatusCode == 301 || resp.StatusCode == 302) && method == "POST") {
				method, body = "GET", nil
			}
			u, redirected = next, true
			continue
		}
		defer tr.CloseIdleConnections()
		defer resp.Body.Close()
		max := int64(64 << 20)
		if net.MaxResponseBytes > 0 {
			max = net.MaxResponseBytes
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > max {
			return nil, errors.New("response larger than the sandbox limit")
		}
		if err := n.c.Mem.Check(int64(len(data))); err != nil {
			return nil, err
		}
		res := &fetchResult{status: resp.StatusCode, statusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, itoa(resp.StatusCode))), url: u.String(), redirected: redirected, body: data}
		for k, vs := range resp.Header {
			for _, v := range vs {
				res.headers = append(res.headers, []string{strings.ToLower(k), v})
			}
		}
		return res, nil
	}
}
