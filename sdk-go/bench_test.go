package agentfs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// BenchmarkSDK measures small operations through the Agent interface,
// in-process and over HTTP on loopback (results in docs/BENCHMARKS.md).
func BenchmarkSDK(b *testing.B) {
	ctx := context.Background()
	srv := startServer(b)
	openers := []struct {
		name string
		open func(b *testing.B) agentfs.Agent
	}{
		{"local", func(b *testing.B) agentfs.Agent {
			a, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(b.TempDir(), "b.db")})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { a.Close() })
			return a
		}},
		{"remote", func(b *testing.B) agentfs.Agent {
			r, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: srv.URL, Agent: fmt.Sprintf("bench-%d", agentSeq.Add(1)), Token: testToken, Create: true, HTTPClient: srv.Client()})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}},
	}
	data := make([]byte, 1024)
	for _, o := range openers {
		b.Run(o.name, func(b *testing.B) {
			a := o.open(b)
			f := a.FS()
			b.Run("writeFile-1KiB", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if err := f.WriteFile(ctx, fmt.Sprintf("/w%d", i%1000), data, agentfs.WriteOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("readFile-1KiB", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := f.ReadFile(ctx, fmt.Sprintf("/w%d", i%1000)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("stat", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := f.Stat(ctx, fmt.Sprintf("/w%d", i%1000)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("kv.set", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if err := a.KV().Set(ctx, fmt.Sprintf("k%d", i%1000), i); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("kv.get", func(b *testing.B) {
				var v int
				for i := 0; b.Loop(); i++ {
					if err := a.KV().Get(ctx, fmt.Sprintf("k%d", i%1000), &v); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("tools.record", func(b *testing.B) {
				now := time.Now()
				for b.Loop() {
					if _, err := a.Tools().Record(ctx, agentfs.ToolRecord{Name: "t", StartedAt: now, CompletedAt: now, Parameters: map[string]int{"n": 1}}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
