package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/agenttools"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/session"
	"github.com/agentfs-go/agentfs/core/session/fakemodel"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

const testKey = "sk-test-SECRET-0123456789"

var allTools = []string{"read_file", "write_file", "edit_file", "list", "search", "bash", "kv_get", "kv_set"}

func openAgent(t testing.TB, path string) *core.Agent {
	t.Helper()
	a, err := core.Open(context.Background(), path, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func startModel(t testing.TB, sc fakemodel.Script) *fakemodel.Server {
	t.Helper()
	sc.Model, sc.APIKey, sc.Tools = "test-model", testKey, allTools
	return fakemodel.StartTest(t, sc)
}

func opts(provider, url string) session.Options {
	return session.Options{Provider: provider, Model: "test-model", BaseURL: url, APIKey: testKey,
		Getenv: func(string) string { return "" }}
}

// collect runs a prompt and returns its events.
func collect(t testing.TB, s *session.Session, text string) ([]session.Event, error) {
	t.Helper()
	var evs []session.Event
	err := s.Prompt(context.Background(), text, func(e session.Event) { evs = append(evs, e) })
	return evs, err
}

func text(evs []session.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "text" {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func types(evs []session.Event) []string {
	var out []string
	for _, e := range evs {
		if len(out) > 0 && e.Type == "text" && out[len(out)-1] == "text" {
			continue
		}
		out = append(out, e.Type)
	}
	return out
}

func timeline(t testing.TB, a *core.Agent) []toolcalls.Call {
	t.Helper()
	calls, err := a.Tools.List(context.Background(), toolcalls.Filter{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

func fsckClean(t testing.TB, a *core.Agent) {
	t.Helper()
	r, err := a.Fsck(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("fsck: %+v", r.Problems)
	}
}

func noKey(t testing.TB, a *core.Agent, texts ...string) {
	t.Helper()
	for _, c := range timeline(t, a) {
		texts = append(texts, string(c.Parameters), string(c.Result))
		if c.Error != nil {
			texts = append(texts, *c.Error)
		}
	}
	ents, _ := a.KV.List(context.Background(), "", 0)
	for _, e := range ents {
		texts = append(texts, string(e.Value))
	}
	for _, s := range texts {
		if strings.Contains(s, testKey) {
			t.Fatalf("the API key leaked into %q", s)
		}
	}
}

// TestWriteBashResume is the whole path for both wire formats: the model
// calls write_file then bash, the files appear, the timeline shows the
// steps, and after reopening the database the session continues with its
// history sent to the model.
func TestWriteBashResume(t *testing.T) {
	ctx := t.Context()
	for _, provider := range []string{session.OpenAI, session.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := startModel(t, fakemodel.Script{Provider: provider, Turns: []fakemodel.Turn{
				{Contains: []string{"make hello"}, Text: []string{"Writing ", "the file."},
					ToolCalls: []fakemodel.Call{{ID: "call_1", Name: "write_file", Arguments: `{"path":"/work/hello.txt","content":"hello\n"}`}}},
				{Contains: []string{"call_1", `\"size\":6`},
					ToolCalls: []fakemodel.Call{{ID: "call_2", Name: "bash", Arguments: `{"command":"cat /work/hello.txt | tr a-z A-Z > /work/upper.txt && echo ok"}`}}},
				{Contains: []string{"call_2", `\"exit_code\":0`, `ok\\n`}, Text: []string{"Done: ", "upper.txt written."}},
				// After the reopen: the whole history goes to the model.
				{Contains: []string{"make hello", "call_1", "call_2", "upper.txt written.", "what did you do"}, Text: []string{"I wrote two files."}},
			}})
			path := filepath.Join(t.TempDir(), "a.db")
			a := openAgent(t, path)
			s, err := session.Open(context.Background(), a, "s1", opts(provider, srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, s, "make hello")
			if err != nil {
				t.Fatal(err)
			}
			if got := text(evs); got != "Writing the file.Done: upper.txt written." {
				t.Errorf("text %q", got)
			}
			want := []string{"text", "tool_call", "tool_result", "tool_call", "tool_result", "text", "done"}
			if got := types(evs); !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
			for _, e := range evs {
				if e.Type == "tool_result" && e.IsError {
					t.Errorf("tool error: %s", e.Result)
				}
			}
			if last := evs[len(evs)-1]; last.StopReason == "" || last.InputTokens != 30 || last.OutputTokens != 15 {
				t.Errorf("done event %+v", last)
			}
			if b, err := a.FS.ReadFile(ctx, "/work/upper.txt"); err != nil || string(b) != "HELLO\n" {
				t.Fatalf("upper.txt: %q %v", b, err)
			}
			var names []string
			for _, c := range timeline(t, a) {
				names = append(names, c.Name)
				if c.Status != "success" {
					t.Errorf("call %s: status %s", c.Name, c.Status)
				}
			}
			wantNames := []string{"session:model", "write_file", "session:model", "bash", "session:model"}
			if !slices.Equal(names, wantNames) {
				t.Errorf("timeline %v, want %v", names, wantNames)
			}
			fsckClean(t, a)
			noKey(t, a)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}

			a = openAgent(t, path)
			defer a.Close()
			// Provider and model come from the stored session.
			o := opts("", srv.URL)
			o.Model = ""
			s, err = session.Open(context.Background(), a, "s1", o)
			if err != nil {
				t.Fatal(err)
			}
			if inf := s.Info(); inf.Provider != provider || inf.Model != "test-model" || inf.Messages != 6 {
				t.Errorf("resumed %+v", inf)
			}
			evs, err = collect(t, s, "what did you do?")
			if err != nil {
				t.Fatal(err)
			}
			if got := text(evs); got != "I wrote two files." {
				t.Errorf("text %q", got)
			}
			if srv.TurnsLeft() != 0 {
				t.Errorf("%d turns left", srv.TurnsLeft())
			}
			list, err := session.List(context.Background(), a)
			if err != nil || len(list) != 1 || list[0].ID != "s1" || list[0].Messages != 8 {
				t.Errorf("List: %+v %v", list, err)
			}
			fsckClean(t, a)
		})
	}
}

// TestPermissionDenied: a tool call outside the session's policy is a
// tool error the model sees, and nothing changes.
func TestPermissionDenied(t *testing.T) {
	ctx := t.Context()
	for _, provider := range []string{session.OpenAI, session.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := startModel(t, fakemodel.Script{Provider: provider, Turns: []fakemodel.Turn{
				{ToolCalls: []fakemodel.Call{
					{ID: "c0", Name: "launch_missiles", Arguments: `{}`},
					{ID: "c1", Name: "write_file", Arguments: `{"path":"/etc/passwd","content":"x"}`},
					{ID: "c2", Name: "kv_set", Arguments: `{"key":"agentfs:session:s1","value":1}`},
					{ID: "c3", Name: "bash", Arguments: `{"command":"rm -rf /etc"}`},
				}},
				{Contains: []string{"EACCES", "reserved", "rm:", "unknown tool"}, Text: []string{"I may not."}},
			}})
			a := openAgent(t, filepath.Join(t.TempDir(), "a.db"))
			defer a.Close()
			if err := a.FS.MkdirAll(ctx, "/etc", 0o755); err != nil {
				t.Fatal(err)
			}
			o := opts(provider, srv.URL)
			o.Tools = agenttools.Options{Policy: sandbox.Policy{Writable: []string{"/work"}, Deny: []string{"curl"}}}
			s, err := session.Open(context.Background(), a, "s1", o)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, s, "break things")
			if err != nil {
				t.Fatal(err)
			}
			var errs int
			for _, e := range evs {
				if e.Type == "tool_result" {
					var r map[string]any
					_ = json.Unmarshal(e.Result, &r)
					if e.ToolName == "launch_missiles" {
						if !e.IsError || !strings.Contains(r["error"].(string), "EINVAL") {
							t.Errorf("%s: %s", e.ToolName, e.Result)
						}
						continue
					}
					if e.ToolName != "bash" && (!e.IsError || !strings.Contains(r["error"].(string), "EACCES")) {
						t.Errorf("%s: %s", e.ToolName, e.Result)
					}
					if e.IsError {
						errs++
					}
				}
			}
			if errs != 2 {
				t.Errorf("%d tool errors, want 2", errs)
			}
			if !slices.ContainsFunc(timeline(t, a), func(c toolcalls.Call) bool { return c.Name == "launch_missiles" && c.Status == "error" }) {
				t.Error("the unknown tool's call is not in the timeline")
			}
			if _, err := a.FS.Stat(ctx, "/etc"); err != nil {
				t.Errorf("/etc: %v", err)
			}
			if ok, _ := a.FS.Exists(ctx, "/etc/passwd"); ok {
				t.Error("/etc/passwd written")
			}
		})
	}
}

// TestModelFailures: a server that drops mid-stream, answers 500 or sends
// an error event gives a clear error; completed turns are kept, the cut
// one leaves nothing, and the database passes fsck.
func TestModelFailures(t *testing.T) {
	ctx := t.Context()
	for _, provider := range []string{session.OpenAI, session.Anthropic} {
		for _, fail := range []struct{ kind, msg string }{
			{"drop", "ended before the message was complete"},
			{"http", "HTTP 500: scripted failure"},
			{"event", "reported an error mid-stream"},
		} {
			t.Run(provider+"/"+fail.kind, func(t *testing.T) {
				srv := startModel(t, fakemodel.Script{Provider: provider, Turns: []fakemodel.Turn{
					{ToolCalls: []fakemodel.Call{{ID: "c1", Name: "write_file", Arguments: `{"path":"/a.txt","content":"a"}`}}},
					{Text: []string{"partial "}, ToolCalls: []fakemodel.Call{{ID: "c2", Name: "write_file", Arguments: `{"path":"/b.txt","content":"b"}`}}, Fail: fail.kind},
					{Contains: []string{"go on", "c1"}, Text: []string{"recovered"}},
				}})
				path := filepath.Join(t.TempDir(), "a.db")
				a := openAgent(t, path)
				s, err := session.Open(context.Background(), a, "s1", opts(provider, srv.URL))
				if err != nil {
					t.Fatal(err)
				}
				evs, err := collect(t, s, "write")
				if err == nil || !strings.Contains(err.Error(), fail.msg) {
					t.Fatalf("error %v, want %q", err, fail.msg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatal("key in error")
				}
				last := evs[len(evs)-1]
				if evs[len(evs)-2].Type != "error" || last.Type != "done" || last.StopReason != "error" {
					t.Errorf("last events %+v", evs[len(evs)-2:])
				}
				if ok, _ := a.FS.Exists(ctx, "/a.txt"); !ok {
					t.Error("/a.txt of the completed turn missing")
				}
				if ok, _ := a.FS.Exists(ctx, "/b.txt"); ok {
					t.Error("/b.txt of the cut turn was written")
				}
				for _, c := range timeline(t, a) {
					if c.Status == "pending" {
						t.Errorf("pending call %s", c.Name)
					}
				}
				// user, assistant (c1), tool: the cut turn left nothing.
				if h := s.History(); len(h) != 3 || h[2].Role != "tool" {
					t.Errorf("history %+v", h)
				}
				fsckClean(t, a)
				noKey(t, a, err.Error())
				a.Close()
				a = openAgent(t, path)
				defer a.Close()
				s, err = session.Open(context.Background(), a, "s1", opts(provider, srv.URL))
				if err != nil {
					t.Fatal(err)
				}
				if evs, err := collect(t, s, "go on"); err != nil || text(evs) != "recovered" {
					t.Fatalf("after failure: %q %v", text(evs), err)
				}
			})
		}
	}
}

func TestBounds(t *testing.T) {
	loop := fakemodel.Turn{ToolCalls: []fakemodel.Call{{ID: "c", Name: "list", Arguments: `{}`}}}
	srv := startModel(t, fakemodel.Script{Provider: session.OpenAI, Turns: []fakemodel.Turn{loop, loop, loop}})
	a := openAgent(t, filepath.Join(t.TempDir(), "a.db"))
	defer a.Close()
	o := opts(session.OpenAI, srv.URL)
	o.MaxTurns = 2
	s, err := session.Open(context.Background(), a, "", o)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, s, "loop")
	if !errors.Is(err, syscall.E2BIG) || evs[len(evs)-1].StopReason != "max_turns" {
		t.Fatalf("%v %+v", err, evs[len(evs)-1])
	}
	// A canceled context ends the prompt before the model is asked.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var last session.Event
	err = s.Prompt(ctx, "x", func(e session.Event) { last = e })
	if !errors.Is(err, context.Canceled) || last.StopReason != "canceled" {
		t.Fatalf("%v %+v", err, last)
	}
	srv.Close()
	// Too large a response.
	srv2 := startModel(t, fakemodel.Script{Provider: session.Anthropic, Turns: []fakemodel.Turn{{Text: []string{strings.Repeat("x", 4096)}}}})
	o = opts(session.Anthropic, srv2.URL)
	o.MaxResponseBytes = 1024
	s, err = session.Open(context.Background(), a, "", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, s, "big"); !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("%v", err)
	}
}

// TestTimeout: a model that never finishes is stopped by the prompt's
// time bound with ETIMEDOUT.
func TestTimeout(t *testing.T) {
	srv := startModel(t, fakemodel.Script{Provider: session.Anthropic, Turns: []fakemodel.Turn{{Text: []string{"..."}, Fail: "hang"}}})
	a := openAgent(t, filepath.Join(t.TempDir(), "a.db"))
	defer a.Close()
	o := opts(session.Anthropic, srv.URL)
	o.Timeout = 50 * time.Millisecond
	s, err := session.Open(context.Background(), a, "", o)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, s, "x")
	if !errors.Is(err, syscall.ETIMEDOUT) || evs[len(evs)-1].StopReason != "error" {
		t.Fatalf("%v %+v", err, evs[len(evs)-1])
	}
}

func TestOptions(t *testing.T) {
	a := openAgent(t, filepath.Join(t.TempDir(), "a.db"))
	defer a.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "AGENTFS_MODEL": "m"}
	s, err := session.Open(context.Background(), a, "", session.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil || s.Info().Provider != session.Anthropic || s.Info().Model != "m" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, o := range []session.Options{
		{Provider: "x", Model: "m"},
		{Provider: "openai"},                                      // no model
		{Provider: "openai", Model: "m"},                          // no key for the default URL
		{Provider: "openai", Model: "m", BaseURL: "ftp://h"},      // scheme
		{Provider: "openai", Model: "m", BaseURL: "http://u:p@h"}, // credentials
	} {
		o.Getenv = func(string) string { return "" }
		if _, err := session.Open(context.Background(), a, "", o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := session.Open(context.Background(), a, "../x", session.Options{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad id: %v", err)
	}
}

// BenchmarkSessionEvents measures a session's events per second: each
// iteration is one prompt of a text turn of 50 deltas, a tool call
// (list) and a last text turn, against the fake model on loopback.
func BenchmarkSessionEvents(b *testing.B) {
	for _, provider := range []string{session.OpenAI, session.Anthropic} {
		b.Run(provider, func(b *testing.B) {
			deltas := make([]string, 50)
			for i := range deltas {
				deltas[i] = "tok "
			}
			turns := make([]fakemodel.Turn, 0, 2*b.N)
			for range b.N {
				turns = append(turns,
					fakemodel.Turn{Text: deltas, ToolCalls: []fakemodel.Call{{ID: "c", Name: "list", Arguments: `{"path":"/"}`}}},
					fakemodel.Turn{Text: deltas})
			}
			srv := startModel(b, fakemodel.Script{Provider: provider, Turns: turns})
			a := openAgent(b, filepath.Join(b.TempDir(), "a.db"))
			defer a.Close()
			n := 0
			b.ResetTimer()
			for i := range b.N {
				// A fresh session per prompt keeps the history (and the
				// request) the same size in every iteration.
				s, err := session.Open(context.Background(), a, "", opts(provider, srv.URL))
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Prompt(context.Background(), "go", func(session.Event) { n++ }); err != nil {
					b.Fatal(i, err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestCancelMidStream: cancelling while the model streams ends the prompt
// with "canceled", stores nothing of the cut turn, and the session takes
// the next prompt.
func TestCancelMidStream(t *testing.T) {
	for _, provider := range []string{session.OpenAI, session.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := startModel(t, fakemodel.Script{Provider: provider, Turns: []fakemodel.Turn{
				{Text: []string{"thinking..."}, Fail: "hang"},
				{Contains: []string{"second"}, Text: []string{"ok"}},
			}})
			a := openAgent(t, filepath.Join(t.TempDir(), "a.db"))
			defer a.Close()
			s, err := session.Open(context.Background(), a, "c", opts(provider, srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var evs []session.Event
			err = s.Prompt(ctx, "first", func(e session.Event) {
				evs = append(evs, e)
				if e.Type == "text" {
					cancel() // the server holds the stream open: only this ends it
				}
			})
			if !errors.Is(err, context.Canceled) || evs[len(evs)-1].StopReason != "canceled" {
				t.Fatalf("%v %+v", err, evs)
			}
			if len(s.History()) != 0 {
				t.Errorf("history %+v", s.History())
			}
			for _, c := range timeline(t, a) {
				if c.Status == "pending" {
					t.Errorf("pending %s", c.Name)
				}
			}
			fsckClean(t, a)
			if evs, err := collect(t, s, "second"); err != nil || text(evs) != "ok" {
				t.Fatalf("%q %v", text(evs), err)
			}
		})
	}
}
