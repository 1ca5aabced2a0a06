package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"connectrpc.com/connect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/rpc"
	"google.golang.org/protobuf/proto"
)

// Sandbox runs shell scripts in the engine's in-process sandbox over the
// agent's files (POSIX utilities written in Go; no host process starts).
// Both AgentFS (in-process) and Remote (serve http) implement it, over
// the same ProcessService and SandboxService of the engine as the other
// SDKs.
type Sandbox interface {
	// Exec runs a script and returns its exit code and output.
	Exec(ctx context.Context, script string, opts ExecOptions) (ExecResult, error)
	// Spawn starts a script as a process.
	Spawn(ctx context.Context, script string, opts SpawnOptions) (*Process, error)
	// Shell opens a persistent shell.
	Shell(ctx context.Context, opts ExecOptions) (*Shell, error)
	// Processes lists the processes running, or ended with their exit
	// status not yet read.
	Processes(ctx context.Context) ([]ProcessInfo, error)
	// Kill sends a POSIX signal to a process by pid (0: SIGKILL).
	Kill(ctx context.Context, pid uint64, signal int) error
	// Policy returns what a script run with opts may do, with every
	// default filled in; nothing runs. A policy Exec would refuse is
	// refused the same way (EINVAL).
	Policy(ctx context.Context, opts ExecOptions) (*Policy, error)
}

// Policy is the effective policy of a sandbox (agentfs.v1.EffectivePolicy):
// the representation every SDK's policy() and `agentfs sh
// --print-policy` share. protojson gives its JSON form.
type Policy = v1.EffectivePolicy

// NetRule lets curl reach URLs under Prefix (an http:// or https:// URL
// prefix): only Methods when set; Headers are added at the boundary, so
// secrets stay in this process. Loopback, private and link-local
// addresses stay refused unless AllowPrivate.
type NetRule struct {
	Prefix       string
	Methods      []string
	Headers      map[string]string
	AllowPrivate bool
}

// Limits replace single limits of the profile (0 keeps the profile's
// value); the server's ceiling applies.
type Limits struct {
	MaxCommands, MaxSteps, MaxCallDepth int64
	WallTime                            time.Duration
	MaxOutputBytes, MaxStreamBytes      int64
	MaxFSWriteBytes, MaxResponseBytes   int64
	NetTimeout                          time.Duration
	MaxMemoryBytes                      int64
	MaxBackground                       int64
}

var (
	_ Sandbox = (*AgentFS)(nil)
	_ Sandbox = (*Remote)(nil)
)

// Binding is a host function a script runs as a command: `name --flag
// value` calls Func with {"flag": value} (typed by Schema, a JSON schema
// object with properties); its result is printed as JSON, an error makes
// the command fail with its message. In-process only (Open): a remote
// server cannot call back into this process.
type Binding struct {
	Description string
	Schema      json.RawMessage
	Func        func(ctx context.Context, args json.RawMessage) (any, error)
}

// ExecOptions tune Exec, Spawn and Shell.
type ExecOptions struct {
	Dir   string // working directory (default "/")
	Stdin []byte
	Env   map[string]string
	// Limits profile: "normal" (default), "hardened" or "none".
	Limits string
	// Commands that may run (empty: all, unless DefaultDeny) and that
	// may not.
	Allow, Deny []string
	// Path prefixes of the agent filesystem the script may read and
	// write (writable ones are readable too). Nil: everything, unless
	// DefaultDeny; Readable alone makes nothing writable.
	Readable, Writable []string
	// DefaultDeny makes Readable, Writable and Allow allow-lists even
	// when empty: nothing is readable, writable or runnable (but the
	// shell's builtins) unless listed.
	DefaultDeny bool
	// Net opens the network to these rules (none: no network).
	Net []NetRule
	// LimitValues replace single limits of the Limits profile.
	LimitValues Limits
	// NoAudit skips the engine's "exec" record in the tool-call log.
	NoAudit  bool
	Bindings map[string]Binding
}

// SpawnOptions tune Spawn.
type SpawnOptions struct {
	ExecOptions
	// KeepStdinOpen leaves stdin open after Stdin for Process.Write until
	// Process.CloseStdin; otherwise the script reads Stdin, then EOF.
	KeepStdinOpen bool
	// Timeout kills the process (SIGKILL) when it runs longer.
	Timeout time.Duration
	// Remote only: a process nobody reads or writes for Lease (default
	// 30 s) is killed, unless Detach.
	Lease  time.Duration
	Detach bool

	shell uint64
}

// ExecResult is how a script ended.
type ExecResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
	// Limit is set when a limit of the sandbox stopped the script.
	Limit string
	// Signal is the signal of Kill that stopped it (0: none).
	Signal int
}

// Chunk is output in the order the script wrote it; Stream is 1 for
// stdout, 2 for stderr.
type Chunk struct {
	Stream int
	Data   []byte
}

// ProcessInfo describes a process of Processes.
type ProcessInfo struct {
	PID     uint64
	Script  string
	Shell   uint64
	Running bool
	// ExitCode is valid when !Running.
	ExitCode int
	Started  time.Time
}

// procClient is what the engine's ProcessService and SandboxService
// offer, in-process (rpc.Service with a session) or over Connect.
type procClient interface {
	Exec(context.Context, *v1.ExecRequest) (*v1.ExecResponse, error)
	Policy(context.Context, *v1.PolicyRequest) (*v1.PolicyResponse, error)
	StartProcess(context.Context, *v1.StartProcessRequest) (*v1.StartProcessResponse, error)
	ReadProcess(context.Context, *v1.ReadProcessRequest) (*v1.ReadProcessResponse, error)
	WriteProcess(context.Context, *v1.WriteProcessRequest) (*v1.WriteProcessResponse, error)
	KillProcess(context.Context, *v1.KillProcessRequest) (*v1.KillProcessResponse, error)
	ListProcesses(context.Context, *v1.ListProcessesRequest) (*v1.ListProcessesResponse, error)
	OpenShell(context.Context, *v1.OpenShellRequest) (*v1.OpenShellResponse, error)
	CloseShell(context.Context, *v1.CloseShellRequest) (*v1.CloseShellResponse, error)
}

// execer implements Sandbox for AgentFS and Remote over a procClient.
type execer struct {
	c       procClient
	mapErr  func(error) error
	binds   *bindingTable // nil: bindings are refused (remote)
	session *rpc.Session  // in-process: closed with the agent

	smu     sync.Mutex
	streams map[*Process]struct{} // streamed processes not ended yet
}

func (e *execer) request(script string, o ExecOptions) (*v1.ExecRequest, error) {
	r := &v1.ExecRequest{Script: script, Dir: o.Dir, Stdin: o.Stdin, Env: o.Env, Limits: o.Limits, Allow: o.Allow, Deny: o.Deny, NoAudit: o.NoAudit,
		Readable: o.Readable, Writable: o.Writable, RestrictPaths: o.Readable != nil && o.Writable != nil, DefaultDeny: o.DefaultDeny}
	for _, n := range o.Net {
		r.Net = append(r.Net, &v1.NetRuleSpec{Prefix: n.Prefix, Methods: n.Methods, Headers: n.Headers, AllowPrivate: n.AllowPrivate})
	}
	if l := o.LimitValues; l != (Limits{}) {
		r.LimitValues = &v1.SandboxLimits{MaxCommands: l.MaxCommands, MaxSteps: l.MaxSteps, MaxCallDepth: l.MaxCallDepth,
			WallTimeMs: l.WallTime.Milliseconds(), MaxOutputBytes: l.MaxOutputBytes, MaxStreamBytes: l.MaxStreamBytes,
			MaxFsWriteBytes: l.MaxFSWriteBytes, MaxResponseBytes: l.MaxResponseBytes, NetTimeoutMs: l.NetTimeout.Milliseconds(),
			MaxMemoryBytes: l.MaxMemoryBytes, MaxBackground: l.MaxBackground}
	}
	if len(o.Bindings) > 0 && e.binds == nil {
		return nil, fmt.Errorf("agentfs: exec: bindings need an in-process agent (Open); a remote server cannot call back: %w", ErrNotSupported)
	}
	for name, b := range o.Bindings {
		r.Bindings = append(r.Bindings, &v1.BindingSpec{Name: name, Description: b.Description, SchemaJson: string(b.Schema)})
	}
	return r, nil
}

// ErrNotSupported is returned for what the agent's transport cannot do.
var ErrNotSupported = errors.New("not supported")

func (e *execer) Exec(ctx context.Context, script string, o ExecOptions) (ExecResult, error) {
	req, err := e.request(script, o)
	if err != nil {
		return ExecResult{}, err
	}
	release := e.binds.register(o.Bindings)
	defer release()
	r, err := e.c.Exec(ctx, req)
	if err != nil {
		return ExecResult{}, e.mapErr(err)
	}
	return ExecResult{ExitCode: int(r.ExitCode), Stdout: r.Stdout, Stderr: r.Stderr, Limit: r.Limit}, nil
}

func (e *execer) Policy(ctx context.Context, o ExecOptions) (*Policy, error) {
	req, err := e.request("", ExecOptions{Dir: o.Dir, Env: o.Env, Limits: o.Limits, Allow: o.Allow, Deny: o.Deny,
		Readable: o.Readable, Writable: o.Writable, DefaultDeny: o.DefaultDeny, Net: o.Net, LimitValues: o.LimitValues})
	if err != nil {
		return nil, err
	}
	// Bindings are named only: listing them needs no way back.
	for name, b := range o.Bindings {
		req.Bindings = append(req.Bindings, &v1.BindingSpec{Name: name, Description: b.Description, SchemaJson: string(b.Schema)})
	}
	r, err := e.c.Policy(ctx, &v1.PolicyRequest{Exec: req})
	if err != nil {
		return nil, e.mapErr(err)
	}
	return r.Policy, nil
}

func (e *execer) Spawn(ctx context.Context, script string, o SpawnOptions) (*Process, error) {
	req, err := e.request(script, o.ExecOptions)
	if err != nil {
		return nil, err
	}
	release := e.binds.register(o.Bindings)
	start := &v1.StartProcessRequest{Exec: req, ShellId: o.shell, KeepStdinOpen: o.KeepStdinOpen,
		TimeoutMs: uint32(o.Timeout / time.Millisecond), LeaseMs: uint32(o.Lease / time.Millisecond), Detach: o.Detach}
	// Over Connect the output streams (StreamProcess); a detached process
	// must outlive this client, which a streamed one does not, so it is
	// read by long-poll, as is an in-process agent's (a direct call).
	if st, ok := e.c.(streamer); ok && !o.Detach {
		p, err := e.streamSpawn(ctx, st, start)
		if err != nil {
			release()
			return nil, e.mapErr(err)
		}
		p.release = sync.OnceFunc(release)
		return p, nil
	}
	r, err := e.c.StartProcess(ctx, start)
	if err != nil {
		release()
		return nil, e.mapErr(err)
	}
	return &Process{PID: r.Pid, e: e, release: sync.OnceFunc(release)}, nil
}

func (e *execer) Shell(ctx context.Context, o ExecOptions) (*Shell, error) {
	req, err := e.request("", o)
	if err != nil {
		return nil, err
	}
	release := e.binds.register(o.Bindings)
	r, err := e.c.OpenShell(ctx, &v1.OpenShellRequest{Exec: req})
	if err != nil {
		release()
		return nil, e.mapErr(err)
	}
	return &Shell{ID: r.ShellId, e: e, release: sync.OnceFunc(release)}, nil
}

func (e *execer) Processes(ctx context.Context) ([]ProcessInfo, error) {
	r, err := e.c.ListProcesses(ctx, &v1.ListProcessesRequest{})
	if err != nil {
		return nil, e.mapErr(err)
	}
	out := make([]ProcessInfo, 0, len(r.Processes))
	for _, p := range r.Processes {
		out = append(out, ProcessInfo{PID: p.Pid, Script: p.Script, Shell: p.ShellId, Running: p.Running, ExitCode: int(p.ExitCode), Started: time.UnixMilli(p.StartedUnixMs)})
	}
	return out, nil
}

func (e *execer) Kill(ctx context.Context, pid uint64, signal int) error {
	_, err := e.c.KillProcess(ctx, &v1.KillProcessRequest{Pid: pid, Signal: int32(signal)})
	return e.mapErr(err)
}

// streamer is a procClient that streams a process's output (Connect's
// server stream of StreamProcess).
type streamer interface {
	StreamProcess(context.Context, *v1.StreamProcessRequest) (*connect.ServerStreamForClient[v1.StreamProcessResponse], error)
}

// feedMsg is one message of a process's stream.
type feedMsg struct {
	chunks []Chunk
	exit   *ExecResult
}

// feed carries a process's stream from the goroutine that receives it to
// Read. It holds one message at a time, so a reader that stops reading
// stops the stream (and, through the server's bounded buffer, the script)
// rather than piling output up here.
type feed struct {
	msgs   chan feedMsg // closed after the last message; err is then set
	err    error
	cancel context.CancelFunc
}

// streamSpawn starts a process with StreamProcess and returns once its
// first message (the pid) came. The stream lives until the process ends or
// Close: it does not end with ctx, which only bounds the start.
func (e *execer) streamSpawn(ctx context.Context, st streamer, start *v1.StartProcessRequest) (*Process, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stream, err := st.StreamProcess(sctx, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: start}})
	if err != nil {
		cancel()
		return nil, err
	}
	first := make(chan error, 1)
	var pid uint64
	go func() {
		ok := stream.Receive()
		if ok {
			pid = stream.Msg().Pid
			first <- nil
			return
		}
		err := stream.Err()
		if err == nil {
			err = errors.New("agentfs: the process stream ended before the process started")
		}
		first <- err
	}()
	select {
	case err := <-first:
		if err != nil {
			cancel()
			return nil, err
		}
	case <-ctx.Done():
		cancel() // the server kills what it may have started
		return nil, ctx.Err()
	}
	f := &feed{msgs: make(chan feedMsg), cancel: cancel}
	go func() {
		defer close(f.msgs)
		defer stream.Close()
		for stream.Receive() {
			m := stream.Msg()
			var fm feedMsg
			for _, c := range m.Chunks {
				fm.chunks = append(fm.chunks, Chunk{Stream: int(c.Stream), Data: c.Data})
			}
			if m.Exited {
				fm.exit = &ExecResult{ExitCode: int(m.ExitCode), Signal: int(m.Signal), Limit: m.Limit}
			}
			select {
			case f.msgs <- fm:
			case <-sctx.Done():
				f.err = sctx.Err()
				return
			}
			if m.Exited {
				return
			}
		}
		if f.err = stream.Err(); f.err == nil {
			f.err = errors.New("agentfs: the process stream ended without the exit status")
		}
	}()
	p := &Process{PID: pid, e: e, feed: f}
	e.track(p)
	return p, nil
}

// track remembers a streamed process until it ends, so that Close ends
// its stream (and the server kills it).
func (e *execer) track(p *Process) {
	e.smu.Lock()
	defer e.smu.Unlock()
	if e.streams == nil {
		e.streams = map[*Process]struct{}{}
	}
	e.streams[p] = struct{}{}
}

func (e *execer) untrack(p *Process) {
	e.smu.Lock()
	defer e.smu.Unlock()
	delete(e.streams, p)
}

// closeStreams ends every process stream: a client that closes takes its
// streamed processes with it.
func (e *execer) closeStreams() {
	e.smu.Lock()
	ps := e.streams
	e.streams = nil
	e.smu.Unlock()
	for p := range ps {
		p.feed.cancel()
	}
}

// Process is a script running in the engine: Read its output as it
// comes, Write its stdin, Kill it, Wait for its exit code. A process of
// an in-process agent ends with the agent's Close.
type Process struct {
	PID     uint64
	e       *execer
	release func()

	// feed is the process's output stream (remote agents); nil: Read
	// long-polls ReadProcess.
	feed *feed

	mu     sync.Mutex
	result *ExecResult
}

// Read returns the next output, waiting up to 30 s for some; done is
// true once the process ended and every byte was read.
func (p *Process) Read(ctx context.Context) (chunks []Chunk, done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.result != nil {
		return nil, true, nil
	}
	if p.feed != nil {
		return p.readFeed(ctx)
	}
	r, err := p.e.c.ReadProcess(ctx, &v1.ReadProcessRequest{Pid: p.PID, WaitMs: 30000})
	if err != nil {
		return nil, false, p.e.mapErr(err)
	}
	for _, c := range r.Chunks {
		chunks = append(chunks, Chunk{Stream: int(c.Stream), Data: c.Data})
	}
	if r.Exited {
		p.result = &ExecResult{ExitCode: int(r.ExitCode), Signal: int(r.Signal), Limit: r.Limit}
		p.release()
	}
	return chunks, r.Exited, nil
}

// readFeed is Read of a streamed process; p.mu is held.
func (p *Process) readFeed(ctx context.Context) ([]Chunk, bool, error) {
	select {
	case m, ok := <-p.feed.msgs:
		if !ok {
			p.e.untrack(p)
			return nil, false, p.e.mapErr(p.feed.err)
		}
		if m.exit != nil {
			p.result = m.exit
			p.e.untrack(p)
			p.feed.cancel()
			p.release()
		}
		return m.chunks, m.exit != nil, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// Write appends to the script's stdin (Spawn with KeepStdinOpen).
func (p *Process) Write(ctx context.Context, data []byte) error {
	_, err := p.e.c.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: p.PID, Data: data})
	return p.e.mapErr(err)
}

// CloseStdin makes the script read EOF after what was written.
func (p *Process) CloseStdin(ctx context.Context) error {
	_, err := p.e.c.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: p.PID, CloseStdin: true})
	return p.e.mapErr(err)
}

// Kill sends a POSIX signal (0: SIGKILL); the exit code becomes
// 128+signal.
func (p *Process) Kill(ctx context.Context, signal int) error {
	p.mu.Lock()
	ended := p.result != nil
	p.mu.Unlock()
	if ended {
		return nil
	}
	err := p.e.Kill(ctx, p.PID, signal)
	if p.feed != nil && errors.Is(err, ErrNotFound) {
		// It ended and its stream reaped it; the exit is on its way.
		return nil
	}
	return err
}

// Wait reads to the end and returns the exit status with the output
// not read before.
func (p *Process) Wait(ctx context.Context) (ExecResult, error) {
	var out, errOut []byte
	for {
		cs, done, err := p.Read(ctx)
		if err != nil {
			return ExecResult{}, err
		}
		for _, c := range cs {
			if c.Stream == 2 {
				errOut = append(errOut, c.Data...)
			} else {
				out = append(out, c.Data...)
			}
		}
		if done {
			p.mu.Lock()
			r := *p.result
			p.mu.Unlock()
			r.Stdout, r.Stderr = out, errOut
			return r, nil
		}
	}
}

// Shell is a persistent shell: working directory, variables, functions
// and options survive between its scripts, as in `agentfs sh`.
type Shell struct {
	ID      uint64
	e       *execer
	release func()
}

// Run runs a script in the shell (Dir, Stdin and Env of opts apply).
func (s *Shell) Run(ctx context.Context, script string, opts ExecOptions) (ExecResult, error) {
	p, err := s.Spawn(ctx, script, SpawnOptions{ExecOptions: opts})
	if err != nil {
		return ExecResult{}, err
	}
	return p.Wait(ctx)
}

// Spawn starts a script in the shell as a process.
func (s *Shell) Spawn(ctx context.Context, script string, opts SpawnOptions) (*Process, error) {
	opts.shell = s.ID
	return s.e.Spawn(ctx, script, opts)
}

// Close kills the shell's scripts and forgets its state.
func (s *Shell) Close(ctx context.Context) error {
	defer s.release()
	_, err := s.e.c.CloseShell(ctx, &v1.CloseShellRequest{ShellId: s.ID})
	return s.e.mapErr(err)
}

// bindingTable answers the engine's HostService.CallBinding in process:
// it is the Peer of the in-process session.
type bindingTable struct {
	mu  sync.Mutex
	fns map[string]*boundFn
}

type boundFn struct {
	fn    Binding
	users int
}

func (t *bindingTable) register(bs map[string]Binding) func() {
	if t == nil || len(bs) == 0 {
		return func() {}
	}
	t.mu.Lock()
	for name, b := range bs {
		cur := t.fns[name]
		if cur == nil {
			cur = &boundFn{}
			t.fns[name] = cur
		}
		// Concurrent scripts share a name's latest function.
		cur.fn, cur.users = b, cur.users+1
	}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for name := range bs {
			if cur := t.fns[name]; cur != nil {
				if cur.users--; cur.users == 0 {
					delete(t.fns, name)
				}
			}
		}
	}
}

// Call implements agentfsv1rpc.Caller for the engine's calls back.
func (t *bindingTable) Call(ctx context.Context, method string, req, resp proto.Message) error {
	in, ok1 := req.(*v1.CallBindingRequest)
	out, ok2 := resp.(*v1.CallBindingResponse)
	if method != agentfsv1connect.HostServiceCallBindingProcedure || !ok1 || !ok2 {
		return fmt.Errorf("agentfs: the engine called %s, which this process does not serve", method)
	}
	t.mu.Lock()
	b := t.fns[in.Name]
	t.mu.Unlock()
	if b == nil {
		out.Error = "no binding named " + in.Name + " is registered"
		return nil
	}
	args := json.RawMessage(in.ArgsJson)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := b.fn.Func(ctx, args)
	if err != nil {
		out.Error = err.Error()
		return nil
	}
	if v == nil {
		return nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		out.Error = "the result is not JSON: " + err.Error()
		return nil
	}
	out.ResultJson = string(j)
	return nil
}

var _ agentfsv1rpc.Caller = (*bindingTable)(nil)

// localProcs calls rpc.Service in process with the agent's session in
// every context: the same code as the engine's stdio and HTTP doors.
type localProcs struct {
	svc  *rpc.Service
	sess *rpc.Session
}

func (l localProcs) ctx(ctx context.Context) context.Context { return rpc.WithSession(ctx, l.sess) }

func (l localProcs) Exec(ctx context.Context, r *v1.ExecRequest) (*v1.ExecResponse, error) {
	return l.svc.Exec(l.ctx(ctx), r)
}
func (l localProcs) Policy(ctx context.Context, r *v1.PolicyRequest) (*v1.PolicyResponse, error) {
	return l.svc.Policy(l.ctx(ctx), r)
}
func (l localProcs) StartProcess(ctx context.Context, r *v1.StartProcessRequest) (*v1.StartProcessResponse, error) {
	return l.svc.StartProcess(l.ctx(ctx), r)
}
func (l localProcs) ReadProcess(ctx context.Context, r *v1.ReadProcessRequest) (*v1.ReadProcessResponse, error) {
	return l.svc.ReadProcess(l.ctx(ctx), r)
}
func (l localProcs) WriteProcess(ctx context.Context, r *v1.WriteProcessRequest) (*v1.WriteProcessResponse, error) {
	return l.svc.WriteProcess(l.ctx(ctx), r)
}
func (l localProcs) KillProcess(ctx context.Context, r *v1.KillProcessRequest) (*v1.KillProcessResponse, error) {
	return l.svc.KillProcess(l.ctx(ctx), r)
}
func (l localProcs) ListProcesses(ctx context.Context, r *v1.ListProcessesRequest) (*v1.ListProcessesResponse, error) {
	return l.svc.ListProcesses(l.ctx(ctx), r)
}
func (l localProcs) OpenShell(ctx context.Context, r *v1.OpenShellRequest) (*v1.OpenShellResponse, error) {
	return l.svc.OpenShell(l.ctx(ctx), r)
}
func (l localProcs) CloseShell(ctx context.Context, r *v1.CloseShellRequest) (*v1.CloseShellResponse, error) {
	return l.svc.CloseShell(l.ctx(ctx), r)
}

// remoteProcs joins the two Connect clients of a Remote.
type remoteProcs struct {
	agentfsv1connect.ProcessServiceClient
	sb agentfsv1connect.SandboxServiceClient
}

func (r remoteProcs) Exec(ctx context.Context, req *v1.ExecRequest) (*v1.ExecResponse, error) {
	return r.sb.Exec(ctx, req)
}

func (r remoteProcs) Policy(ctx context.Context, req *v1.PolicyRequest) (*v1.PolicyResponse, error) {
	return r.sb.Policy(ctx, req)
}

// localErr gives an in-process failure the same form as a remote one
// (the engine's agentfs.v1.Error, then the SDK's error of it).
func localErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return rpc.FromProto(rpc.ToProto(err))
}
