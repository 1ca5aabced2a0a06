package core_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// The benchmarks mirror the reference workloads of shared/bench (small
// files in 100 directories, one 64 MiB file, kv, tool calls). Run them
// with: go test -run=^$ -bench=. -benchtime=1x ./core (see
// docs/BENCHMARKS.md).

func benchAgent(b *testing.B, d store.Durability) *core.Agent {
	b.Helper()
	// BENCH_PAGE_SIZE compares SQLite page sizes for new databases.
	page, _ := strconv.Atoi(os.Getenv("BENCH_PAGE_SIZE"))
	// BENCH_CIPHER encrypts the database (a fixed key of the cipher's
	// length: 16 bytes for aes128gcm and aegis128*, else 32).
	var enc *store.Encryption
	if c := os.Getenv("BENCH_CIPHER"); c != "" {
		n := 32
		if c == "aes128gcm" || strings.HasPrefix(c, "aegis128") {
			n = 16
		}
		enc = &store.Encryption{Cipher: c, Key: bytes.Repeat([]byte{7}, n)}
	}
	a, err := core.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), core.Options{Create: true, Durability: d, PageSize: page, Encryption: enc})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

const nFiles = 10000

func fillSmallFiles(b *testing.B, a *core.Agent, n int) {
	ctx := b.Context()
	data := bytes.Repeat([]byte("x"), 1024)
	for i := 0; i < 100; i++ {
		if err := a.FS.Mkdir(ctx, fmt.Sprintf("/d%d", i), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.FS.WriteFile(ctx, fmt.Sprintf("/d%d/f%d", i%100, i), data, vfs.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWriteSmall(b *testing.B, d store.Durability) {
	for range b.N {
		b.StopTimer()
		a := benchAgent(b, d)
		b.StartTimer()
		start := time.Now()
		fillSmallFiles(b, a, nFiles)
		b.ReportMetric(float64(nFiles)/time.Since(start).Seconds(), "writes/s")
	}
}

func BenchmarkWriteFile1KiB(b *testing.B)     { benchWriteSmall(b, store.DurabilityNormal) }
func BenchmarkWriteFile1KiBFull(b *testing.B) { benchWriteSmall(b, store.DurabilityFull) }

func BenchmarkReadFileStat1KiB(b *testing.B) {
	ctx := b.Context()
	a := benchAgent(b, store.DurabilityNormal)
	fillSmallFiles(b, a, nFiles)
	rng := rand.New(rand.NewSource(1))
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		for j := 0; j < nFiles; j++ {
			i := rng.Intn(nFiles)
			got, err := a.FS.ReadFile(ctx, fmt.Sprintf("/d%d/f%d", i%100, i))
			if err != nil || len(got) != 1024 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nFiles)/time.Since(start).Seconds(), "reads/s")
		start = time.Now()
		for j := 0; j < nFiles; j++ {
			i := rng.Intn(nFiles)
			if _, err := a.FS.Stat(ctx, fmt.Sprintf("/d%d/f%d", i%100, i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nFiles)/time.Since(start).Seconds(), "stats/s")
		start = time.Now()
		for j := 0; j < 1000; j++ {
			if _, err := a.FS.Readdir(ctx, fmt.Sprintf("/d%d", j%100)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(1000/time.Since(start).Seconds(), "readdirs/s")
	}
	b.StopTimer()
	st, _ := os.Stat(a.Path())
	wal, _ := os.Stat(a.Path() + "-wal")
	size := st.Size()
	if wal != nil {
		size += wal.Size()
	}
	a.Close()
	st, _ = os.Stat(a.Path())
	b.ReportMetric(float64(st.Size())/float64(nFiles*1024), "dbsize/data")
}

func BenchmarkBigFile64MiB(b *testing.B) {
	ctx := b.Context()
	a := benchAgent(b, store.DurabilityNormal)
	data := make([]byte, 64<<20)
	rand.New(rand.NewSource(2)).Read(data)
	for range b.N {
		start := time.Now()
		if err := a.FS.WriteFile(ctx, "/big.bin", data, vfs.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(64/time.Since(start).Seconds(), "write-MiB/s")
		start = time.Now()
		got, err := a.FS.ReadFile(ctx, "/big.bin")
		if err != nil || !bytes.Equal(got, data) {
			b.Fatal("read mismatch", err)
		}
		b.ReportMetric(64/time.Since(start).Seconds(), "read-MiB/s")
		f, err := a.FS.Open(ctx, "/big.bin", os.O_RDONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 4096)
		rng := rand.New(rand.NewSource(3))
		start = time.Now()
		for j := 0; j < 5000; j++ {
			off := rng.Int63n(int64(len(data) - 4096))
			if _, err := f.ReadAt(buf, off); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(5000/time.Since(start).Seconds(), "pread4k/s")
		f.Close()
	}
}

func BenchmarkKV(b *testing.B) {
	ctx := context.Background()
	a := benchAgent(b, store.DurabilityNormal)
	for range b.N {
		start := time.Now()
		for i := 0; i < 10000; i++ {
			if err := a.KV.Set(ctx, fmt.Sprintf("key:%d:%05d", i%10, i), map[string]any{"i": i, "s": "value"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(10000/time.Since(start).Seconds(), "sets/s")
		start = time.Now()
		for i := 0; i < 10000; i++ {
			if _, err := a.KV.GetJSON(ctx, fmt.Sprintf("key:%d:%05d", i%10, i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(10000/time.Since(start).Seconds(), "gets/s")
		start = time.Now()
		const lists = 20
		for i := 0; i < lists; i++ {
			got, err := a.KV.List(ctx, fmt.Sprintf("key:%d:", i%10), 0)
			if err != nil || len(got) != 1000 {
				b.Fatal(len(got), err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/lists/1000, "ms/list")
	}
}

func BenchmarkToolsRecord(b *testing.B) {
	ctx := context.Background()
	a := benchAgent(b, store.DurabilityNormal)
	params := []byte(`{"q":"search term","n":10}`)
	result := []byte(`{"hits":3}`)
	for range b.N {
		start := time.Now()
		for i := 0; i < 5000; i++ {
			t0 := time.Now()
			if _, err := a.Tools.Record(ctx, "search", t0, t0.Add(time.Millisecond), params, result, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(5000/time.Since(start).Seconds(), "records/s")
	}
}

// BenchmarkToolsQuery: the queries of the reference workload over 10,000
// recorded calls (get by id, by name, all recent).
func BenchmarkToolsQuery(b *testing.B) {
	ctx := context.Background()
	a := benchAgent(b, store.DurabilityNormal)
	params := []byte(`{"q":"search term","n":10}`)
	result := []byte(`{"hits":3}`)
	t0 := time.Now()
	for i := 0; i < 10000; i++ {
		if _, err := a.Tools.Record(ctx, fmt.Sprintf("tool%d", i%10), t0, t0.Add(time.Millisecond), params, result, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		for id := int64(1); id <= 2000; id++ {
			if _, err := a.Tools.Get(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/2000, "get-µs")
		start = time.Now()
		calls, err := a.Tools.List(ctx, toolcalls.Filter{Name: "tool1"})
		if err != nil || len(calls) != 1000 {
			b.Fatal(err, len(calls))
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "byname1000-ms")
		start = time.Now()
		calls, err = a.Tools.List(ctx, toolcalls.Filter{})
		if err != nil || len(calls) != 10000 {
			b.Fatal(err, len(calls))
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "recent10k-ms")
	}
}
