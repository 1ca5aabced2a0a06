package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/rpc"
)

// SessionOptions open an agent session: a conversation with a model whose
// tool calls run on the agent inside the engine (docs/SESSIONS.md).
// Empty fields come from the stored session when resuming, then from the
// engine's environment (OPENAI_API_KEY, OPENAI_BASE_URL,
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, AGENTFS_MODEL).
type SessionOptions struct {
	// ID of the session to resume or create ("": a new one).
	ID string
	// Provider is "openai" (Chat Completions) or "anthropic" (Messages).
	Provider string
	Model    string
	// BaseURL and APIKey of the model server. A remote server (Dial)
	// refuses them: its operator configures the model endpoint.
	BaseURL string
	APIKey  string
	// System prompt of a new session.
	System string
	// Tools offered (nil: all eight); ReadOnly leaves out the writing ones.
	Tools    []string
	ReadOnly bool
	// The sandbox of the tools: limits profile ("normal", "hardened",
	// "none"), commands bash may (nil: all) and may not run, and the path
	// prefixes every tool may read and write (nil: everything).
	Limits             string
	Allow, Deny        []string
	Readable, Writable []string
	// Bounds (0: the engine's defaults).
	MaxTurns         int
	MaxTokens        int
	MaxResponseBytes int64
	Timeout          time.Duration
}

// SessionEvent is one step of a prompt: "text" (a delta), "tool_call",
// "tool_result", "error" or "done" (always last).
type SessionEvent struct {
	Type       string
	Text       string
	ToolCallID string
	ToolName   string
	Arguments  json.RawMessage
	Result     json.RawMessage
	IsError    bool
	Error      string
	StopReason string
	Turn       int
	// InputTokens and OutputTokens of the prompt, on "done".
	InputTokens, OutputTokens int64
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID       string
	Provider string
	Model    string
	Messages int
	Created  time.Time
	Updated  time.Time
}

// sessionClient is what the engine's SessionService offers, in-process
// or over Connect.
type sessionClient interface {
	OpenSession(context.Context, *v1.OpenSessionRequest) (*v1.OpenSessionResponse, error)
	Prompt(context.Context, *v1.PromptRequest) (*v1.PromptResponse, error)
	ReadSessionEvents(context.Context, *v1.ReadSessionEventsRequest) (*v1.ReadSessionEventsResponse, error)
	CancelPrompt(context.Context, *v1.CancelPromptRequest) (*v1.CancelPromptResponse, error)
	CloseSession(context.Context, *v1.CloseSessionRequest) (*v1.CloseSessionResponse, error)
	ListSessions(context.Context, *v1.ListSessionsRequest) (*v1.ListSessionsResponse, error)
	DeleteSession(context.Context, *v1.DeleteSessionRequest) (*v1.DeleteSessionResponse, error)
}

// sessions implements the session methods of AgentFS and Remote.
type sessions struct {
	sc     sessionClient
	mapErr func(error) error
}

// Session is an open agent session.
type Session struct {
	Info SessionInfo
	s    *sessions
}

// OpenSession opens (resumes or creates) an agent session.
func (s *sessions) OpenSession(ctx context.Context, o SessionOptions) (*Session, error) {
	pol := &v1.ExecRequest{Limits: o.Limits, Allow: o.Allow, Deny: o.Deny, Readable: o.Readable, Writable: o.Writable,
		RestrictPaths: o.Readable != nil || o.Writable != nil}
	r, err := s.sc.OpenSession(ctx, &v1.OpenSessionRequest{SessionId: o.ID, Provider: o.Provider, Model: o.Model,
		BaseUrl: o.BaseURL, ApiKey: o.APIKey, System: o.System, Policy: pol, Tools: o.Tools, ReadOnly: o.ReadOnly,
		MaxTurns: uint32(max(o.MaxTurns, 0)), MaxTokens: uint32(max(o.MaxTokens, 0)), MaxResponseBytes: uint64(max(o.MaxResponseBytes, 0)),
		TimeoutMs: uint32(max(o.Timeout, 0) / time.Millisecond)})
	if err != nil {
		return nil, s.mapErr(err)
	}
	return &Session{Info: sessionInfoOf(r.Session), s: s}, nil
}

// Sessions lists the sessions stored in the agent.
func (s *sessions) Sessions(ctx context.Context) ([]SessionInfo, error) {
	r, err := s.sc.ListSessions(ctx, &v1.ListSessionsRequest{})
	if err != nil {
		return nil, s.mapErr(err)
	}
	out := make([]SessionInfo, 0, len(r.Sessions))
	for _, i := range r.Sessions {
		out = append(out, sessionInfoOf(i))
	}
	return out, nil
}

// DeleteSession removes a stored session; it reports whether there was one.
func (s *sessions) DeleteSession(ctx context.Context, id string) (bool, error) {
	r, err := s.sc.DeleteSession(ctx, &v1.DeleteSessionRequest{SessionId: id})
	if err != nil {
		return false, s.mapErr(err)
	}
	return r.Deleted, nil
}

func sessionInfoOf(i *v1.SessionInfo) SessionInfo {
	if i == nil {
		return SessionInfo{}
	}
	out := SessionInfo{ID: i.SessionId, Provider: i.Provider, Model: i.Model, Messages: int(i.Messages)}
	if i.CreatedUnixMs != 0 {
		out.Created, out.Updated = time.UnixMilli(i.CreatedUnixMs), time.UnixMilli(i.UpdatedUnixMs)
	}
	return out
}

// ErrPromptFailed wraps the message of a prompt's "error" event.
var ErrPromptFailed = errors.New("prompt failed")

// Prompt sends text and returns its events as they come. The sequence
// ends after the "done" event; a failed prompt yields its "error" event,
// then "done", then ErrPromptFailed with the message. Stopping the
// iteration early (or ctx ending) cancels the prompt; the conversation
// keeps its completed turns either way.
func (s *Session) Prompt(ctx context.Context, text string) iter.Seq2[SessionEvent, error] {
	return func(yield func(SessionEvent, error) bool) {
		if _, err := s.s.sc.Prompt(ctx, &v1.PromptRequest{SessionId: s.Info.ID, Text: text}); err != nil {
			yield(SessionEvent{}, s.s.mapErr(err))
			return
		}
		finished := false
		defer func() {
			if !finished {
				// The caller stopped early: stop the prompt and drain it so
				// the session can take the next one.
				c := context.WithoutCancel(ctx)
				_, _ = s.s.sc.CancelPrompt(c, &v1.CancelPromptRequest{SessionId: s.Info.ID})
				for {
					r, err := s.s.sc.ReadSessionEvents(c, &v1.ReadSessionEventsRequest{SessionId: s.Info.ID, WaitMs: 1000})
					if err != nil || r.Idle {
						return
					}
				}
			}
		}()
		var failure string
		for {
			r, err := s.s.sc.ReadSessionEvents(ctx, &v1.ReadSessionEventsRequest{SessionId: s.Info.ID, WaitMs: 30000})
			if err != nil {
				yield(SessionEvent{}, s.s.mapErr(err))
				return
			}
			for _, e := range r.Events {
				ev := eventOf(e)
				if ev.Type == "error" {
					failure = ev.Error
				}
				if ev.Type == "done" {
					finished = true
				}
				if !yield(ev, nil) {
					return
				}
				if ev.Type == "done" {
					if failure != "" {
						yield(SessionEvent{}, &promptError{failure})
					}
					return
				}
			}
			if r.Idle {
				finished = true
				return
			}
		}
	}
}

type promptError struct{ msg string }

func (e *promptError) Error() string { return "agentfs: prompt failed: " + e.msg }
func (e *promptError) Unwrap() error { return ErrPromptFailed }

// Cancel stops the running prompt (its iteration then ends with "done").
func (s *Session) Cancel(ctx context.Context) error {
	_, err := s.s.sc.CancelPrompt(ctx, &v1.CancelPromptRequest{SessionId: s.Info.ID})
	return s.s.mapErr(err)
}

// Close cancels a running prompt and forgets the open session; the
// conversation stays stored (OpenSession with its ID resumes it).
func (s *Session) Close(ctx context.Context) error {
	_, err := s.s.sc.CloseSession(ctx, &v1.CloseSessionRequest{SessionId: s.Info.ID})
	return s.s.mapErr(err)
}

func eventOf(e *v1.SessionEvent) SessionEvent {
	ev := SessionEvent{Type: e.Type, Text: e.Text, ToolCallID: e.ToolCallId, ToolName: e.ToolName, IsError: e.IsError,
		Error: e.Error, StopReason: e.StopReason, Turn: int(e.Turn), InputTokens: e.InputTokens, OutputTokens: e.OutputTokens}
	if e.ArgumentsJson != "" {
		ev.Arguments = json.RawMessage(e.ArgumentsJson)
	}
	if e.ResultJson != "" {
		ev.Result = json.RawMessage(e.ResultJson)
	}
	return ev
}

// localSessions calls SessionService in this process.
type localSessions struct {
	svc  *rpc.Service
	sess *rpc.Session
}

func (l localSessions) ctx(ctx context.Context) context.Context { return rpc.WithSession(ctx, l.sess) }

func (l localSessions) OpenSession(ctx context.Context, r *v1.OpenSessionRequest) (*v1.OpenSessionResponse, error) {
	return l.svc.OpenSession(l.ctx(ctx), r)
}
func (l localSessions) Prompt(ctx context.Context, r *v1.PromptRequest) (*v1.PromptResponse, error) {
	return l.svc.Prompt(l.ctx(ctx), r)
}
func (l localSessions) ReadSessionEvents(ctx context.Context, r *v1.ReadSessionEventsRequest) (*v1.ReadSessionEventsResponse, error) {
	return l.svc.ReadSessionEvents(l.ctx(ctx), r)
}
func (l localSessions) CancelPrompt(ctx context.Context, r *v1.CancelPromptRequest) (*v1.CancelPromptResponse, error) {
	return l.svc.CancelPrompt(l.ctx(ctx), r)
}
func (l localSessions) CloseSession(ctx context.Context, r *v1.CloseSessionRequest) (*v1.CloseSessionResponse, error) {
	return l.svc.CloseSession(l.ctx(ctx), r)
}
func (l localSessions) ListSessions(ctx context.Context, r *v1.ListSessionsRequest) (*v1.ListSessionsResponse, error) {
	return l.svc.ListSessions(l.ctx(ctx), r)
}
func (l localSessions) DeleteSession(ctx context.Context, r *v1.DeleteSessionRequest) (*v1.DeleteSessionResponse, error) {
	return l.svc.DeleteSession(l.ctx(ctx), r)
}
