// Package fakemodel is a scripted model server for tests: it answers on
// 127.0.0.1 in the streamed wire format of OpenAI's Chat Completions or
// Anthropic's Messages API, one scripted turn per request, and checks
// every request it receives (path, auth header, model, stream flag, the
// tools offered, expected text such as tool results fed back). A request
// that fails a check is answered with HTTP 400 and its reason, so the
// client under test sees the failure as a model error, and is kept in
// Failures (GET /_fakemodel/failures serves them to tests in other
// languages). core/cmd/fakemodel runs it as a program.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Script is what the server answers and expects.
type Script struct {
	// Provider is "openai" or "anthropic".
	Provider string `json:"provider"`
	// Model every request must name.
	Model string `json:"model"`
	// APIKey every request must carry in the provider's auth header
	// ("" expects none).
	APIKey string `json:"api_key"`
	// Tools, when set, are the tool names every request must offer.
	Tools []string `json:"tools,omitempty"`
	// Turns answer the requests in order.
	Turns []Turn `json:"turns"`
}

// Turn is one request's check and answer.
type Turn struct {
	// Contains: substrings the request body must contain (tool results,
	// earlier prompts of a resumed session...).
	Contains []string `json:"contains,omitempty"`
	// Text is streamed as text deltas, one event per element.
	Text []string `json:"text,omitempty"`
	// ToolCalls the model makes after the text.
	ToolCalls []Call `json:"tool_calls,omitempty"`
	// Fail: "drop" closes the connection after the text (no end of
	// message), "http" answers HTTP 500 with an error body, "event" sends
	// the provider's error event after the text, "hang" sends the text and
	// then nothing until the client goes away (for cancellation tests).
	Fail string `json:"fail,omitempty"`
}

// Call is a scripted tool call; its arguments are streamed in pieces.
type Call struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text
}

// Server is a running fake model.
type Server struct {
	URL string // http://127.0.0.1:PORT (OpenAI clients append /chat/completions; Anthropic's /v1/messages)

	script   Script
	ln       net.Listener
	srv      *http.Server
	mu       sync.Mutex
	next     int
	requests []json.RawMessage
	failures []string
}

// Start serves script on a free loopback port.
// StartTest starts a server for test t, fails t if it cannot, and at
// the end of the test closes it and reports every check of a request that
// failed as an error of t.
func StartTest(t testing.TB, script Script) *Server {
	t.Helper()
	srv, err := Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if f := srv.Failures(); len(f) > 0 {
			t.Errorf("model server checks failed: %q", f)
		}
	})
	return srv
}

func Start(script Script) (*Server, error) {
	if script.Provider != "openai" && script.Provider != "anthropic" {
		return nil, fmt.Errorf("fakemodel: provider %q: want openai or anthropic", script.Provider)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/_fakemodel/failures", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		f := s.Failures()
		if f == nil {
			f = []string{} // JSON [] rather than null
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"failures": f, "requests": len(s.Requests()), "turns_left": s.TurnsLeft()})
	})
	mux.HandleFunc("/", s.serve)
	s.srv = &http.Server{Handler: mux}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns the bodies received, in order.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Failures returns the checks requests failed.
func (s *Server) Failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// TurnsLeft is how many scripted turns no request has taken yet.
func (s *Server) TurnsLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Turns) - s.next
}

func (s *Server) fail(w http.ResponseWriter, f string, a ...any) {
	msg := "fakemodel: " + fmt.Sprintf(f, a...)
	s.mu.Lock()
	s.failures = append(s.failures, msg)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"type": "invalid_request_error", "message": msg}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	sc := s.script
	want := "/chat/completions"
	if sc.Provider == "anthropic" {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, want) {
		s.fail(w, "%s %s: want POST .../%s", r.Method, r.URL.Path, strings.TrimPrefix(want, "/"))
		return
	}
	var body []byte
	body, err := readAll(r)
	if err != nil {
		s.fail(w, "reading the request: %v", err)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, body)
	i := s.next
	s.next++
	s.mu.Unlock()
	// Auth header.
	if sc.Provider == "openai" {
		if got, want := r.Header.Get("Authorization"), bearer(sc.APIKey); got != want {
			s.fail(w, "Authorization header %q, want %q", redact(got), redact(want))
			return
		}
	} else {
		if got := r.Header.Get("x-api-key"); got != sc.APIKey {
			s.fail(w, "x-api-key header %q, want %q", redact(got), redact(sc.APIKey))
			return
		}
		if r.Header.Get("anthropic-version") == "" {
			s.fail(w, "no anthropic-version header")
			return
		}
	}
	var req struct {
		Model     string            `json:"model"`
		Stream    bool              `json:"stream"`
		MaxTokens int               `json:"max_tokens"`
		Tools     []json.RawMessage `json:"tools"`
		Messages  []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, "request body is not JSON: %v", err)
		return
	}
	if req.Model != sc.Model {
		s.fail(w, "model %q, want %q", req.Model, sc.Model)
		return
	}
	if !req.Stream {
		s.fail(w, "stream is not true")
		return
	}
	if sc.Provider == "anthropic" && req.MaxTokens <= 0 {
		s.fail(w, "max_tokens missing (the Messages API requires it)")
		return
	}
	if len(req.Messages) == 0 {
		s.fail(w, "no messages")
		return
	}
	if sc.Tools != nil {
		names, err := toolNames(sc.Provider, req.Tools)
		if err != nil {
			s.fail(w, "tools: %v", err)
			return
		}
		if !slices.Equal(names, sc.Tools) {
			s.fail(w, "tools %v, want %v", names, sc.Tools)
			return
		}
	}
	if i >= len(sc.Turns) {
		s.fail(w, "request %d: the script has only %d turns", i+1, len(sc.Turns))
		return
	}
	t := sc.Turns[i]
	for _, c := range t.Contains {
		if !strings.Contains(string(body), c) {
			s.fail(w, "request %d does not contain %q", i+1, c)
			return
		}
	}
	if t.Fail == "http" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"type":"server_error","message":"scripted failure"}}`))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if sc.Provider == "openai" {
		streamOpenAI(w, r, sc.Model, t)
	} else {
		streamAnthropic(w, r, sc.Model, t)
	}
}

func bearer(k string) string {
	if k == "" {
		return ""
	}
	return "Bearer " + k
}

// redact keeps a failure message from carrying a key.
func redact(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:4] + "..." + fmt.Sprint(len(k))
}

func readAll(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20+1))
	if len(b) > 64<<20 {
		return nil, fmt.Errorf("body over 64 MiB")
	}
	return b, err
}

func toolNames(provider string, tools []json.RawMessage) ([]string, error) {
	names := []string{}
	for _, raw := range tools {
		var t struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, err
		}
		if provider == "openai" {
			if t.Type != "function" || t.Function.Name == "" || !isObjectSchema(t.Function.Parameters) {
				return nil, fmt.Errorf("tool %s: want {type: function, function: {name, description, parameters: object schema}}", raw)
			}
			names = append(names, t.Function.Name)
		} else {
			if t.Name == "" || !isObjectSchema(t.InputSchema) {
				return nil, fmt.Errorf("tool %s: want {name, description, input_schema: object schema}", raw)
			}
			names = append(names, t.Name)
		}
	}
	return names, nil
}

func isObjectSchema(b json.RawMessage) bool {
	var s struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(b, &s) == nil && s.Type == "object"
}

// pieces splits s into up to three parts, as a model streams arguments.
func pieces(s string) []string {
	if len(s) < 6 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

type flusher struct {
	w http.ResponseWriter
}

func (f flusher) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(f.w, "event: %s\n", name)
	}
	fmt.Fprintf(f.w, "data: %s\n\n", b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// drop ends the response abruptly: the connection closes without the
// chunked encoding's last chunk, as when a server dies.
func drop(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
		}
	}
}

// failMidStream acts out a turn's scripted failure after its text: the
// connection dropped, a stream that never ends (until the client goes),
// or the API's own error event (errorEvent). It reports whether it did.
func failMidStream(w http.ResponseWriter, r *http.Request, t Turn, errorEvent func()) bool {
	switch t.Fail {
	case "drop":
		drop(w)
	case "hang":
		<-r.Context().Done()
	case "event":
		errorEvent()
	default:
		return false
	}
	return true
}

func streamOpenAI(w http.ResponseWriter, r *http.Request, model string, t Turn) {
	f := flusher{w}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	f.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, s := range t.Text {
		f.event("", chunk(map[string]any{"content": s}, nil))
	}
	if failMidStream(w, r, t, func() {
		f.event("", map[string]any{"error": map[string]any{"message": "scripted stream error", "type": "server_error"}})
	}) {
		return
	}
	for i, c := range t.ToolCalls {
		for j, p := range pieces(c.Arguments) {
			tc := map[string]any{"index": i, "function": map[string]any{"arguments": p}}
			if j == 0 {
				tc["id"], tc["type"] = c.ID, "function"
				tc["function"].(map[string]any)["name"] = c.Name
			}
			f.event("", chunk(map[string]any{"tool_calls": []any{tc}}, nil))
		}
	}
	finish := "stop"
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	f.event("", chunk(map[string]any{}, finish))
	f.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func streamAnthropic(w http.ResponseWriter, r *http.Request, model string, t Turn) {
	f := flusher{w}
	f.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	f.event("ping", map[string]any{"type": "ping"})
	idx := 0
	if len(t.Text) > 0 {
		f.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, s := range t.Text {
			f.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": s}})
		}
		if t.Fail == "drop" {
			drop(w)
			return
		}
		f.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if failMidStream(w, r, t, func() {
		f.event("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
	}) {
		return
	}
	for _, c := range t.ToolCalls {
		f.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range pieces(c.Arguments) {
			f.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		f.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(t.ToolCalls) > 0 {
		stop = "tool_use"
	}
	f.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	f.event("message_stop", map[string]any{"type": "message_stop"})
}
