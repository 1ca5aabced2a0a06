package rpc

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// headers adds the token and the agent to every call of a client.
func headers(token, agent string) connect.ClientOption {
	return connect.WithInterceptors(headerInterceptor{token, agent})
}

// headerInterceptor sets the token and agent headers on unary calls and
// on streams (StreamProcess).
type headerInterceptor struct{ token, agent string }

func (h headerInterceptor) set(hd http.Header) {
	if h.token != "" {
		hd.Set("Authorization", "Bearer "+h.token)
	}
	if h.agent != "" {
		hd.Set(AgentHeader, h.agent)
	}
}

func (h headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		h.set(req.Header())
		return next(ctx, req)
	}
}

func (h headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader())
		return conn
	}
}

func (h headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func startHTTP(t *testing.T, token string) *httptest.Server {
	t.Helper()
	dir, err := NewAgentDir(t.TempDir(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(NewHTTPHandler(dir, HTTPOptions{Version: "test", Token: token, MaxRequestBytes: 1 << 20}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); dir.Close() })
	return srv
}

// apiError extracts the agentfs.v1.Error detail of a Connect error.
func apiError(t *testing.T, err error) *v1.Error {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a Connect error: %v", err)
	}
	for _, d := range ce.Details() {
		if m, err := d.Value(); err == nil {
			if e, ok := m.(*v1.Error); ok {
				return e
			}
		}
	}
	t.Fatalf("no agentfs.v1.Error detail in %v", err)
	return nil
}

func TestHTTPAgentsFilesAndErrors(t *testing.T) {
	srv := startHTTP(t, "s3cret")
	ctx := context.Background()
	for _, proto := range []struct {
		name string
		opt  connect.ClientOption
	}{{"connect", connect.WithProtoJSON()}, {"grpc", connect.WithGRPC()}, {"grpcweb", connect.WithGRPCWeb()}} {
		t.Run(proto.name, func(t *testing.T) {
			id := "agent-" + proto.name
			admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, proto.opt, headers("s3cret", ""))
			if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: id}); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: id}); connect.CodeOf(err) != connect.CodeAlreadyExists {
				t.Errorf("CreateAgent twice: %v", err)
			}
			fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, proto.opt, headers("s3cret", id))
			if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/a/b.txt", Data: []byte("hi"), CreateParents: true}); err != nil {
				t.Fatal(err)
			}
			r, err := fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: "/a/b.txt"})
			if err != nil || string(r.Data) != "hi" {
				t.Fatalf("ReadFile: %v %v", r, err)
			}
			_, err = fsc.Lstat(ctx, &v1.LstatRequest{Path: "/a/none"})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("Lstat missing: %v", err)
			}
			e := apiError(t, err)
			if e.Code != "ENOENT" || e.Errno != int32(syscall.ENOENT) || e.Syscall != "lstat" || e.Path != "/a/none" {
				t.Errorf("error detail: %v", e)
			}
			// Handles live on the server, per agent.
			h, err := fsc.Open(ctx, &v1.OpenRequest{Path: "/a/b.txt"})
			if err != nil {
				t.Fatal(err)
			}
			p, err := fsc.Pread(ctx, &v1.PreadRequest{Handle: h.Handle, Offset: 1, Size: 10})
			if err != nil || string(p.Data) != "i" {
				t.Fatalf("Pread: %v %v", p, err)
			}
			// An unknown agent is NOT_FOUND; no agent header is INVALID_ARGUMENT.
			other := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, proto.opt, headers("s3cret", "nobody"))
			if _, err := other.Stat(ctx, &v1.StatRequest{Path: "/"}); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("unknown agent: %v", err)
			}
			none := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, proto.opt, headers("s3cret", ""))
			if _, err := none.Stat(ctx, &v1.StatRequest{Path: "/"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("no agent header: %v", err)
			}
		})
	}
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, headers("s3cret", ""))
	l, err := admin.ListAgents(ctx, &v1.ListAgentsRequest{})
	if err != nil || len(l.Agents) != 3 {
		t.Fatalf("ListAgents: %v %v", l, err)
	}
}

func TestHTTPAuthAndLimits(t *testing.T) {
	srv := startHTTP(t, "s3cret")
	ctx := context.Background()
	for _, tok := range []string{"", "wrong"} {
		c := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, headers(tok, ""))
		_, err := c.ListAgents(ctx, &v1.ListAgentsRequest{})
		if connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("token %q: %v, want unauthenticated", tok, err)
		}
	}
	// Health needs no token.
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}
	// Bodies over the limit are refused before reaching the database.
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, headers("s3cret", ""))
	if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "big"}); err != nil {
		t.Fatal(err)
	}
	fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, headers("s3cret", "big"))
	_, err = fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/big", Data: make([]byte, 2<<20)})
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("2 MiB body with a 1 MiB limit: %v", err)
	}
	if _, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/big"}); !errors.Is(FromProto(apiError(t, err)), fs.ErrNotExist) {
		t.Errorf("the refused write left a file: %v", err)
	}
	// Bindings cannot call back over HTTP.
	sb := agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("s3cret", "big"))
	if _, err := sb.Exec(ctx, &v1.ExecRequest{Script: "x", Bindings: []*v1.BindingSpec{{Name: "x"}}}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("bindings over HTTP: %v", err)
	}
	res, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo hi > /f; cat /f"})
	if err != nil || string(res.Stdout) != "hi\n" {
		t.Errorf("Exec over HTTP: %v %v", res, err)
	}
}
