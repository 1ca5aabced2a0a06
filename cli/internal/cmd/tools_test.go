package cmd

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/toolcalls"
)

type callJSON struct {
	ID          int64           `json:"id"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
	Result      json.RawMessage `json:"result"`
	Error       *string         `json:"error"`
	Status      string          `json:"status"`
	StartedAt   int64           `json:"started_at"`
	CompletedAt *int64          `json:"completed_at"`
	DurationMs  *int64          `json:"duration_ms"`
}

func timelineJSON(t *testing.T, args ...string) []callJSON {
	t.Helper()
	out := mustRun(t, append([]string{"timeline", "t", "--format", "json"}, args...)...)
	var calls []callJSON
	if err := json.Unmarshal([]byte(out), &calls); err != nil {
		t.Fatalf("timeline --format json is not JSON: %v\n%s", err, out)
	}
	return calls
}

func ids(calls []callJSON) string {
	var s []string
	for _, c := range calls {
		s = append(s, strconv.FormatInt(c.ID, 10)+":"+c.Name+":"+c.Status)
	}
	return strings.Join(s, " ")
}

func TestToolsStartFinishRecord(t *testing.T) {
	newAgent(t)
	id := strings.TrimSpace(mustRun(t, "tools", "t", "start", "search", "--params", `{"q": "sqlite"}`))
	if id != "1" {
		t.Fatalf("start printed %q, want 1", id)
	}
	mustRun(t, "tools", "t", "finish", id, "--result", `{"hits": 3}`)
	wantFail(t, 1, []string{"tools", "t", "finish", id, "--result", "1"}, "already finished", "Try: list pending calls with: agentfs timeline t --status pending")
	wantFail(t, 1, []string{"tools", "t", "finish", "99"}, "agentfs: no tool call with id 99\n", "Try: list calls with: agentfs timeline t")

	id2 := strings.TrimSpace(mustRun(t, "tools", "t", "start", "fetch"))
	mustRun(t, "tools", "t", "finish", id2, "--error", "timeout")

	id3 := strings.TrimSpace(mustRun(t, "tools", "t", "record", "read", "--started", "1767366245", "--completed", "1767366246.25",
		"--params", `{"path":"/a"}`, "--result", `"ok"`))
	id4 := strings.TrimSpace(mustRun(t, "tools", "t", "record", "read", "--started", "2026-01-02T15:04:06Z", "--completed", "2026-01-02T15:04:06.5Z",
		"--error", "EACCES"))
	if id3 != "3" || id4 != "4" {
		t.Fatalf("record printed %q and %q, want 3 and 4", id3, id4)
	}
	mustRun(t, "tools", "t", "start", "pending-one")

	calls := timelineJSON(t, "--limit", "0")
	byID := map[int64]callJSON{}
	for _, c := range calls {
		byID[c.ID] = c
	}
	if c := byID[1]; c.Status != "success" || compactJSON(c.Result) != `{"hits":3}` || compactJSON(c.Parameters) != `{"q":"sqlite"}` || c.CompletedAt == nil {
		t.Errorf("call 1 = %+v", c)
	}
	if c := byID[2]; c.Status != "error" || c.Error == nil || *c.Error != "timeout" {
		t.Errorf("call 2 = %+v", c)
	}
	if c := byID[3]; c.Status != "success" || c.StartedAt != 1767366245 || c.DurationMs == nil || *c.DurationMs != 1250 || compactJSON(c.Result) != `"ok"` {
		t.Errorf("call 3 = %+v", c)
	}
	if c := byID[4]; c.Status != "error" || *c.Error != "EACCES" || c.StartedAt != 1767366246 || *c.DurationMs != 500 {
		t.Errorf("call 4 = %+v", c)
	}
	if c := byID[5]; c.Status != "pending" || c.CompletedAt != nil {
		t.Errorf("call 5 = %+v", c)
	}

	wantFail(t, 2, []string{"tools", "t", "start", "x", "--params", "{bad"}, "--params is not valid JSON")
	wantFail(t, 2, []string{"tools", "t", "finish", "abc"}, "CALL_ID must be a number")
	wantFail(t, 2, []string{"tools", "t", "finish", "5", "--result", "1", "--error", "x"}, "not both")
	wantFail(t, 2, []string{"tools", "t", "record", "x", "--started", "10"}, "--completed is required")
	wantFail(t, 2, []string{"tools", "t", "record", "x", "--started", "20", "--completed", "10"}, "before --started")
	wantFail(t, 2, []string{"tools", "t", "record", "x", "--started", "yesterday", "--completed", "10"}, "neither Unix seconds nor an RFC 3339 time")
	wantFail(t, 2, []string{"tools", "t", "start", "x", "--bogus"}, "unknown flag: --bogus")
}

func TestTimelineFiltersBeforeLimit(t *testing.T) {
	newAgent(t)
	// Alternate two tools, oldest first: a at 1000, b at 1010, a at 1020 ...
	// and make the newest calls all b, so that a limit applied before the
	// filter would find no a at all.
	start := int64(1_700_000_000)
	for i := 0; i < 6; i++ {
		name := "a"
		if i%2 == 1 {
			name = "b"
		}
		args := []string{"tools", "t", "record", name, "--started", strconv.FormatInt(start+int64(i)*10, 10),
			"--completed", strconv.FormatInt(start+int64(i)*10+1, 10)}
		if i == 2 {
			args = append(args, "--error", "boom")
		}
		mustRun(t, args...)
	}
	for i := 0; i < 3; i++ {
		mustRun(t, "tools", "t", "record", "b", "--started", strconv.FormatInt(start+100+int64(i), 10), "--completed", strconv.FormatInt(start+101+int64(i), 10))
	}

	checkOut(t, "--limit 3", ids(timelineJSON(t, "--limit", "3")), "9:b:success 8:b:success 7:b:success")
	checkOut(t, "--filter a --limit 2", ids(timelineJSON(t, "--filter", "a", "--limit", "2")), "5:a:success 3:a:error")
	checkOut(t, "--filter a", ids(timelineJSON(t, "--filter", "a")), "5:a:success 3:a:error 1:a:success")
	checkOut(t, "--status error", ids(timelineJSON(t, "--status", "error", "--limit", "1")), "3:a:error")
	since := time.Unix(start+40, 0).UTC().Format(time.RFC3339)
	checkOut(t, "--since "+since, ids(timelineJSON(t, "--since", since, "--filter", "b")), "9:b:success 8:b:success 7:b:success 6:b:success")
	checkOut(t, "--since 1h (all calls are older)", mustRun(t, "timeline", "t", "--since", "1h", "--format", "json"), "[]\n")

	// The table: a header, start times in local time, durations,
	// summaries.
	mustRun(t, "tools", "t", "record", "long", "--started", "1700000500", "--completed", "1700000502",
		"--params", `{"text": "`+strings.Repeat("x", 100)+`"}`, "--result", "1")
	table := mustRun(t, "timeline", "t", "--limit", "2")
	rows := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(rows) != 3 {
		t.Fatalf("timeline --limit 2 printed %d lines, want a header and 2 rows:\n%s", len(rows), table)
	}
	if !regexp.MustCompile(`^ID +TOOL +STATUS +STARTED +DURATION +SUMMARY$`).MatchString(rows[0]) {
		t.Errorf("header = %q", rows[0])
	}
	started := time.Unix(1700000500, 0).Local().Format("2006-01-02 15:04:05")
	wantSummary := `{"text":"` + strings.Repeat("x", 60-len(`{"text":"`)-3) + "..."
	if !regexp.MustCompile(`^10 +long +success +` + regexp.QuoteMeta(started) + ` +2\.0s +` + regexp.QuoteMeta(wantSummary) + `$`).MatchString(rows[1]) {
		t.Errorf("row = %q, want call 10 started %s lasting 2.0s with summary %q", rows[1], started, wantSummary)
	}
	if !regexp.MustCompile(`^9 +b +success +\S+ \S+ +1\.0s$`).MatchString(rows[2]) {
		t.Errorf("row = %q", rows[2])
	}
	checkOut(t, "summary of an error", callSummary(timelineCall(t, 3)), "error: boom")

	wantFail(t, 2, []string{"timeline", "t", "--status", "done"}, "--status must be pending, success or error")
	wantFail(t, 2, []string{"timeline", "t", "--since", "soon"}, "--since")
	wantFail(t, 2, []string{"timeline", "t", "--format", "xml"}, "--format must be table or json")
	wantFail(t, 2, []string{"timeline", "t", "--bogus"}, "unknown flag: --bogus")
	wantFail(t, 2, []string{"timeline"}, "accepts 1 arg(s)")
}

// timelineCall fetches one call through the engine-facing JSON output.
func timelineCall(t *testing.T, id int64) (c toolcalls.Call) {
	t.Helper()
	for _, x := range timelineJSON(t, "--limit", "0") {
		if x.ID == id {
			c.ID, c.Name, c.Status, c.Error, c.Parameters, c.Result = x.ID, x.Name, x.Status, x.Error, x.Parameters, x.Result
			return c
		}
	}
	t.Fatalf("no call %d", id)
	return c
}
