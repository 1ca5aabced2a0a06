// Command xlang is the Go side of the cross-language test
// (tests/xlang/README.md): "write DB" replays tests/compat/fixture-ops.json
// through the Go SDK, "dump DB" prints the canonical JSON of
// tests/compat/dump.mjs.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

type op struct {
	Op          string          `json:"op"`
	Path        string          `json:"path"`
	Target      string          `json:"target"`
	Text        *string         `json:"text"`
	Pattern     *int            `json:"pattern"`
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Name        string          `json:"name"`
	As          string          `json:"as"`
	Ref         string          `json:"ref"`
	Parameters  json.RawMessage `json:"parameters"`
	Result      json.RawMessage `json:"result"`
	Error       string          `json:"error"`
	StartedAt   int64           `json:"startedAt"`
	CompletedAt int64           `json:"completedAt"`
}

func (o op) content() []byte {
	if o.Text != nil {
		return []byte(*o.Text)
	}
	b := make([]byte, *o.Pattern)
	for i := range b {
		b[i] = byte(i % 256)
	}
	return b
}

// raw keeps an absent JSON value absent (nil), not "null".
func raw(m json.RawMessage) any {
	if m == nil {
		return nil
	}
	return m
}

func write(ctx context.Context, db string) error {
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(db + s)
	}
	_, self, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "..", "tests", "compat", "fixture-ops.json"))
	if err != nil {
		return err
	}
	var doc struct{ Ops []op }
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	a, err := agentfs.Open(ctx, agentfs.Options{Path: db})
	if err != nil {
		return err
	}
	defer a.Close()
	fsys, kv, tools := a.FS(), a.KV(), a.Tools()
	ids := map[string]int64{}
	for _, o := range doc.Ops {
		var err error
		switch o.Op {
		case "mkdir":
			err = fsys.Mkdir(ctx, o.Path, 0o755)
		case "writeFile":
			err = fsys.WriteFile(ctx, o.Path, o.content(), agentfs.WriteOptions{})
		case "symlink":
			err = fsys.Symlink(ctx, o.Target, o.Path)
		case "kvSet":
			err = kv.Set(ctx, o.Key, o.Value)
		case "toolStart":
			ids[o.As], err = tools.Start(ctx, o.Name, raw(o.Parameters))
		case "toolSuccess":
			err = tools.Success(ctx, ids[o.Ref], raw(o.Result))
		case "toolError":
			err = tools.Error(ctx, ids[o.Ref], o.Error)
		case "toolRecord":
			_, err = tools.Record(ctx, agentfs.ToolRecord{Name: o.Name, StartedAt: time.Unix(o.StartedAt, 0), CompletedAt: time.Unix(o.CompletedAt, 0),
				Parameters: raw(o.Parameters), Result: raw(o.Result), Error: o.Error})
		default:
			err = fmt.Errorf("unknown op %q", o.Op)
		}
		if err != nil {
			return err
		}
	}
	return a.Close()
}

func dump(ctx context.Context, db string) error {
	a, err := agentfs.Open(ctx, agentfs.Options{Path: db})
	if err != nil {
		return err
	}
	defer a.Close()
	fsys := a.FS()
	files := []map[string]any{}
	var walk func(dir string) error
	walk = func(dir string) error {
		names, err := fsys.Readdir(ctx, dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			p := dir + "/" + n
			if dir == "/" {
				p = "/" + n
			}
			st, err := fsys.Lstat(ctx, p)
			if err != nil {
				return err
			}
			e := map[string]any{"path": p, "mode": st.Mode & 0o7777}
			files = append(files, e)
			switch {
			case st.IsDir():
				e["type"] = "dir"
				if err := walk(p); err != nil {
					return err
				}
			case st.IsRegular():
				data, err := fsys.ReadFile(ctx, p)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				e["type"], e["size"], e["sha256"] = "file", st.Size, hex.EncodeToString(sum[:])
				if int64(len(data)) != st.Size {
					e["content_length"] = len(data)
				}
			case st.IsSymlink():
				t, err := fsys.Readlink(ctx, p)
				if err != nil {
					return err
				}
				e["type"], e["target"] = "symlink", t
			default:
				e["type"], e["raw_mode"] = "other", st.Mode
			}
		}
		return nil
	}
	if err := walk("/"); err != nil {
		return err
	}
	sort.Slice(files, func(i, j int) bool { return files[i]["path"].(string) < files[j]["path"].(string) })
	entries, err := a.KV().List(ctx, "")
	if err != nil {
		return err
	}
	kvs := []map[string]any{}
	for _, e := range entries {
		kvs = append(kvs, map[string]any{"key": e.Key, "value": e.Value})
	}
	users, err := a.KV().List(ctx, "user:")
	if err != nil {
		return err
	}
	userKeys := []string{}
	for _, e := range users {
		userKeys = append(userKeys, e.Key)
	}
	calls, err := a.Tools().List(ctx, agentfs.ToolFilter{Ascending: true})
	if err != nil {
		return err
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].ID < calls[j].ID })
	tools := []map[string]any{}
	for _, c := range calls {
		t := map[string]any{"id": c.ID, "name": c.Name, "status": c.Status}
		if c.Parameters != nil {
			t["parameters"] = c.Parameters
		}
		if c.Result != nil {
			t["result"] = c.Result
		}
		if c.Error != nil {
			t["error"] = *c.Error
		}
		tools = append(tools, t)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"files": files, "kv": kvs, "kv_prefix_user": userKeys, "tools": tools})
}

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "write" && os.Args[1] != "dump") {
		fmt.Fprintln(os.Stderr, "usage: xlang write DB | dump DB")
		os.Exit(2)
	}
	run := write
	if os.Args[1] == "dump" {
		run = dump
	}
	if err := run(context.Background(), os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "xlang:", err)
		os.Exit(1)
	}
}
