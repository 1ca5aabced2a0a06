package rpc

import (
	"context"
	"path/filepath"
	"testing"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// BenchmarkStdioRoundTrip measures one call through the stdio protocol
// (frames over in-process pipes, the engine's goroutine per call), with
// the cheapest method that reaches the database layer and with a Stat.
func BenchmarkStdioRoundTrip(b *testing.B) {
	c, _ := startEngine(b, &v1.Hello{ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Path: filepath.Join(b.TempDir(), "a.db")}})
	fsc := agentfsv1rpc.NewFilesystemServiceClient(c)
	ctx := context.Background()
	if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/f", Data: []byte("x")}); err != nil {
		b.Fatal(err)
	}
	b.Run("Access", func(b *testing.B) {
		for b.Loop() {
			if _, err := fsc.Access(ctx, &v1.AccessRequest{Path: "/"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stat", func(b *testing.B) {
		for b.Loop() {
			if _, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/f"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
