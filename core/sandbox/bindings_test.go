package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

type recorder struct {
	mu   sync.Mutex
	args []string
}

func (r *recorder) add(a json.RawMessage) {
	r.mu.Lock()
	r.args = append(r.args, string(a))
	r.mu.Unlock()
}

func testBindings(rec *recorder) []sandbox.Binding {
	return []sandbox.Binding{
		{
			Name:        "search-docs",
			Description: "Search the documentation.",
			Schema: json.RawMessage(`{"type":"object","properties":{
				"query":{"type":"string","description":"what to look for"},
				"max_results":{"type":"integer","description":"how many","default":10},
				"minScore":{"type":"number"},
				"exact":{"type":"boolean"},
				"tags":{"type":"array","items":{"type":"string"}},
				"ids":{"type":"array","items":{"type":"integer"}},
				"filter":{"type":"object"},
				"mode":{"type":"string","enum":["fast","full"]}
			},"required":["query"]}`),
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				rec.add(args)
				var in struct {
					Query string `json:"query"`
				}
				json.Unmarshal(args, &in)
				if in.Query == "fail" {
					return nil, errors.New("backend unavailable")
				}
				return map[string]any{"hits": []string{in.Query + "-1", in.Query + "-2"}}, nil
			},
		},
		{
			Name: "now",
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return json.RawMessage(`{"t": 42}`), nil
			},
		},
	}
}

func TestBindings_Flags(t *testing.T) {
	rec := &recorder{}
	_, sb := newSandbox(t, sandbox.Options{Bindings: testBindings(rec)})
	res := run(t, sb, `search-docs --query 'go sandbox' --max-results 3 --min-score=0.5 --exact --tags a --tags b --ids 1 --ids 2 --filter '{"lang":"go"}' --mode fast`)
	if res.ExitCode != 0 || res.Stdout != `{"hits":["go sandbox-1","go sandbox-2"]}`+"\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(rec.args[0]), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"exact":true,"filter":{"lang":"go"},"ids":[1,2],"max_results":3,"minScore":0.5,"mode":"fast","query":"go sandbox","tags":["a","b"]}`
	if g, _ := json.Marshal(got); string(g) != want {
		t.Fatalf("args %s\nwant %s", g, want)
	}
	// Pipes, jq, --no-FLAG and --json (also from stdin).
	res = run(t, sb, `search-docs --query x --no-exact | jq -r '.hits[1]'; search-docs --json '{"query":"y","max_results":1}'; echo '{"query":"z"}' | search-docs --json -; now`)
	if res.ExitCode != 0 || res.Stdout != "x-2\n"+`{"hits":["y-1","y-2"]}`+"\n"+`{"hits":["z-1","z-2"]}`+"\n"+`{"t": 42}`+"\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if rec.args[1] != `{"exact":false,"query":"x"}` || rec.args[2] != `{"query":"y","max_results":1}` {
		t.Fatalf("args %q", rec.args)
	}
	// Found by which, command -v, xargs.
	res = run(t, sb, `command -v search-docs; echo q1 | xargs search-docs --query`)
	if res.ExitCode != 0 || res.Stdout != "/usr/bin/search-docs\n"+`{"hits":["q1-1","q1-2"]}`+"\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func TestBindings_HelpAndErrors(t *testing.T) {
	rec := &recorder{}
	_, sb := newSandbox(t, sandbox.Options{Bindings: testBindings(rec)})
	res := run(t, sb, `search-docs --help`)
	for _, w := range []string{"search-docs - Search the documentation.", "--query String", "(required)", "--max-results Integer", "how many (default 10)", "--tags String... (repeat the flag)", "--min-score Number", "--exact", `one of ["fast","full"]`} {
		if !strings.Contains(res.Stdout, w) {
			t.Errorf("help lacks %q:\n%s", w, res.Stdout)
		}
	}
	if res.ExitCode != 0 {
		t.Fatal(res.ExitCode)
	}
	cases := []struct {
		script, stderr string
		code           int
	}{
		{`search-docs --query fail`, "search-docs: backend unavailable\n", 1},
		{`search-docs --max-results 3`, "search-docs: missing required argument --query\n", 2},
		{`search-docs --query x --max-results three`, `search-docs: argument --max-results: "three" is not an integer`, 2},
		{`search-docs --query x --bogus 1`, "search-docs: unknown argument --bogus\n", 2},
		{`search-docs --query x --filter '[1]'`, "search-docs: argument --filter: not a JSON object", 2},
		{`search-docs --query x --mode slow`, `search-docs: argument --mode: "slow" is not one of the allowed values`, 2},
		{`search-docs --query`, "search-docs: argument --query needs a value", 2},
		{`search-docs positional`, `search-docs: unexpected argument "positional"`, 2},
		{`search-docs --json '{"query":1'`, "search-docs: --json: invalid JSON object", 2},
		{`search-docs --json '{"nope":1}'`, "search-docs: missing required argument --query", 2},
		{`search-docs --query x --query y`, "search-docs: argument --query given twice", 2},
	}
	for _, c := range cases {
		res := run(t, sb, c.script)
		if res.ExitCode != c.code || !strings.HasPrefix(res.Stderr, c.stderr) || res.Stdout != "" {
			t.Errorf("%s: got %d %q %q", c.script, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	if res := run(t, sb, `set -e; search-docs --query fail; echo not reached`); res.ExitCode != 1 || res.Stdout != "" {
		t.Errorf("set -e: %d %q", res.ExitCode, res.Stdout)
	}
}

func TestBindings_PolicyAndLimits(t *testing.T) {
	rec := &recorder{}
	_, sb := newSandbox(t, sandbox.Options{Bindings: testBindings(rec), Policy: sandbox.Policy{Deny: []string{"search-docs"}}})
	res := run(t, sb, `search-docs --query x`)
	if res.ExitCode != 126 || !strings.Contains(res.Stderr, "not allowed") {
		t.Fatalf("deny: got %d %q", res.ExitCode, res.Stderr)
	}
	_, sb = newSandbox(t, sandbox.Options{Bindings: testBindings(rec), Policy: sandbox.Policy{Allow: []string{"now"}}})
	res = run(t, sb, `now; search-docs --query x`)
	if res.ExitCode != 126 || res.Stdout != `{"t": 42}`+"\n" {
		t.Fatalf("allow: got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if len(rec.args) != 0 {
		t.Fatalf("a refused binding ran: %q", rec.args)
	}
	lim := sandbox.Normal
	lim.MaxCommands = 5
	_, sb = newSandbox(t, sandbox.Options{Bindings: testBindings(rec), Limits: lim})
	res = run(t, sb, `while true; do now; done`)
	if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || strings.Count(res.Stdout, "42") > 5 {
		t.Fatalf("limit: got %d %v %q", res.ExitCode, res.Limit, res.Stdout)
	}
}

func TestBindings_Validation(t *testing.T) {
	a := openAgent(t)
	f := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	for _, b := range [][]sandbox.Binding{
		{{Name: "echo", Func: f}},
		{{Name: "bad name", Func: f}},
		{{Name: "x"}},
		{{Name: "x", Func: f, Schema: json.RawMessage(`{"type":"string"}`)}},
		{{Name: "x", Func: f, Schema: json.RawMessage(`{`)}},
		{{Name: "x", Func: f}, {Name: "x", Func: f}},
	} {
		if _, err := sandbox.New(a, sandbox.Options{Bindings: b}); err == nil {
			t.Errorf("%+v accepted", b[0].Name)
		}
	}
}
