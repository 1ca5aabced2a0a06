// Package agenttools is the SDK's ready-made agent tools: read_file,
// write_file, edit_file, list, search, bash, kv_get and kv_set over an
// agent opened in this process, with the names, descriptions and JSON
// Schemas of spec/tools/agent-tools.json and the behaviour that
// spec/tools/README.md describes and spec/tools/cases.json checks in every
// SDK. Each call is recorded in the agent's tool-call log under the tool's
// name, with its arguments and result. The tools are the engine's
// (core/agenttools); this package offers them over an *agentfs.AgentFS.
//
//	tools := agenttools.New(agent, agenttools.Options{})
//	for _, s := range tools.Specs() { /* offer s.Name, s.Description, s.InputSchema to the model */ }
//	result, err := tools.Call(ctx, "edit_file", json.RawMessage(argumentsFromTheModel))
package agenttools

import (
	"context"
	"encoding/json"

	core "github.com/agentfs-go/agentfs/core/agenttools"
	"github.com/agentfs-go/agentfs/core/sandbox"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// Spec is one tool as a model sees it.
type Spec = core.Spec

// Error is a tool failure with its POSIX code (EINVAL, ENOENT, ...);
// errors.Is(err, syscall.EINVAL) works.
type Error = core.Error

// Options choose the tools and the sandbox of bash and search.
type Options struct {
	// Only offers these tools (default: all eight).
	Only []string
	// ReadOnly leaves out the tools that change the agent.
	ReadOnly bool
	// Limits of the bash and search scripts (default sandbox.Normal).
	Limits sandbox.Limits
	// Allow and Deny name the commands scripts may and may not run.
	Allow, Deny []string
	// Readable and Writable are the path prefixes every tool may read and
	// write (nil: everything); outside them a tool fails with EACCES.
	Readable, Writable []string
	// NoLog skips the tool-call records.
	NoLog bool
}

// Tools is the tool set over one agent. It is safe for concurrent use.
type Tools struct{ t *core.Tools }

// New returns the tools over agent (opened in this process: bash and
// search run in its sandbox).
func New(agent *agentfs.AgentFS, opts Options) *Tools {
	return &Tools{core.New(agent.Engine(), core.Options{
		Only: opts.Only, ReadOnly: opts.ReadOnly, Limits: opts.Limits, NoLog: opts.NoLog,
		Policy: sandbox.Policy{Allow: opts.Allow, Deny: opts.Deny, Readable: opts.Readable, Writable: opts.Writable},
	})}
}

// Specs lists the offered tools in the spec's order.
func (t *Tools) Specs() []Spec { return t.t.Specs() }

// Call runs one tool with its JSON arguments (validated against its
// schema) and records the call. The result is a JSON-ready map.
func (t *Tools) Call(ctx context.Context, name string, args json.RawMessage) (map[string]any, error) {
	return t.t.Call(ctx, name, args)
}
