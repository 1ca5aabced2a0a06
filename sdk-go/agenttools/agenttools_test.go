package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/vfs"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
	"github.com/agentfs-go/agentfs/sdk-go/agenttools"
)

type testCase struct {
	Name  string            `json:"name"`
	Files map[string]string `json:"files"`
	KV    map[string]any    `json:"kv"`
	Call  struct {
		Tool  string          `json:"tool"`
		Input json.RawMessage `json:"input"`
	} `json:"call"`
	Result     any               `json:"result"`
	Error      string            `json:"error"`
	FilesAfter map[string]string `json:"files_after"`
	KVAfter    map[string]any    `json:"kv_after"`
}

func open(t *testing.T) *agentfs.AgentFS {
	t.Helper()
	a, err := agentfs.Open(context.Background(), agentfs.Options{Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// jsonValue is v as decoded JSON (maps of any, float64 numbers).
func jsonValue(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// subset reports where got differs from want (every key of want equal).
func subset(got, want any, where string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return where + ": not an object"
		}
		for k, wv := range w {
			if d := subset(g[k], wv, where+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return where + ": array differs"
		}
		for i := range w {
			if d := subset(g[i], w[i], where); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		b, _ := json.Marshal(got)
		c, _ := json.Marshal(want)
		return where + ": got " + string(b) + ", want " + string(c)
	}
	return ""
}

// TestCases runs spec/tools/cases.json, the cases every SDK runs.
func TestCases(t *testing.T) {
	raw, err := os.ReadFile("../../spec/tools/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []testCase }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			a := open(t)
			for p, content := range c.Files {
				if err := a.FS().WriteFile(ctx, p, []byte(content), agentfs.WriteOptions{CreateParents: true}); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range c.KV {
				if err := a.KV().Set(ctx, k, v); err != nil {
					t.Fatal(err)
				}
			}
			res, err := agenttools.New(a, agenttools.Options{}).Call(ctx, c.Call.Tool, c.Call.Input)
			if c.Error != "" {
				var errno syscall.Errno
				if !errors.As(err, &errno) || vfs.ErrnoName(errno) != c.Error {
					t.Fatalf("error %v, want %s", err, c.Error)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if d := subset(jsonValue(t, res), c.Result, "result"); d != "" {
					t.Fatal(d)
				}
			}
			for p, want := range c.FilesAfter {
				got, err := a.FS().ReadFile(ctx, p)
				if err != nil || string(got) != want {
					t.Fatalf("%s: %q, %v; want %q", p, got, err, want)
				}
			}
			for k, want := range c.KVAfter {
				var got any
				if err := a.KV().Get(ctx, k, &got); err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("kv %s: %v, %v; want %v", k, got, err, want)
				}
			}
			// One record, under the tool's name, with its arguments.
			calls, err := a.Tools().List(ctx, agentfs.ToolFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0].Name != c.Call.Tool {
				t.Fatalf("log: %+v", calls)
			}
			var params, input any
			_ = json.Unmarshal(calls[0].Parameters, &params)
			_ = json.Unmarshal(c.Call.Input, &input)
			if !reflect.DeepEqual(params, input) {
				t.Fatalf("logged parameters %s, want %s", calls[0].Parameters, c.Call.Input)
			}
			wantStatus := agentfs.StatusSuccess
			if c.Error != "" || (c.Call.Tool == "bash" && c.Result.(map[string]any)["exit_code"] != 0.0) {
				wantStatus = agentfs.StatusError
			}
			if calls[0].Status != wantStatus {
				t.Fatalf("status %v, want %v", calls[0].Status, wantStatus)
			}
		})
	}
}

// TestSpecs: the generated specs are spec/tools/agent-tools.json's, and
// the options select tools.
func TestSpecs(t *testing.T) {
	raw, err := os.ReadFile("../../spec/tools/agent-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Tools []any }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	a := open(t)
	if got := jsonValue(t, agenttools.New(a, agenttools.Options{}).Specs()); !reflect.DeepEqual(got, jsonValue(t, f.Tools)) {
		t.Fatalf("specs differ from spec/tools/agent-tools.json")
	}
	var names []string
	for _, s := range agenttools.New(a, agenttools.Options{ReadOnly: true}).Specs() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "read_file,list,search,kv_get" {
		t.Fatalf("read-only tools: %v", names)
	}
	tools := agenttools.New(a, agenttools.Options{Only: []string{"bash"}, Deny: []string{"rm"}})
	if _, err := tools.Call(context.Background(), "read_file", json.RawMessage(`{"path":"/x"}`)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("a tool not offered: %v", err)
	}
	res, err := tools.Call(context.Background(), "bash", json.RawMessage(`{"command":"echo x > /f; rm /f"}`))
	if err != nil || res["exit_code"] == 0 {
		t.Fatalf("denied rm: %v %v", res, err)
	}
}
