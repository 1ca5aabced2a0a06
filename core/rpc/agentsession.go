package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/agenttools"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/session"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// SessionService translates onto core/session. A prompt runs in the
// background; its events wait in the open session's queue until
// ReadSessionEvents takes them. When the queue is full the prompt waits
// (the model's stream with it), so a client that stops reading holds no
// more than maxQueuedEvents events in the engine.

const maxQueuedEvents = 4096

// openSession is a session of SessionService with its event queue.
type openSession struct {
	s *session.Session

	mu      sync.Mutex
	queue   []*v1.SessionEvent
	running bool
	cancel  context.CancelFunc
	changed chan struct{} // closed and replaced when queue or running change
	// exited is closed when the running prompt's goroutine ended;
	// doneQueued says its "done" event is queued already, so a client that
	// read it and prompts again waits for that end instead of EBUSY.
	exited     chan struct{}
	doneQueued bool
}

// stop cancels the prompt running in o, if any.
func (o *openSession) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cancel != nil {
		o.cancel()
	}
}

func (o *openSession) signal() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// push queues an event, waiting while the queue is full.
func (o *openSession) push(ctx context.Context, e *v1.SessionEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.queue) >= maxQueuedEvents && ctx.Err() == nil && e.Type != "done" && e.Type != "error" {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		o.mu.Lock()
	}
	o.queue = append(o.queue, e)
	if e.Type == "done" {
		o.doneQueued = true
	}
	o.signal()
}

// agentSessions returns the connection's open sessions, made on first use.
func (s *Session) agentSessions() map[string]*openSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asess == nil {
		s.asess = map[string]*openSession{}
	}
	return s.asess
}

func (s *Session) openSession(id string) (*openSession, error) {
	s.agentSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.asess[id]
	if o == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "session %q is not open on this connection (OpenSession first)", id)
	}
	return o, nil
}

// openSessionOf returns the connection of ctx and its open session id.
func openSessionOf(ctx context.Context, id string) (*Session, *openSession, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, err := sess.openSession(id)
	if err != nil {
		return nil, nil, err
	}
	return sess, o, nil
}

// CloseAgentSessions cancels the running prompts and forgets the open
// sessions (their conversations stay stored).
func (s *Session) CloseAgentSessions() {
	s.mu.Lock()
	m := s.asess
	s.asess = nil
	s.mu.Unlock()
	for _, o := range m {
		o.stop()
	}
}

// sessionErr gives a session's errors their kinds, keeping the message
// (an errno error would otherwise be reduced to the errno's text).
func sessionErr(err error) error {
	if err == nil {
		return nil
	}
	kind := v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	switch vfs.Errno(err) {
	case syscall.EINVAL, syscall.ENAMETOOLONG:
		kind = v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	case syscall.EACCES, syscall.EPERM:
		kind = v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	case syscall.ENOENT:
		kind = v1.ErrorKind_ERROR_KIND_NOT_FOUND
	case syscall.ENOTSUP:
		kind = v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED
	}
	return errorf(kind, "%v", err)
}

func sessionInfo(i session.Info) *v1.SessionInfo {
	out := &v1.SessionInfo{SessionId: i.ID, Provider: i.Provider, Model: i.Model, Messages: uint32(i.Messages)}
	if !i.Created.IsZero() {
		out.CreatedUnixMs, out.UpdatedUnixMs = i.Created.UnixMilli(), i.Updated.UnixMilli()
	}
	return out
}

func (s *Service) OpenSession(ctx context.Context, r *v1.OpenSessionRequest) (*v1.OpenSessionResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	if sess.ReadOnly {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "session: the agent is open read-only; a session writes its history")
	}
	if s.FixedModelEndpoint && (r.BaseUrl != "" || r.ApiKey != "") {
		// A caller-chosen URL would make the server send requests (with
		// its key) wherever the caller likes.
		return nil, errorf(v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED, "session: this server takes the model endpoint from its own environment (OPENAI_BASE_URL, ANTHROPIC_BASE_URL and their API keys); leave base_url and api_key empty")
	}
	pol := r.Policy
	if pol == nil {
		pol = &v1.ExecRequest{}
	}
	pol = &v1.ExecRequest{Readable: pol.Readable, Writable: pol.Writable, RestrictPaths: pol.RestrictPaths,
		Allow: pol.Allow, Deny: pol.Deny, Net: pol.Net, Limits: pol.Limits, Env: pol.Env}
	sbo, err := s.sandboxOptions(sess, pol)
	if err != nil {
		return nil, err
	}
	opts := session.Options{
		Provider: r.Provider, Model: r.Model, BaseURL: r.BaseUrl, APIKey: r.ApiKey, System: r.System,
		Tools:    agenttools.Options{Only: nilIfEmpty(r.Tools), ReadOnly: r.ReadOnly, Limits: sbo.Limits, Policy: sbo.Policy},
		MaxTurns: int(r.MaxTurns), MaxTokens: int(r.MaxTokens), MaxResponseBytes: int64(r.MaxResponseBytes),
		Timeout: time.Duration(r.TimeoutMs) * time.Millisecond,
	}
	as, err := session.Open(ctx, sess.Agent, r.SessionId, opts)
	if err != nil {
		return nil, sessionErr(err)
	}
	m := sess.agentSessions()
	sess.mu.Lock()
	old := m[as.ID()]
	if old != nil {
		old.mu.Lock()
		busy := old.running
		old.mu.Unlock()
		if busy {
			sess.mu.Unlock()
			return nil, sessionErr(session.ErrBusy)
		}
	}
	m[as.ID()] = &openSession{s: as, changed: make(chan struct{})}
	sess.mu.Unlock()
	return &v1.OpenSessionResponse{Session: sessionInfo(as.Info())}, nil
}

func (s *Service) Prompt(ctx context.Context, r *v1.PromptRequest) (*v1.PromptResponse, error) {
	_, o, err := openSessionOf(ctx, r.SessionId)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if o.running && o.doneQueued {
		// The last prompt said "done" and is returning: wait for it.
		ch := o.exited
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		o.mu.Lock()
	}
	if o.running {
		o.mu.Unlock()
		return nil, sessionErr(session.ErrBusy)
	}
	// The prompt outlives this call: it ends with its own bounds, a
	// CancelPrompt, or the connection.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.running, o.cancel = true, cancel
	o.exited, o.doneQueued = make(chan struct{}), false
	exited := o.exited
	o.signal()
	o.mu.Unlock()
	go func() {
		defer close(exited)
		defer cancel()
		_ = o.s.Prompt(pctx, r.Text, func(e session.Event) { o.push(pctx, eventProto(e)) })
		o.mu.Lock()
		o.running, o.cancel = false, nil
		o.signal()
		o.mu.Unlock()
	}()
	return &v1.PromptResponse{}, nil
}

func eventProto(e session.Event) *v1.SessionEvent {
	return &v1.SessionEvent{Type: e.Type, Text: e.Text, ToolCallId: e.ToolCallID, ToolName: e.ToolName,
		ArgumentsJson: rawString(e.Arguments), ResultJson: rawString(e.Result), IsError: e.IsError, Error: e.Error,
		StopReason: e.StopReason, Turn: uint32(e.Turn), InputTokens: e.InputTokens, OutputTokens: e.OutputTokens}
}

func rawString(b json.RawMessage) string { return string(b) }

func (s *Service) ReadSessionEvents(ctx context.Context, r *v1.ReadSessionEventsRequest) (*v1.ReadSessionEventsResponse, error) {
	_, o, err := openSessionOf(ctx, r.SessionId)
	if err != nil {
		return nil, err
	}
	wait := min(time.Duration(r.WaitMs)*time.Millisecond, maxReadWait)
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.queue) == 0 && o.running && timer != nil {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-timer:
			timer = nil
		case <-ctx.Done():
			o.mu.Lock()
			return nil, ctx.Err()
		}
		o.mu.Lock()
	}
	n := len(o.queue)
	if r.MaxEvents > 0 && int(r.MaxEvents) < n {
		n = int(r.MaxEvents)
	}
	out := &v1.ReadSessionEventsResponse{Events: append([]*v1.SessionEvent(nil), o.queue[:n]...)}
	o.queue = append(o.queue[:0:0], o.queue[n:]...)
	out.Idle = !o.running && len(o.queue) == 0
	if n > 0 {
		o.signal() // a waiting producer may go on
	}
	return out, nil
}

func (s *Service) CancelPrompt(ctx context.Context, r *v1.CancelPromptRequest) (*v1.CancelPromptResponse, error) {
	_, o, err := openSessionOf(ctx, r.SessionId)
	if err != nil {
		return nil, err
	}
	o.stop()
	return &v1.CancelPromptResponse{}, nil
}

func (s *Service) CloseSession(ctx context.Context, r *v1.CloseSessionRequest) (*v1.CloseSessionResponse, error) {
	sess, o, err := openSessionOf(ctx, r.SessionId)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	delete(sess.asess, r.SessionId)
	sess.mu.Unlock()
	o.stop()
	return &v1.CloseSessionResponse{}, nil
}

func (s *Service) ListSessions(ctx context.Context, _ *v1.ListSessionsRequest) (*v1.ListSessionsResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := session.List(ctx, sess.Agent)
	if err != nil {
		return nil, err
	}
	out := &v1.ListSessionsResponse{}
	for _, i := range infos {
		out.Sessions = append(out.Sessions, sessionInfo(i))
	}
	return out, nil
}

func (s *Service) DeleteSession(ctx context.Context, r *v1.DeleteSessionRequest) (*v1.DeleteSessionResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	if o, _ := sess.openSession(r.SessionId); o != nil {
		o.mu.Lock()
		busy := o.running
		o.mu.Unlock()
		if busy {
			return nil, sessionErr(session.ErrBusy)
		}
	}
	ok, err := session.Delete(ctx, sess.Agent, r.SessionId)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return nil, sessionErr(err)
		}
		return nil, err
	}
	return &v1.DeleteSessionResponse{Deleted: ok}, nil
}
