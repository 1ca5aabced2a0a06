package rpc

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// startHTTPCeiling is startHTTP with a ceiling on the limits of Exec
// (nil: the default) and a fresh agent "a".
func startHTTPCeiling(t *testing.T, ceiling *LimitCeiling) *httptest.Server {
	t.Helper()
	dir, err := NewAgentDir(t.TempDir(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(NewHTTPHandler(dir, HTTPOptions{Version: "test", MaxLimits: ceiling}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); dir.Close() })
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// Over HTTP a caller asking for limits "none" took 5 GB in 6 s: the
// server now decides, and refuses what is above its ceiling.
func TestAttack_Limits_HTTPNoneRefused(t *testing.T) {
	ctx := context.Background()
	srv := startHTTPCeiling(t, nil)
	sb := agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("", "a"))
	_, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi", Limits: "none"})
	if connect.CodeOf(err) != connect.CodePermissionDenied || apiError(t, err).Kind != v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED {
		t.Errorf(`limits "none" over HTTP: %v, want PERMISSION_DENIED`, err)
	}
	for _, l := range []string{"", "normal", "hardened"} {
		res, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi", Limits: l})
		if err != nil || string(res.Stdout) != "hi\n" {
			t.Errorf("limits %q under the normal ceiling: %v %v", l, res, err)
		}
	}
	if _, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi", Limits: "lax"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("unknown profile: %v, want INVALID_ARGUMENT", err)
	}

	// Under a hardened ceiling, normal is refused and no choice gets
	// hardened: 2 MB of output passes the hardened 1 MiB output limit.
	hard, err := ParseLimitCeiling("hardened")
	if err != nil {
		t.Fatal(err)
	}
	srv = startHTTPCeiling(t, hard)
	sb = agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("", "a"))
	for _, l := range []string{"normal", "none"} {
		if _, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi", Limits: l}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("limits %q under a hardened ceiling: %v, want PERMISSION_DENIED", l, err)
		}
	}
	res, err := sb.Exec(ctx, &v1.ExecRequest{Script: "head -c 2000000 /dev/zero"})
	if err != nil || res.ExitCode != 124 || !strings.Contains(res.Limit, "output") {
		t.Errorf("no limits asked under a hardened ceiling: %v %v, want the hardened output limit", res, err)
	}

	// The operator may allow "none" explicitly.
	none, _ := ParseLimitCeiling("none")
	srv = startHTTPCeiling(t, none)
	sb = agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("", "a"))
	if res, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi", Limits: "none"}); err != nil || string(res.Stdout) != "hi\n" {
		t.Errorf(`limits "none" allowed by the operator: %v %v`, res, err)
	}
}

// lastExec is the exit code recorded for the latest "exec" tool call,
// or -1 when there is none yet.
func lastExec(t *testing.T, list func() (*v1.ToolListResponse, error)) int {
	t.Helper()
	resp, err := list()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Calls {
		if c.Name == "exec" && c.ResultJson != nil {
			var r struct {
				ExitCode int `json:"exit_code"`
			}
			json.Unmarshal([]byte(*c.ResultJson), &r)
			return r.ExitCode
		}
	}
	return -1
}

// waitFor polls cond; the deadline only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	guard := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(guard) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that goes away cancels its Exec: "sed :a;ba" used to keep a
// core busy after its client left. The run must end as cancelled (exit
// 130 in the audit record), not at its wall time (124).
func TestAttack_Limits_HTTPClientCancelStopsExec(t *testing.T) {
	srv := startHTTPCeiling(t, nil)
	sb := agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("", "a"))
	fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, headers("", "a"))
	tools := agentfsv1connect.NewToolsServiceClient(srv.Client(), srv.URL, headers("", "a"))
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(cctx, &v1.ExecRequest{Script: `echo > /started; echo a | sed ":a;ba"`})
		done <- err
	}()
	waitFor(t, "the script to start", func() bool {
		_, err := fsc.Stat(context.Background(), &v1.StatRequest{Path: "/started"})
		return err == nil
	})
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled Exec succeeded")
	}
	list := func() (*v1.ToolListResponse, error) {
		return tools.ToolList(context.Background(), &v1.ToolListRequest{Name: "exec"})
	}
	waitFor(t, "the exec record", func() bool { return lastExec(t, list) >= 0 })
	if code := lastExec(t, list); code != 130 {
		t.Errorf("the cancelled Exec ended with %d, want 130 (cancelled)", code)
	}
	// The agent answers the next call.
	res, err := sb.Exec(context.Background(), &v1.ExecRequest{Script: "echo next"})
	if err != nil || string(res.Stdout) != "next\n" {
		t.Errorf("the next Exec: %v %v", res, err)
	}
}

// The same over stdio, where the client cancels with a Cancel frame; a
// binding tells the test that the script runs.
func TestAttack_Limits_StdioCancelStopsExec(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	started := make(chan struct{}, 1)
	c.host = func(method string, payload []byte) *v1.Result {
		started <- struct{}{}
		out, _ := proto.Marshal(&v1.CallBindingResponse{ResultJson: `{}`})
		return &v1.Result{Payload: out}
	}
	payload, err := proto.Marshal(&v1.ExecRequest{
		Script:   `ready; echo a | sed ":a;ba"`,
		Limits:   "none", // the local user may; the cancel must still stop it
		Bindings: []*v1.BindingSpec{{Name: "ready", SchemaJson: `{"type":"object"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id, ch := c.send(func(id uint64) *v1.Frame {
		return &v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: agentfsv1connect.SandboxServiceExecProcedure, Payload: payload}}}
	})
	<-started
	c.write(&v1.Frame{Id: id, Body: &v1.Frame_Cancel{Cancel: &v1.Cancel{}}})
	f, ok := <-ch
	if !ok {
		t.Fatal("engine gone")
	}
	if f.GetResult().GetError() == nil {
		t.Errorf("the cancelled Exec answered %v, want an error", f)
	}
	tools := agentfsv1rpc.NewToolsServiceClient(c)
	list := func() (*v1.ToolListResponse, error) {
		return tools.ToolList(context.Background(), &v1.ToolListRequest{Name: "exec"})
	}
	waitFor(t, "the exec record", func() bool { return lastExec(t, list) >= 0 })
	if code := lastExec(t, list); code != 130 {
		t.Errorf("the cancelled Exec ended with %d, want 130 (cancelled)", code)
	}
	res, err := agentfsv1rpc.NewSandboxServiceClient(c).Exec(context.Background(), &v1.ExecRequest{Script: "echo next"})
	if err != nil || string(res.Stdout) != "next\n" {
		t.Errorf("the next Exec: %v %v", res, err)
	}
}
