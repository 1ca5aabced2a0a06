// Package agenttools is the engine's ready-made agent tools: read_file,
// write_file, edit_file, list, search, bash, kv_get and kv_set over an
// open agent, with the names, descriptions and JSON Schemas of
// spec/tools/agent-tools.json and the behaviour that spec/tools/README.md
// describes and spec/tools/cases.json checks in every SDK. Each call is
// recorded in the agent's tool-call log under the tool's name, with its
// arguments and result. It is the one implementation: sdk-go/agenttools
// wraps it, and agent sessions (core/session) call it.
//
//	tools := agenttools.New(agent, agenttools.Options{})
//	for _, s := range tools.Specs() { /* offer s.Name, s.Description, s.InputSchema to the model */ }
//	result, err := tools.Call(ctx, "edit_file", json.RawMessage(argumentsFromTheModel))
package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Spec is one tool as a model sees it.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Writes      bool            `json:"writes"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Options choose the tools and the sandbox of bash and search.
type Options struct {
	// Only offers these tools (default: all eight).
	Only []string
	// ReadOnly leaves out the tools that change the agent.
	ReadOnly bool
	// Limits of the bash and search scripts (default sandbox.Normal).
	Limits sandbox.Limits
	// Policy is the sandbox policy of every tool: the commands bash and
	// search may run (Allow, Deny), and the paths every tool may read and
	// write (Readable, Writable; a file tool outside them fails with
	// EACCES, as the shell's commands do).
	Policy sandbox.Policy
	// NoLog skips the tool-call records.
	NoLog bool
	// HiddenKVPrefix, when set, is a part of the key-value store the kv
	// tools may not touch (EACCES): agent sessions keep their history
	// there, and a model must not rewrite its own transcript.
	HiddenKVPrefix string
}

// Tools is the tool set over one agent. It is safe for concurrent use.
type Tools struct {
	agent *core.Agent
	opts  Options
	guard *sandbox.Sandbox // path checks of the file tools
	specs []Spec
	props map[string]map[string]prop
	req   map[string][]string
}

type prop struct {
	Type    string          `json:"type"`
	Default json.RawMessage `json:"default"`
	Minimum *float64        `json:"minimum"`
	Maximum *float64        `json:"maximum"`
}

// Error is a tool failure with its POSIX code (EINVAL, ENOENT, ...);
// errors.Is(err, syscall.EINVAL) works.
type Error struct {
	Errno syscall.Errno
	Msg   string
}

func (e *Error) Error() string         { return vfs.ErrnoName(e.Errno) + ": " + e.Msg }
func (e *Error) Unwrap() error         { return e.Errno }
func invalid(f string, a ...any) error { return &Error{syscall.EINVAL, fmt.Sprintf(f, a...)} }

// logStringMax is the longest string kept in the log per field.
const logStringMax = 4096

// New returns the tools over agent (bash and search run in its sandbox).
// The policy is checked when a tool runs: a bad network rule fails the
// bash call with EINVAL.
func New(agent *core.Agent, opts Options) *Tools {
	var all []Spec
	if err := json.Unmarshal([]byte(specsJSON), &all); err != nil {
		panic("agenttools: generated specs: " + err.Error()) // generated code, checked by the tests
	}
	t := &Tools{agent: agent, opts: opts, props: map[string]map[string]prop{}, req: map[string][]string{}}
	// Only the path rules matter for the guard (no network, no audit).
	t.guard, _ = sandbox.New(agent, sandbox.Options{Policy: sandbox.Policy{Readable: opts.Policy.Readable, Writable: opts.Policy.Writable}, NoAudit: true})
	for _, s := range all {
		var sch struct {
			Properties map[string]prop `json:"properties"`
			Required   []string        `json:"required"`
		}
		_ = json.Unmarshal(s.InputSchema, &sch)
		t.props[s.Name], t.req[s.Name] = sch.Properties, sch.Required
		if (opts.Only != nil && !slices.Contains(opts.Only, s.Name)) || (opts.ReadOnly && s.Writes) {
			continue
		}
		t.specs = append(t.specs, s)
	}
	return t
}

// Specs lists the offered tools in the spec's order.
func (t *Tools) Specs() []Spec { return slices.Clone(t.specs) }

// Call runs one tool with its JSON arguments (validated against its
// schema) and records the call. The result is a JSON-ready map.
func (t *Tools) Call(ctx context.Context, name string, args json.RawMessage) (map[string]any, error) {
	if !slices.ContainsFunc(t.specs, func(s Spec) bool { return s.Name == name }) {
		var names []string
		for _, s := range t.specs {
			names = append(names, s.Name)
		}
		return nil, invalid("unknown tool %q (tools: %s)", name, strings.Join(names, ", "))
	}
	start := time.Now()
	var params any
	if err := json.Unmarshal(args, &params); err != nil {
		params = string(args)
	}
	in, err := t.validate(name, args)
	var res map[string]any
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		res, err = run[name](ctx, t, in)
	}
	if !t.opts.NoLog {
		var msg *string
		var result any
		if err != nil {
			m := err.Error()
			msg = &m
		} else {
			result = forLog(logResult(name, res))
			if name == "bash" && res["exit_code"] != 0 {
				// The log marks a failing script, as the engine's exec record does.
				m := fmt.Sprintf("exit status %d", res["exit_code"])
				if l, ok := res["limit"]; ok {
					m += fmt.Sprintf(": %v", l)
				}
				msg = &m
			}
		}
		if lerr := t.record(ctx, name, start, forLog(params), result, msg); lerr != nil && err == nil {
			return res, fmt.Errorf("agenttools: recording %s: %w", name, lerr)
		}
	}
	return res, err
}

func (t *Tools) record(ctx context.Context, name string, start time.Time, params, result any, msg *string) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	var r json.RawMessage
	if result != nil {
		if r, err = json.Marshal(result); err != nil {
			return err
		}
	}
	_, err = t.agent.Tools.Record(context.WithoutCancel(ctx), name, start, time.Now(), p, r, msg)
	return err
}

// check applies the policy's path rules to a file tool's path.
func (t *Tools) check(op, p string, write bool) error {
	if t.guard == nil {
		return nil
	}
	return t.guard.CheckPath(op, p, write)
}

// kvKey refuses the keys the options hide from the tools.
func (t *Tools) kvKey(in map[string]any) (string, error) {
	key := str(in, "key")
	if t.opts.HiddenKVPrefix != "" && strings.HasPrefix(key, t.opts.HiddenKVPrefix) {
		return "", &Error{syscall.EACCES, fmt.Sprintf("kv key %q: keys under %q are reserved", key, t.opts.HiddenKVPrefix)}
	}
	return key, nil
}

// validate checks the arguments against the schema and fills defaults.
func (t *Tools) validate(name string, args json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, invalid("%s: the input must be a JSON object", name)
	}
	props := t.props[name]
	for k, v := range in {
		p, ok := props[k]
		if !ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, invalid("%s: unknown argument %q (arguments: %s)", name, k, strings.Join(keys, ", "))
		}
		switch p.Type {
		case "string":
			if _, ok := v.(string); !ok {
				return nil, invalid("%s: argument %s must be a string", name, k)
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return nil, invalid("%s: argument %s must be a boolean", name, k)
			}
		case "integer":
			n, ok := v.(json.Number)
			i, err := n.Int64()
			if !ok || err != nil {
				return nil, invalid("%s: argument %s must be an integer", name, k)
			}
			if (p.Minimum != nil && float64(i) < *p.Minimum) || (p.Maximum != nil && float64(i) > *p.Maximum) {
				return nil, invalid("%s: argument %s must be between %v and %v", name, k, *p.Minimum, *p.Maximum)
			}
			in[k] = int(i)
		}
	}
	for _, r := range t.req[name] {
		if _, ok := in[r]; !ok {
			return nil, invalid("%s: missing argument %s", name, r)
		}
	}
	for k, p := range props {
		if _, ok := in[k]; !ok && p.Default != nil {
			var d any
			_ = json.Unmarshal(p.Default, &d)
			if f, ok := d.(float64); ok && p.Type == "integer" {
				d = int(f)
			}
			in[k] = d
		}
	}
	return in, nil
}

// agentPath makes a path absolute in the agent's filesystem, as the MCP
// tools do.
func agentPath(p string) (string, error) {
	if p == "" {
		return "", &Error{syscall.ENOENT, "empty path"}
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p, nil
}

func typeName(st vfs.Stat) string {
	switch n := st.TypeName(); n {
	case "file", "dir", "symlink":
		return n
	}
	return "other"
}

// shellQuote quotes a word for the sandbox's shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (t *Tools) exec(ctx context.Context, script, dir string) (sandbox.Result, error) {
	opts := sandbox.Options{Limits: t.opts.Limits, Policy: t.opts.Policy, NoAudit: true}
	if opts.Limits == (sandbox.Limits{}) {
		opts.Limits = sandbox.Normal
	}
	sb, err := sandbox.New(t.agent, opts)
	if err != nil {
		return sandbox.Result{}, invalid("sandbox: %v", err)
	}
	return sb.Exec(ctx, script, sandbox.ExecOptions{Dir: dir})
}

func str(in map[string]any, k string) string { s, _ := in[k].(string); return s }

var run = map[string]func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error){
	"read_file": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		p, err := agentPath(str(in, "path"))
		if err != nil {
			return nil, err
		}
		if err := t.check("open", p, false); err != nil {
			return nil, err
		}
		data, err := t.agent.FS.ReadFile(ctx, p)
		if err != nil {
			return nil, err
		}
		return map[string]any{"path": p, "content": strings.ToValidUTF8(string(data), "\uFFFD"), "size": len(data)}, nil
	},
	"write_file": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		p, err := agentPath(str(in, "path"))
		if err != nil {
			return nil, err
		}
		if err := t.check("open", p, true); err != nil {
			return nil, err
		}
		data := []byte(str(in, "content"))
		if err := t.agent.FS.WriteFile(ctx, p, data, vfs.WriteOptions{Perm: 0o644, CreateParents: true}); err != nil {
			return nil, err
		}
		return map[string]any{"path": p, "size": len(data)}, nil
	},
	"edit_file": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		p, err := agentPath(str(in, "path"))
		if err != nil {
			return nil, err
		}
		old, repl, all := str(in, "old_string"), str(in, "new_string"), in["replace_all"] == true
		if old == "" {
			return nil, invalid("edit_file %s: old_string is empty; use write_file to create or replace a file", p)
		}
		if old == repl {
			return nil, invalid("edit_file %s: old_string and new_string are the same; nothing would change", p)
		}
		if err := t.check("open", p, true); err != nil {
			return nil, err
		}
		data, err := t.agent.FS.ReadFile(ctx, p)
		if err != nil {
			return nil, err
		}
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		// strings.Count counts non-overlapping occurrences left to right,
		// as the other SDKs do.
		n := strings.Count(text, old)
		if n == 0 {
			return nil, invalid("edit_file %s: old_string was not found; read the file and copy the exact text, whitespace included", p)
		}
		if n > 1 && !all {
			return nil, invalid("edit_file %s: old_string appears %d times; include more surrounding lines to make it unique, or set replace_all", p, n)
		}
		limit, count := 1, 1
		if all {
			limit, count = -1, n
		}
		if err := t.agent.FS.WriteFile(ctx, p, []byte(strings.Replace(text, old, repl, limit)), vfs.WriteOptions{Perm: 0o644}); err != nil {
			return nil, err
		}
		return map[string]any{"path": p, "replacements": count}, nil
	},
	"list": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		p, err := agentPath(str(in, "path"))
		if err != nil {
			return nil, err
		}
		if err := t.check("open", p, false); err != nil {
			return nil, err
		}
		ents, err := t.agent.FS.ReaddirPlus(ctx, p)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(ents, func(a, b vfs.DirEntry) int { return strings.Compare(a.Name, b.Name) })
		out := make([]map[string]any, 0, len(ents))
		for _, e := range ents {
			out = append(out, map[string]any{"name": e.Name, "type": typeName(e.Stat), "size": e.Stat.Size})
		}
		return map[string]any{"path": p, "entries": out}, nil
	},
	"search": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		p, err := agentPath(str(in, "path"))
		if err != nil {
			return nil, err
		}
		// The engine's grep does the matching, as in every SDK; -Z ends
		// each file name with NUL (names may hold ':').
		flags := "-rnHZE"
		if in["ignore_case"] == true {
			flags += "i"
		}
		include := ""
		if g, ok := in["glob"].(string); ok {
			include = " --include=" + shellQuote(g)
		}
		max := in["max_results"].(int)
		script := fmt.Sprintf("grep %s%s -e %s -- %s | head -n %d", flags, include, shellQuote(str(in, "pattern")), shellQuote(p), max+1)
		r, err := t.exec(ctx, script, "/")
		if err != nil {
			return nil, err
		}
		// With the pipe the status is head's; grep's complaints come on stderr.
		if msg := strings.TrimSpace(r.Stderr); msg != "" {
			code := syscall.EINVAL
			if strings.Contains(strings.ToLower(msg), "no such file") {
				code = syscall.ENOENT
			}
			return nil, &Error{code, "search: " + msg}
		}
		matches := []map[string]any{}
		for _, rec := range strings.Split(r.Stdout, "\n") {
			path, rest, ok := strings.Cut(rec, "\x00")
			if !ok {
				continue
			}
			num, text, ok := strings.Cut(rest, ":")
			line, err := strconv.Atoi(num)
			if !ok || err != nil {
				continue
			}
			matches = append(matches, map[string]any{"path": path, "line": line, "text": text})
		}
		truncated := len(matches) > max
		if truncated {
			matches = matches[:max]
		}
		return map[string]any{"pattern": str(in, "pattern"), "path": p, "matches": matches, "truncated": truncated}, nil
	},
	"bash": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		dir, err := agentPath(str(in, "cwd"))
		if err != nil {
			return nil, err
		}
		r, err := t.exec(ctx, str(in, "command"), dir)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"exit_code": r.ExitCode, "stdout": r.Stdout, "stderr": r.Stderr}
		if r.Limit != nil {
			out["limit"] = r.Limit.Error()
		}
		return out, nil
	},
	"kv_get": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		key, err := t.kvKey(in)
		if err != nil {
			return nil, err
		}
		raw, err := t.agent.KV.GetJSON(ctx, key)
		if errors.Is(err, kv.ErrNotFound) {
			return map[string]any{"key": key, "found": false, "value": nil}, nil
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"key": key, "found": true, "value": raw}, nil
	},
	"kv_set": func(ctx context.Context, t *Tools, in map[string]any) (map[string]any, error) {
		key, err := t.kvKey(in)
		if err != nil {
			return nil, err
		}
		// The value is stored as the model sent it (numbers keep their text).
		b, err := json.Marshal(in["value"])
		if err != nil {
			return nil, invalid("kv_set: value: %v", err)
		}
		if err := t.agent.KV.SetJSON(ctx, key, b); err != nil {
			return nil, err
		}
		return map[string]any{"key": key}, nil
	},
}

// logResult is what the log keeps of a result: a file read is in the
// file already.
func logResult(name string, res map[string]any) any {
	if name == "read_file" {
		return map[string]any{"path": res["path"], "size": res["size"]}
	}
	return res
}

// forLog cuts long strings so a large output does not bloat the log.
func forLog(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > logStringMax {
			cut := strings.ToValidUTF8(x[:logStringMax], "")
			return cut + fmt.Sprintf("…[%d more bytes]", len(x)-len(cut))
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = forLog(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = forLog(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = forLog(e)
		}
		return out
	}
	return v
}
