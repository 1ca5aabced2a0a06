package rpc

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// BenchmarkExecStream measures the streaming latency of ProcessService,
// per transport: first-byte is StartProcess of `echo x; ...` until the
// ReadProcess that waits returns its first chunk; echo-rtt is, in a
// running process, one WriteProcess of a line until a waiting
// ReadProcess returns the line the script printed back. stdio is the
// protocol over in-process pipes (framing and the engine's goroutines,
// no process boundary); http is Connect over loopback TCP (httptest).
// The -stream rows are the same measures with StreamProcess: the output
// comes as a server stream (stdio message frames, a Connect stream)
// instead of ReadProcess calls.
// Each reports p50 and p99 in microseconds (bench/exec-stream.sh).
func BenchmarkExecStream(b *testing.B) {
	b.Run("stdio", func(b *testing.B) {
		c, _ := startEngine(b, &v1.Hello{ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Path: filepath.Join(b.TempDir(), "a.db")}})
		benchExecStream(b, agentfsv1rpc.NewProcessServiceClient(c), c.streamProcess)
	})
	b.Run("http", func(b *testing.B) {
		dir, err := NewAgentDir(b.TempDir(), core.Options{})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(NewHTTPHandler(dir, HTTPOptions{Version: "bench"}))
		defer func() { srv.Close(); dir.Close() }()
		admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
		if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "b"}); err != nil {
			b.Fatal(err)
		}
		pc := agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL, headers("", "b"))
		benchExecStream(b, pc, connectOpener(pc))
	})
}

func benchExecStream(b *testing.B, c procClient, open openStream) {
	ctx := context.Background()
	firstChunk := func(pid uint64) {
		for {
			r, err := c.ReadProcess(ctx, &v1.ReadProcessRequest{Pid: pid, WaitMs: 10000})
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Chunks) > 0 || r.Exited {
				return
			}
		}
	}
	b.Run("first-byte", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			t0 := time.Now()
			st, err := c.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "echo x; sleep 3600", NoAudit: true}})
			if err != nil {
				b.Fatal(err)
			}
			firstChunk(st.Pid)
			ds = append(ds, time.Since(t0))
			c.KillProcess(ctx, &v1.KillProcessRequest{Pid: st.Pid})
			for {
				r, err := c.ReadProcess(ctx, &v1.ReadProcessRequest{Pid: st.Pid, WaitMs: 10000})
				if err != nil || r.Exited {
					break
				}
			}
		}
		reportPercentiles(b, ds)
	})
	b.Run("echo-rtt", func(b *testing.B) {
		st, err := c.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `while read -r l; do echo "$l"; done`, NoAudit: true}, KeepStdinOpen: true})
		if err != nil {
			b.Fatal(err)
		}
		var ds []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := c.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: st.Pid, Data: []byte("ping\n")}); err != nil {
				b.Fatal(err)
			}
			firstChunk(st.Pid)
			ds = append(ds, time.Since(t0))
		}
		c.KillProcess(ctx, &v1.KillProcessRequest{Pid: st.Pid})
		reportPercentiles(b, ds)
	})
	// firstStreamed receives until a message with output (or the end).
	firstStreamed := func(s procStream) *v1.StreamProcessResponse {
		for {
			m, err := s.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if len(m.Chunks) > 0 || m.Exited {
				return m
			}
		}
	}
	b.Run("first-byte-stream", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			t0 := time.Now()
			s := open(ctx, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "echo x; sleep 3600", NoAudit: true}}}})
			m := firstStreamed(s)
			ds = append(ds, time.Since(t0))
			c.KillProcess(ctx, &v1.KillProcessRequest{Pid: m.Pid})
			for {
				if _, err := s.Recv(); err != nil {
					break // io.EOF after the exit message
				}
			}
		}
		reportPercentiles(b, ds)
	})
	b.Run("echo-rtt-stream", func(b *testing.B) {
		s := open(ctx, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `while read -r l; do echo "$l"; done`, NoAudit: true}, KeepStdinOpen: true}}})
		head, err := s.Recv()
		if err != nil {
			b.Fatal(err)
		}
		var ds []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := c.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: head.Pid, Data: []byte("ping\n")}); err != nil {
				b.Fatal(err)
			}
			firstStreamed(s)
			ds = append(ds, time.Since(t0))
		}
		s.Cancel()
		reportPercentiles(b, ds)
	})
}

func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	us := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(us(0.5), "p50-µs")
	b.ReportMetric(us(0.99), "p99-µs")
}
