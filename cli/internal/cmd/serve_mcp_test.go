package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core/mcpserver"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func TestServeListsProtocols(t *testing.T) {
	out := mustRun(t, "serve")
	if !strings.Contains(out, "mcp") || !strings.Contains(out, "Model Context Protocol") {
		t.Errorf("agentfs serve:\n%s", out)
	}
	wantFail(t, 2, []string{"serve", "bogus"}, `unknown protocol "bogus"`, "agentfs serve --help")
	if out := mustRun(t, "serve", "mcp", "--help"); !strings.Contains(out, "--tools") || !strings.Contains(out, "read_file") {
		t.Errorf("agentfs serve mcp --help:\n%s", out)
	}
}

func TestServeMCPUsage(t *testing.T) {
	newAgent(t)
	wantFail(t, 2, []string{"serve", "mcp"}, "accepts 1 arg")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--tools", "read_file,bogus"}, `unknown MCP tool "bogus"`)
	wantFail(t, 2, []string{"serve", "mcp", "t", "--tools", "write_file", "--read-only"}, "read-only")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--tools", ","}, "--tools is empty")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--http", "nonsense"}, "bad address")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--profile", "lax"}, "--profile must be normal or hardened")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--env", "NOVALUE"}, "--env wants NAME=VALUE")
	wantFail(t, 1, []string{"serve", "mcp", "missing-agent"}, "no agent database")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--read", "src"}, `--read "src": not an absolute path`)
	wantFail(t, 2, []string{"serve", "mcp", "t", "--deny", "a b"}, `--deny "a b"`)
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCLI runs the CLI in the background with a context the test cancels;
// wait returns its error.
func startCLI(t *testing.T, stdin io.Reader, stdout, stderr io.Writer, args ...string) (cancel func(), wait func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var once sync.Once
	var err error
	wait = func() error {
		once.Do(func() {
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("agentfs %s did not stop", strings.Join(args, " "))
			}
		})
		return err
	}
	t.Cleanup(func() {
		cancel()
		wait()
	})
	return cancel, wait
}

// callOK calls a tool that must succeed and returns its structured output.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %+v", name, res.Content)
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out
}

func mcpCalls(t *testing.T, db string) []string {
	t.Helper()
	var calls []toolcalls.Call
	if err := json.Unmarshal([]byte(mustRun(t, "timeline", db, "--format", "json")), &calls); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.Name+":"+c.Status)
	}
	slices.Reverse(names)
	return names
}

func TestServeMCPStdio(t *testing.T) {
	newAgent(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	_, wait := startCLI(t, inR, outW, &stderr, "serve", "mcp", "t", "--profile", "hardened", "--env", "WHO=agent-env")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := callOK(t, cs, "write_file", map[string]any{"path": "/x.txt", "content": "hello"}); out["written"] != 5.0 {
		t.Errorf("write_file: %v", out)
	}
	if out := callOK(t, cs, "read_file", map[string]any{"path": "/x.txt"}); out["content"] != "hello" {
		t.Errorf("read_file: %v", out)
	}
	out := callOK(t, cs, "exec", map[string]any{"command": `cat /x.txt | tr a-z A-Z; echo "$WHO"`})
	if out["stdout"] != "HELLOagent-env\n" || out["exit_code"] != 0.0 {
		t.Errorf("exec: %v", out)
	}
	// Closing stdin ends the server cleanly.
	cs.Close()
	inW.Close()
	if err := wait(); err != nil {
		t.Fatalf("serve mcp: %v; stderr:\n%s", err, stderr.String())
	}
	outW.Close()
	if got := mustRun(t, "fs", "t", "cat", "/x.txt"); got != "hello" {
		t.Errorf("cat /x.txt = %q", got)
	}
	if got, want := mcpCalls(t, "t"), []string{"mcp:write_file:success", "mcp:read_file:success", "mcp:exec:success"}; !slices.Equal(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
}

// The exec tool runs under the policy of the flags: default deny with
// the listed paths and utilities only.
func TestServeMCPPolicy(t *testing.T) {
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/x.txt", "hello")
	mustRun(t, "sh", "t", "-c", "mkdir /out")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	_, wait := startCLI(t, inR, outW, &stderr, "serve", "mcp", "t", "--default-deny", "--read", "/x.txt", "--write", "/out", "--allow", "cat")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := callOK(t, cs, "exec", map[string]any{"command": "cat /x.txt > /out/y && cat /out/y"}); out["stdout"] != "hello" || out["exit_code"] != 0.0 {
		t.Errorf("allowed: %v", out)
	}
	for cmd, want := range map[string]string{"echo x > /x.txt": "Permission denied", "ls /": "not allowed"} {
		if out := callOK(t, cs, "exec", map[string]any{"command": cmd}); out["exit_code"] == 0.0 || !strings.Contains(fmt.Sprint(out["stderr"]), want) {
			t.Errorf("%s: %v, want %q", cmd, out, want)
		}
	}
	cs.Close()
	inW.Close()
	if err := wait(); err != nil {
		t.Fatalf("serve mcp: %v; stderr:\n%s", err, stderr.String())
	}
	outW.Close()
}

var listenLine = regexp.MustCompile(`at (http://\S+/mcp) `)

// serveHTTP starts "agentfs serve mcp ARGS --http ADDR" and returns the URL
// it serves, its stderr and a function that stops it and checks it ended
// cleanly.
func serveHTTP(t *testing.T, addr string, args ...string) (url string, stderr *syncBuffer, stop func()) {
	t.Helper()
	stderr = &syncBuffer{}
	cancel, wait := startCLI(t, strings.NewReader(""), io.Discard, stderr, append(append([]string{"serve", "mcp"}, args...), "--http", addr)...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening address on stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return url, stderr, func() {
		t.Helper()
		cancel()
		if err := wait(); err != nil {
			t.Errorf("serve mcp --http: %v; stderr:\n%s", err, stderr.String())
		}
	}
}

func TestServeMCPHTTP(t *testing.T) {
	newAgent(t)
	url, stderr, stop := serveHTTP(t, "127.0.0.1:0", "t", "--tools", "write_file,read_file, timeline")
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("warning for a loopback address:\n%s", stderr.String())
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"read_file", "timeline", "write_file"}) {
		t.Errorf("--tools: served %v", names)
	}
	callOK(t, cs, "write_file", map[string]any{"path": "/web/x.txt", "content": "over http", "create_dirs": true})
	if out := callOK(t, cs, "read_file", map[string]any{"path": "/web/x.txt"}); out["content"] != "over http" {
		t.Errorf("read_file: %v", out)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/nope"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "ENOENT: open /nope") {
		t.Errorf("read_file /nope: %+v, %v", res, err)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "agentfs:///web/x.txt"})
	if err != nil || r.Contents[0].Text != "over http" {
		t.Errorf("resource: %+v, %v", r, err)
	}
	cs.Close()
	stop()
	if got, want := mcpCalls(t, "t"), []string{"mcp:write_file:success", "mcp:read_file:success", "mcp:read_file:error"}; !slices.Equal(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
}

func TestAttack_MCP_HTTPOffLoopbackNeedsAToken(t *testing.T) {
	newAgent(t)
	t.Setenv("AGENTFS_TOKEN", "")
	wantFail(t, 2, []string{"serve", "mcp", "t", "--http", "0.0.0.0:0"}, "not a loopback address, needs a token")
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("mcp-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stderr, stop := serveHTTP(t, "0.0.0.0:0", "t", "--token-file", tok)
	defer stop()
	if s := stderr.String(); !strings.Contains(s, "warning") || !strings.Contains(s, "anyone with the token") {
		t.Errorf("no warning for 0.0.0.0:\n%s", s)
	}
	// The server prints the address it listens on (0.0.0.0 or [::]).
	url = regexp.MustCompile(`//[^/]*:`).ReplaceAllString(url, "//127.0.0.1:")
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	// Without the token the session never starts.
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		cs.Close()
		t.Fatal("an MCP client without the token connected")
	}
	withToken := &http.Client{Transport: bearer{"mcp-s3cret"}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken}, nil)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	callOK(t, cs, "write_file", map[string]any{"path": "/x", "content": "ok"})
	cs.Close()
}

// A loopback server without a token answers only loopback names: a web
// page that rebinds its DNS name to 127.0.0.1 is refused.
func TestAttack_MCP_DNSRebinding(t *testing.T) {
	newAgent(t)
	url, _, stop := serveHTTP(t, "127.0.0.1:0", "t")
	defer stop()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"evil","version":"0"}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "rebind.evil.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("initialize with Host rebind.evil.example: HTTP %d, want 403", resp.StatusCode)
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpClientDir returns tests/mcp with the MCP Inspector installed, or
// skips the test (fails with AGENTFS_REQUIRE_COMPAT=1, as CI sets).
func mcpClientDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for !(fileExists(filepath.Join(dir, "go.work")) && fileExists(filepath.Join(dir, "tests", "mcp"))) {
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.work + tests/mcp) not found above the working directory")
		}
		dir = parent
	}
	mcpDir := filepath.Join(dir, "tests", "mcp")
	var missing string
	if _, err := exec.LookPath("npx"); err != nil {
		missing = "npx (Node.js) is not on PATH"
	} else if !fileExists(filepath.Join(mcpDir, "node_modules", "@modelcontextprotocol", "inspector", "package.json")) {
		missing = "tests/mcp/node_modules is missing (run: go tool task compat-deps, or cd tests/mcp && npm install)"
	}
	if missing != "" {
		if os.Getenv("AGENTFS_REQUIRE_COMPAT") == "1" {
			t.Fatalf("MCP Inspector unavailable: %s (AGENTFS_REQUIRE_COMPAT=1)", missing)
		}
		t.Skipf("MCP Inspector unavailable: %s; set AGENTFS_REQUIRE_COMPAT=1 to fail instead", missing)
	}
	return mcpDir
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildAgentfs builds the agentfs binary into a temporary directory.
func buildAgentfs(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentfs")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentfs-go/agentfs/cli/cmd/agentfs")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// inspect runs the MCP Inspector in CLI mode against target (a command
// line or a URL) and decodes the JSON it prints.
func inspect(t *testing.T, dir string, target []string, args ...string) map[string]any {
	t.Helper()
	argv := append(append([]string{"--no-install", "mcp-inspector", "--cli"}, target...), args...)
	cmd := exec.Command("npx", argv...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("npx %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		t.Fatalf("npx %s: timed out\nstderr:\n%s", strings.Join(argv, " "), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("npx %s: output is not JSON: %v\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
	}
	return out
}

// structured returns the structured content of a successful tool call
// printed by the Inspector.
func structured(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] == true {
		t.Fatalf("tool error: %v", res)
	}
	out, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structured content: %v", res)
	}
	return out
}

// TestServeMCPInspector drives "agentfs serve mcp" with a real MCP client,
// the MCP Inspector 0.15.0 in CLI mode (tests/mcp), over stdio and over
// streamable HTTP.
func TestServeMCPInspector(t *testing.T) {
	dir := mcpClientDir(t)
	bin := buildAgentfs(t)
	newAgent(t)
	db, err := filepath.Abs(filepath.Join(".agentfs", "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	server := []string{bin, "serve", "mcp", db}

	list := inspect(t, dir, server, "--method", "tools/list")
	tools, _ := list["tools"].([]any)
	var names []string
	for _, x := range tools {
		tl := x.(map[string]any)
		names = append(names, tl["name"].(string))
		for _, k := range []string{"inputSchema", "outputSchema"} {
			if s, ok := tl[k].(map[string]any); !ok || s["type"] != "object" {
				t.Errorf("%s: %s = %v", tl["name"], k, tl[k])
			}
		}
	}
	slices.Sort(names)
	if want := mcpserver.ToolNames(); !slices.Equal(names, want) {
		t.Errorf("tools/list: %v, want %v", names, want)
	}

	w := structured(t, inspect(t, dir, server, "--method", "tools/call", "--tool-name", "write_file",
		"--tool-arg", "path=/x.txt", "--tool-arg", "content=hello"))
	if w["path"] != "/x.txt" || w["written"] != 5.0 {
		t.Errorf("write_file: %v", w)
	}
	r := structured(t, inspect(t, dir, server, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/x.txt"))
	if r["content"] != "hello" || r["size"] != 5.0 || r["encoding"] != "utf8" {
		t.Errorf("read_file: %v", r)
	}
	// Booleans go through the schema: the Inspector converts "true".
	structured(t, inspect(t, dir, server, "--method", "tools/call", "--tool-name", "write_file",
		"--tool-arg", "path=/a/b/c.txt", "--tool-arg", "content=deep", "--tool-arg", "create_dirs=true"))
	ls := structured(t, inspect(t, dir, server, "--method", "tools/call", "--tool-name", "readdir", "--tool-arg", "path=/"))
	if ents, _ := ls["entries"].([]any); len(ents) != 2 {
		t.Errorf("readdir /: %v", ls)
	}

	e := inspect(t, dir, server, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/missing.txt")
	content, _ := e["content"].([]any)
	if e["isError"] != true || len(content) != 1 || !strings.Contains(content[0].(map[string]any)["text"].(string), "ENOENT: open /missing.txt") {
		t.Errorf("read_file of a missing file: %v", e)
	}

	x := structured(t, inspect(t, dir, server, "--method", "tools/call", "--tool-name", "exec", "--tool-arg", "command=ls / | wc -l"))
	if x["exit_code"] != 0.0 || strings.TrimSpace(x["stdout"].(string)) != "2" {
		t.Errorf("exec: %v", x)
	}

	res := inspect(t, dir, server, "--method", "resources/read", "--uri", "agentfs:///x.txt")
	if c, _ := res["contents"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != "hello" {
		t.Errorf("resources/read: %v", res)
	}

	// --tools and --read-only reach the server through the Inspector.
	list = inspect(t, dir, append(server, "--tools=read_file,readdir,write_file", "--read-only=false"), "--method", "tools/list")
	if tools, _ := list["tools"].([]any); len(tools) != 3 {
		t.Errorf("tools/list with --tools: %v", list)
	}

	// Streamable HTTP, with the same client.
	url, _, stop := serveHTTP(t, "127.0.0.1:0", db)
	r = structured(t, inspect(t, dir, []string{url}, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/a/b/c.txt"))
	if r["content"] != "deep" {
		t.Errorf("read_file over HTTP: %v", r)
	}
	stop()

	want := []string{
		"mcp:write_file:success", "mcp:read_file:success", "mcp:write_file:success", "mcp:readdir:success",
		"mcp:read_file:error", "mcp:exec:success", "mcp:read_file:success",
	}
	if got := mcpCalls(t, db); !slices.Equal(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
}
