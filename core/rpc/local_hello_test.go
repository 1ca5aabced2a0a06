package rpc

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// helloFrame is the client's Hello frame as Local.Hello takes it.
func helloFrame(t *testing.T, id uint64, h *v1.Hello) []byte {
	t.Helper()
	return mustMarshal(t, &v1.Frame{Id: id, Body: &v1.Frame_Hello{Hello: h}})
}

func decodeAnswer(t *testing.T, b []byte) *v1.Frame {
	t.Helper()
	var f v1.Frame
	if err := proto.Unmarshal(b, &f); err != nil {
		t.Fatalf("answer does not decode: %v", err)
	}
	return &f
}

// Local.Hello makes the handshake on the caller's goroutine: its answer
// is the Welcome, calls run at once, and the connection then serves and
// ends as one whose Hello came through Write.
func TestLocalHelloOpensOnTheCallersGoroutine(t *testing.T) {
	var out [][]byte
	l := ServeLocal(context.Background(), "test", io.Discard, func(p []byte) { out = append(out, append([]byte(nil), p...)) })
	w := decodeAnswer(t, l.Hello(helloFrame(t, 1, tempHello(t))))
	if w.GetId() != 1 || w.GetWelcome().GetInfo().GetSchemaVersion() != "0.4" || w.GetWelcome().GetEngineVersion() != "test" {
		t.Fatalf("welcome: %v", w)
	}
	fsc := agentfsv1rpc.NewFilesystemServiceClient(syncCaller{l})
	ctx := context.Background()
	if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/a", Data: []byte("x")}); err != nil {
		t.Fatalf("a sync call right after Hello: %v", err)
	}
	// A second Hello is refused and changes nothing.
	again := decodeAnswer(t, l.Hello(helloFrame(t, 2, tempHello(t))))
	if again.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION {
		t.Fatalf("second hello: %v", again)
	}
	if got, err := fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: "/a"}); err != nil || string(got.Data) != "x" {
		t.Fatalf("the first agent after a second hello: %q %v", got.GetData(), err)
	}
	l.CloseWrite()
	if err := l.Wait(); err != nil {
		t.Fatalf("end: %v", err)
	}
	if len(out) != 0 {
		t.Fatalf("Hello's answer also went out as frames: %d writes", len(out))
	}
}

// A refused Hello answers with the refusal and ends the connection with
// ErrHandshake, as a refused handshake through Write does.
func TestLocalHelloRefused(t *testing.T) {
	l := ServeLocal(context.Background(), "test", io.Discard, func([]byte) {})
	h := tempHello(t)
	h.ProtocolVersion = ProtocolVersion + 1
	f := decodeAnswer(t, l.Hello(helloFrame(t, 7, h)))
	if f.GetId() != 7 || f.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION {
		t.Fatalf("refusal: %v", f)
	}
	if err := l.Wait(); !errors.Is(err, ErrHandshake) {
		t.Fatalf("Wait after a refused hello: %v", err)
	}
	if _, err := agentfsv1rpc.NewFilesystemServiceClient(syncCaller{l}).Stat(context.Background(), &v1.StatRequest{Path: "/"}); err == nil {
		t.Fatal("a sync call after a refused hello succeeded")
	}
}

// Once the client's bytes have begun, Hello is refused: the handshake is
// the one read from them.
func TestLocalHelloAfterWriteIsRefused(t *testing.T) {
	c, _, _ := startLocal(t, tempHello(t))
	l := c.w.(localWriter).l
	f := decodeAnswer(t, l.Hello(helloFrame(t, 9, tempHello(t))))
	if f.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION {
		t.Fatalf("hello after write: %v", f)
	}
}
