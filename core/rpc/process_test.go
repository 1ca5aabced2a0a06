package rpc

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// procClient is what both the stdio client and the Connect client offer.
type procClient interface {
	StartProcess(context.Context, *v1.StartProcessRequest) (*v1.StartProcessResponse, error)
	ReadProcess(context.Context, *v1.ReadProcessRequest) (*v1.ReadProcessResponse, error)
	WriteProcess(context.Context, *v1.WriteProcessRequest) (*v1.WriteProcessResponse, error)
	KillProcess(context.Context, *v1.KillProcessRequest) (*v1.KillProcessResponse, error)
	ListProcesses(context.Context, *v1.ListProcessesRequest) (*v1.ListProcessesResponse, error)
	OpenShell(context.Context, *v1.OpenShellRequest) (*v1.OpenShellResponse, error)
	CloseShell(context.Context, *v1.CloseShellRequest) (*v1.CloseShellResponse, error)
}

// readUntil reads pid until want is in its stdout (or it exits).
func readUntil(t *testing.T, c procClient, pid uint64, want string) (stdout, stderr string, end *v1.ReadProcessResponse) {
	t.Helper()
	for {
		r, err := c.ReadProcess(context.Background(), &v1.ReadProcessRequest{Pid: pid, WaitMs: 20000})
		if err != nil {
			t.Fatalf("ReadProcess: %v", err)
		}
		for _, ch := range r.Chunks {
			if ch.Stream == 1 {
				stdout += string(ch.Data)
			} else {
				stderr += string(ch.Data)
			}
		}
		if r.Exited {
			return stdout, stderr, r
		}
		if want != "" && strings.Contains(stdout, want) {
			return stdout, stderr, nil
		}
	}
}

func testProcesses(t *testing.T, c procClient) {
	ctx := context.Background()
	// Streaming both ways: the first line comes back while stdin is open.
	st, err := c.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `echo ready; read -r x; echo "got $x" >&2; exit 4`}, KeepStdinOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, end := readUntil(t, c, st.Pid, "ready\n"); end != nil || out != "ready\n" {
		t.Fatalf("first read %q %v", out, end)
	}
	if _, err := c.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: st.Pid, Data: []byte("hi\n"), CloseStdin: true}); err != nil {
		t.Fatal(err)
	}
	_, errOut, end := readUntil(t, c, st.Pid, "")
	if errOut != "got hi\n" || end.ExitCode != 4 {
		t.Errorf("stderr %q exit %v", errOut, end)
	}
	// Reaped: the pid is gone.
	if _, err := c.ReadProcess(ctx, &v1.ReadProcessRequest{Pid: st.Pid}); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("read of a reaped pid: %v", err)
	}

	// Background processes are listed and killed by id.
	bg, err := c.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `sleep 3600`}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.ListProcesses(ctx, &v1.ListProcessesRequest{})
	if err != nil || len(l.Processes) != 1 || l.Processes[0].Pid != bg.Pid || !l.Processes[0].Running || l.Processes[0].Script != "sleep 3600" {
		t.Fatalf("list: %v %v", l, err)
	}
	if _, err := c.KillProcess(ctx, &v1.KillProcessRequest{Pid: bg.Pid, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if _, _, end := readUntil(t, c, bg.Pid, ""); end.ExitCode != 143 || end.Signal != 15 {
		t.Errorf("killed: %v", end)
	}

	// A persistent shell.
	sh, err := c.OpenShell(ctx, &v1.OpenShellRequest{Exec: &v1.ExecRequest{Dir: "/"}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(script string) string {
		p, err := c.StartProcess(ctx, &v1.StartProcessRequest{ShellId: sh.ShellId, Exec: &v1.ExecRequest{Script: script}})
		if err != nil {
			t.Fatal(err)
		}
		out, _, _ := readUntil(t, c, p.Pid, "")
		return out
	}
	run(`mkdir -p /w; cd /w; export A=1; f() { echo "f$1"; }`)
	if got := run(`pwd; echo $A; f 2`); got != "/w\n1\nf2\n" {
		t.Errorf("shell state: %q", got)
	}
	if _, err := c.CloseShell(ctx, &v1.CloseShellRequest{ShellId: sh.ShellId}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, &v1.StartProcessRequest{ShellId: sh.ShellId, Exec: &v1.ExecRequest{Script: "pwd"}}); err == nil {
		t.Error("start in a closed shell succeeded")
	}
}

func TestStdioProcesses(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	testProcesses(t, agentfsv1rpc.NewProcessServiceClient(c))
}

func TestHTTPProcesses(t *testing.T) {
	srv := startHTTP(t, "")
	ctx := context.Background()
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "p"}); err != nil {
		t.Fatal(err)
	}
	testProcesses(t, agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL, headers("", "p")))
}

// Attack: a client that starts a process and goes away. Over stdio the
// connection's end kills it before the engine closes the database (the
// killed script's audit record, written when it stops, is there); over
// HTTP its lease runs out and the table drops it.
func TestAttackDisconnectKillsProcesses(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "a.db")
		c, _ := startEngine(t, &v1.Hello{ProtocolVersion: ProtocolVersion, Client: "test", Open: &v1.OpenOptions{Path: db}})
		pc := agentfsv1rpc.NewProcessServiceClient(c)
		st, err := pc.StartProcess(context.Background(), &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "echo up; sleep 3600 # victim"}})
		if err != nil {
			t.Fatal(err)
		}
		readUntil(t, pc, st.Pid, "up\n")
		c.w.Close() // the client disconnects
		if err := <-c.done; err != nil {
			t.Fatalf("engine: %v", err)
		}
		c.done <- nil // for the cleanup's receive
		a, err := core.Open(context.Background(), db, core.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		calls, err := a.Tools.List(context.Background(), toolcalls.Filter{Name: "exec"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, call := range calls {
			found = found || strings.Contains(fmt.Sprint(string(call.Parameters)), "victim")
		}
		if !found {
			t.Errorf("no audit record of the killed script: %v", calls)
		}
	})
	t.Run("http-lease", func(t *testing.T) {
		srv := startHTTP(t, "")
		ctx := context.Background()
		admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
		if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "p"}); err != nil {
			t.Fatal(err)
		}
		pc := agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL, headers("", "p"))
		st, err := pc.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "sleep 3600"}, LeaseMs: 100})
		if err != nil {
			t.Fatal(err)
		}
		det, err := pc.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "sleep 3600"}, LeaseMs: 100, Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		// ListProcesses does not renew leases: wait for the table to drop
		// the abandoned one (the test's own timeout bounds the wait).
		for {
			l, err := pc.ListProcesses(ctx, &v1.ListProcessesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var pids []uint64
			for _, p := range l.Processes {
				pids = append(pids, p.Pid)
			}
			if len(pids) == 1 {
				if pids[0] != det.Pid {
					t.Fatalf("left %v, want only the detached %d (abandoned %d)", pids, det.Pid, st.Pid)
				}
				break
			}
			if _, err := pc.ReadProcess(ctx, &v1.ReadProcessRequest{Pid: det.Pid, WaitMs: 50}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pc.KillProcess(ctx, &v1.KillProcessRequest{Pid: det.Pid}); err != nil {
			t.Fatal(err)
		}
	})
}

// Hostile caller: more processes than the cap are refused with
// RESOURCE_EXHAUSTED, not queued.
func TestAttackProcessCap(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	pc := agentfsv1rpc.NewProcessServiceClient(c)
	ctx := context.Background()
	var err error
	n := 0
	for ; n < 200 && err == nil; n++ {
		_, err = pc.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "sleep 3600"}})
	}
	if err == nil || !strings.Contains(err.Error(), "64 processes already") || n-1 != 64 {
		t.Fatalf("after %d starts: %v", n-1, err)
	}
}
