package rpc

import (
	"context"
	"io"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
)

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
	c    *stdioConn
	in   *byteQueue
	done chan struct{}
	err  error
}

// ServeLocal starts serving a client in this process. out receives the
// engine's bytes (frames, possibly split or joined) and must not keep
// the slice after it returns. Logs go to logw.
func ServeLocal(ctx context.Context, version string, logw io.Writer, out func([]byte)) *Local {
	q := newByteQueue()
	l := &Local{in: q, done: make(chan struct{})}
	l.c = newStdioConn(q, writerFunc(func(p []byte) (int, error) {
		out(p)
		return len(p), nil
	}), logw, version)
	go func() {
		l.err = l.c.serve(ctx)
		close(l.done)
	}()
	return l
}

// Write passes bytes from the client to the engine. It copies p and never
// blocks.
func (l *Local) Write(p []byte) { l.in.write(p) }

// CloseWrite ends the client's side, like closing the engine's stdin.
func (l *Local) CloseWrite() { l.in.close() }

// Wait blocks until the engine has finished serving (shutdown, end of
// input, or a refused handshake) and returns why it ended.
func (l *Local) Wait() error {
	<-l.done
	return l.err
}

// CallSync runs one call on the calling goroutine and returns the
// serialized agentfs.v1.Result, as head followed by data (file data is
// not copied into the head). It may only be called after the handshake
// has been answered; it cannot be cancelled.
func (l *Local) CallSync(method string, payload []byte) (head, data []byte) {
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
	resp, err := l.c.dispatch(l.c.ctx, method, payload)
	if err != nil {
		return errorResult(err), nil
	}
	prefix, body, err := responseParts(resp)
	if err != nil {
		return errorResult(err), nil
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
