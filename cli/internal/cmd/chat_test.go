package cmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/session/fakemodel"
)

func fakeModel(t *testing.T, provider string, turns ...fakemodel.Turn) *fakemodel.Server {
	t.Helper()
	return fakemodel.StartTest(t, fakemodel.Script{Provider: provider, Model: "m1", APIKey: "sk-cli-secret", Turns: turns})
}

func TestChat(t *testing.T) {
	newAgent(t)
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "sk-cli-secret")
			t.Setenv("ANTHROPIC_API_KEY", "sk-cli-secret")
			srv := fakeModel(t, provider,
				fakemodel.Turn{Text: []string{"Sure."}, ToolCalls: []fakemodel.Call{{ID: "w", Name: "write_file", Arguments: `{"path":"/` + provider + `/a.txt","content":"hi"}`}}},
				fakemodel.Turn{Contains: []string{`\"size\":2`}, ToolCalls: []fakemodel.Call{{ID: "b", Name: "bash", Arguments: `{"command":"cat /` + provider + `/a.txt"}`}}},
				fakemodel.Turn{Contains: []string{`\"stdout\":\"hi\"`}, Text: []string{"It says ", "hi."}},
				fakemodel.Turn{Contains: []string{"It says hi.", "and now?"}, Text: []string{"Still hi."}},
			)
			r := run(t, "", "chat", "t", "--provider", provider, "--model", "m1", "--base-url", srv.URL, "-p", "write a file")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.err)
			}
			checkOut(t, "stdout", r.out, "Sure.\nIt says hi.\n")
			if !strings.Contains(r.err, "[write_file {") || !strings.Contains(r.err, "] ok") || !strings.Contains(r.err, "[bash {") || !strings.Contains(r.err, "exit 0") {
				t.Errorf("stderr %q", r.err)
			}
			m := regexp.MustCompile(`--session (s-[0-9a-f]+)`).FindStringSubmatch(r.err)
			if m == nil {
				t.Fatalf("no session id in %q", r.err)
			}
			checkOut(t, "file", mustRun(t, "fs", "t", "cat", "/"+provider+"/a.txt"), "hi")
			tl := mustRun(t, "timeline", "t", "--limit", "5")
			for _, w := range []string{"session:model", "write_file", "bash"} {
				if !strings.Contains(tl, w) {
					t.Errorf("timeline lacks %s:\n%s", w, tl)
				}
			}
			if strings.Contains(tl, "sk-cli-secret") || strings.Contains(mustRun(t, "kv", "t", "ls"), "sk-cli-secret") {
				t.Error("key stored")
			}
			// Resume: stdin is the prompt; provider and model are the session's.
			r = run(t, "and now?\n", "chat", "t", "--session", m[1], "--base-url", srv.URL)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.err)
			}
			checkOut(t, "stdout", r.out, "Still hi.\n")
			if !strings.Contains(mustRun(t, "chat", "t", "--list"), m[1]) {
				t.Error("--list lacks the session")
			}
		})
	}
}

func TestChatErrors(t *testing.T) {
	newAgent(t)
	t.Setenv("OPENAI_API_KEY", "sk-cli-secret")
	srv := fakeModel(t, "openai", fakemodel.Turn{Fail: "http"})
	r := wantFail(t, 1, []string{"chat", "t", "--model", "m1", "--base-url", srv.URL, "-p", "x"}, "HTTP 500", "Try:")
	if strings.Contains(r.err, "sk-cli-secret") {
		t.Error("key in the error")
	}
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	wantFail(t, 1, []string{"chat", "t", "--model", "m1", "-p", "x"}, "no API key", "OPENAI_API_KEY")
	wantFail(t, 2, []string{"chat", "t", "--provider", "x", "-p", "x"}, "--provider must be")
	wantFail(t, 2, []string{"chat", "t", "--model", "m1"}, "no prompt")
}
