//go:build unix

package rpc

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// BenchmarkLocalTools measures the tool-call log's calls of the reference
// workload (bench/workloads.mjs) as the Node addon makes them, CallSync
// with a serialized request, over 10,000 recorded calls; cpu-ns/op is the
// process's CPU time, steadier than the wall clock on a loaded machine.
func BenchmarkLocalTools(b *testing.B) {
	_, sc, _ := startLocal(b, &v1.Hello{ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Path: filepath.Join(b.TempDir(), "a.db")}})
	const base = 1_700_000_000
	rec := func(i int) []byte {
		p, _ := proto.Marshal(&v1.ToolRecordRequest{
			Name: fmt.Sprintf("tool_%d", i%10), StartedAt: int64(base + i), CompletedAt: int64(base + i + 1),
			ParametersJson: proto.String(fmt.Sprintf(`{"path":"/data/%d.txt","n":%d}`, i, i)),
			ResultJson:     proto.String(fmt.Sprintf(`{"ok":true,"bytes":%d}`, i*3)),
		})
		return p
	}
	call := func(b *testing.B, method string, payload []byte) int {
		head, data := sc.l.CallSync(method, payload)
		var res v1.Result
		if err := proto.Unmarshal(append(head, data...), &res); err != nil || res.Error != nil {
			b.Fatal(err, res.Error)
		}
		return len(head) + len(data)
	}
	for i := 0; i < 10000; i++ {
		call(b, agentfsv1connect.ToolsServiceToolRecordProcedure, rec(i))
	}
	list := func(name string, r *v1.ToolListRequest) {
		p, _ := proto.Marshal(r)
		b.Run(name, func(b *testing.B) {
			n := 0
			c0 := cpuTime()
			for b.Loop() {
				n = call(b, agentfsv1connect.ToolsServiceToolListProcedure, p)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(n), "bytes")
		})
	}
	list("RecentAll", &v1.ToolListRequest{Since: 1})
	list("Recent100", &v1.ToolListRequest{Since: base + 9000, Limit: 100})
	list("ByNameAll", &v1.ToolListRequest{Name: "tool_3"})
	list("ByName100", &v1.ToolListRequest{Name: "tool_3", Limit: 100})
	b.Run("Record", func(b *testing.B) {
		p := rec(7)
		c0 := cpuTime()
		for b.Loop() {
			call(b, agentfsv1connect.ToolsServiceToolRecordProcedure, p)
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("Get", func(b *testing.B) {
		p, _ := proto.Marshal(&v1.ToolGetRequest{Id: 4242})
		c0 := cpuTime()
		for b.Loop() {
			call(b, agentfsv1connect.ToolsServiceToolGetProcedure, p)
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
	})
}

// cpuTime is the CPU time this process has used (user and system, every
// thread), in nanoseconds: on a shared machine it moves less with the
// load than the wall clock.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
