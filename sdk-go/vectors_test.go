package agentfs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// The conformance vectors of spec/vectors (format in its README), run
// through the SDK's Agent interface: by the in-process engine here and by
// the remote client in remote_test.go.

type vector struct {
	Name  string `json:"name"`
	Steps []step `json:"steps"`
}

type step struct {
	Op     string                     `json:"op"`
	Args   map[string]json.RawMessage `json:"args"`
	Expect map[string]json.RawMessage `json:"expect"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	files, err := filepath.Glob("../spec/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in ../spec/vectors (%v)", err)
	}
	var out []vector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if v.Name == "" || len(v.Steps) == 0 {
			t.Fatalf("%s: no name or no steps", f)
		}
		out = append(out, v)
	}
	return out
}

// runVectors runs every vector on a fresh agent from open.
func runVectors(t *testing.T, open func(t *testing.T) agentfs.Agent) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			a := open(t)
			for i, s := range v.Steps {
				if err := runStep(context.Background(), a, s); err != nil {
					t.Fatalf("step %d %s %s: %v", i, s.Op, argString(s.Args), err)
				}
			}
		})
	}
}

func TestVectorsLocal(t *testing.T) {
	runVectors(t, func(t *testing.T) agentfs.Agent {
		a, err := agentfs.Open(context.Background(), agentfs.Options{Path: filepath.Join(t.TempDir(), "v.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	})
}

func argString(args map[string]json.RawMessage) string {
	b, _ := json.Marshal(args)
	if len(b) > 120 {
		b = append(b[:120], "..."...)
	}
	return string(b)
}

// args decodes a step's arguments.
type args map[string]json.RawMessage

func (a args) str(k string) string {
	var s string
	if raw, ok := a[k]; ok {
		if err := json.Unmarshal(raw, &s); err != nil {
			panic(fmt.Sprintf("arg %s: %v", k, err))
		}
	}
	return s
}

func (a args) boolean(k string) bool {
	var b bool
	if raw, ok := a[k]; ok {
		if err := json.Unmarshal(raw, &b); err != nil {
			panic(fmt.Sprintf("arg %s: %v", k, err))
		}
	}
	return b
}

func (a args) int(k string) int64 {
	var n int64
	if raw, ok := a[k]; ok {
		if err := json.Unmarshal(raw, &n); err != nil {
			panic(fmt.Sprintf("arg %s: %v", k, err))
		}
	}
	return n
}

// data is "data" (UTF-8 text) or "data_b64".
func (a args) data() []byte {
	if _, ok := a["data_b64"]; ok {
		b, err := base64.StdEncoding.DecodeString(a.str("data_b64"))
		if err != nil {
			panic(err)
		}
		return b
	}
	return []byte(a.str("data"))
}

// runStep runs one step and checks its expectation.
func runStep(ctx context.Context, a agentfs.Agent, s step) error {
	in := args(s.Args)
	fsys := a.FS()
	var (
		got map[string]any // result fields
		err error
	)
	switch s.Op {
	case "writeFile":
		err = fsys.WriteFile(ctx, in.str("path"), in.data(), agentfs.WriteOptions{})
	case "appendFile":
		err = fsys.WriteFile(ctx, in.str("path"), in.data(), agentfs.WriteOptions{Append: true})
	case "readFile":
		var b []byte
		if b, err = fsys.ReadFile(ctx, in.str("path")); err == nil {
			got = map[string]any{"data": string(b), "data_b64": base64.StdEncoding.EncodeToString(b)}
		}
	case "stat", "lstat":
		var st agentfs.Stat
		if s.Op == "stat" {
			st, err = fsys.Stat(ctx, in.str("path"))
		} else {
			st, err = fsys.Lstat(ctx, in.str("path"))
		}
		if err == nil {
			got = map[string]any{"size": st.Size, "type": typeName(st), "perm": int64(st.Perm()), "nlink": int64(st.Nlink)}
		}
	case "mkdir":
		if in.boolean("recursive") {
			err = fsys.MkdirAll(ctx, in.str("path"), 0)
		} else {
			err = fsys.Mkdir(ctx, in.str("path"), 0)
		}
	case "rmdir":
		err = fsys.Rmdir(ctx, in.str("path"))
	case "unlink":
		err = fsys.Unlink(ctx, in.str("path"))
	case "rm":
		err = fsys.Remove(ctx, in.str("path"), agentfs.RemoveOptions{Recursive: in.boolean("recursive"), Force: in.boolean("force")})
	case "rename":
		err = fsys.Rename(ctx, in.str("from"), in.str("to"))
	case "copyFile":
		err = fsys.CopyFile(ctx, in.str("from"), in.str("to"))
	case "symlink":
		err = fsys.Symlink(ctx, in.str("target"), in.str("path"))
	case "readlink":
		var target string
		if target, err = fsys.Readlink(ctx, in.str("path")); err == nil {
			got = map[string]any{"target": target}
		}
	case "link":
		err = fsys.Link(ctx, in.str("from"), in.str("to"))
	case "chmod":
		err = fsys.Chmod(ctx, in.str("path"), uint32(in.int("mode")))
	case "truncate":
		err = fsys.Truncate(ctx, in.str("path"), in.int("size"))
	case "access":
		err = fsys.Access(ctx, in.str("path"), 0)
	case "readdir":
		var names []string
		if names, err = fsys.Readdir(ctx, in.str("path")); err == nil {
			if names == nil {
				names = []string{}
			}
			got = map[string]any{"names": names}
		}
	case "exists":
		var ok bool
		if ok, err = fsys.Exists(ctx, in.str("path")); err == nil {
			got = map[string]any{"value": ok}
		}
	case "kvSet":
		err = a.KV().Set(ctx, in.str("key"), json.RawMessage(in["value"]))
	case "kvGet":
		var raw json.RawMessage
		raw, err = a.KV().GetJSON(ctx, in.str("key"))
		switch {
		case errors.Is(err, agentfs.ErrNotFound):
			got, err = map[string]any{"missing": true}, nil
		case err == nil:
			var v any
			if err = json.Unmarshal(raw, &v); err == nil {
				got = map[string]any{"value": v, "missing": false}
			}
		}
	case "kvList":
		var es []agentfs.KVEntry
		if es, err = a.KV().List(ctx, in.str("prefix")); err == nil {
			keys := []string{}
			for _, e := range es {
				keys = append(keys, e.Key)
			}
			got = map[string]any{"keys": keys}
		}
	case "kvDelete":
		_, err = a.KV().Delete(ctx, in.str("key"))
	case "toolRecord":
		r := agentfs.ToolRecord{
			Name:        in.str("name"),
			StartedAt:   time.Unix(in.int("started_at"), 0),
			CompletedAt: time.Unix(in.int("completed_at"), 0),
			Error:       in.str("error"),
		}
		if p, ok := in["parameters"]; ok {
			r.Parameters = p
		}
		if p, ok := in["result"]; ok {
			r.Result = p
		}
		_, err = a.Tools().Record(ctx, r)
	case "toolStats":
		var st []agentfs.ToolStats
		if st, err = a.Tools().Stats(ctx); err == nil {
			list := []any{}
			for _, s := range st {
				list = append(list, map[string]any{"name": s.Name, "total_calls": s.TotalCalls, "successful": s.Successful, "failed": s.Failed})
			}
			got = map[string]any{"stats": list}
		}
	default:
		return fmt.Errorf("unknown op %q", s.Op)
	}
	return check(s.Expect, got, err)
}

func typeName(st agentfs.Stat) string { return st.TypeName() }

// check compares a step's outcome with its expectation: an errno name,
// or the listed result fields (compared as JSON values).
func check(expect map[string]json.RawMessage, got map[string]any, err error) error {
	if raw, ok := expect["error"]; ok {
		var want string
		if jerr := json.Unmarshal(raw, &want); jerr != nil {
			return jerr
		}
		if err == nil {
			return fmt.Errorf("succeeded, want %s", want)
		}
		if name := vfs.ErrnoName(vfs.Errno(err)); name != want {
			return fmt.Errorf("error %v (%s), want %s", err, name, want)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("error %v, want success", err)
	}
	keys := make([]string, 0, len(expect))
	for k := range expect {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			return fmt.Errorf("expect field %q: the op has no such result", k)
		}
		var want any
		if err := json.Unmarshal(expect[k], &want); err != nil {
			return err
		}
		// Normalise the result through JSON so numbers and lists compare
		// as the JSON text would.
		b, _ := json.Marshal(g)
		var norm any
		_ = json.Unmarshal(b, &norm)
		if !reflect.DeepEqual(norm, want) {
			return fmt.Errorf("%s = %s, want %s", k, clip(string(b)), clip(string(expect[k])))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..." + fmt.Sprintf("(%d chars)", len(s))
	}
	return strings.ToValidUTF8(s, "?")
}

// TestVectorsDocumented keeps spec/vectors/README.md and the vectors in
// step: every op used is documented, and every documented op is used.
func TestVectorsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../spec/vectors/README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		for _, part := range strings.Split(cell, ",") {
			if op := strings.Trim(strings.TrimSpace(part), "`"); op != "" && !strings.Contains(op, ".json") {
				documented[op] = true
			}
		}
	}
	used := map[string]bool{}
	for _, v := range loadVectors(t) {
		for _, s := range v.Steps {
			used[s.Op] = true
			if !documented[s.Op] {
				t.Errorf("%s uses op %q, not in the README's table", v.Name, s.Op)
			}
		}
	}
	for op := range documented {
		if !used[op] {
			t.Errorf("op %q is documented but no vector uses it", op)
		}
	}
	if len(documented) < 20 {
		t.Errorf("found only %d documented ops: the README's table format changed?", len(documented))
	}
}
