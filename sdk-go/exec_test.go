package agentfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// processCase is one case of spec/process/cases.json, shared by every SDK.
type processCase struct {
	Name    string   `json:"name"`
	Script  string   `json:"script"`
	Shell   []string `json:"shell"`
	WaitFor string   `json:"wait_for"`
	Write   *string  `json:"write"`
	Kill    *int     `json:"kill"`
	Expect  struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	} `json:"expect"`
}

func processCases(t *testing.T) []processCase {
	b, err := os.ReadFile(filepath.Join("..", "spec", "process", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []processCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func runProcessCase(t *testing.T, sb agentfs.Sandbox, c processCase) agentfs.ExecResult {
	ctx := context.Background()
	if c.Shell != nil {
		sh, err := sb.Shell(ctx, agentfs.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer sh.Close(ctx)
		var r agentfs.ExecResult
		for _, s := range c.Shell {
			if r, err = sh.Run(ctx, s, agentfs.ExecOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	p, err := sb.Spawn(ctx, c.Script, agentfs.SpawnOptions{KeepStdinOpen: c.Write != nil})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut []byte
	for c.WaitFor != "" && !bytes.Contains(out, []byte(c.WaitFor)) {
		cs, done, err := p.Read(ctx)
		if err != nil || done {
			t.Fatalf("%s: read: %v (ended: %v)", c.Name, err, done)
		}
		for _, ch := range cs {
			if ch.Stream == 1 {
				out = append(out, ch.Data...)
			} else {
				errOut = append(errOut, ch.Data...)
			}
		}
	}
	if c.Write != nil {
		if err := p.Write(ctx, []byte(*c.Write)); err != nil {
			t.Fatal(err)
		}
		if err := p.CloseStdin(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.Kill != nil {
		if err := p.Kill(ctx, *c.Kill); err != nil {
			t.Fatal(err)
		}
	}
	r, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Stdout, r.Stderr = append(out, r.Stdout...), append(errOut, r.Stderr...)
	return r
}

func testProcesses(t *testing.T, sb agentfs.Sandbox) {
	for _, c := range processCases(t) {
		r := runProcessCase(t, sb, c)
		if r.ExitCode != c.Expect.ExitCode || string(r.Stdout) != c.Expect.Stdout || string(r.Stderr) != c.Expect.Stderr {
			t.Errorf("%s: got exit %d stdout %q stderr %q, want %+v", c.Name, r.ExitCode, r.Stdout, r.Stderr, c.Expect)
		}
	}
	ctx := context.Background()
	// One-shot Exec, and processes listed and killed by pid.
	r, err := sb.Exec(ctx, "cat; echo err >&2; exit 2", agentfs.ExecOptions{Stdin: []byte("in\n")})
	if err != nil || r.ExitCode != 2 || string(r.Stdout) != "in\n" || string(r.Stderr) != "err\n" {
		t.Errorf("exec: %+v %v", r, err)
	}
	p, err := sb.Spawn(ctx, "sleep 3600", agentfs.SpawnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := sb.Processes(ctx)
	if err != nil || len(l) != 1 || l[0].PID != p.PID || !l[0].Running {
		t.Fatalf("processes: %+v %v", l, err)
	}
	if err := sb.Kill(ctx, p.PID, 2); err != nil {
		t.Fatal(err)
	}
	if r, err := p.Wait(ctx); err != nil || r.ExitCode != 130 || r.Signal != 2 {
		t.Errorf("killed: %+v %v", r, err)
	}
	if err := sb.Kill(ctx, p.PID, 9); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("kill of a reaped pid: %v", err)
	}
}

func TestProcessesLocal(t *testing.T) {
	a, err := agentfs.Open(context.Background(), agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	testProcesses(t, a)
}

func TestProcessesRemote(t *testing.T) {
	testProcesses(t, remoteOpener(t)(t).(*agentfs.Remote))
}

func TestBindingsLocal(t *testing.T) {
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	double := agentfs.Binding{
		Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`),
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			var v struct{ N int }
			if err := json.Unmarshal(args, &v); err != nil {
				return nil, err
			}
			if v.N < 0 {
				return nil, errors.New("negative")
			}
			return v.N * 2, nil
		},
	}
	r, err := a.Exec(ctx, "double --n 21; double --n -1 || echo failed:$?", agentfs.ExecOptions{Bindings: map[string]agentfs.Binding{"double": double}})
	if err != nil || string(r.Stdout) != "42\nfailed:1\n" || !strings.Contains(string(r.Stderr), "negative") {
		t.Errorf("exec with a binding: %+v %v (stderr %q)", r, err, r.Stderr)
	}
	sh, err := a.Shell(ctx, agentfs.ExecOptions{Bindings: map[string]agentfs.Binding{"double": double}})
	if err != nil {
		t.Fatal(err)
	}
	sh.Run(ctx, "N=4", agentfs.ExecOptions{})
	if r, err := sh.Run(ctx, `double --n "$N"`, agentfs.ExecOptions{}); err != nil || string(r.Stdout) != "8\n" {
		t.Errorf("shell binding: %+v %v", r, err)
	}
	sh.Close(ctx)
	// Remote agents refuse bindings: the server cannot call back.
	rem := remoteOpener(t)(t).(*agentfs.Remote)
	if _, err := rem.Exec(ctx, "double", agentfs.ExecOptions{Bindings: map[string]agentfs.Binding{"double": double}}); !errors.Is(err, agentfs.ErrNotSupported) {
		t.Errorf("remote binding: %v", err)
	}
}

// A remote agent's spawned process streams (StreamProcess): a client that
// closes takes it with it, as over stdio. The server kills it when the
// stream ends; the script's audit record, written once it stopped, shows
// the failure.
func TestRemoteStreamedProcessEndsWithClose(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	dial := func() *agentfs.Remote {
		r, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: srv.URL, Agent: "streamed", Token: testToken, Create: true, HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := dial()
	p, err := a.Spawn(ctx, "echo up; while :; do sleep 3600; done # victim-go", agentfs.SpawnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, done, err := p.Read(ctx)
	if err != nil || done || len(cs) != 1 || string(cs[0].Data) != "up\n" {
		t.Fatalf("first read %v %v %v", cs, done, err)
	}
	a.Close()
	b := dial()
	defer b.Close()
	for {
		ps, err := b.Processes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		time.Sleep(time.Millisecond) // polling, not a bound
	}
	calls, err := b.Tools().List(ctx, agentfs.ToolFilter{Name: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if strings.Contains(string(c.Parameters), "victim-go") {
			if c.Error == nil {
				t.Errorf("the killed script's record shows no failure: %+v", c)
			}
			return
		}
	}
	t.Errorf("no audit record of the streamed script: %v", calls)
}
