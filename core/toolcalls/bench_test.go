package toolcalls_test

import (
	"encoding/json"
	"fmt"
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
