package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// --- kv_get

type KVKeyInput struct {
	Key string `json:"key" jsonschema:"the key"`
}

type KVGetOutput struct {
	Key   string `json:"key"`
	Found bool   `json:"found" jsonschema:"whether the key exists"`
	Value any    `json:"value" jsonschema:"the stored JSON value; null when the key does not exist"`
}

// --- kv_set

type KVSetInput struct {
	Key   string `json:"key" jsonschema:"the key"`
	Value any    `json:"value" jsonschema:"any JSON value: object, array, string, number, boolean or null"`
}

type KVKeyOutput struct {
	Key string `json:"key"`
}

// --- kv_delete

type KVDeleteOutput struct {
	Key     string `json:"key"`
	Deleted bool   `json:"deleted" jsonschema:"whether the key existed"`
}

// --- kv_list

type KVListInput struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only keys starting with this prefix (case sensitive)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many entries; 0 for all"`
}

type KVEntry struct {
	Key       string `json:"key"`
	Value     any    `json:"value"`
	CreatedAt int64  `json:"created_at" jsonschema:"Unix seconds"`
	UpdatedAt int64  `json:"updated_at" jsonschema:"Unix seconds"`
}

type KVListOutput struct {
	Entries []KVEntry `json:"entries" jsonschema:"the entries in key order"`
	More    bool      `json:"more" jsonschema:"whether more entries match beyond the limit"`
}

// --- timeline

type TimelineInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many calls, newest first; 0 for all"`
	Tool   string `json:"tool,omitempty" jsonschema:"only calls of this tool name (calls made through MCP are named mcp:<tool>)"`
	Status string `json:"status,omitempty" jsonschema:"only calls with this status"`
}

type TimelineCall struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Status      string  `json:"status" jsonschema:"pending, success or error"`
	Parameters  any     `json:"parameters,omitempty"`
	Result      any     `json:"result,omitempty"`
	Error       *string `json:"error,omitempty"`
	StartedAt   int64   `json:"started_at" jsonschema:"Unix seconds"`
	CompletedAt *int64  `json:"completed_at,omitempty" jsonschema:"Unix seconds"`
	DurationMs  *int64  `json:"duration_ms,omitempty"`
}

type TimelineOutput struct {
	Calls []TimelineCall `json:"calls" jsonschema:"the calls, newest first"`
}

// decodeJSON decodes stored JSON keeping numbers exact.
func decodeJSON(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

// rawArgument returns the raw JSON of one argument of a call, so that a
// value is stored exactly as the client sent it (large integers included).
func rawArgument(req *mcp.CallToolRequest, name string) (json.RawMessage, bool) {
	if req == nil || req.Params == nil || req.Params.Arguments == nil {
		return nil, false
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, false
	}
	v, ok := args[name]
	return v, ok
}

func init() {
	define(spec[KVKeyInput, KVGetOutput]{
		name: "kv_get", title: "Get a value",
		desc: "Get the JSON value stored under a key of the agent's key-value store. A missing key gives found=false and value null.",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in KVKeyInput) (KVGetOutput, error) {
			raw, err := s.agent.KV.GetJSON(ctx, in.Key)
			if isNotFound(err) {
				return KVGetOutput{Key: in.Key}, nil
			}
			if err != nil {
				return KVGetOutput{}, err
			}
			return KVGetOutput{Key: in.Key, Found: true, Value: decodeJSON(raw)}, nil
		},
		summary: func(_ KVKeyInput, out KVGetOutput) any {
			return map[string]any{"key": out.Key, "found": out.Found}
		},
	})

	define(spec[KVSetInput, KVKeyOutput]{
		name: "kv_set", title: "Set a value", writes: true, destructive: true,
		desc: "Store a JSON value (object, array, string, number, boolean or null) under a key of the agent's key-value store, replacing any previous value.",
		run: func(ctx context.Context, s *Server, req *mcp.CallToolRequest, in KVSetInput) (KVKeyOutput, error) {
			raw, ok := rawArgument(req, "value")
			if !ok {
				b, err := json.Marshal(in.Value)
				if err != nil {
					return KVKeyOutput{}, err
				}
				raw = b
			}
			return KVKeyOutput{Key: in.Key}, s.agent.KV.SetJSON(ctx, in.Key, raw)
		},
	})

	define(spec[KVKeyInput, KVDeleteOutput]{
		name: "kv_delete", title: "Delete a key", writes: true, destructive: true,
		desc: "Delete a key of the agent's key-value store; a missing key is not an error (deleted=false).",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in KVKeyInput) (KVDeleteOutput, error) {
			ok, err := s.agent.KV.Delete(ctx, in.Key)
			return KVDeleteOutput{Key: in.Key, Deleted: ok}, err
		},
	})

	define(spec[KVListInput, KVListOutput]{
		name: "kv_list", title: "List keys",
		desc:     "List the entries of the agent's key-value store whose key starts with prefix, in key order, with their values.",
		defaults: map[string]any{"limit": 100},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in KVListInput) (KVListOutput, error) {
			if in.Limit < 0 {
				return KVListOutput{}, errors.New("EINVAL: limit must be 0 (no limit) or more")
			}
			limit := in.Limit
			if limit > 0 {
				limit++ // one more tells whether there are more
			}
			ents, err := s.agent.KV.List(ctx, in.Prefix, limit)
			if err != nil {
				return KVListOutput{}, err
			}
			out := KVListOutput{Entries: make([]KVEntry, 0, len(ents))}
			if in.Limit > 0 && len(ents) > in.Limit {
				ents, out.More = ents[:in.Limit], true
			}
			for _, e := range ents {
				out.Entries = append(out.Entries, KVEntry{Key: e.Key, Value: decodeJSON(e.Value), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt})
			}
			return out, nil
		},
		summary: func(_ KVListInput, out KVListOutput) any {
			return map[string]any{"entries": len(out.Entries), "more": out.More}
		},
	})

	define(spec[TimelineInput, TimelineOutput]{
		name: "timeline", title: "Recent tool calls",
		desc:     "The agent's tool-call log, newest first: name, status, parameters, result or error, times. Calls made through this MCP server are logged as mcp:<tool>.",
		defaults: map[string]any{"limit": 20},
		enums:    map[string][]any{"status": {toolcalls.StatusPending, toolcalls.StatusSuccess, toolcalls.StatusError}},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in TimelineInput) (TimelineOutput, error) {
			if in.Limit < 0 {
				return TimelineOutput{}, errors.New("EINVAL: limit must be 0 (no limit) or more")
			}
			calls, err := s.agent.Tools.List(ctx, toolcalls.Filter{Name: in.Tool, Status: in.Status, Limit: in.Limit})
			if err != nil {
				return TimelineOutput{}, err
			}
			out := TimelineOutput{Calls: make([]TimelineCall, 0, len(calls))}
			for _, c := range calls {
				out.Calls = append(out.Calls, TimelineCall{
					ID: c.ID, Name: c.Name, Status: c.Status,
					Parameters: decodeJSON(c.Parameters), Result: decodeJSON(c.Result), Error: c.Error,
					StartedAt: c.StartedAt, CompletedAt: c.CompletedAt, DurationMs: c.DurationMs,
				})
			}
			return out, nil
		},
		summary: func(_ TimelineInput, out TimelineOutput) any {
			return map[string]any{"calls": len(out.Calls)}
		},
	})
}
