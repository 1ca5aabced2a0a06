package agentfs_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/session/fakemodel"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

func startFakeModel(t *testing.T, provider string, turns ...fakemodel.Turn) *fakemodel.Server {
	t.Helper()
	return fakemodel.StartTest(t, fakemodel.Script{Provider: provider, Model: "m", APIKey: "sk-go-sdk",
		Tools: []string{"read_file", "write_file", "edit_file", "list", "search", "bash", "kv_get", "kv_set"}, Turns: turns})
}

func prompt(t *testing.T, s *agentfs.Session, text string) ([]agentfs.SessionEvent, string, error) {
	t.Helper()
	var evs []agentfs.SessionEvent
	var b strings.Builder
	for ev, err := range s.Prompt(context.Background(), text) {
		if err != nil {
			return evs, b.String(), err
		}
		evs = append(evs, ev)
		if ev.Type == "text" {
			b.WriteString(ev.Text)
		}
	}
	return evs, b.String(), nil
}

func TestSessionInProcess(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			srv := startFakeModel(t, provider,
				fakemodel.Turn{Text: []string{"On it."}, ToolCalls: []fakemodel.Call{{ID: "w", Name: "write_file", Arguments: `{"path":"/app/main.sh","content":"echo built"}`}}},
				fakemodel.Turn{Contains: []string{`\"size\":10`}, ToolCalls: []fakemodel.Call{{ID: "b", Name: "bash", Arguments: `{"command":"sh /app/main.sh > /app/out.txt"}`}}},
				fakemodel.Turn{Contains: []string{`\"exit_code\":0`}, Text: []string{"Built."}},
				fakemodel.Turn{Contains: []string{"Built.", "main.sh", "again"}, Text: []string{"Again."}},
				fakemodel.Turn{ToolCalls: []fakemodel.Call{{ID: "d", Name: "write_file", Arguments: `{"path":"/etc/x","content":"x"}`}}},
				fakemodel.Turn{Contains: []string{"EACCES"}, Text: []string{"Denied."}},
			)
			path := filepath.Join(t.TempDir(), "a.db")
			a, err := agentfs.Open(context.Background(), agentfs.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			o := agentfs.SessionOptions{ID: "build", Provider: provider, Model: "m", BaseURL: srv.URL, APIKey: "sk-go-sdk"}
			s, err := a.OpenSession(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			evs, text, err := prompt(t, s, "build it")
			if err != nil || text != "On it.Built." {
				t.Fatalf("%q %v", text, err)
			}
			var kinds []string
			for _, e := range evs {
				if e.Type != "text" {
					kinds = append(kinds, e.Type+":"+e.ToolName)
				}
			}
			if want := []string{"tool_call:write_file", "tool_result:write_file", "tool_call:bash", "tool_result:bash", "done:"}; !slices.Equal(kinds, want) {
				t.Errorf("events %v", kinds)
			}
			if b, err := a.FS().ReadFile(context.Background(), "/app/out.txt"); err != nil || string(b) != "built\n" {
				t.Fatalf("out.txt %q %v", b, err)
			}
			calls, err := a.Tools().List(context.Background(), agentfs.ToolFilter{Ascending: true})
			if err != nil || len(calls) != 5 || calls[1].Name != "write_file" || calls[3].Name != "bash" {
				t.Errorf("timeline %+v %v", calls, err)
			}
			a.Close()

			a, err = agentfs.Open(context.Background(), agentfs.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			o.Writable = []string{"/app"}
			s, err = a.OpenSession(context.Background(), o)
			if err != nil || s.Info.Messages != 6 {
				t.Fatalf("%+v %v", s, err)
			}
			if _, text, err := prompt(t, s, "again"); err != nil || text != "Again." {
				t.Fatalf("%q %v", text, err)
			}
			evs, _, err = prompt(t, s, "write /etc/x")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(evs, func(e agentfs.SessionEvent) bool { return e.Type == "tool_result" && e.IsError }) {
				t.Errorf("no tool error in %+v", evs)
			}
			list, err := a.Sessions(context.Background())
			if err != nil || len(list) != 1 || list[0].ID != "build" {
				t.Errorf("Sessions %+v %v", list, err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ok, err := a.DeleteSession(context.Background(), "build"); !ok || err != nil {
				t.Errorf("DeleteSession %v %v", ok, err)
			}
		})
	}
}

func TestSessionFailure(t *testing.T) {
	srv := startFakeModel(t, "anthropic", fakemodel.Turn{Text: []string{"cut"}, Fail: "drop"})
	a, err := agentfs.Open(context.Background(), agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := a.OpenSession(context.Background(), agentfs.SessionOptions{Provider: "anthropic", Model: "m", BaseURL: srv.URL, APIKey: "sk-go-sdk"})
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := prompt(t, s, "x")
	if !errors.Is(err, agentfs.ErrPromptFailed) || !strings.Contains(err.Error(), "ended before") || evs[len(evs)-1].Type != "done" {
		t.Fatalf("%v %+v", err, evs)
	}
	if _, err := a.OpenSession(context.Background(), agentfs.SessionOptions{Provider: "nope", Model: "m"}); err == nil {
		t.Fatal("bad provider opened")
	}
}

// TestSessionRemote: over HTTP the server's environment names the model
// server, and a caller's base URL is refused.
func TestSessionRemote(t *testing.T) {
	srv := startFakeModel(t, "openai", fakemodel.Turn{Text: []string{"remote ", "hi"}})
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "sk-go-sdk")
	r := remoteOpener(t)(t).(*agentfs.Remote)
	if _, err := r.OpenSession(context.Background(), agentfs.SessionOptions{Model: "m", Provider: "openai", BaseURL: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "own environment") {
		t.Fatalf("caller's base URL: %v", err)
	}
	s, err := r.OpenSession(context.Background(), agentfs.SessionOptions{Model: "m", Provider: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := prompt(t, s, "hello"); err != nil || text != "remote hi" {
		t.Fatalf("%q %v", text, err)
	}
}

// TestSessionBreak: leaving the iteration mid-stream cancels the prompt in
// the engine, and the session takes the next one.
func TestSessionBreak(t *testing.T) {
	srv := startFakeModel(t, "openai",
		fakemodel.Turn{Text: []string{"streaming..."}, Fail: "hang"},
		fakemodel.Turn{Contains: []string{"next"}, Text: []string{"fine"}})
	a, err := agentfs.Open(context.Background(), agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := a.OpenSession(context.Background(), agentfs.SessionOptions{Provider: "openai", Model: "m", BaseURL: srv.URL, APIKey: "sk-go-sdk"})
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range s.Prompt(context.Background(), "first") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "text" {
			break
		}
	}
	if _, text, err := prompt(t, s, "next"); err != nil || text != "fine" {
		t.Fatalf("%q %v", text, err)
	}
}
