package toolcalls_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

var ctx = context.Background()

// openAgent opens a fresh engine. The directory comes from os.MkdirTemp:
// t.TempDir can contain "#", which the store does not escape in its
// SQLite URI.
func openAgent(t testing.TB) (*core.Agent, string) {
	t.Helper()
	d, err := os.MkdirTemp("", "toolcalls-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	p := filepath.Join(d, "a.db")
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, p
}

func newLog(t *testing.T) *toolcalls.Log {
	a, _ := openAgent(t)
	return a.Tools
}

func get(t *testing.T, l *toolcalls.Log, id int64) toolcalls.Call {
	t.Helper()
	c, err := l.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	return c
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestLog_Start(t *testing.T) {
	l := newLog(t)
	before := time.Now().Unix()
	id, err := l.Start(ctx, "search", json.RawMessage(`{"q": "go",  "n": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	c := get(t, l, id)
	if c.ID != id || c.Name != "search" || c.Status != toolcalls.StatusPending {
		t.Errorf("Get: got id %d name %q status %q, want %d search pending", c.ID, c.Name, c.Status, id)
	}
	if got, want := string(c.Parameters), `{"q": "go",  "n": 3}`; got != want {
		t.Errorf("Parameters: got %s, want %s", got, want)
	}
	if c.StartedAt < before || c.StartedAt > time.Now().Unix() {
		t.Errorf("StartedAt: got %d, want about %d", c.StartedAt, before)
	}
	if c.CompletedAt != nil || c.DurationMs != nil || c.Result != nil || c.Error != nil {
		t.Errorf("a pending call has completion fields: %+v", c)
	}
	// No parameters.
	id2, err := l.Start(ctx, "noargs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := get(t, l, id2); c.Parameters != nil {
		t.Errorf("Parameters of a call without: got %s, want nil", c.Parameters)
	}
	if id2 <= id {
		t.Errorf("ids: got %d after %d, want increasing", id2, id)
	}
	for _, tc := range []struct {
		name   string
		params json.RawMessage
	}{
		{"", nil},
		{"   ", nil},
		{"x", json.RawMessage(`{`)},
		{"x", json.RawMessage(``)},
		{"x", json.RawMessage(`{"a":1}x`)},
	} {
		if _, err := l.Start(ctx, tc.name, tc.params); err == nil {
			t.Errorf("Start(%q, %q): got nil error", tc.name, tc.params)
		}
	}
	calls, err := l.List(ctx, toolcalls.Filter{})
	if err != nil || len(calls) != 2 {
		t.Errorf("List after invalid starts: got %d calls, %v; want 2", len(calls), err)
	}
}

func TestLog_Success(t *testing.T) {
	l := newLog(t)
	id, err := l.Start(ctx, "fetch", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if err := l.Success(ctx, id, json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	c := get(t, l, id)
	if c.Status != toolcalls.StatusSuccess || string(c.Result) != `{"ok":true}` || c.Error != nil {
		t.Errorf("after Success: got status %q result %s error %s", c.Status, c.Result, str(c.Error))
	}
	if c.CompletedAt == nil || *c.CompletedAt < c.StartedAt {
		t.Errorf("CompletedAt: got %v, want >= %d", c.CompletedAt, c.StartedAt)
	}
	if c.DurationMs == nil || *c.DurationMs < 30 || *c.DurationMs > 10_000 {
		t.Errorf("DurationMs: got %v, want at least 30 (measured in milliseconds)", c.DurationMs)
	}
	// Success without a result.
	id2, _ := l.Start(ctx, "fetch", nil)
	if err := l.Success(ctx, id2, nil); err != nil {
		t.Fatal(err)
	}
	if c := get(t, l, id2); c.Status != toolcalls.StatusSuccess || c.Result != nil {
		t.Errorf("Success(nil): got %q %s", c.Status, c.Result)
	}
	// An invalid result leaves the call pending.
	id3, _ := l.Start(ctx, "fetch", nil)
	if err := l.Success(ctx, id3, json.RawMessage(`nope`)); err == nil {
		t.Error("Success with invalid JSON: got nil error")
	}
	if c := get(t, l, id3); c.Status != toolcalls.StatusPending {
		t.Errorf("status after a failed Success: got %q, want pending", c.Status)
	}
}

func TestLog_Fail(t *testing.T) {
	l := newLog(t)
	for _, msg := range []string{"boom", "", "2024-01-01", "multi\nline\ttab", "bad utf-8 \xff\xfe", "nul \x00 inside"} {
		id, err := l.Start(ctx, "exec", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Fail(ctx, id, msg); err != nil {
			t.Errorf("Fail(%q): %v", msg, err)
			continue
		}
		c := get(t, l, id)
		if c.Status != toolcalls.StatusError || c.Error == nil || *c.Error != msg || c.Result != nil {
			t.Errorf("after Fail(%q): got status %q error %q result %s", msg, c.Status, str(c.Error), c.Result)
		}
		if c.CompletedAt == nil || c.DurationMs == nil {
			t.Errorf("after Fail(%q): completion not recorded: %+v", msg, c)
		}
	}
}

func TestLog_Finished(t *testing.T) {
	l := newLog(t)
	id, _ := l.Start(ctx, "t", nil)
	if err := l.Success(ctx, id, json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	id2, _ := l.Start(ctx, "t", nil)
	if err := l.Fail(ctx, id2, "x"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"Success after Success", func() error { return l.Success(ctx, id, json.RawMessage(`2`)) }},
		{"Fail after Success", func() error { return l.Fail(ctx, id, "late") }},
		{"Success after Fail", func() error { return l.Success(ctx, id2, nil) }},
		{"Fail after Fail", func() error { return l.Fail(ctx, id2, "again") }},
	} {
		if err := tc.run(); !errors.Is(err, toolcalls.ErrFinished) {
			t.Errorf("%s: got %v, want ErrFinished", tc.name, err)
		}
	}
	if c := get(t, l, id); c.Status != toolcalls.StatusSuccess || string(c.Result) != "1" || c.Error != nil {
		t.Errorf("first call changed by a second finish: %+v", c)
	}
	if c := get(t, l, id2); c.Status != toolcalls.StatusError || str(c.Error) != "x" {
		t.Errorf("second call changed by a second finish: %+v", c)
	}
	for _, missing := range []int64{0, -1, 999} {
		if err := l.Success(ctx, missing, nil); !errors.Is(err, toolcalls.ErrNotFound) {
			t.Errorf("Success(%d): got %v, want ErrNotFound", missing, err)
		}
		if err := l.Fail(ctx, missing, "x"); !errors.Is(err, toolcalls.ErrNotFound) {
			t.Errorf("Fail(%d): got %v, want ErrNotFound", missing, err)
		}
		if _, err := l.Get(ctx, missing); !errors.Is(err, toolcalls.ErrNotFound) {
			t.Errorf("Get(%d): got %v, want ErrNotFound", missing, err)
		}
	}
}

// TestLog_FinishElsewhere finishes a call started through another
// instance (another process): the duration comes from the stored start.
func TestLog_FinishElsewhere(t *testing.T) {
	a, p := openAgent(t)
	id, err := a.Tools.Start(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := core.Open(ctx, p, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Tools.Success(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	c := get(t, a.Tools, id)
	if c.Status != toolcalls.StatusSuccess || c.DurationMs == nil || *c.DurationMs < 0 || *c.DurationMs > 2000 {
		t.Errorf("finished elsewhere: got %+v", c)
	}
	if err := a.Tools.Fail(ctx, id, "late"); !errors.Is(err, toolcalls.ErrFinished) {
		t.Errorf("Fail in the first instance after Success in the second: got %v, want ErrFinished", err)
	}
}

func TestLog_Record(t *testing.T) {
	l := newLog(t)
	start := time.Unix(1700000000, 250_000_000)
	end := start.Add(1500 * time.Millisecond)
	id, err := l.Record(ctx, "grep", start, end, json.RawMessage(`["-r"]`), json.RawMessage(`"3 matches"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := get(t, l, id)
	if c.Name != "grep" || c.Status != toolcalls.StatusSuccess || string(c.Parameters) != `["-r"]` || string(c.Result) != `"3 matches"` || c.Error != nil {
		t.Errorf("Record success: got %+v", c)
	}
	if c.StartedAt != 1700000000 || c.CompletedAt == nil || *c.CompletedAt != 1700000001 || c.DurationMs == nil || *c.DurationMs != 1500 {
		t.Errorf("Record times: got started %d completed %v duration %v, want 1700000000, 1700000001, 1500", c.StartedAt, c.CompletedAt, c.DurationMs)
	}
	msg := "exit status 2"
	id, err = l.Record(ctx, "grep", start, start, nil, nil, &msg)
	if err != nil {
		t.Fatal(err)
	}
	c = get(t, l, id)
	if c.Status != toolcalls.StatusError || str(c.Error) != msg || c.Result != nil || c.Parameters != nil || *c.DurationMs != 0 {
		t.Errorf("Record error: got %+v", c)
	}
	for _, tc := range []struct {
		what           string
		name           string
		started, ended time.Time
		params, result json.RawMessage
	}{
		{"completed before started", "x", end, start, nil, nil},
		{"empty name", "", start, end, nil, nil},
		{"invalid params", "x", start, end, json.RawMessage(`{`), nil},
		{"invalid result", "x", start, end, nil, json.RawMessage(`[`)},
	} {
		if _, err := l.Record(ctx, tc.name, tc.started, tc.ended, tc.params, tc.result, nil); err == nil {
			t.Errorf("Record with %s: got nil error", tc.what)
		}
	}
}

func ids(calls []toolcalls.Call) []int64 {
	out := []int64{}
	for _, c := range calls {
		out = append(out, c.ID)
	}
	return out
}

func TestLog_List(t *testing.T) {
	l := newLog(t)
	base := time.Unix(1700000000, 0)
	rec := func(name string, startSec int, durMs int, fail bool) int64 {
		t.Helper()
		s := base.Add(time.Duration(startSec) * time.Second)
		var msg *string
		if fail {
			m := "failed"
			msg = &m
		}
		id, err := l.Record(ctx, name, s, s.Add(time.Duration(durMs)*time.Millisecond), nil, nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// Inserted out of time order on purpose.
	a1 := rec("a", 30, 100, false)
	b1 := rec("b", 10, 200, true)
	a2 := rec("a", 20, 300, true)
	a3 := rec("a", 40, 400, false)
	b2 := rec("b", 40, 500, false) // same second as a3: ties broken by id
	a4 := rec("a", 0, 600, false)
	d1 := rec("2024-01-01", 50, 700, false)
	pending, err := l.Start(ctx, "a", nil) // started now, long after base
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		f    toolcalls.Filter
		want []int64
	}{
		{"all, newest first", toolcalls.Filter{}, []int64{pending, d1, b2, a3, a1, a2, b1, a4}},
		{"all, oldest first", toolcalls.Filter{Ascending: true}, []int64{a4, b1, a2, a1, a3, b2, d1, pending}},
		{"limit", toolcalls.Filter{Limit: 3}, []int64{pending, d1, b2}},
		{"name", toolcalls.Filter{Name: "a"}, []int64{pending, a3, a1, a2, a4}},
		{"name before limit", toolcalls.Filter{Name: "b", Limit: 1}, []int64{b2}},
		{"name, limit", toolcalls.Filter{Name: "a", Limit: 3}, []int64{pending, a3, a1}},
		{"name, oldest first, limit", toolcalls.Filter{Name: "a", Ascending: true, Limit: 3}, []int64{a4, a2, a1}},
		{"name, limit past the calls", toolcalls.Filter{Name: "b", Limit: 10}, []int64{b2, b1}},
		{"date-like name", toolcalls.Filter{Name: "2024-01-01"}, []int64{d1}},
		{"unknown name", toolcalls.Filter{Name: "zzz"}, []int64{}},
		{"status success", toolcalls.Filter{Status: toolcalls.StatusSuccess}, []int64{d1, b2, a3, a1, a4}},
		{"status error", toolcalls.Filter{Status: toolcalls.StatusError}, []int64{a2, b1}},
		{"status pending", toolcalls.Filter{Status: toolcalls.StatusPending}, []int64{pending}},
		{"status before limit", toolcalls.Filter{Status: toolcalls.StatusError, Limit: 1}, []int64{a2}},
		{"status, oldest first, limit", toolcalls.Filter{Status: toolcalls.StatusSuccess, Ascending: true, Limit: 2}, []int64{a4, a1}},
		{"name and status", toolcalls.Filter{Name: "a", Status: toolcalls.StatusSuccess, Ascending: true}, []int64{a4, a1, a3}},
		{"since (inclusive)", toolcalls.Filter{Since: base.Add(30 * time.Second), Ascending: true}, []int64{a1, a3, b2, d1, pending}},
		{"since before limit", toolcalls.Filter{Since: base.Add(30 * time.Second), Ascending: true, Limit: 2}, []int64{a1, a3}},
		{"until (exclusive)", toolcalls.Filter{Until: base.Add(30 * time.Second)}, []int64{a2, b1, a4}},
		{"since and until", toolcalls.Filter{Since: base.Add(10 * time.Second), Until: base.Add(40 * time.Second), Name: "a"}, []int64{a1, a2}},
		{"everything with a limit", toolcalls.Filter{Name: "a", Status: toolcalls.StatusSuccess, Since: base.Add(1 * time.Second), Limit: 1}, []int64{a3}},
	} {
		calls, err := l.List(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		if got := ids(calls); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got ids %v, want %v", tc.what, got, tc.want)
		}
	}
	calls, err := l.List(ctx, toolcalls.Filter{Name: "2024-01-01"})
	if err != nil || len(calls) != 1 || calls[0].Name != "2024-01-01" || calls[0].Status != "success" {
		t.Errorf("List of a date-like name: got %+v, %v", calls, err)
	}
	if _, err := l.List(ctx, toolcalls.Filter{Status: "done"}); err == nil {
		t.Error("List with an unknown status: got nil error")
	}
}

func TestLog_Stats(t *testing.T) {
	l := newLog(t)
	if st, err := l.Stats(ctx); err != nil || len(st) != 0 {
		t.Errorf("Stats of an empty log: got %v, %v", st, err)
	}
	base := time.Unix(1700000000, 0)
	rec := func(name string, durMs int, fail bool) {
		t.Helper()
		var msg *string
		if fail {
			m := "x"
			msg = &m
		}
		if _, err := l.Record(ctx, name, base, base.Add(time.Duration(durMs)*time.Millisecond), nil, nil, msg); err != nil {
			t.Fatal(err)
		}
	}
	rec("b", 100, false)
	rec("b", 200, true)
	rec("b", 603, false)
	rec("a", 10, false)
	rec("2024-01-01", 5, true)
	if _, err := l.Start(ctx, "b", nil); err != nil { // pending: no duration, not in the average
		t.Fatal(err)
	}
	if _, err := l.Start(ctx, "p", nil); err != nil { // only pending
		t.Fatal(err)
	}
	st, err := l.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []toolcalls.Stats{
		{Name: "2024-01-01", TotalCalls: 1, Successful: 0, Failed: 1, Pending: 0, AvgDurationMs: 5},
		{Name: "a", TotalCalls: 1, Successful: 1, Failed: 0, Pending: 0, AvgDurationMs: 10},
		{Name: "b", TotalCalls: 4, Successful: 2, Failed: 1, Pending: 1, AvgDurationMs: 301},
		{Name: "p", TotalCalls: 1, Successful: 0, Failed: 0, Pending: 1, AvgDurationMs: 0},
	}
	if len(st) != len(want) {
		t.Fatalf("Stats: got %+v, want %+v", st, want)
	}
	for i := range want {
		g, w := st[i], want[i]
		if g.Name != w.Name || g.TotalCalls != w.TotalCalls || g.Successful != w.Successful || g.Failed != w.Failed || g.Pending != w.Pending || math.Abs(g.AvgDurationMs-w.AvgDurationMs) > 1e-9 {
			t.Errorf("Stats[%d]: got %+v, want %+v", i, g, w)
		}
	}
}

func TestLog_JSON(t *testing.T) {
	l := newLog(t)
	id, _ := l.Start(ctx, "t", json.RawMessage(`{"a":1}`))
	_ = l.Success(ctx, id, json.RawMessage(`[1,2]`))
	c := get(t, l, id)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "parameters", "result", "status", "started_at", "completed_at", "duration_ms"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON of a call lacks %q: %s", k, b)
		}
	}
	if _, ok := back["error"]; ok {
		t.Errorf("JSON of a successful call has an error field: %s", b)
	}
}

// agentfs-sdk 0.6.4 stores the seconds a caller passes as they are: a
// fractional Date.now()/1000 lands as REAL. Every read must take both.
func TestLog_RealSecondsFromOtherWriters(t *testing.T) {
	a, _ := openAgent(t)
	l := a.Tools
	err := a.DB.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec(`INSERT INTO tool_calls (name, parameters, result, status, started_at, completed_at, duration_ms)
			VALUES ('fetch', '{}', '"ok"', 'success', 1764000000.25, 1764000001.75, 1500.5),
			       ('fetch', NULL, NULL, 'pending', 1764000002.5, NULL, NULL)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := l.List(ctx, toolcalls.Filter{})
	if err != nil {
		t.Fatalf("List over REAL times: %v", err)
	}
	if len(calls) != 2 {
		t.Fatalf("List: %d calls", len(calls))
	}
	done := get(t, l, calls[0].ID)
	if calls[0].Status != toolcalls.StatusSuccess {
		done = get(t, l, calls[1].ID)
	}
	if done.StartedAt != 1764000000 || done.CompletedAt == nil || *done.CompletedAt != 1764000001 || done.DurationMs == nil || *done.DurationMs != 1500 {
		t.Errorf("REAL times read as %d %v %v", done.StartedAt, done.CompletedAt, done.DurationMs)
	}
	since, err := l.List(ctx, toolcalls.Filter{Since: time.Unix(1764000001, 0)})
	if err != nil || len(since) != 1 {
		t.Errorf("List since: %v %v", since, err)
	}
	// The pending one, started at a REAL time, can be finished.
	var pending int64
	for _, c := range calls {
		if c.Status == toolcalls.StatusPending {
			pending = c.ID
		}
	}
	if err := l.Success(ctx, pending, json.RawMessage(`1`)); err != nil {
		t.Fatalf("Success of a call started at a REAL time: %v", err)
	}
	if st, err := l.Stats(ctx); err != nil || len(st) != 1 || st[0].TotalCalls != 2 {
		t.Errorf("Stats: %v %v", st, err)
	}
}
