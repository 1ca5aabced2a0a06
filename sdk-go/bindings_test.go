package agentfs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// bindingCase is one case of spec/bindings/cases.json, shared by every SDK.
type bindingCase struct {
	Name     string         `json:"name"`
	Policy   map[string]any `json:"policy"`
	Bindings []struct {
		Name, Fn, Description string
		Schema                json.RawMessage
	} `json:"bindings"`
	Script string `json:"script"`
	Expect struct {
		ExitCode       int    `json:"exit_code"`
		Stdout         string `json:"stdout"`
		StderrContains string `json:"stderr_contains"`
	} `json:"expect"`
}

// bindingFns are the host functions the cases name by fn.
var bindingFns = map[string]func(ctx context.Context, args json.RawMessage) (any, error){
	"echo": func(_ context.Context, args json.RawMessage) (any, error) { return args, nil },
	"fail": func(_ context.Context, args json.RawMessage) (any, error) {
		var v struct{ Message string }
		json.Unmarshal(args, &v)
		return nil, errors.New(v.Message)
	},
	"sum": func(_ context.Context, args json.RawMessage) (any, error) {
		var v struct{ A, B int64 }
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, err
		}
		return map[string]int64{"sum": v.A + v.B}, nil
	},
	"null": func(context.Context, json.RawMessage) (any, error) { return nil, nil },
}

func TestBindingCases(t *testing.T) {
	var spec struct{ Cases []bindingCase }
	loadSpec(t, "bindings", &spec)
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, c := range spec.Cases {
		t.Run(c.Name, func(t *testing.T) {
			o := policyOptions(t, policyCase{Name: c.Name, Policy: c.Policy})
			o.Bindings = map[string]agentfs.Binding{}
			for _, b := range c.Bindings {
				o.Bindings[b.Name] = agentfs.Binding{Description: b.Description, Schema: b.Schema, Func: bindingFns[b.Fn]}
			}
			r, err := a.Exec(ctx, c.Script, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != c.Expect.ExitCode || string(r.Stdout) != c.Expect.Stdout || !strings.Contains(string(r.Stderr), c.Expect.StderrContains) {
				t.Fatalf("got exit %d stdout %q stderr %q; want %d %q stderr containing %q", r.ExitCode, r.Stdout, r.Stderr, c.Expect.ExitCode, c.Expect.Stdout, c.Expect.StderrContains)
			}
		})
	}
}
