package toolcalls_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// BenchmarkList lists 10,000 recorded calls, all of them and the newest
// 100, and the calls of one tool, as the reference workloads'
// getRecent/getByName do.
func BenchmarkList(b *testing.B) {
	a, _ := openAgent(b)
	l := a.Tools
	base := time.Unix(1_700_000_000, 0)
	for i := range 10_000 {
		params := json.RawMessage(fmt.Sprintf(`{"path":"/d/f%d.txt","n":%d}`, i, i))
		result := json.RawMessage(`{"ok":true,"bytes":1024}`)
		t := base.Add(time.Duration(i) * time.Second)
		if _, err := l.Record(ctx, fmt.Sprintf("tool_%d", i%10), t, t.Add(5*time.Millisecond), params, result, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		f    toolcalls.Filter
	}{
		{"recent-all", toolcalls.Filter{Since: time.Unix(0, 0)}},
		{"recent-100", toolcalls.Filter{Since: base.Add(9000 * time.Second), Limit: 100}},
		{"byname-all", toolcalls.Filter{Name: "tool_3"}},
		{"byname-100", toolcalls.Filter{Name: "tool_3", Limit: 100}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := l.List(ctx, c.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecord records 10,000 calls back to back, as the TS SDK's
// tools.record row of bench/sdk-ts.sh does, and reports the latency of
// one record: p50, p99 and the slowest, beside the total. A writer that
// stops for a checkpoint shows in p99, max and stalled-ms (the time the last
// run's records spent in records slower than 1 ms) long before it shows in
// the mean.
func BenchmarkRecord(b *testing.B) {
	const n = 10_000
	params := json.RawMessage(`{"path":"/d/f.txt","n":1}`)
	result := json.RawMessage(`{"ok":true,"bytes":1024}`)
	lat := make([]time.Duration, 0, n)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		a, _ := openAgent(b)
		l := a.Tools
		b.StartTimer()
		lat = lat[:0]
		begin := time.Now()
		for i := range n {
			t0 := time.Now()
			if _, err := l.Record(ctx, fmt.Sprintf("tool_%d", i%10), t0, t0, params, result, nil); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		total += time.Since(begin)
		b.StopTimer()
		a.Close()
		b.StartTimer()
	}
	var stalled time.Duration // in records slower than 1 ms
	for _, d := range lat {
		if d > time.Millisecond {
			stalled += d
		}
	}
	slices.Sort(lat)
	// Fractions of a µs: a change of one system call per record is
	// about half a µs.
	b.ReportMetric(float64(lat[n/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[n*99/100].Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(lat[n-1].Microseconds()), "max-µs")
	b.ReportMetric(float64(stalled.Milliseconds()), "stalled-ms")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/10k")
}
