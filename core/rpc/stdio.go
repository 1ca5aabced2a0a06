package rpc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/store"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

// ProtocolVersion is the version of the stdio protocol (spec/PROTOCOL.md)
// this engine speaks; the handshake refuses any other.
const ProtocolVersion = 1

// MaxFrame is the largest frame either side may send.
const MaxFrame = 1 << 30

// ErrHandshake reports a refused handshake (the client was told why); the
// engine should exit with status 2.
var ErrHandshake = errors.New("handshake refused")

// Methods returns the dispatch table of every service on svc, with
// ToolList and ToolGet answered straight from the rows (tools_encode.go).
func Methods(svc *Service) map[string]agentfsv1rpc.Func {
	m := map[string]agentfsv1rpc.Func{}
	for _, t := range []map[string]agentfsv1rpc.Func{
		agentfsv1rpc.FilesystemServiceMethods(svc),
		agentfsv1rpc.KvServiceMethods(svc),
		agentfsv1rpc.ToolsServiceMethods(svc),
		agentfsv1rpc.AgentServiceMethods(svc),
		agentfsv1rpc.SandboxServiceMethods(svc),
		agentfsv1rpc.ProcessServiceMethods(svc),
		agentfsv1rpc.SessionServiceMethods(svc),
	} {
		for k, v := range t {
			m[k] = v
		}
	}
	encodedToolMethods(m, svc)
	return m
}

// ServeStdio runs the stdio protocol on r and w until the client shuts the
// engine down, closes r, or (with a heartbeat) goes silent. Logs go to
// logw. It returns ErrHandshake when the handshake was refused.
func ServeStdio(ctx context.Context, r io.Reader, w io.Writer, logw io.Writer, version string) error {
	return newStdioConn(r, w, logw, version).serve(ctx)
}

func newStdioConn(r io.Reader, w io.Writer, logw io.Writer, version string) *stdioConn {
	c := &stdioConn{
		svc:         &Service{Version: version},
		in:          bufio.NewReaderSize(r, 256<<10),
		out:         bufio.NewWriterSize(w, 256<<10),
		done:        make(chan error, 1),
		closed:      make(chan struct{}),
		stopStreams: make(chan struct{}),
		ready:       make(chan struct{}),
		inflight:    map[uint64]context.CancelFunc{},
		pending:     map[uint64]chan *v1.Result{},
		log:         log.New(logw, "agentfs: ", 0),
	}
	c.methods = Methods(c.svc)
	return c
}

// serve runs the connection: the handshake, then calls until the end.
func (c *stdioConn) serve(ctx context.Context) error {
	sess, cleanup, err := c.handshake(ctx)
	return c.run(sess, cleanup, err)
}

// run serves calls after the handshake, until the end, in the session's
// context; err is the handshake's failure, which ends the connection at
// once.
func (c *stdioConn) run(sess *Session, cleanup func(), err error) error {
	defer c.stopWriting()
	c.readyOnce.Do(func() { close(c.ready) })
	if err != nil {
		return err
	}
	defer cleanup()
	defer sess.CloseHandles()
	// The connection's processes end with it (a client that went away
	// must not leave scripts running).
	defer sess.CloseProcs()
	defer sess.CloseAgentSessions()
	ctx := c.ctx

	// The read loop runs on its own so that a silent client (heartbeat)
	// or a cancelled ctx can end the engine while a read blocks.
	go c.reader(ctx)
	var watchdog <-chan time.Time
	if c.heartbeat > 0 {
		t := time.NewTicker(c.heartbeat)
		defer t.Stop()
		watchdog = t.C
	}
	for {
		select {
		case err := <-c.done:
			c.finish()
			return err
		case <-ctx.Done():
			c.finish()
			return nil
		case <-watchdog:
			if silent := time.Since(time.Unix(0, c.lastSeen.Load())); silent > 3*c.heartbeat {
				c.log.Printf("no frame from the client for %v (heartbeat %v): exiting", silent.Round(time.Millisecond), c.heartbeat)
				c.finish()
				return nil
			}
		}
	}
}

// stdioConn is one client connection.
type stdioConn struct {
	svc       *Service
	methods   map[string]agentfsv1rpc.Func
	sess      *Session
	ctx       context.Context // the session's context, once ready is closed
	ready     chan struct{}   // closed when the handshake ended (sess is set if it succeeded)
	readyOnce sync.Once
	// afterLarge, when set, runs after a call that moved at least
	// largeCall bytes (Local: give the memory back to the host process).
	afterLarge func()
	in         *bufio.Reader
	log        *log.Logger

	// Frames are written by the goroutine that produced them, under outMu;
	// the last of the writers waiting for the lock flushes, so answers
	// produced together leave in one write and a lone answer leaves at once
	// (no hand-off to a writer goroutine on the way).
	outMu      sync.Mutex
	out        *bufio.Writer
	outWaiting atomic.Int32
	outBroken  bool // a write failed or the connection ended: drop frames

	done   chan error    // the read loop's end
	closed chan struct{} // closed when the read side ends
	once   sync.Once

	stopStreams chan struct{} // closed by Shutdown: server streams end
	stopOnce    sync.Once

	heartbeat time.Duration
	lastSeen  atomic.Int64

	mu       sync.Mutex
	inflight map[uint64]context.CancelFunc // client calls running here
	pending  map[uint64]chan *v1.Result    // engine calls awaiting the client
	nextOut  uint64
	wg       sync.WaitGroup
}

// handshake reads Hello, opens the agent and answers Welcome.
func (c *stdioConn) handshake(ctx context.Context) (*Session, func(), error) {
	frame, err := c.readFrame()
	if err != nil {
		return nil, nil, fmt.Errorf("handshake: %w", err)
	}
	sess, cleanup, answer, err := c.greet(ctx, frame)
	c.send(marshalFrame(answer))
	return sess, cleanup, err
}

// greet answers the Hello frame (serialized, without its length): it
// opens the agent and returns the Welcome, or the Result frame of a
// refusal with ErrHandshake. On success the connection is ready (calls
// may run) before the caller passes the Welcome on.
func (c *stdioConn) greet(ctx context.Context, frame []byte) (*Session, func(), *v1.Frame, error) {
	var f v1.Frame
	if err := proto.Unmarshal(frame, &f); err != nil || f.GetHello() == nil {
		return c.refuse(f.GetId(), errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "the first frame must be Hello (spec/PROTOCOL.md)"))
	}
	h := f.GetHello()
	if h.ProtocolVersion != ProtocolVersion {
		return c.refuse(f.Id, errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION,
			"engine %s speaks stdio protocol %d, client %q speaks %d: use an SDK and an engine of matching versions (set AGENTFS_BIN to the engine the SDK expects)",
			c.svc.Version, ProtocolVersion, h.Client, h.ProtocolVersion))
	}
	a, id, cleanup, err := openForHello(ctx, h.GetOpen())
	if err != nil {
		return c.refuse(f.Id, err)
	}
	sess := NewSession(a, id, c)
	sess.ReadOnly = h.GetOpen().GetReadOnly()
	sess.SyncToken = h.GetOpen().GetSyncToken()
	info, err := c.svc.info(ctx, sess)
	if err != nil {
		a.Close()
		cleanup()
		return c.refuse(f.Id, err)
	}
	c.heartbeat = time.Duration(h.HeartbeatMs) * time.Millisecond
	c.lastSeen.Store(time.Now().UnixNano())
	// Ready before the Welcome leaves: a client in this process may run
	// calls synchronously (Local.CallSync) as soon as it has read it.
	c.sess, c.ctx = sess, WithSession(ctx, sess)
	c.readyOnce.Do(func() { close(c.ready) })
	welcome := &v1.Frame{Id: f.Id, Body: &v1.Frame_Welcome{Welcome: &v1.Welcome{
		ProtocolVersion: ProtocolVersion, EngineVersion: c.svc.Version, Info: info,
	}}}
	return sess, func() { a.Close(); cleanup() }, welcome, nil
}

// refuse logs why the handshake failed and returns greet's answer for it.
func (c *stdioConn) refuse(id uint64, err error) (*Session, func(), *v1.Frame, error) {
	c.log.Printf("handshake refused: %v", err)
	return nil, nil, &v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(err)}}}, ErrHandshake
}

// openForHello opens what the handshake names: an agent id, a path, or a
// temporary database deleted by the returned cleanup.
func openForHello(ctx context.Context, o *v1.OpenOptions) (*core.Agent, string, func(), error) {
	opts := core.Options{Create: !o.GetNoCreate(), ReadOnly: o.GetReadOnly(), ChunkSize: int(o.GetChunkSize())}
	switch o.GetDurability() {
	case "", "normal":
	case "full":
		opts.Durability = store.DurabilityFull
	default:
		return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "durability must be normal or full, not %q", o.GetDurability())
	}
	if k := o.GetEncryptionKey(); len(k) > 0 || o.GetCipher() != "" {
		if len(k) == 0 {
			return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "open: a cipher without an encryption key: give the key too")
		}
		opts.Encryption = &store.Encryption{Cipher: o.GetCipher(), Key: k}
		if err := store.CheckEncryption(opts.Encryption); err != nil {
			kind := v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
			if errors.Is(err, errors.ErrUnsupported) {
				kind = v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED
			}
			return nil, "", nil, errorf(kind, "open: %v", err)
		}
	}
	cleanup := func() {}
	var path, id string
	switch {
	case o.GetId() != "" && o.GetPath() != "":
		return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "open: give an id or a path, not both")
	case o.GetId() != "":
		if err := core.CheckID(o.GetId()); err != nil {
			return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "open: %v", err)
		}
		id, path = o.GetId(), core.PathForID(o.GetId())
		if o.GetDir() != "" {
			path = filepath.Join(o.GetDir(), path)
		}
	case o.GetPath() != "":
		path = o.GetPath()
		if o.GetDir() != "" && !filepath.IsAbs(path) {
			path = filepath.Join(o.GetDir(), path)
		}
	default:
		dir, err := os.MkdirTemp("", "agentfs-")
		if err != nil {
			return nil, "", nil, err
		}
		path, opts.Create = filepath.Join(dir, "agent.db"), true
		cleanup = func() { os.RemoveAll(dir) }
	}
	if o.GetSyncRemoteUrl() == "" {
		if p, err := partialOption(o); err != nil || p != nil {
			cleanup()
			if err == nil {
				err = errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "open: partial sync options without sync_remote_url: a partial bootstrap is of a sync remote (EINVAL)")
			}
			return nil, "", nil, err
		}
	}
	if u := o.GetSyncRemoteUrl(); u != "" {
		if o.GetId() == "" && o.GetPath() == "" {
			cleanup()
			return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "open: a sync remote needs an id or a path (a temporary database is not synced)")
		}
		token := o.GetSyncToken()
		if token == "" {
			token = os.Getenv("TURSO_DB_AUTH_TOKEN")
		}
		partial, err := partialOption(o)
		if err != nil {
			cleanup()
			return nil, "", nil, err
		}
		if err := agentsync.Prepare(ctx, path, u, agentsync.Options{Token: token, Partial: partial}, opts); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "open %s: no such database (create it, or open without no_create)", path)
			}
			return nil, "", nil, syncError(err)
		}
	}
	a, err := core.Open(ctx, path, opts)
	if err != nil {
		cleanup()
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "open %s: no such database (create it, or open without no_create)", path)
		}
		return nil, "", nil, err
	}
	return a, id, cleanup, nil
}

// partialOption is the partial bootstrap the handshake asks for (nil: the
// whole remote), checked as `agentfs init --sync-partial-*` checks it
// (Partial.Check).
func partialOption(o *v1.OpenOptions) (*agentsync.Partial, error) {
	length, query, segment, prefetch := o.GetSyncPartialBootstrapLength(), o.GetSyncPartialBootstrapQuery(), o.GetSyncPartialSegmentSize(), o.GetSyncPartialPrefetch()
	if length == 0 && query == "" && segment == 0 && !prefetch {
		return nil, nil
	}
	invalid := v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	if segment > math.MaxInt32 {
		return nil, errorf(invalid, "open: sync_partial_segment_size %d is too large (EINVAL)", segment)
	}
	p := &agentsync.Partial{BootstrapLength: length, BootstrapQuery: query, SegmentSize: int(segment), Prefetch: prefetch}
	if err := p.Check(); err != nil {
		return nil, errorf(invalid, "open: %v", err)
	}
	return p, nil
}

// readFrame reads one length-prefixed frame.
func (c *stdioConn) readFrame() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.in, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("frame of %d bytes exceeds the limit of %d", n, MaxFrame)
	}
	if n <= frameAlloc {
		buf := make([]byte, n)
		if _, err := io.ReadFull(c.in, buf); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return buf, nil
	}
	// A large length is only a claim: allocate as the bytes arrive, so
	// that four bytes from a broken or hostile client cannot make the
	// engine reserve a gigabyte it will never fill.
	buf := make([]byte, 0, frameAlloc)
	for uint32(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(int(n), 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(c.in, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// frameAlloc is the largest frame whose buffer is allocated whole before
// its bytes are read; larger ones grow by doubling as they arrive.
const frameAlloc = 1 << 20

// errHandedOff ends a read loop whose reading continues on another
// goroutine (see runInline).
var errHandedOff = errors.New("reading handed off")

// reader runs the read loop on this goroutine and reports its end.
func (c *stdioConn) reader(ctx context.Context) {
	err := c.readLoop(ctx)
	if err == errHandedOff {
		return
	}
	c.once.Do(func() { close(c.closed) })
	c.done <- err
}

func (c *stdioConn) readLoop(ctx context.Context) error {
	for {
		buf, err := c.readFrame()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading from the client: %w", err)
		}
		c.lastSeen.Store(time.Now().UnixNano())
		id, field, body, err := splitFrame(buf)
		if err != nil {
			return fmt.Errorf("bad frame from the client: %w", err)
		}
		switch field {
		case fieldCall:
			method, payload, err := splitCall(body)
			if err != nil {
				return fmt.Errorf("bad call frame: %w", err)
			}
			if c.in.Buffered() > 0 || c.streamMethod(method) != nil {
				// More frames are waiting: the client has several calls in
				// flight, run them concurrently. A stream lasts as long as
				// its process: run inline, it would hold the frames behind
				// it (a WriteProcess, a KillProcess) until the hand-off.
				c.startCall(ctx, id, method, payload)
			} else if !c.runInline(ctx, id, method, payload) {
				return errHandedOff
			}
		case fieldResult:
			var res v1.Result
			if err := proto.Unmarshal(body, &res); err != nil {
				return fmt.Errorf("bad result frame: %w", err)
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- &res
			}
		case fieldCancel:
			c.mu.Lock()
			cancel := c.inflight[id]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		case fieldPing:
			c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Pong{Pong: &v1.Pong{}}}))
		case fieldPong:
		case fieldShutdown:
			// Streams would keep the calls in flight running for as long
			// as their processes: end them first.
			c.stopOnce.Do(func() { close(c.stopStreams) })
			c.wg.Wait()
			c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{}}}))
			return nil
		default:
			c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(
				errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "unexpected frame (field %d) after the handshake", field))}}}))
		}
	}
}

// inlineBudget is how long a call may run on the reading goroutine before
// another goroutine takes over the reading.
const inlineBudget = 200 * time.Microsecond

// startCall runs one client call on its own goroutine.
func (c *stdioConn) startCall(ctx context.Context, id uint64, method string, payload []byte) {
	cctx, cancel := c.register(ctx, id)
	go c.runCall(cctx, cancel, id, method, payload)
}

// runInline runs a call on the reading goroutine: when the client waits
// for this one answer, going through another goroutine would only add
// scheduler hand-offs to the round trip. If the call outlasts
// inlineBudget, a new goroutine takes over the reading (frames behind a
// slow call, cancels and heartbeats are not held up) and runInline
// reports false: the caller must stop reading.
func (c *stdioConn) runInline(ctx context.Context, id uint64, method string, payload []byte) (stillReader bool) {
	cctx, cancel := c.register(ctx, id)
	handoff := time.AfterFunc(inlineBudget, func() { c.reader(ctx) })
	c.runCall(cctx, cancel, id, method, payload)
	return handoff.Stop()
}

// register records a client call in flight (for Cancel and Shutdown).
func (c *stdioConn) register(ctx context.Context, id uint64) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.inflight[id] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	return cctx, cancel
}

// runCall runs a registered call and sends its answer.
func (c *stdioConn) runCall(ctx context.Context, cancel context.CancelFunc, id uint64, method string, payload []byte) {
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		delete(c.inflight, id)
		c.mu.Unlock()
		cancel()
	}()
	if fn := c.streamMethod(method); fn != nil {
		c.runStream(ctx, id, method, payload, fn)
		return
	}
	c.answer(id, method, func() (proto.Message, error) { return c.dispatch(ctx, method, payload) })
}

// streamFunc runs a server-streaming method, giving each response
// message to send.
type streamFunc func(ctx context.Context, payload []byte, send func(proto.Message) error) error

// streamMethod returns the server-streaming method of that name, or nil.
// The generated tables hold only unary methods; the few streams are
// listed here.
func (c *stdioConn) streamMethod(method string) streamFunc {
	switch method {
	case agentfsv1connect.ProcessServiceStreamProcessProcedure:
		return func(ctx context.Context, payload []byte, send func(proto.Message) error) error {
			req := new(v1.StreamProcessRequest)
			if err := proto.Unmarshal(payload, req); err != nil {
				return err
			}
			return c.svc.streamProcess(ctx, req, func(m *v1.StreamProcessResponse) error { return send(m) })
		}
	}
	return nil
}

// runStream runs a server-streaming call: its messages leave as
// Frame.message frames with the call's id, each as soon as it is made,
// and the Result frame ends the stream.
func (c *stdioConn) runStream(ctx context.Context, id uint64, method string, payload []byte, fn streamFunc) {
	// A stream has no end of its own (a process may run for hours): the
	// client's going away, or a Shutdown, ends it, as a Cancel does.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-c.closed:
			cancel()
		case <-c.stopStreams:
			cancel()
		case <-finished:
		}
	}()
	_, err := c.guard(ctx, method, func() (proto.Message, error) {
		return nil, fn(ctx, payload, func(m proto.Message) error {
			b, err := proto.Marshal(m)
			if err != nil {
				return err
			}
			if !c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Message{Message: &v1.StreamMessage{Payload: b}}})) {
				return errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the client closed the connection", method)
			}
			return nil
		})
	})
	res := &v1.Result{}
	if err != nil {
		res.Error = ToProto(err)
	}
	c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: res}}))
}

// answer runs a call and sends its Result frame.
func (c *stdioConn) answer(id uint64, method string, run func() (proto.Message, error)) {
	resp, err := run()
	if err != nil {
		c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(err)}}}))
		return
	}
	prefix, body, err := responseParts(resp)
	if err != nil {
		c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Result{Result: &v1.Result{Error: ToProto(err)}}}))
		return
	}
	c.send(resultFrame(id, prefix, body))
	if c.afterLarge != nil && len(body) >= largeCall {
		c.afterLarge()
	}
}

// responseParts serializes a response as prefix followed by payload.
// Responses that are file data alone are framed around the data:
// marshalling would copy a whole file (64 MiB for a large ReadFile).
func responseParts(resp proto.Message) (prefix, payload []byte, err error) {
	switch r := resp.(type) {
	case *encoded:
		return nil, r.b, nil
	case *v1.ReadFileResponse:
		return bytesField(1, r.Data), r.Data, nil
	case *v1.PreadResponse:
		return bytesField(1, r.Data), r.Data, nil
	}
	payload, err = proto.Marshal(resp)
	return nil, payload, err
}

// bytesField is the tag and length of a bytes field, without the bytes.
func bytesField(num protowire.Number, b []byte) []byte {
	return protowire.AppendVarint(protowire.AppendTag(make([]byte, 0, 12), num, protowire.BytesType), uint64(len(b)))
}

// dispatch runs one method, turning panics and decode failures into
// errors: nothing a client sends may take the engine down.
func (c *stdioConn) dispatch(ctx context.Context, method string, payload []byte) (resp proto.Message, err error) {
	fn := c.methods[method]
	if fn == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED, "unknown method %q", method)
	}
	return c.guard(ctx, method, func() (proto.Message, error) { return fn(ctx, payload) })
}

// guard runs one method, turning panics and decode failures into errors.
func (c *stdioConn) guard(ctx context.Context, method string, run func() (proto.Message, error)) (resp proto.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Printf("panic in %s: %v\n%s", method, p, debug.Stack())
			resp, err = nil, errorf(v1.ErrorKind_ERROR_KIND_INTERNAL, "%s: internal error: %v", method, p)
		}
	}()
	resp, err = run()
	if err != nil && errors.Is(err, proto.Error) {
		err = errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%s: the request does not decode: %v", method, err)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return resp, err
}

// Call sends a call to the client and waits for its answer: the engine's
// side of "either side may call the other" (HostService).
func (c *stdioConn) Call(ctx context.Context, method string, req, resp proto.Message) error {
	payload, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	ch := make(chan *v1.Result, 1)
	c.mu.Lock()
	c.nextOut++
	id := c.nextOut
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: method, Payload: payload}}}))
	select {
	case res := <-ch:
		if res.Error != nil {
			return FromProto(res.Error)
		}
		return proto.Unmarshal(res.Payload, resp)
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		c.send(marshalFrame(&v1.Frame{Id: id, Body: &v1.Frame_Cancel{Cancel: &v1.Cancel{}}}))
		return ctx.Err()
	case <-c.closed:
		return errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "%s: the client closed the connection", method)
	}
}

// finish waits for the calls in flight (their answers may still reach a
// client that only closed its writing side).
func (c *stdioConn) finish() {
	c.wg.Wait()
}

// send writes a frame and reports whether it went out. Frames sent after
// the connection ended are dropped.
func (c *stdioConn) send(pieces [][]byte) bool {
	c.outWaiting.Add(1)
	c.outMu.Lock()
	defer c.outMu.Unlock()
	last := c.outWaiting.Add(-1) == 0
	if c.outBroken {
		return false
	}
	for _, p := range pieces {
		if _, err := c.out.Write(p); err != nil {
			c.outBroken = true
			return false
		}
	}
	if last {
		if err := c.out.Flush(); err != nil {
			c.outBroken = true
		}
	}
	return !c.outBroken
}

// stopWriting flushes what is buffered and drops any later frame.
func (c *stdioConn) stopWriting() {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if !c.outBroken {
		c.out.Flush()
	}
	c.outBroken = true
}

// Field numbers of Frame's body (protocol.proto).
const (
	fieldID       = 1
	fieldHello    = 2
	fieldWelcome  = 3
	fieldCall     = 4
	fieldResult   = 5
	fieldCancel   = 6
	fieldPing     = 7
	fieldPong     = 8
	fieldShutdown = 9
	fieldMessage  = 10
)

// splitFrame reads the id and the body of a Frame without copying the
// body, which for a WriteFile holds the whole file.
func splitFrame(b []byte) (id uint64, field protowire.Number, body []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == fieldID && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			id, b = v, b[n:]
		case num >= fieldHello && num <= fieldMessage && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			field, body, b = num, v, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return id, field, body, nil
}

// splitCall reads Call{method, payload} without copying the payload.
func splitCall(b []byte) (method string, payload []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", nil, protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			if num == 1 {
				method = string(v)
			} else {
				payload = v
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return method, payload, nil
}

// marshalFrame encodes a small frame with its length prefix.
func marshalFrame(f *v1.Frame) [][]byte {
	b, err := proto.Marshal(f)
	if err != nil {
		panic(err) // only our own well-formed messages get here
	}
	hdr := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	return [][]byte{append(hdr, b...)}
}

// resultFrame encodes Frame{id, result: Result{payload}} where the
// serialized response is prefix followed by payload, without copying a
// large payload: the header and the payload are written one after the
// other.
func resultFrame(id uint64, prefix, payload []byte) [][]byte {
	n := len(prefix) + len(payload)
	inner := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner = protowire.AppendVarint(inner, uint64(n))
	hdr := make([]byte, 4, 48)
	hdr = protowire.AppendTag(hdr, fieldID, protowire.VarintType)
	hdr = protowire.AppendVarint(hdr, id)
	hdr = protowire.AppendTag(hdr, fieldResult, protowire.BytesType)
	hdr = protowire.AppendVarint(hdr, uint64(len(inner)+n))
	hdr = append(hdr, inner...)
	hdr = append(hdr, prefix...)
	binary.BigEndian.PutUint32(hdr, uint32(len(hdr)-4+len(payload)))
	if len(payload) < 64<<10 {
		return [][]byte{append(hdr, payload...)}
	}
	return [][]byte{hdr, payload}
}
