package agentfs_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

const testToken = "t0ken"

// startServer runs the HTTP door of the engine (the handler of
// `agentfs serve http`) on a real listener for the test.
func startServer(t testing.TB) *httptest.Server {
	t.Helper()
	dir, err := rpc.NewAgentDir(t.TempDir(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rpc.NewHTTPHandler(dir, rpc.HTTPOptions{Version: "test", Token: testToken}))
	t.Cleanup(func() { srv.Close(); dir.Close() })
	return srv
}

var agentSeq atomic.Int64

// remoteOpener gives each test a new agent on one server.
func remoteOpener(t *testing.T, opts ...connect.ClientOption) func(t *testing.T) agentfs.Agent {
	srv := startServer(t)
	return func(t *testing.T) agentfs.Agent {
		t.Helper()
		id := fmt.Sprintf("agent-%d", agentSeq.Add(1))
		r, err := agentfs.Dial(context.Background(), agentfs.RemoteOptions{URL: srv.URL, Agent: id, Token: testToken, Create: true, HTTPClient: srv.Client(), ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
}

func TestVectorsRemote(t *testing.T) { runVectors(t, remoteOpener(t)) }

// gRPC-Web carries errors in trailers: the same errno must arrive.
func TestVectorsRemoteGRPCWeb(t *testing.T) { runVectors(t, remoteOpener(t, connect.WithGRPCWeb())) }

func TestAPIRemote(t *testing.T) { testAPI(t, remoteOpener(t)) }

func TestIOFSRemote(t *testing.T) {
	testIOFS(t, remoteOpener(t)(t).FS())
}

func TestRemoteDial(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	opts := func(token, agent string, create bool) agentfs.RemoteOptions {
		return agentfs.RemoteOptions{URL: srv.URL, Agent: agent, Token: token, Create: create, HTTPClient: srv.Client()}
	}

	// Wrong and missing tokens fail at Dial with a permission error.
	t.Setenv("AGENTFS_TOKEN", "")
	for _, tok := range []string{"", "wrong"} {
		_, err := agentfs.Dial(ctx, opts(tok, "a1", true))
		var re *agentfs.RemoteError
		if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &re) || !strings.Contains(err.Error(), "bearer token") {
			t.Errorf("Dial with token %q = %v, want a permission error about the token", tok, err)
		}
	}
	// The token from the environment, as the server reads it.
	t.Setenv("AGENTFS_TOKEN", testToken)
	if _, err := agentfs.Dial(ctx, opts("", "from-env", true)); err != nil {
		t.Errorf("Dial with $AGENTFS_TOKEN = %v", err)
	}
	t.Setenv("AGENTFS_TOKEN", "")

	// An agent that does not exist, without Create.
	if _, err := agentfs.Dial(ctx, opts(testToken, "nobody", false)); !errors.Is(err, agentfs.ErrNotFound) {
		t.Errorf("Dial(nobody) = %v, want ErrNotFound", err)
	}
	if _, err := agentfs.Dial(ctx, opts(testToken, "bad/id", true)); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Dial(bad/id) = %v, want ErrInvalid", err)
	}
	if _, err := agentfs.Dial(ctx, agentfs.RemoteOptions{Agent: "x"}); err == nil {
		t.Error("Dial without URL succeeded")
	}

	// Two clients of one agent see the same data; another agent does not.
	a, err := agentfs.Dial(ctx, opts(testToken, "shared", true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := agentfs.Dial(ctx, opts(testToken, "shared", false))
	if err != nil {
		t.Fatal(err)
	}
	other, err := agentfs.Dial(ctx, opts(testToken, "other", true))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.FS().WriteFile(ctx, "/x", []byte("from a"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.FS().ReadFile(ctx, "/x"); err != nil || string(got) != "from a" {
		t.Errorf("b reads %q, %v", got, err)
	}
	_, err = other.FS().ReadFile(ctx, "/x")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != "/x" || pe.Err != syscall.ENOENT {
		t.Errorf("other agent reads /x: %#v", err)
	}

	// A server that went away is an error, not a hang.
	srv.Close()
	if _, err := a.FS().Stat(ctx, "/x"); err == nil {
		t.Error("Stat after the server closed succeeded")
	}
}

// The other protocols of the server carry the same errors.
func TestRemoteProtocols(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	for name, opts := range map[string][]connect.ClientOption{
		"grpc-web":  {connect.WithGRPCWeb()},
		"json+gzip": {connect.WithProtoJSON(), connect.WithAcceptCompression("gzip", func() connect.Decompressor { return &gzip.Reader{} }, func() connect.Compressor { return gzip.NewWriter(nil) })},
	} {
		t.Run(name, func(t *testing.T) {
			a, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: srv.URL, Agent: "p-" + strings.ReplaceAll(name, "+", "-"), Token: testToken, Create: true, HTTPClient: srv.Client(), ClientOptions: opts})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.FS().WriteFile(ctx, "/f", []byte(strings.Repeat("x", 5000)), agentfs.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if b, err := a.FS().ReadFile(ctx, "/f"); err != nil || len(b) != 5000 {
				t.Errorf("ReadFile = %d bytes, %v", len(b), err)
			}
			if err := a.FS().Rmdir(ctx, "/f"); !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("Rmdir(file) = %v, want ENOTDIR", err)
			}
			if _, err := a.KV().GetJSON(ctx, "nope"); !errors.Is(err, agentfs.ErrNotFound) {
				t.Errorf("GetJSON(nope) = %v", err)
			}
		})
	}
}
