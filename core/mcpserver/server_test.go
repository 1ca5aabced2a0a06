package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mcpserver"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// env is an agent served over an in-memory transport, with a client.
type env struct {
	t     *testing.T
	agent *core.Agent
	srv   *mcpserver.Server
	cs    *mcp.ClientSession
}

func newAgent(t *testing.T) *core.Agent {
	t.Helper()
	a, err := core.Open(context.Background(), filepath.Join(t.TempDir(), "agent.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func newEnv(t *testing.T, opts mcpserver.Options) *env {
	t.Helper()
	a := newAgent(t)
	srv := mcpserver.New(a, opts)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &env{t: t, agent: a, srv: srv, cs: cs}
}

// call calls a tool and returns its result; a protocol failure fails the test.
func (e *env) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured output.
func ok[Out any](e *env, name string, args map[string]any) Out {
	e.t.Helper()
	res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v): tool error %s", name, args, text(res))
	}
	var out Out
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%s: decoding %s: %v", name, b, err)
	}
	// The text content is the same JSON, for clients without structured output.
	if got := text(res); !jsonEqual(got, string(b)) {
		e.t.Errorf("%s: text content %s differs from structured content %s", name, got, b)
	}
	return out
}

// fail calls a tool that must fail with a tool error (not a protocol
// error) whose text contains every one of want.
func (e *env) fail(name string, args map[string]any, want ...string) string {
	e.t.Helper()
	res := e.call(name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%v): succeeded with %s, want a tool error", name, args, text(res))
	}
	msg := text(res)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			e.t.Errorf("%s(%v): error %q, want it to contain %q", name, args, msg, w)
		}
	}
	return msg
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func TestToolsListed(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		for what, sch := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			m, ok := sch.(map[string]any)
			if !ok || m["type"] != "object" {
				t.Errorf("%s: %s schema %v, want an object schema", tool.Name, what, sch)
			}
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
	}
	slices.Sort(names)
	if want := mcpserver.ToolNames(); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	for _, w := range []string{"read_file", "write_file", "readdir", "mkdir", "remove", "rename", "stat", "access",
		"kv_get", "kv_set", "kv_delete", "kv_list", "timeline"} {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s missing", w)
		}
	}
	// Defaults and enums reach the client.
	for _, tool := range res.Tools {
		if tool.Name != "read_file" {
			continue
		}
		enc := tool.InputSchema.(map[string]any)["properties"].(map[string]any)["encoding"].(map[string]any)
		if enc["default"] != "utf8" || len(enc["enum"].([]any)) != 2 {
			t.Errorf("read_file encoding schema %v", enc)
		}
	}
}

func TestFileTools(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, mcpserver.Options{})

	w := ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/a/b/hello.txt", "content": "hello", "create_dirs": true})
	if w.Path != "/a/b/hello.txt" || w.Written != 5 || w.Size != 5 {
		t.Errorf("write_file: %+v", w)
	}
	w = ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "a/b/hello.txt", "content": " world", "append": true})
	if w.Written != 6 || w.Size != 11 {
		t.Errorf("write_file append: %+v", w)
	}
	r := ok[mcpserver.ReadFileOutput](e, "read_file", map[string]any{"path": "/a/b/hello.txt"})
	if r.Content != "hello world" || r.Size != 11 || r.Encoding != "utf8" {
		t.Errorf("read_file: %+v", r)
	}
	// The engine sees what MCP wrote, and the other way round.
	if got, err := e.agent.FS.ReadFile(ctx, "/a/b/hello.txt"); err != nil || string(got) != "hello world" {
		t.Errorf("engine reads %q, %v", got, err)
	}

	bin := []byte{0, 1, 2, 0xff, 0xfe, 'x'}
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/bin.dat", "content": base64.StdEncoding.EncodeToString(bin), "encoding": "base64"})
	r = ok[mcpserver.ReadFileOutput](e, "read_file", map[string]any{"path": "/bin.dat", "encoding": "base64"})
	if got, _ := base64.StdEncoding.DecodeString(r.Content); string(got) != string(bin) || r.Size != 6 {
		t.Errorf("base64 round trip: %+v", r)
	}
	e.fail("read_file", map[string]any{"path": "/bin.dat"}, "EILSEQ", "/bin.dat", "base64")

	ok[mcpserver.PathOutput](e, "mkdir", map[string]any{"path": "/d"})
	ok[mcpserver.PathOutput](e, "mkdir", map[string]any{"path": "/d/e/f", "recursive": true})
	ok[mcpserver.PathOutput](e, "mkdir", map[string]any{"path": "/d/e/f", "recursive": true}) // mkdir -p of an existing dir

	if err := e.agent.FS.Symlink(ctx, "/a/b/hello.txt", "/link"); err != nil {
		t.Fatal(err)
	}
	ls := ok[mcpserver.ReaddirOutput](e, "readdir", map[string]any{})
	var got []string
	for _, ent := range ls.Entries {
		got = append(got, ent.Name+":"+ent.Type)
	}
	if want := []string{"a:dir", "bin.dat:file", "d:dir", "link:symlink"}; !slices.Equal(got, want) || ls.Path != "/" {
		t.Errorf("readdir /: %v, want %v", got, want)
	}
	ls = ok[mcpserver.ReaddirOutput](e, "readdir", map[string]any{"path": "/a/b"})
	if len(ls.Entries) != 1 || ls.Entries[0].Size != 11 || ls.Entries[0].Mode != "0644" || ls.Entries[0].Mtime == "" {
		t.Errorf("readdir /a/b: %+v", ls)
	}
	empty := ok[mcpserver.ReaddirOutput](e, "readdir", map[string]any{"path": "/d/e/f"})
	if empty.Entries == nil || len(empty.Entries) != 0 {
		t.Errorf("readdir of an empty directory: %+v", empty)
	}

	st := ok[mcpserver.StatOutput](e, "stat", map[string]any{"path": "/link"})
	if st.Type != "file" || st.Size != 11 || st.Target != "" || st.Nlink != 1 {
		t.Errorf("stat following: %+v", st)
	}
	st = ok[mcpserver.StatOutput](e, "stat", map[string]any{"path": "/link", "follow_symlinks": false})
	if st.Type != "symlink" || st.Target != "/a/b/hello.txt" {
		t.Errorf("stat not following: %+v", st)
	}
	st = ok[mcpserver.StatOutput](e, "stat", map[string]any{"path": "/d"})
	if st.Type != "dir" || st.Mode != "0755" || st.Mtime == "" || st.Ino == 0 {
		t.Errorf("stat dir: %+v", st)
	}

	if a := ok[mcpserver.AccessOutput](e, "access", map[string]any{"path": "/link"}); !a.Exists {
		t.Errorf("access /link: %+v", a)
	}
	if a := ok[mcpserver.AccessOutput](e, "access", map[string]any{"path": "/nope"}); a.Exists || a.Path != "/nope" {
		t.Errorf("access /nope: %+v", a)
	}

	rn := ok[mcpserver.RenameOutput](e, "rename", map[string]any{"from": "/a/b/hello.txt", "to": "/d/hello.txt"})
	if rn.From != "/a/b/hello.txt" || rn.To != "/d/hello.txt" {
		t.Errorf("rename: %+v", rn)
	}
	if ok, _ := e.agent.FS.Exists(ctx, "/d/hello.txt"); !ok {
		t.Error("renamed file missing")
	}

	ok[mcpserver.PathOutput](e, "remove", map[string]any{"path": "/link"})
	ok[mcpserver.PathOutput](e, "remove", map[string]any{"path": "/a/b"}) // empty directory
	ok[mcpserver.PathOutput](e, "remove", map[string]any{"path": "/d", "recursive": true})
	names, _ := e.agent.FS.Readdir(ctx, "/")
	if !slices.Equal(names, []string{"a", "bin.dat"}) {
		t.Errorf("after removals: %v", names)
	}
}

func TestEngineErrorsAreToolErrors(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/f.txt", "content": "x"})
	ok[mcpserver.PathOutput](e, "mkdir", map[string]any{"path": "/dir"})
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/dir/in.txt", "content": "x"})

	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"read_file", map[string]any{"path": "/missing.txt"}, []string{"ENOENT", "/missing.txt"}},
		{"read_file", map[string]any{"path": "/dir"}, []string{"EISDIR", "/dir"}},
		{"write_file", map[string]any{"path": "/no/such/dir/x.txt", "content": "x"}, []string{"ENOENT", "/no/such/dir/x.txt"}},
		{"write_file", map[string]any{"path": "/f.txt/x", "content": "x"}, []string{"ENOTDIR", "/f.txt/x"}},
		{"write_file", map[string]any{"path": "/x.bin", "content": "%%%", "encoding": "base64"}, []string{"EINVAL", "/x.bin", "base64"}},
		{"readdir", map[string]any{"path": "/f.txt"}, []string{"ENOTDIR", "/f.txt"}},
		{"readdir", map[string]any{"path": "/missing"}, []string{"ENOENT", "/missing"}},
		{"mkdir", map[string]any{"path": "/dir"}, []string{"EEXIST", "/dir"}},
		{"mkdir", map[string]any{"path": "/a/b"}, []string{"ENOENT", "/a/b"}},
		{"remove", map[string]any{"path": "/dir"}, []string{"ENOTEMPTY", "/dir"}},
		{"remove", map[string]any{"path": "/missing"}, []string{"ENOENT", "/missing"}},
		{"remove", map[string]any{"path": "/missing", "recursive": true}, []string{"ENOENT", "/missing"}},
		{"rename", map[string]any{"from": "/missing", "to": "/y"}, []string{"ENOENT", "/missing"}},
		{"rename", map[string]any{"from": "/f.txt", "to": "/dir"}, []string{"EISDIR"}},
		{"stat", map[string]any{"path": "/missing"}, []string{"ENOENT", "/missing"}},
		{"access", map[string]any{"path": "/f.txt/x"}, []string{"ENOTDIR", "/f.txt/x"}},
		{"read_file", map[string]any{"path": ""}, []string{"ENOENT", "empty path"}},
		{"kv_set", map[string]any{"key": "", "value": 1}, []string{"empty key"}},
		{"timeline", map[string]any{"limit": -1}, []string{"EINVAL"}},
		// Arguments that do not match the schema are tool errors too.
		{"read_file", map[string]any{}, []string{"path"}},
		{"read_file", map[string]any{"path": "/f.txt", "encoding": "latin1"}, []string{"encoding"}},
		{"write_file", map[string]any{"path": "/f.txt", "content": "x", "bogus": 1}, []string{"bogus"}},
		{"timeline", map[string]any{"status": "done"}, []string{"status"}},
	}
	for _, c := range cases {
		e.fail(c.tool, c.args, c.want...)
	}
	// An unknown tool is a protocol error, as the specification says.
	if _, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

func TestKVTools(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	ctx := context.Background()
	values := map[string]any{
		"cfg/a":   map[string]any{"model": "x", "n": 3, "tags": []any{"a", "b"}},
		"cfg/b":   []any{1, 2.5, nil, true},
		"cfg/c":   "text",
		"other":   nil,
		"big":     json.Number("12345678901234567890"),
		"cfg/big": json.RawMessage(`{"id":9007199254740993}`),
	}
	for k, v := range values {
		if out := ok[mcpserver.KVKeyOutput](e, "kv_set", map[string]any{"key": k, "value": v}); out.Key != k {
			t.Errorf("kv_set %s: %+v", k, out)
		}
	}
	// Values are stored exactly as sent, large integers included.
	if raw, err := e.agent.KV.GetJSON(ctx, "big"); err != nil || string(raw) != "12345678901234567890" {
		t.Errorf("stored big = %s, %v", raw, err)
	}
	if raw, err := e.agent.KV.GetJSON(ctx, "cfg/big"); err != nil || string(raw) != `{"id":9007199254740993}` {
		t.Errorf("stored cfg/big = %s, %v", raw, err)
	}
	g := ok[mcpserver.KVGetOutput](e, "kv_get", map[string]any{"key": "cfg/a"})
	if !g.Found || !jsonEqual(mustJSON(t, g.Value), `{"model":"x","n":3,"tags":["a","b"]}`) {
		t.Errorf("kv_get cfg/a: %+v", g)
	}
	g = ok[mcpserver.KVGetOutput](e, "kv_get", map[string]any{"key": "other"})
	if !g.Found || g.Value != nil {
		t.Errorf("kv_get of a null value: %+v", g)
	}
	g = ok[mcpserver.KVGetOutput](e, "kv_get", map[string]any{"key": "missing"})
	if g.Found || g.Value != nil || g.Key != "missing" {
		t.Errorf("kv_get missing: %+v", g)
	}
	// The engine's own values read back through MCP.
	if err := e.agent.KV.Set(ctx, "engine", map[string]int{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if g := ok[mcpserver.KVGetOutput](e, "kv_get", map[string]any{"key": "engine"}); !jsonEqual(mustJSON(t, g.Value), `{"x":1}`) {
		t.Errorf("kv_get engine: %+v", g)
	}

	l := ok[mcpserver.KVListOutput](e, "kv_list", map[string]any{"prefix": "cfg/"})
	var keys []string
	for _, en := range l.Entries {
		keys = append(keys, en.Key)
		if en.CreatedAt == 0 || en.UpdatedAt == 0 {
			t.Errorf("kv_list entry without times: %+v", en)
		}
	}
	if !slices.Equal(keys, []string{"cfg/a", "cfg/b", "cfg/big", "cfg/c"}) || l.More {
		t.Errorf("kv_list cfg/: %v more=%v", keys, l.More)
	}
	l = ok[mcpserver.KVListOutput](e, "kv_list", map[string]any{"limit": 2})
	if len(l.Entries) != 2 || !l.More || l.Entries[0].Key != "big" {
		t.Errorf("kv_list limit 2: %+v", l)
	}
	l = ok[mcpserver.KVListOutput](e, "kv_list", map[string]any{"limit": 0})
	if len(l.Entries) != 7 || l.More {
		t.Errorf("kv_list all: %d entries, more=%v", len(l.Entries), l.More)
	}

	d := ok[mcpserver.KVDeleteOutput](e, "kv_delete", map[string]any{"key": "cfg/c"})
	if !d.Deleted {
		t.Errorf("kv_delete: %+v", d)
	}
	d = ok[mcpserver.KVDeleteOutput](e, "kv_delete", map[string]any{"key": "cfg/c"})
	if d.Deleted {
		t.Errorf("kv_delete twice: %+v", d)
	}
	if _, err := e.agent.KV.GetJSON(ctx, "cfg/c"); err == nil {
		t.Error("deleted key still there")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallsAreLogged(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	ctx := context.Background()
	if _, err := e.agent.Tools.Record(ctx, "search", timeNow(), timeNow(), json.RawMessage(`{"q":"x"}`), json.RawMessage(`{"hits":1}`), nil); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("é", 10_000)
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/big.txt", "content": big})
	ok[mcpserver.ReadFileOutput](e, "read_file", map[string]any{"path": "/big.txt"})
	e.fail("read_file", map[string]any{"path": "/missing"}, "ENOENT")
	ok[mcpserver.KVKeyOutput](e, "kv_set", map[string]any{"key": "k", "value": map[string]any{"a": 1}})

	calls, err := e.agent.Tools.List(ctx, toolcalls.Filter{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.Name+":"+c.Status)
	}
	want := []string{"search:success", "mcp:write_file:success", "mcp:read_file:success", "mcp:read_file:error", "mcp:kv_set:success"}
	if !slices.Equal(names, want) {
		t.Fatalf("log %v, want %v", names, want)
	}
	// Parameters are kept, large strings shortened; results are summaries.
	w := calls[1]
	if len(w.Parameters) > 1024 || !strings.Contains(string(w.Parameters), `"path":"/big.txt"`) || !strings.Contains(string(w.Parameters), "(20000 bytes)") {
		t.Errorf("write_file parameters logged as %s", w.Parameters)
	}
	if !jsonEqual(string(w.Result), `{"path":"/big.txt","written":20000,"size":20000}`) {
		t.Errorf("write_file result logged as %s", w.Result)
	}
	if r := calls[2]; !jsonEqual(string(r.Result), `{"path":"/big.txt","size":20000,"encoding":"utf8"}`) {
		t.Errorf("read_file result logged as %s", r.Result)
	}
	if f := calls[3]; f.Error == nil || !strings.Contains(*f.Error, "ENOENT") || !strings.Contains(*f.Error, "/missing") || f.Result != nil {
		t.Errorf("failed call logged as %+v", f)
	}
	if k := calls[4]; !jsonEqual(string(k.Parameters), `{"key":"k","value":{"a":1}}`) {
		t.Errorf("kv_set parameters logged as %s", k.Parameters)
	}

	// The timeline tool shows the same log, newest first, with filters.
	tl := ok[mcpserver.TimelineOutput](e, "timeline", map[string]any{})
	if len(tl.Calls) != 5 || tl.Calls[0].Name != "mcp:kv_set" || tl.Calls[4].Name != "search" {
		t.Errorf("timeline: %+v", tl)
	}
	tl = ok[mcpserver.TimelineOutput](e, "timeline", map[string]any{"tool": "mcp:read_file", "status": "error"})
	if len(tl.Calls) != 1 || tl.Calls[0].Error == nil || tl.Calls[0].DurationMs == nil {
		t.Errorf("timeline filtered: %+v", tl)
	}
	tl = ok[mcpserver.TimelineOutput](e, "timeline", map[string]any{"limit": 1})
	if len(tl.Calls) != 1 || tl.Calls[0].Name != "mcp:timeline" {
		t.Errorf("timeline limit 1: %+v", tl)
	}
	if !jsonEqual(mustJSON(t, tl.Calls[0].Result), `{"calls":1}`) {
		t.Errorf("timeline logged result %v", tl.Calls[0].Result)
	}
}

func TestNoToolLog(t *testing.T) {
	e := newEnv(t, mcpserver.Options{NoToolLog: true})
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/x", "content": "x"})
	if calls, _ := e.agent.Tools.List(context.Background(), toolcalls.Filter{}); len(calls) != 0 {
		t.Errorf("calls logged with NoToolLog: %+v", calls)
	}
}

func TestAllowListAndReadOnly(t *testing.T) {
	listed := func(e *env) []string {
		res, err := e.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	e := newEnv(t, mcpserver.Options{Tools: []string{"read_file", "readdir"}})
	if got := listed(e); !slices.Equal(got, []string{"read_file", "readdir"}) {
		t.Errorf("allow-list: %v", got)
	}
	if _, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/x", "content": "x"}}); err == nil {
		t.Error("a tool outside the allow-list was callable")
	}
	if !slices.Equal(e.srv.Tools(), []string{"read_file", "readdir"}) {
		t.Errorf("Server.Tools = %v", e.srv.Tools())
	}

	e = newEnv(t, mcpserver.Options{ReadOnly: true})
	if got := listed(e); !slices.Equal(got, mcpserver.ReadOnlyToolNames()) {
		t.Errorf("read-only: %v, want %v", got, mcpserver.ReadOnlyToolNames())
	}
	for _, n := range listed(e) {
		if slices.Contains([]string{"write_file", "mkdir", "remove", "rename", "kv_set", "kv_delete", "exec"}, n) {
			t.Errorf("read-only server lists %s", n)
		}
	}

	if err := (mcpserver.Options{Tools: []string{"read_file", "bogus"}}).Check(); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("Check of an unknown tool: %v", err)
	}
	if err := (mcpserver.Options{Tools: []string{"write_file"}, ReadOnly: true}).Check(); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Check of a writer in read-only mode: %v", err)
	}
	if err := (mcpserver.Options{Tools: []string{"kv_get", "timeline"}, ReadOnly: true}).Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestResources(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	ctx := context.Background()
	fsys := e.agent.FS
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fsys.WriteFile(ctx, "/notes/todo.md", []byte("# todo\n"), vfs.WriteOptions{CreateParents: true}))
	must(fsys.WriteFile(ctx, "/notes/a b.txt", []byte("spaced"), vfs.WriteOptions{}))
	must(fsys.WriteFile(ctx, "/img.png", []byte{0x89, 'P', 'N', 'G', 0, 0xff}, vfs.WriteOptions{}))
	must(fsys.WriteFile(ctx, "/data.json", []byte(`{"a":1}`), vfs.WriteOptions{}))

	tmpl, err := e.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "agentfs:///{+path}" {
		t.Errorf("templates: %+v", tmpl.ResourceTemplates)
	}
	list, err := e.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != "agentfs:///" {
		t.Errorf("resources: %+v", list.Resources)
	}

	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, res.Contents)
		}
		return res.Contents[0]
	}
	if c := read("agentfs:///notes/todo.md"); c.Text != "# todo\n" || c.Blob != nil || !strings.HasPrefix(c.MIMEType, "text/") {
		t.Errorf("todo.md: %+v", c)
	}
	if c := read(mcpserver.URIForPath("/notes/a b.txt")); c.Text != "spaced" {
		t.Errorf("a b.txt: %+v", c)
	}
	if got := mcpserver.URIForPath("/notes/a b.txt"); got != "agentfs:///notes/a%20b.txt" {
		t.Errorf("URIForPath = %s", got)
	}
	if c := read("agentfs:///img.png"); string(c.Blob) != "\x89PNG\x00\xff" || c.Text != "" || c.MIMEType != "image/png" {
		t.Errorf("img.png: %+v", c)
	}
	if c := read("agentfs:///data.json"); c.Text != `{"a":1}` {
		t.Errorf("data.json: %+v", c)
	}
	if c := read("agentfs:///"); c.Text != "data.json\nimg.png\nnotes/\n" {
		t.Errorf("root listing: %q", c.Text)
	}
	if c := read("agentfs:///notes"); c.Text != "a b.txt\ntodo.md\n" {
		t.Errorf("notes listing: %q", c.Text)
	}

	_, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "agentfs:///missing.txt"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != codeResourceNotFound {
		t.Errorf("missing resource: %v", err)
	}
	_, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "agentfs:///data.json/x"})
	if err == nil || !strings.Contains(err.Error(), "ENOTDIR") || !strings.Contains(err.Error(), "/data.json/x") {
		t.Errorf("resource below a file: %v", err)
	}
}

func TestHTTP(t *testing.T) {
	a := newAgent(t)
	srv := mcpserver.New(a, mcpserver.Options{})
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	e := &env{t: t, agent: a, srv: srv, cs: cs}
	ok[mcpserver.WriteFileOutput](e, "write_file", map[string]any{"path": "/h.txt", "content": "over http"})
	if r := ok[mcpserver.ReadFileOutput](e, "read_file", map[string]any{"path": "/h.txt"}); r.Content != "over http" {
		t.Errorf("read over HTTP: %+v", r)
	}
	e.fail("read_file", map[string]any{"path": "/nope"}, "ENOENT", "/nope")
}

func timeNow() time.Time { return time.Now() }

func TestExec(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, mcpserver.Options{Sandbox: sandbox.Options{Limits: sandbox.Limits{MaxSteps: 10_000, WallTime: 10 * time.Second}}})
	if err := e.agent.FS.WriteFile(ctx, "/src/a.txt", []byte("one\ntwo\nthree\n"), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	out := ok[mcpserver.ExecOutput](e, "exec", map[string]any{"command": "grep -n t a.txt | wc -l; echo made > new.txt", "cwd": "/src"})
	if out.ExitCode != 0 || strings.TrimSpace(out.Stdout) != "2" || out.Cwd != "/src" {
		t.Errorf("exec: %+v", out)
	}
	if got, err := e.agent.FS.ReadFile(ctx, "/src/new.txt"); err != nil || string(got) != "made\n" {
		t.Errorf("file written by exec: %q, %v", got, err)
	}
	out = ok[mcpserver.ExecOutput](e, "exec", map[string]any{"command": `tr a-z A-Z; echo "$GREETING"`, "stdin": "abc\n", "env": map[string]any{"GREETING": "hi"}})
	if out.Stdout != "ABC\nhi\n" {
		t.Errorf("exec with stdin and env: %+v", out)
	}
	// A failing script is a result, not a tool error; no host program runs.
	out = ok[mcpserver.ExecOutput](e, "exec", map[string]any{"command": "no-such-program --x"})
	if out.ExitCode != 127 || !strings.Contains(out.Stderr, "not found") {
		t.Errorf("unknown command: %+v", out)
	}
	out = ok[mcpserver.ExecOutput](e, "exec", map[string]any{"command": "while true; do x=1; done"})
	if out.ExitCode != 124 || out.Limit == "" {
		t.Errorf("endless loop: %+v", out)
	}
	e.fail("exec", map[string]any{"command": "ls", "cwd": "/missing"}, "ENOENT", "/missing")
	e.fail("exec", map[string]any{"command": "  "}, "EINVAL")

	calls, err := e.agent.Tools.List(context.Background(), toolcalls.Filter{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.Name+":"+c.Status)
	}
	// One record per call (the sandbox's own audit is off), failures as errors.
	want := []string{"mcp:exec:success", "mcp:exec:success", "mcp:exec:error", "mcp:exec:error", "mcp:exec:error", "mcp:exec:error"}
	if !slices.Equal(names, want) {
		t.Errorf("log %v, want %v", names, want)
	}
	if c := calls[2]; c.Error == nil || *c.Error != "exit status 127" || !jsonEqual(string(c.Parameters), `{"command":"no-such-program --x","cwd":"/"}`) {
		t.Errorf("exec record: %+v (%s)", c, c.Parameters)
	}
}

// codeResourceNotFound is MCP's JSON-RPC code for a resource that does not
// exist: invalid params since SEP-2164 (the SDK's own constant for it is
// deprecated in favour of jsonrpc.CodeInvalidParams).
const codeResourceNotFound = jsonrpc.CodeInvalidParams
