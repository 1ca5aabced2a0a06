package rpc

import (
	"context"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// largeCall is the size of a request or response after which a Local
// engine hands its memory back to the host process at once: Go would
// keep a freed 64 MiB buffer for minutes, in Node's resident set.
const largeCall = 8 << 20

// Local is the stdio protocol without a process or a pipe, for a client
// that loads the engine as a library (the Node.js addon of sdk-ts): the
// client's bytes come in through Write, the engine's bytes go out through
// the function given to ServeLocal, and everything else (handshake,
// concurrent calls, cancellation, calls to the client's bindings,
// shutdown) is the stdio connection as it is.
//
// CallSync adds what a pipe cannot do: a call answered on the caller's
// own thread, with no frame and no hand-off. The client uses it for short
// calls, which then cost the engine's work plus about a microsecond.
type Local struct {
	c       *stdioConn
	in      *byteQueue
	ctx     context.Context
	started sync.Once // the connection's goroutine (see start)
	done    chan struct{}
	err     error
	freeing atomic.Bool
}

// freeMemory returns the heap's free memory to the system, once at a time.
func (l *Local) freeMemory() {
	if l.freeing.CompareAndSwap(false, true) {
		go func() {
			debug.FreeOSMemory()
			l.freeing.Store(false)
		}()
	}
}

// ServeLocal starts serving a client in this process. out receives the
// engine's bytes (frames, possibly split or joined) and must not keep
// the slice after it returns. Logs go to logw.
func ServeLocal(ctx context.Context, version string, logw io.Writer, out func([]byte)) *Local {
	q := newByteQueue()
	l := &Local{in: q, ctx: ctx, done: make(chan struct{})}
	l.c = newStdioConn(q, writerFunc(func(p []byte) (int, error) {
		out(p)
		return len(p), nil
	}), logw, version)
	l.c.afterLarge = l.freeMemory
	return l
}

// start runs the connection's goroutine, once: serve (the handshake read
// from the client's bytes, then calls) when the client's first bytes or
// its end come through Write or CloseWrite, or the calls after the
// handshake Hello made. first runs on the caller's goroutine before the
// connection's starts; it reports whether this call started it.
func (l *Local) start(first func() (serve func() error)) bool {
	ran := false
	l.started.Do(func() {
		ran = true
		serve := first()
		go func() {
			l.err = serve()
			close(l.done)
		}()
	})
	return ran
}

func (l *Local) serve() func() error {
	return func() error { return l.c.serve(l.ctx) }
}

// Write passes bytes from the client to the engine. It copies p and never
// blocks.
func (l *Local) Write(p []byte) {
	l.start(l.serve)
	l.in.write(p)
}

// CloseWrite ends the client's side, like closing the engine's stdin.
func (l *Local) CloseWrite() {
	l.start(l.serve)
	l.in.close()
}

// Hello makes the handshake on the calling goroutine: frame is the
// client's Hello (a serialized agentfs.v1.Frame, without the length of
// the stdio protocol), and the answer is the frame the handshake would
// have sent, the Welcome or the Result of a refusal, serialized the same
// way; the connection then serves calls (or ends, after a refusal) as if
// the handshake had come through Write. A client in this process thus
// needs no hand-off to the engine's goroutine and back to learn that the
// agent is open (about 2 ms of its cold start on a busy machine). It must
// come first: after Write or CloseWrite, or a second time, it changes
// nothing and answers with a refusal.
func (l *Local) Hello(frame []byte) []byte {
	var answer *v1.Frame
	if !l.start(func() func() error {
		sess, cleanup, a, err := l.c.greet(l.ctx, frame)
		answer = a
		return func() error { return l.c.run(sess, cleanup, err) }
	}) {
		answer = &v1.Frame{Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(
			errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "hello: the connection has already begun (Hello must be its first frame)"))}}}
	}
	b, err := proto.Marshal(answer)
	if err != nil {
		panic(err) // only our own well-formed messages get here
	}
	return b
}

// Wait blocks until the engine has finished serving (shutdown, end of
// input, or a refused handshake) and returns why it ended.
func (l *Local) Wait() error {
	<-l.done
	return l.err
}

type allocatorKey struct{}

// allocatorFrom returns the caller's allocator for file data read in a
// synchronous call (see CallSyncInto), or nil.
func allocatorFrom(ctx context.Context) func(n int) []byte {
	a, _ := ctx.Value(allocatorKey{}).(func(n int) []byte)
	return a
}

// CallSyncInto is CallSync where file data read by the call (ReadFile)
// goes straight into zeroed memory from alloc, the caller's own (the Node
// addon allocates it in JavaScript's heap): when data is that memory,
// nothing was copied.
func (l *Local) CallSyncInto(method string, payload []byte, alloc func(n int) []byte) (head, data []byte) {
	return l.callSync(method, payload, alloc)
}

// CallSync runs one call on the calling goroutine and returns the
// serialized agentfs.v1.Result, as head followed by data (file data is
// not copied into the head). It may only be called after the handshake
// has been answered; it cannot be cancelled.
func (l *Local) CallSync(method string, payload []byte) (head, data []byte) {
	return l.callSync(method, payload, nil)
}

func (l *Local) callSync(method string, payload []byte, alloc func(n int) []byte) (head, data []byte) {
	select {
	case <-l.c.ready:
	default:
		return errorResult(errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the engine has not answered the handshake yet", method)), nil
	}
	if l.c.sess == nil {
		return errorResult(errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the engine refused the handshake", method)), nil
	}
	select {
	case <-l.done:
		return errorResult(errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the agent is closed", method)), nil
	default:
	}
	ctx := l.c.ctx
	if alloc != nil {
		ctx = context.WithValue(ctx, allocatorKey{}, alloc)
	}
	resp, err := l.c.dispatch(ctx, method, payload)
	if err != nil {
		return errorResult(err), nil
	}
	prefix, body, err := responseParts(resp)
	if err != nil {
		return errorResult(err), nil
	}
	if len(body) >= largeCall {
		defer l.freeMemory() // the caller copies body before the GC runs
	}
	// Result{payload: prefix+body}
	head = protowire.AppendTag(make([]byte, 0, 16+len(prefix)), 1, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(prefix)+len(body)))
	head = append(head, prefix...)
	if len(body) < 64<<10 {
		return append(head, body...), nil
	}
	return head, body
}

// Submit starts a call like a Call frame would, without the frame: the
// answer comes back as a Result frame with this id, and a Cancel frame
// with it cancels the call. data is the value of the request's file data
// field for WriteFile and Pwrite, passed apart from the rest of the
// request (head) so that the engine reads it where it lies, without a
// copy: the caller must keep data unchanged and alive until the answer
// arrives, even if it cancels the call. For other methods data, if any,
// is appended to head (it must then be a field's complete encoding).
func (l *Local) Submit(id uint64, method string, head, data []byte) {
	head = append([]byte(nil), head...)
	select {
	case <-l.c.ready:
	default:
		// Only after the Welcome (which the client has read) can calls run.
		l.c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(
			errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the engine has not answered the handshake yet", method))}}}))
		return
	}
	select {
	case <-l.done:
		return // the client learns from the end of the connection
	default:
	}
	ctx, cancel := l.c.register(l.c.ctx, id)
	go func() {
		defer l.c.wg.Done()
		defer func() {
			l.c.mu.Lock()
			delete(l.c.inflight, id)
			l.c.mu.Unlock()
			cancel()
		}()
		if fn := l.c.streamMethod(method); fn != nil {
			// A server stream answers with message frames, then its Result.
			l.c.runStream(ctx, id, method, append(head, data...), fn)
			return
		}
		l.c.answer(id, method, func() (proto.Message, error) {
			return l.c.guard(ctx, method, func() (proto.Message, error) { return l.runWithData(ctx, method, head, data) })
		})
		if len(data) >= largeCall {
			l.freeMemory()
		}
	}()
}

// runWithData runs a submitted call.
func (l *Local) runWithData(ctx context.Context, method string, head, data []byte) (proto.Message, error) {
	svc := l.c.svc
	switch {
	case len(data) == 0:
	case method == agentfsv1connect.FilesystemServiceWriteFileProcedure:
		req := new(v1.WriteFileRequest)
		if err := proto.Unmarshal(head, req); err != nil {
			return nil, err
		}
		req.Data = data
		return svc.WriteFile(ctx, req)
	case method == agentfsv1connect.FilesystemServicePwriteProcedure:
		req := new(v1.PwriteRequest)
		if err := proto.Unmarshal(head, req); err != nil {
			return nil, err
		}
		req.Data = data
		return svc.Pwrite(ctx, req)
	default:
		head = append(head, data...)
	}
	fn := l.c.methods[method]
	if fn == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED, "unknown method %q", method)
	}
	return fn(ctx, head)
}

func errorResult(err error) []byte {
	b, _ := proto.Marshal(&v1.Result{Error: ToProto(err)})
	return b
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// byteQueue is an unbounded pipe: writes never wait for the reader.
type byteQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks [][]byte
	closed bool
}

func newByteQueue() *byteQueue {
	q := &byteQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *byteQueue) write(p []byte) {
	if len(p) == 0 {
		return
	}
	b := append([]byte(nil), p...)
	q.mu.Lock()
	if !q.closed {
		q.chunks = append(q.chunks, b)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

func (q *byteQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *byteQueue) Read(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 {
		if q.closed {
			return 0, io.EOF
		}
		q.cond.Wait()
	}
	n := 0
	for n < len(p) && len(q.chunks) > 0 {
		c := copy(p[n:], q.chunks[0])
		n += c
		if c == len(q.chunks[0]) {
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
		} else {
			q.chunks[0] = q.chunks[0][c:]
		}
	}
	return n, nil
}

// UnavailableResult is a serialized Result carrying an UNAVAILABLE error.
func UnavailableResult(msg string) []byte {
	return errorResult(errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s", msg))
}
