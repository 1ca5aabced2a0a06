// Package mcpserver exposes an agent database over the Model Context
// Protocol (github.com/modelcontextprotocol/go-sdk): its filesystem, key-value
// store and tool-call log as MCP tools, and its files as MCP resources
// (agentfs:///path).
//
// It is a thin adapter: every tool is one or two calls into the engine
// (core/vfs, core/kv, core/toolcalls) and keeps the engine's semantics and
// errors. Engine errors come back as tool errors (isError) whose text starts
// with the POSIX code name and holds the path, for example
// "ENOENT: open /missing.txt: no such file or directory"; they are never
// protocol failures. Every call made through MCP is also recorded in the
// agent's tool-call log under the name "mcp:<tool>", so `agentfs timeline`
// shows what a client did.
//
//	a, _ := core.Open(ctx, "agent.db", core.Options{})
//	s := mcpserver.New(a, mcpserver.Options{})
//	err := s.Run(ctx, &mcp.StdioTransport{})   // or http.Handle("/mcp", s.HTTPHandler())
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/httpguard"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// LogPrefix is put before the tool name in the agent's tool-call log.
const LogPrefix = "mcp:"

// Options configure a Server.
type Options struct {
	// Tools is an allow-list of tool names; empty means every tool. Names
	// that are not tools are ignored by New: check them first with Check.
	Tools []string
	// ReadOnly registers only the tools that do not change the agent
	// (read_file, readdir, stat, access, kv_get, kv_list, timeline; not
	// exec).
	ReadOnly bool
	// Name and Version identify the server to clients (default "agentfs"
	// and "dev").
	Name, Version string
	// NoToolLog disables recording the calls in the agent's tool-call log.
	NoToolLog bool
	// Logger receives the server's diagnostics, such as a failure to
	// record a call in the tool-call log. Nil discards them.
	Logger *slog.Logger
	// Sandbox configures the sandbox of the exec tool: its policy (paths
	// readable and writable, commands, environment) and limits (zero
	// Limits means sandbox.Normal). Its audit is replaced by the mcp:exec
	// record.
	Sandbox sandbox.Options
	// MaxHTTPBodyBytes limits the size of one HTTP request (a write_file
	// carries the whole file); default 64 MiB.
	MaxHTTPBodyBytes int64
	// HTTPToken, when set, is required as "Authorization: Bearer TOKEN"
	// on every HTTP request. Without one, only requests to a loopback
	// name are served (see httpguard).
	HTTPToken string
}

// Check reports unknown tool names in Tools, and tools that write when
// ReadOnly is set.
func (o Options) Check() error {
	var unknown, writers []string
	for _, n := range o.Tools {
		t, ok := toolByName(n)
		switch {
		case !ok:
			unknown = append(unknown, n)
		case o.ReadOnly && t.writes:
			writers = append(writers, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown MCP tool %s (tools: %s)", strings.Join(quoteAll(unknown), ", "), strings.Join(ToolNames(), ", "))
	}
	if len(writers) > 0 {
		return fmt.Errorf("tool %s changes the agent and is not served in read-only mode", strings.Join(quoteAll(writers), ", "))
	}
	return nil
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Server is an MCP server over one agent.
type Server struct {
	agent *core.Agent
	opts  Options
	mcp   *mcp.Server
	log   *slog.Logger
	names []string // registered tools, in registration order

	sandbox *sandbox.Sandbox // of the exec tool
}

// New returns a server exposing agent. The agent stays open and owned by
// the caller; close it after the server has stopped.
func New(agent *core.Agent, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "agentfs"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxHTTPBodyBytes == 0 {
		opts.MaxHTTPBodyBytes = 64 << 20
	}
	s := &Server{agent: agent, opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "AgentFS", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		// No logging capability: the server sends no log messages.
		Capabilities: &mcp.ServerCapabilities{},
	})
	if t, ok := toolByName("exec"); ok && s.enabled(t) {
		s.sandbox = s.newSandbox()
	}
	for _, t := range allTools {
		if s.enabled(t) && (t.available == nil || t.available(s)) {
			t.register(s)
			s.names = append(s.names, t.name)
		}
	}
	s.addResources()
	return s
}

const instructions = `This server is the private filesystem, key-value store and tool-call log of one AI agent, kept in one SQLite database (AgentFS). Paths are absolute paths inside the agent filesystem ("/notes/todo.md"); a relative path is taken from "/". Errors name the POSIX code (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, ...) and the path. Files are also readable as resources agentfs:///path.`

func (s *Server) enabled(t tool) bool {
	if s.opts.ReadOnly && t.writes {
		return false
	}
	return len(s.opts.Tools) == 0 || slices.Contains(s.opts.Tools, t.name)
}

// MCP returns the underlying SDK server, for other transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Tools lists the names of the tools this server serves.
func (s *Server) Tools() []string { return slices.Clone(s.names) }

// Run serves one session over transport t (for example
// &mcp.StdioTransport{}) until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.mcp.Run(ctx, t) }

// HTTPHandler serves the streamable HTTP transport of MCP behind the
// checks of every HTTP door (httpguard): the token when one is set;
// without one, only requests to a loopback name (DNS rebinding); and
// never cross-origin requests from browsers.
func (s *Server) HTTPHandler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.opts.Logger,
		MaxRequestBodyBytes: s.opts.MaxHTTPBodyBytes,
	})
	return httpguard.Wrap(h, httpguard.Options{Token: s.opts.HTTPToken})
}

// tool is one entry of the tool table.
type tool struct {
	name      string
	writes    bool
	register  func(s *Server)
	available func(s *Server) bool // nil: always
}

// allTools is filled by the init functions of the tool files.
var allTools []tool

func toolByName(name string) (tool, bool) {
	for _, t := range allTools {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// ToolNames lists every tool this package can serve, sorted.
func ToolNames() []string {
	var out []string
	for _, t := range allTools {
		out = append(out, t.name)
	}
	sort.Strings(out)
	return out
}

// ReadOnlyToolNames lists the tools that do not change the agent, sorted.
func ReadOnlyToolNames() []string {
	var out []string
	for _, t := range allTools {
		if !t.writes {
			out = append(out, t.name)
		}
	}
	sort.Strings(out)
	return out
}

// spec describes a tool for addTool.
type spec[In, Out any] struct {
	name, title, desc string
	writes            bool
	destructive       bool
	// defaults and enums of input properties, added to the inferred schema.
	defaults map[string]any
	enums    map[string][]any
	// run does the work.
	run func(ctx context.Context, s *Server, req *mcp.CallToolRequest, in In) (Out, error)
	// summary is what the tool-call log keeps as the result; nil keeps
	// the output itself (shortened).
	summary func(in In, out Out) any
	// logError, when set and not "", marks a successful call as an
	// error in the tool-call log (a script that exits with 1).
	logError func(out Out) string
	// available reports whether the server can serve the tool; nil
	// means always.
	available func(s *Server) bool
}

// define adds a tool to the table of allTools.
func define[In, Out any](sp spec[In, Out]) {
	allTools = append(allTools, tool{name: sp.name, writes: sp.writes, register: func(s *Server) { addTool(s, sp) }, available: sp.available})
}

func addTool[In, Out any](s *Server, sp spec[In, Out]) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", sp.name, err))
	}
	for k, v := range sp.defaults {
		p := in.Properties[k]
		if p == nil {
			panic(fmt.Sprintf("mcpserver: %s has no input property %q", sp.name, k))
		}
		b, _ := json.Marshal(v)
		p.Default = b
	}
	for k, v := range sp.enums {
		p := in.Properties[k]
		if p == nil {
			panic(fmt.Sprintf("mcpserver: %s has no input property %q", sp.name, k))
		}
		p.Enum = v
	}
	ann := &mcp.ToolAnnotations{Title: sp.title, ReadOnlyHint: !sp.writes, OpenWorldHint: new(false)}
	if sp.writes {
		ann.DestructiveHint = new(sp.destructive)
	}
	t := &mcp.Tool{Name: sp.name, Title: sp.title, Description: sp.desc, InputSchema: in, Annotations: ann}
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, input In) (*mcp.CallToolResult, Out, error) {
		start := time.Now()
		out, err := sp.run(ctx, s, req, input)
		var result any = out
		logErr := ""
		if err == nil && sp.summary != nil {
			result = sp.summary(input, out)
		}
		if err == nil && sp.logError != nil {
			logErr = sp.logError(out)
		}
		s.record(ctx, sp.name, start, input, result, err, logErr)
		if err != nil {
			var zero Out
			return nil, zero, toolError(err)
		}
		return nil, out, nil
	})
}

// record writes one call in the agent's tool-call log.
func (s *Server) record(ctx context.Context, name string, start time.Time, params, result any, callErr error, logErr string) {
	if s.opts.NoToolLog {
		return
	}
	p := shorten(params)
	var r json.RawMessage
	var msg *string
	if callErr != nil {
		m := toolError(callErr).Error()
		msg = &m
	} else {
		r = shorten(result)
		if logErr != "" {
			msg = &logErr
		}
	}
	// A call cancelled by the client still happened: log it.
	ctx = context.WithoutCancel(ctx)
	if _, err := s.agent.Tools.Record(ctx, LogPrefix+name, start, time.Now(), p, r, msg); err != nil {
		s.log.Warn("mcp: recording the call in the tool-call log failed", "tool", name, "error", err)
	}
}
