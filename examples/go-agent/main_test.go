package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/examples/go-agent/fakemodel"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// TestLoop runs the agent loop against the scripted model over HTTP on
// 127.0.0.1 and checks the files, the kv and the tool-call log it left.
func TestLoop(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "a.db")
	agent, err := agentfs.Open(ctx, agentfs.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := Seed(ctx, agent); err != nil {
		t.Fatal(err)
	}
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	answer, err := Run(ctx, agent, Config{BaseURL: srv.URL, Model: "scripted", Task: "Find the TODOs in /src and write them to /TODO.md.", MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	if answer != "Wrote /TODO.md with the TODOs of /src." {
		t.Fatalf("answer %q", answer)
	}
	// The model was offered the eight tools of spec/tools, every time.
	want := []string{"read_file", "write_file", "edit_file", "list", "search", "bash", "kv_get", "kv_set"}
	if len(srv.Tools) != 5 || !reflect.DeepEqual(srv.Tools[0], want) {
		t.Fatalf("tools offered: %v", srv.Tools)
	}

	todo, err := agent.FS().ReadFile(ctx, "/TODO.md")
	if err != nil {
		t.Fatal(err)
	}
	wantTodo := "# TODO\n\n- [ ] retry when the database is busy (/src/db.go:4)\n- [ ] read the port from the environment (/src/server.go:3)\n"
	if string(todo) != wantTodo {
		t.Fatalf("TODO.md:\n%s", todo)
	}
	var count int
	if err := agent.KV().Get(ctx, "todo:count", &count); err != nil || count != 2 {
		t.Fatalf("todo:count %d, %v", count, err)
	}
	calls, err := agent.Tools().List(ctx, agentfs.ToolFilter{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.Name+":"+c.Status)
	}
	if strings.Join(names, " ") != "search:success write_file:success bash:success kv_set:success" {
		t.Fatalf("log: %v", names)
	}
	agent.Close()

	// The CLI's timeline shows the same steps (agentfs on PATH, as
	// examples/run.sh sets it up).
	out, err := exec.Command("agentfs", "timeline", db, "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var tl []struct{ Name string }
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&tl); err != nil || len(tl) != 4 || tl[0].Name != "kv_set" {
		t.Fatalf("timeline: %s %v", out, err)
	}
}
