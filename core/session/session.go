// Package session runs agent sessions inside the engine: a conversation
// with a model served over HTTP (OpenAI's Chat Completions or
// Anthropic's Messages API, both streamed as server-sent events) whose
// tool calls run the engine's agent tools (core/agenttools) on the
// agent, under the sandbox policy the session was opened with.
//
// Every step is recorded in the agent's tool-call log (each tool call
// under its name, each model turn as "session:model"), so `agentfs
// timeline` shows what a conversation did. The conversation is kept in
// the agent's key-value store under the reserved prefix KVPrefix (one
// JSON value per session, rewritten after each completed model turn in
// one transaction), so a session resumes after the database is reopened
// and the file stays an ordinary AgentFS database for other tools.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/agenttools"
	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// KVPrefix is the part of the key-value store that holds sessions
// ("agentfs:session:ID"). The session's own kv tools may not touch it.
const KVPrefix = "agentfs:session:"

// Providers.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Defaults of the bounds.
const (
	DefaultMaxTurns         = 32
	DefaultMaxTokens        = 4096
	DefaultMaxResponseBytes = 8 << 20
	DefaultTimeout          = 10 * time.Minute
	// MaxHistoryBytes bounds a stored conversation (one kv value).
	MaxHistoryBytes = 32 << 20
	// maxToolResultBytes bounds what one tool result sends to the model.
	maxToolResultBytes = 256 << 10
)

// Options configure a session. Empty fields come from the stored session
// (when resuming), then from the environment, then from the defaults.
type Options struct {
	// Provider is "openai" or "anthropic". Default: the stored one, else
	// "anthropic" when only ANTHROPIC_API_KEY is set, else "openai".
	Provider string
	// Model names the model (required for a new session, or
	// AGENTFS_MODEL).
	Model string
	// BaseURL of the API: OPENAI_BASE_URL (default
	// https://api.openai.com/v1, requests go to BASE/chat/completions) or
	// ANTHROPIC_BASE_URL (default https://api.anthropic.com, requests go
	// to BASE/v1/messages).
	BaseURL string
	// APIKey: OPENAI_API_KEY or ANTHROPIC_API_KEY. It is sent only in the
	// provider's auth header and never stored, logged or put in an error.
	APIKey string
	// System is the system prompt of a new session.
	System string
	// Tools choose the tools and the sandbox policy they run under
	// (HiddenKVPrefix is always KVPrefix).
	Tools agenttools.Options
	// MaxTurns bounds the model turns of one prompt (default 32).
	MaxTurns int
	// MaxTokens is the output token budget of one model turn (default
	// 4096; sent as max_tokens).
	MaxTokens int
	// MaxResponseBytes bounds the bytes of one streamed response (default
	// 8 MiB).
	MaxResponseBytes int64
	// Timeout bounds one prompt, all its turns and tools (default 10 min).
	Timeout time.Duration
	// HTTPClient sends the requests (default: a client without a total
	// timeout; Timeout and the context bound it).
	HTTPClient *http.Client
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// Event is one step of a prompt, in order.
type Event struct {
	// Type is "text" (a delta of the model's text), "tool_call",
	// "tool_result", "error" (the prompt failed; always followed by
	// "done") or "done" (the prompt ended).
	Type string `json:"type"`
	// Text is the delta of a "text" event.
	Text string `json:"text,omitempty"`
	// ToolCallID, ToolName, Arguments: the call of "tool_call" and
	// "tool_result" events.
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	// Result is a tool's JSON result; IsError says it failed, and Result
	// is then {"error": "..."} as the model saw it.
	Result  json.RawMessage `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Error is the message of an "error" event.
	Error string `json:"error,omitempty"`
	// StopReason of "done": the provider's last stop reason ("stop",
	// "end_turn", "length", "max_tokens", ...), or "error", "canceled",
	// "max_turns".
	StopReason string `json:"stop_reason,omitempty"`
	// Turn is the model turn of the prompt (1, 2, ...).
	Turn int `json:"turn,omitempty"`
	// InputTokens and OutputTokens: the usage of the prompt's turns, on
	// "done", as the provider reported it.
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
}

// Message is one entry of the stored conversation, provider-neutral.
type Message struct {
	// Role is "user", "assistant" or "tool".
	Role string `json:"role"`
	// Text of a user or assistant message.
	Text string `json:"text,omitempty"`
	// ToolCalls the assistant made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID, Content, IsError: a tool message's result.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Content    string `json:"content,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// record is the stored session. The base URL is not in it: a database
// from elsewhere must not be able to point the user's API key at a server
// of its choosing; each open names the URL (option or environment).
type record struct {
	Version  int       `json:"version"`
	ID       string    `json:"id"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	System   string    `json:"system,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Messages []Message `json:"messages"`
}

// Info describes a stored session.
type Info struct {
	ID       string    `json:"id"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Messages int       `json:"messages"`
}

// Session is one conversation over an agent. Its prompts run one at a
// time; it is safe for concurrent use.
type Session struct {
	agent   *core.Agent
	opts    Options
	tools   *agenttools.Tools
	key     string // API key, never stored
	baseURL string // never stored either (see record)

	mu      sync.Mutex
	running bool
	rec     record
}

// ErrBusy is a prompt while another of the same session runs.
var ErrBusy = fmt.Errorf("session: a prompt is already running (%w)", syscall.EBUSY)

// Open opens session id of agent, resuming it when it is stored, or
// creating it (id "" makes a new id). Nothing is stored before the first
// completed model turn.
func Open(ctx context.Context, agent *core.Agent, id string, opts Options) (*Session, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if id == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		id = "s-" + hex.EncodeToString(b[:])
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	s := &Session{agent: agent, opts: opts}
	raw, err := agent.KV.GetJSON(ctx, KVPrefix+id)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &s.rec); err != nil {
			return nil, fmt.Errorf("session %s: stored value is not a session: %v (%w)", id, err, syscall.EIO)
		}
		if s.rec.Version != 1 {
			return nil, fmt.Errorf("session %s: stored version %d is not supported (%w)", id, s.rec.Version, syscall.ENOTSUP)
		}
	case errors.Is(err, kv.ErrNotFound):
		s.rec = record{Version: 1, ID: id, System: opts.System}
	default:
		return nil, err
	}
	if err := s.configure(); err != nil {
		return nil, err
	}
	to := opts.Tools
	to.HiddenKVPrefix = KVPrefix
	s.tools = agenttools.New(agent, to)
	return s, nil
}

func checkID(id string) error {
	if len(id) > 128 {
		return fmt.Errorf("session id %q: longer than 128 bytes (%w)", id[:16]+"...", syscall.ENAMETOOLONG)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("session id %q: only letters, digits, '-', '_' and '.' (%w)", id, syscall.EINVAL)
		}
	}
	return nil
}

// configure settles provider, model, base URL and key.
func (s *Session) configure() error {
	o, env := &s.opts, s.opts.Getenv
	p := o.Provider
	if p == "" {
		p = s.rec.Provider
	}
	if p == "" {
		p = env("AGENTFS_MODEL_PROVIDER")
	}
	if p == "" {
		p = OpenAI
		if env("ANTHROPIC_API_KEY") != "" && env("OPENAI_API_KEY") == "" {
			p = Anthropic
		}
	}
	var defURL, keyVar, urlVar string
	switch p {
	case OpenAI:
		defURL, keyVar, urlVar = "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"
	case Anthropic:
		defURL, keyVar, urlVar = "https://api.anthropic.com", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
	default:
		return fmt.Errorf("session: provider %q: use openai or anthropic (%w)", p, syscall.EINVAL)
	}
	if s.rec.Provider != "" && p != s.rec.Provider {
		// The stored history is provider-neutral, so switching is allowed;
		// the model is the stored one only for the same provider.
		if o.Model == "" {
			return fmt.Errorf("session %s: was with %s; give a model of %s to switch (%w)", s.rec.ID, s.rec.Provider, p, syscall.EINVAL)
		}
	}
	m := o.Model
	if m == "" {
		m = s.rec.Model
	}
	if m == "" {
		m = env("AGENTFS_MODEL")
	}
	if m == "" {
		return fmt.Errorf("session: no model given (set --model or AGENTFS_MODEL) (%w)", syscall.EINVAL)
	}
	u := o.BaseURL
	if u == "" {
		u = env(urlVar)
	}
	if u == "" {
		u = defURL
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || pu.User != nil {
		return fmt.Errorf("session: base URL %q: want http(s)://host[/path] without credentials (%w)", u, syscall.EINVAL)
	}
	s.key = o.APIKey
	if s.key == "" {
		s.key = env(keyVar)
	}
	if s.key == "" && u == defURL {
		return fmt.Errorf("session: no API key for %s (set %s) (%w)", p, keyVar, syscall.EACCES)
	}
	s.rec.Provider, s.rec.Model, s.baseURL = p, m, strings.TrimRight(u, "/")
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return nil
}

// ID is the session's id.
func (s *Session) ID() string { return s.rec.ID }

// Info describes the session.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return info(&s.rec)
}

func info(r *record) Info {
	return Info{ID: r.ID, Provider: r.Provider, Model: r.Model, Created: r.Created, Updated: r.Updated, Messages: len(r.Messages)}
}

// History returns a copy of the stored conversation.
func (s *Session) History() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.rec.Messages...)
}

// List lists the sessions stored in agent.
func List(ctx context.Context, agent *core.Agent) ([]Info, error) {
	ents, err := agent.KV.List(ctx, KVPrefix, 0)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range ents {
		var r record
		if json.Unmarshal(e.Value, &r) != nil || r.Version != 1 {
			continue
		}
		out = append(out, info(&r))
	}
	return out, nil
}

// Delete removes a stored session; it reports whether there was one.
func Delete(ctx context.Context, agent *core.Agent, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	return agent.KV.Delete(ctx, KVPrefix+id)
}

// Prompt sends text to the model and runs the conversation until the
// model stops calling tools, a bound is reached, ctx ends or something
// fails. Each step goes to emit as it happens; the last event is always
// "done". The returned error is that of the "error" event (nil when the
// prompt ended normally). Completed turns are stored even when a later
// one fails; a turn cut short (a dropped stream, a cancellation) leaves
// nothing of itself in the history, and no tool of it runs.
func (s *Session) Prompt(ctx context.Context, text string, emit func(Event)) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return ErrBusy
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	if emit == nil {
		emit = func(Event) {}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.Timeout, fmt.Errorf("prompt timed out after %s (%w)", s.opts.Timeout, syscall.ETIMEDOUT))
	defer cancel()

	var in, out int64
	stop, err := s.run(ctx, text, emit, &in, &out)
	if err != nil {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil {
			err = c
			if errors.Is(c, context.Canceled) {
				stop = "canceled"
			}
		}
		if stop == "" {
			stop = "error"
		}
		err = s.redact(err)
		emit(Event{Type: "error", Error: err.Error()})
	}
	emit(Event{Type: "done", StopReason: stop, InputTokens: in, OutputTokens: out})
	return err
}

// redact removes the API key from an error's text (a server may echo it).
func (s *Session) redact(err error) error {
	if s.key == "" || !strings.Contains(err.Error(), s.key) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), s.key, "[api key]"), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

func (s *Session) run(ctx context.Context, text string, emit func(Event), in, out *int64) (string, error) {
	s.mu.Lock()
	msgs := append(append([]Message(nil), s.rec.Messages...), Message{Role: "user", Text: text})
	s.mu.Unlock()
	p := providerOf(s.rec.Provider)
	for turn := 1; ; turn++ {
		if turn > s.opts.MaxTurns {
			return "max_turns", fmt.Errorf("session: the model still called tools after %d turns (raise the turn limit) (%w)", s.opts.MaxTurns, syscall.E2BIG)
		}
		start := time.Now()
		res, err := s.modelTurn(ctx, p, msgs, turn, emit)
		*in += res.inTokens
		*out += res.outTokens
		s.logTurn(ctx, turn, text, start, res, err)
		if err != nil {
			return "", err
		}
		msgs = append(msgs, Message{Role: "assistant", Text: res.text, ToolCalls: res.calls})
		for _, c := range res.calls {
			emit(Event{Type: "tool_call", ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, Turn: turn})
			m := s.runTool(ctx, c)
			emit(Event{Type: "tool_result", ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, Result: json.RawMessage(m.Content), IsError: m.IsError, Turn: turn})
			msgs = append(msgs, m)
		}
		if err := s.save(ctx, msgs); err != nil {
			return "", err
		}
		if len(res.calls) == 0 || ctx.Err() != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return res.stop, nil
		}
	}
}

// runTool runs one call; every failure is a result the model sees.
func (s *Session) runTool(ctx context.Context, c ToolCall) Message {
	m := Message{Role: "tool", ToolCallID: c.ID}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	start := time.Now()
	res, err := s.tools.Call(ctx, c.Name, args)
	if err != nil && !s.offered(c.Name) {
		// The tools log only the calls of tools they have; a call of
		// anything else is a step of the conversation all the same.
		m := err.Error()
		_, _ = s.agent.Tools.Record(context.WithoutCancel(ctx), cut(c.Name), start, time.Now(), jsonOrString(args), nil, &m)
	}
	var b []byte
	if err == nil {
		b, err = json.Marshal(res)
	}
	if err != nil {
		// The model gets the POSIX code by name, as the MCP tools give it.
		out := map[string]string{"error": err.Error()}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			out["errno"] = vfs.ErrnoName(errno)
			if !strings.HasPrefix(out["error"], out["errno"]) {
				out["error"] = out["errno"] + ": " + out["error"]
			}
		}
		b, _ = json.Marshal(out)
		m.IsError = true
	}
	if len(b) > maxToolResultBytes {
		b, _ = json.Marshal(map[string]any{"truncated": true, "bytes": len(b), "head": strings.ToValidUTF8(string(b[:maxToolResultBytes]), "")})
	}
	m.Content = string(b)
	return m
}

func (s *Session) offered(name string) bool {
	for _, sp := range s.tools.Specs() {
		if sp.Name == name {
			return true
		}
	}
	return false
}

// jsonOrString is b when it is JSON, else b as a JSON string.
func jsonOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

// save stores the conversation in one kv write (one transaction).
func (s *Session) save(ctx context.Context, msgs []Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	r.Messages = msgs
	now := time.Now().UTC()
	if r.Created.IsZero() {
		r.Created = now
	}
	r.Updated = now
	b, err := json.Marshal(&r)
	if err != nil {
		return err
	}
	if len(b) > MaxHistoryBytes {
		return fmt.Errorf("session %s: history would exceed %d bytes; start a new session (%w)", r.ID, MaxHistoryBytes, syscall.EFBIG)
	}
	if err := s.agent.KV.SetJSON(context.WithoutCancel(ctx), KVPrefix+r.ID, b); err != nil {
		return fmt.Errorf("session %s: storing the history: %w", r.ID, err)
	}
	s.rec = r
	return nil
}

// logTurn records a model turn in the tool-call log.
func (s *Session) logTurn(ctx context.Context, turn int, prompt string, start time.Time, res turnResult, err error) {
	params := map[string]any{"session": s.rec.ID, "provider": s.rec.Provider, "model": s.rec.Model, "turn": turn}
	if turn == 1 {
		params["prompt"] = cut(prompt)
	}
	pb, _ := json.Marshal(params)
	var rb json.RawMessage
	var msg *string
	if err != nil {
		m := s.redact(err).Error()
		msg = &m
	} else {
		names := make([]string, 0, len(res.calls))
		for _, c := range res.calls {
			names = append(names, c.Name)
		}
		rb, _ = json.Marshal(map[string]any{"text": cut(res.text), "tool_calls": names, "stop_reason": res.stop, "input_tokens": res.inTokens, "output_tokens": res.outTokens})
	}
	// A failed log write does not end the conversation: the history is
	// the record of truth, the log its audit.
	_, _ = s.agent.Tools.Record(context.WithoutCancel(ctx), "session:model", start, time.Now(), pb, rb, msg)
}

func cut(s string) string {
	if len(s) <= 4096 {
		return s
	}
	c := strings.ToValidUTF8(s[:4096], "")
	return c + fmt.Sprintf("…[%d more bytes]", len(s)-len(c))
}

// turnResult is one completed (or failed) model response.
type turnResult struct {
	text                string
	calls               []ToolCall
	stop                string
	inTokens, outTokens int64
}

// provider speaks one wire format.
type provider interface {
	endpoint(base string) string
	headers(h http.Header, key string)
	body(s *Session, msgs []Message) ([]byte, error)
	// parse reads the stream, emitting text deltas as they come; the
	// result is complete only when err is nil.
	parse(r *sseReader, emit func(Event), turn int) (turnResult, error)
}

func providerOf(name string) provider {
	if name == Anthropic {
		return anthropicAPI{}
	}
	return openaiAPI{}
}

func (s *Session) modelTurn(ctx context.Context, p provider, msgs []Message, turn int, emit func(Event)) (turnResult, error) {
	body, err := p.body(s, msgs)
	if err != nil {
		return turnResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint(s.baseURL), strings.NewReader(string(body)))
	if err != nil {
		return turnResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	p.headers(req.Header, s.key)
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return turnResult{}, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return turnResult{}, fmt.Errorf("%s: request to %s failed: %v (%w)", s.rec.Provider, req.URL.Redacted(), err, syscall.ECONNREFUSED)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return turnResult{}, httpError(s.rec.Provider, resp)
	}
	res, err := p.parse(newSSEReader(resp.Body, s.opts.MaxResponseBytes), func(e Event) {
		e.Turn = turn
		emit(e)
	}, turn)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return res, fmt.Errorf("%s: the response stream ended before the message was complete (%w)", s.rec.Provider, syscall.ECONNRESET)
		}
		return res, fmt.Errorf("%s: %w", s.rec.Provider, err)
	}
	return res, nil
}

// httpError turns a refused request into one line: status, the API's
// message, a hint.
func httpError(provider string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil {
		if e.Error.Message != "" {
			msg = e.Error.Message
		} else if e.Message != "" {
			msg = e.Message
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	errno, hint := syscall.EIO, ""
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		errno, hint = syscall.EACCES, "; check the API key"
	case http.StatusNotFound:
		errno, hint = syscall.ENOENT, "; check the base URL and the model"
	case http.StatusTooManyRequests:
		errno, hint = syscall.EAGAIN, "; try again later"
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		errno = syscall.EINVAL
	}
	return fmt.Errorf("%s: HTTP %d: %s%s (%w)", provider, resp.StatusCode, msg, hint, errno)
}

// Policy is the sandbox policy type, for callers building Options.
type Policy = sandbox.Policy
