package agentfs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// policyCase is one case of spec/policy/cases.json, shared by every SDK.
type policyCase struct {
	Name   string         `json:"name"`
	Policy map[string]any `json:"policy"`
	Huge   *struct {
		Field, Prefix string
		Count         int
	} `json:"huge"`
	Script string `json:"script"`
	Expect *struct {
		ExitCode       int     `json:"exit_code"`
		Stdout         *string `json:"stdout"`
		StderrContains string  `json:"stderr_contains"`
	} `json:"expect"`
	Error       string         `json:"error"`
	After       string         `json:"after"`
	AfterStdout string         `json:"after_stdout"`
	Effective   map[string]any `json:"effective"`
	AbsentText  []string       `json:"absent_text"`
}

func loadSpec(t *testing.T, dir string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "spec", dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// policyOptions turns a case's policy (ExecRequest field names) into the
// SDK's options.
func policyOptions(t *testing.T, c policyCase) agentfs.ExecOptions {
	p := map[string]any{}
	for k, v := range c.Policy {
		p[k] = v
	}
	if c.Huge != nil {
		var l []any
		for i := 0; i < c.Huge.Count; i++ {
			l = append(l, fmt.Sprint(c.Huge.Prefix, i))
		}
		p[c.Huge.Field] = l
	}
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	smap := func(v any) map[string]string {
		out := map[string]string{}
		for k, x := range v.(map[string]any) {
			out[k] = x.(string)
		}
		return out
	}
	var o agentfs.ExecOptions
	for k, v := range p {
		switch k {
		case "readable":
			o.Readable = strs(v)
		case "writable":
			o.Writable = strs(v)
		case "allow":
			o.Allow = strs(v)
		case "deny":
			o.Deny = strs(v)
		case "default_deny":
			o.DefaultDeny = v.(bool)
		case "env":
			o.Env = smap(v)
		case "limits":
			o.Limits = v.(string)
		case "limit_values":
			for lk, lv := range v.(map[string]any) {
				n := int64(lv.(float64))
				switch lk {
				case "max_output_bytes":
					o.LimitValues.MaxOutputBytes = n
				case "wall_time_ms":
					o.LimitValues.WallTime = time.Duration(n) * time.Millisecond
				default:
					t.Fatalf("%s: limit_values.%s: add it to the harness", c.Name, lk)
				}
			}
		case "net":
			for _, r := range v.([]any) {
				rm := r.(map[string]any)
				nr := agentfs.NetRule{Prefix: rm["prefix"].(string)}
				if m, ok := rm["methods"]; ok {
					nr.Methods = strs(m)
				}
				if h, ok := rm["headers"]; ok {
					nr.Headers = smap(h)
				}
				nr.AllowPrivate, _ = rm["allow_private"].(bool)
				o.Net = append(o.Net, nr)
			}
		default:
			t.Fatalf("%s: policy field %q: add it to the harness", c.Name, k)
		}
	}
	return o
}

// contains reports whether got has every key of want, recursively
// (numbers compare by value; protojson writes int64 as strings).
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !contains(g[k], wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return w != nil && len(w) == 0 && got == nil
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	case float64:
		return fmt.Sprint(got) == fmt.Sprint(w) || fmt.Sprint(got) == fmt.Sprintf("%.0f", w)
	}
	return reflect.DeepEqual(got, want)
}

func TestPolicyCasesLocal(t *testing.T) {
	a, err := agentfs.Open(context.Background(), agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	testPolicyCases(t, a)
}

func TestPolicyCasesRemote(t *testing.T) {
	testPolicyCases(t, remoteOpener(t)(t).(*agentfs.Remote))
}

func testPolicyCases(t *testing.T, sb agentfs.Sandbox) {
	var spec struct {
		Setup string
		Cases []policyCase
	}
	loadSpec(t, "policy", &spec)
	ctx := context.Background()
	if r, err := sb.Exec(ctx, spec.Setup, agentfs.ExecOptions{}); err != nil || r.ExitCode != 0 {
		t.Fatalf("setup: %v %+v", err, r)
	}
	for _, c := range spec.Cases {
		t.Run(c.Name, func(t *testing.T) {
			o := policyOptions(t, c)
			switch {
			case c.Error != "":
				_, err := sb.Exec(ctx, c.Script, o)
				if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "invalid sandbox policy") {
					t.Fatalf("exec: got %v, want %s naming the policy", err, c.Error)
				}
				if _, err := sb.Policy(ctx, o); !errors.Is(err, syscall.EINVAL) {
					t.Fatalf("policy(): got %v, want %s", err, c.Error)
				}
				r, err := sb.Exec(ctx, c.After, agentfs.ExecOptions{})
				if err != nil || string(r.Stdout) != c.AfterStdout {
					t.Fatalf("after: %v %q, want %q", err, r.Stdout, c.AfterStdout)
				}
			case c.Effective != nil:
				p, err := sb.Policy(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				js, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := json.Unmarshal(js, &got); err != nil {
					t.Fatal(err)
				}
				if !contains(got, c.Effective) {
					t.Fatalf("policy() = %s\nwant it to contain %v", js, c.Effective)
				}
				for _, s := range c.AbsentText {
					if strings.Contains(string(js), s) {
						t.Fatalf("policy() shows %q: %s", s, js)
					}
				}
			default:
				r, err := sb.Exec(ctx, c.Script, o)
				if err != nil {
					t.Fatal(err)
				}
				e := c.Expect
				if r.ExitCode != e.ExitCode || e.Stdout != nil && string(r.Stdout) != *e.Stdout || !strings.Contains(string(r.Stderr), e.StderrContains) {
					t.Fatalf("got exit %d stdout %q stderr %q; want %d %q stderr containing %q", r.ExitCode, r.Stdout, r.Stderr, e.ExitCode, deref(e.Stdout), e.StderrContains)
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<any>"
	}
	return *s
}
