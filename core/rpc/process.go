package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"connectrpc.com/connect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// The process table lives in core/sandbox (sandbox.Procs); these methods
// only translate ProcessService calls onto the session's table. A stdio
// session's table closes with the connection (ServeStdio), an HTTP
// agent's with the server; on HTTP each process also has a lease
// (StartProcessRequest.lease_ms) so that a client that went away does not
// leave it running.

const (
	defaultLease = 30 * time.Second
	maxReadWait  = 60 * time.Second
)

// procs returns the session's process table, made on first use.
func (s *Session) procs() *sandbox.Procs {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptab == nil {
		s.ptab = sandbox.NewProcs(s.ProcLimits)
		s.leases = map[uint64]*lease{}
	}
	return s.ptab
}

// CloseProcs kills the session's processes and forgets its shells (the
// connection ended).
func (s *Session) CloseProcs() {
	s.mu.Lock()
	t := s.ptab
	s.ptab = nil
	s.mu.Unlock()
	if t != nil {
		t.Close()
	}
}

// lease kills a process nobody touched for d (HTTP).
type lease struct {
	mu     sync.Mutex
	last   time.Time
	active int // calls in progress on the process (a waiting read)
}

func (s *Session) touch(pid uint64, delta int) {
	s.mu.Lock()
	l := s.leases[pid]
	s.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	l.active += delta
	l.last = time.Now()
	l.mu.Unlock()
}

func (s *Session) watchLease(t *sandbox.Procs, p *sandbox.Proc, d time.Duration) {
	l := &lease{last: time.Now()}
	s.mu.Lock()
	s.leases[p.ID] = l
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.leases, p.ID)
			s.mu.Unlock()
		}()
		tick := time.NewTicker(d / 4)
		defer tick.Stop()
		for range tick.C {
			if _, err := t.Get(p.ID); err != nil {
				return // reaped, removed or the table closed
			}
			l.mu.Lock()
			idle := l.active == 0 && time.Since(l.last) > d
			l.mu.Unlock()
			if idle {
				// Its client went away: kill it and drop what it left.
				t.Remove(p.ID)
				return
			}
		}
	}()
}

func (s *Service) sandboxFor(sess *Session, r *v1.ExecRequest) (*sandbox.Sandbox, error) {
	if r == nil {
		r = &v1.ExecRequest{}
	}
	opts, err := s.sandboxOptions(sess, r)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.New(sess.Agent, opts)
	if err != nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "process: %v", err)
	}
	return sb, nil
}

// procErr gives the table's errors their kinds.
func procErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sandbox.ErrNoProc):
		return errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "%v", err)
	case errors.Is(err, sandbox.ErrTooMany):
		return errorf(v1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "%v", err)
}

func (s *Service) StartProcess(ctx context.Context, r *v1.StartProcessRequest) (*v1.StartProcessResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.startProc(ctx, sess, r, !r.Detach)
	if err != nil {
		return nil, err
	}
	return &v1.StartProcessResponse{Pid: p.ID}, nil
}

// startProc starts the process of r in the session's table; withLease
// gives it a lease on HTTP.
func (s *Service) startProc(ctx context.Context, sess *Session, r *v1.StartProcessRequest, withLease bool) (*sandbox.Proc, error) {
	ex := r.Exec
	if ex == nil {
		ex = &v1.ExecRequest{}
	}
	t := sess.procs()
	var sb *sandbox.Sandbox
	var err error
	if r.ShellId == 0 {
		if sb, err = s.sandboxFor(sess, ex); err != nil {
			return nil, err
		}
	} else if len(ex.Bindings) > 0 {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "process: bindings of a shell are given to OpenShell, not to each script")
	}
	opts := sandbox.StartOptions{
		ExecOptions:   sandbox.ExecOptions{Dir: ex.Dir, Env: ex.Env, Stdin: bytes.NewReader(ex.Stdin)},
		Shell:         r.ShellId,
		KeepStdinOpen: r.KeepStdinOpen,
		Timeout:       time.Duration(r.TimeoutMs) * time.Millisecond,
	}
	p, err := t.Start(ctx, sb, ex.Script, opts)
	if err != nil {
		return nil, procErr(err)
	}
	if sess.Peer == nil && withLease {
		d := defaultLease
		if r.LeaseMs > 0 {
			d = time.Duration(r.LeaseMs) * time.Millisecond
		}
		sess.watchLease(t, p, d)
	}
	return p, nil
}

// streamProcess is StreamProcess for both doors: send delivers one
// message (a Connect stream's Send, a stdio message frame).
func (s *Service) streamProcess(ctx context.Context, r *v1.StreamProcessRequest, send func(*v1.StreamProcessResponse) error) error {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return err
	}
	var p *sandbox.Proc
	switch tg := r.Target.(type) {
	case *v1.StreamProcessRequest_Start:
		// No lease: the stream holds the process, and its end (or the
		// client's going away) ends the process.
		if p, err = s.startProc(ctx, sess, tg.Start, false); err != nil {
			return err
		}
	case *v1.StreamProcessRequest_Pid:
		if p, err = sess.procs().Get(tg.Pid); err != nil {
			return procErr(err)
		}
		// A streamed process is in use: its lease must not run out.
		sess.touch(p.ID, 1)
		defer sess.touch(p.ID, -1)
	default:
		return errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "StreamProcess: give start (a process to start) or pid (one of StartProcess)")
	}
	if r.DeadlineMs > 0 {
		// The request's deadline kills the process; the stream still ends
		// with its exit status (signal 9), which says what happened.
		t := time.AfterFunc(time.Duration(r.DeadlineMs)*time.Millisecond, func() { p.Kill(sandbox.SIGKILL) })
		defer t.Stop()
	}
	if err := send(&v1.StreamProcessResponse{Pid: p.ID}); err != nil {
		p.Abandon()
		return err
	}
	exit, err := p.Stream(ctx, func(cs []sandbox.Chunk) error {
		m := &v1.StreamProcessResponse{Pid: p.ID, Chunks: make([]*v1.ProcessChunk, 0, len(cs))}
		for _, c := range cs {
			m.Chunks = append(m.Chunks, &v1.ProcessChunk{Stream: int32(c.Stream), Data: c.Data})
		}
		return send(m)
	})
	if err != nil {
		return err
	}
	last := &v1.StreamProcessResponse{Pid: p.ID, Exited: true, ExitCode: int32(exit.Code), Signal: int32(exit.Signal)}
	if exit.Limit != nil {
		last.Limit = exit.Limit.Error()
	}
	if err := send(last); err != nil {
		return err
	}
	if exit.Err != nil && last.Limit == "" {
		return exit.Err
	}
	return nil
}

// StreamProcess is the Connect handler of the server stream.
func (s *Service) StreamProcess(ctx context.Context, r *v1.StreamProcessRequest, st *connect.ServerStream[v1.StreamProcessResponse]) error {
	return s.streamProcess(ctx, r, st.Send)
}

func (s *Service) ReadProcess(ctx context.Context, r *v1.ReadProcessRequest) (*v1.ReadProcessResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, err := sess.procs().Get(r.Pid)
	if err != nil {
		return nil, procErr(err)
	}
	sess.touch(r.Pid, 1)
	defer sess.touch(r.Pid, -1)
	wait := min(time.Duration(r.WaitMs)*time.Millisecond, maxReadWait)
	cs, exit, err := p.Read(ctx, int(r.MaxBytes), wait)
	if err != nil {
		return nil, err
	}
	out := &v1.ReadProcessResponse{}
	for _, c := range cs {
		out.Chunks = append(out.Chunks, &v1.ProcessChunk{Stream: int32(c.Stream), Data: c.Data})
	}
	if exit != nil {
		out.Exited, out.ExitCode, out.Signal = true, int32(exit.Code), int32(exit.Signal)
		if exit.Limit != nil {
			out.Limit = exit.Limit.Error()
		}
		if exit.Err != nil && out.Limit == "" {
			return out, exit.Err
		}
	}
	return out, nil
}

func (s *Service) WriteProcess(ctx context.Context, r *v1.WriteProcessRequest) (*v1.WriteProcessResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, err := sess.procs().Get(r.Pid)
	if err != nil {
		return nil, procErr(err)
	}
	sess.touch(r.Pid, 1)
	defer sess.touch(r.Pid, -1)
	if len(r.Data) > 0 {
		if err := p.Write(ctx, r.Data); err != nil {
			return nil, procErr(err)
		}
	}
	if r.CloseStdin {
		p.CloseStdin()
	}
	return &v1.WriteProcessResponse{}, nil
}

func (s *Service) KillProcess(ctx context.Context, r *v1.KillProcessRequest) (*v1.KillProcessResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	t := sess.procs()
	p, err := t.Get(r.Pid)
	if err == nil && t.Retired(r.Pid) {
		// Reaped by its stream: kill by pid answers as for any reaped
		// process (the SDKs' handles of streamed processes ignore it).
		err = fmt.Errorf("sandbox: process %d: %w (ended and its exit status was streamed)", r.Pid, sandbox.ErrNoProc)
	}
	if err != nil {
		return nil, procErr(err)
	}
	if r.Signal < 0 || r.Signal > 64 {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "kill: signal %d is not a POSIX signal number (1-64; 0 means SIGKILL)", r.Signal)
	}
	p.Kill(int(r.Signal))
	return &v1.KillProcessResponse{}, nil
}

func (s *Service) ListProcesses(ctx context.Context, r *v1.ListProcessesRequest) (*v1.ListProcessesResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	out := &v1.ListProcessesResponse{}
	for _, i := range sess.procs().List() {
		out.Processes = append(out.Processes, &v1.ProcessInfo{Pid: i.ID, Script: i.Script, ShellId: i.Shell, Running: i.Running, ExitCode: int32(i.Exit.Code), StartedUnixMs: i.Started.UnixMilli()})
	}
	return out, nil
}

func (s *Service) OpenShell(ctx context.Context, r *v1.OpenShellRequest) (*v1.OpenShellResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	ex := r.Exec
	if ex == nil {
		ex = &v1.ExecRequest{}
	}
	sb, err := s.sandboxFor(sess, ex)
	if err != nil {
		return nil, err
	}
	sh, err := sess.procs().OpenShell(sb, ex.Dir)
	if errors.Is(err, sandbox.ErrTooMany) {
		return nil, procErr(err)
	} else if err != nil {
		return nil, fail(err, "chdir", ex.Dir) // a missing directory is ENOENT
	}
	return &v1.OpenShellResponse{ShellId: sh.ID}, nil
}

func (s *Service) CloseShell(ctx context.Context, r *v1.CloseShellRequest) (*v1.CloseShellResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := sess.procs().CloseShell(r.ShellId); err != nil {
		return nil, procErr(err)
	}
	return &v1.CloseShellResponse{}, nil
}
