//go:build cgo

package sync

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func TestRoaringRoundTrip(t *testing.T) {
	var vals []uint32
	for i := uint32(0); i < 5000; i++ { // a bitmap container (> 4096 values)
		vals = append(vals, i)
	}
	vals = append(vals, 70000, 70001, 1<<20) // array containers of other keys
	got, err := decodeRoaring(encodeRoaring(vals))
	if err != nil || !reflect.DeepEqual(got, vals) {
		t.Fatalf("round trip: %v, %d values (want %d)", err, len(got), len(vals))
	}
}

func TestRoaringRunContainer(t *testing.T) {
	// cookie 12347 with one container (size-1 = 0 in the high bits), its
	// run flag set, key 0, cardinality 10: runs [3..7] and [20..24].
	b := binary.LittleEndian.AppendUint32(nil, cookieRun)
	b = append(b, 1) // run bitmap
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 9)
	b = binary.LittleEndian.AppendUint16(b, 2)
	for _, v := range []uint16{3, 4, 20, 4} {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	got, err := decodeRoaring(b)
	want := []uint32{3, 4, 5, 6, 7, 20, 21, 22, 23, 24}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v %v, want %v", got, err, want)
	}
	if _, err := decodeRoaring(b[:len(b)-3]); err == nil {
		t.Fatal("a truncated bitmap decoded")
	}
}

func pipelineCall(t *testing.T, url string, steps []map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"baton": nil, "requests": []any{map[string]any{"type": "batch", "batch": map[string]any{"steps": steps}}}})
	resp, err := http.Post(url+"/db1/v2/pipeline", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out["results"].([]any)[0].(map[string]any)["response"].(map[string]any)["result"].(map[string]any)
}

func st(sql string, cond any, args ...any) map[string]any {
	s := map[string]any{"stmt": map[string]any{"sql": sql, "args": args}}
	if cond != nil {
		s["condition"] = cond
	}
	return s
}

// A failed step stops the steps that depend on it, and the transaction
// it leaves open is rolled back when the request ends.
func TestPipelineConditionsAndRollback(t *testing.T) {
	srv, err := NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	notAuto := map[string]any{"type": "not", "cond": map[string]any{"type": "is_autocommit"}}
	r := pipelineCall(t, hs.URL, []map[string]any{
		st("BEGIN IMMEDIATE", nil),
		st("CREATE TABLE t(a INTEGER PRIMARY KEY, b)", notAuto),
		st("INSERT INTO t VALUES (?, ?)", map[string]any{"type": "ok", "step": 1}, map[string]any{"type": "integer", "value": "1"}, map[string]any{"type": "blob", "base64": "AP8="}),
		st("COMMIT", map[string]any{"type": "ok", "step": 2}),
	})
	if errs := r["step_errors"].([]any); errs[0] != nil || errs[3] != nil {
		t.Fatalf("errors: %v", errs)
	}
	r = pipelineCall(t, hs.URL, []map[string]any{
		st("BEGIN IMMEDIATE", nil),
		st("INSERT INTO t VALUES (2, 'x')", nil),
		st("INSERT INTO t VALUES (1, 'dup')", nil), // fails: primary key
		st("COMMIT", map[string]any{"type": "ok", "step": 2}),
	})
	errs := r["step_errors"].([]any)
	if errs[2] == nil || !strings.Contains(errs[2].(map[string]any)["code"].(string), "CONSTRAINT") || r["step_results"].([]any)[3] != nil {
		t.Fatalf("the failing step: %v / %v", errs, r["step_results"])
	}
	r = pipelineCall(t, hs.URL, []map[string]any{st("SELECT a, b FROM t ORDER BY a", nil)})
	rows := r["step_results"].([]any)[0].(map[string]any)["rows"].([]any)
	if len(rows) != 1 {
		t.Fatalf("row 2 of the rolled back transaction is visible: %v", rows)
	}
	if b := rows[0].([]any)[1].(map[string]any); b["type"] != "blob" || b["base64"] != "AP8=" {
		t.Fatalf("blob: %v", b)
	}
}

// Push and pull between two local agents through the server; the
// second pull from an up-to-date revision transfers no page.
func TestPushPullBetweenAgents(t *testing.T) {
	ctx := context.Background()
	srv, err := NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, p := range []string{a, b} {
		if err := Bootstrap(ctx, p, hs.URL+"/agent", Options{}, core.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	ag, err := core.Open(ctx, a, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.FS.WriteFile(ctx, "/f.txt", []byte("from a"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ag.Close()
	if res, err := Push(ctx, a, Options{}); err != nil || res.Rows == 0 {
		t.Fatalf("push: %+v %v", res, err)
	}
	if res, err := Pull(ctx, b, Options{}); err != nil || res.Applied == 0 {
		t.Fatalf("pull: %+v %v", res, err)
	}
	bg, err := core.Open(ctx, b, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := bg.FS.ReadFile(ctx, "/f.txt")
	bg.Close()
	if err != nil || string(data) != "from a" {
		t.Fatalf("b reads %q, %v", data, err)
	}
	if res, err := Pull(ctx, b, Options{}); err != nil || res.Changed {
		t.Fatalf("second pull: %+v %v", res, err)
	}
	if st, err := GetStats(ctx, a, Options{}); err != nil || st.CDCOperations != 0 {
		t.Fatalf("stats after push: %+v %v", st, err)
	}
}

// A push larger than one request goes in several batches, each a remote
// transaction; the other side gets every byte.
func TestPushInBatches(t *testing.T) {
	defer func(old int) { maxBatchBytes = old }(maxBatchBytes)
	maxBatchBytes = 10 << 10
	ctx := context.Background()
	srv, err := NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if err := Bootstrap(ctx, a, hs.URL+"/agent", Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	ag, err := core.Open(ctx, a, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.FS.WriteFile(ctx, "/big", data, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ag.Close()
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, b, hs.URL+"/agent", Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	bg, err := core.Open(ctx, b, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	got, err := bg.FS.ReadFile(ctx, "/big")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
}

func v3(t *testing.T, url string, body map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/db1/v3/pipeline", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != http.StatusOK {
		return map[string]any{"status": resp.StatusCode}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func exec(sql string) map[string]any {
	return map[string]any{"type": "execute", "stmt": map[string]any{"sql": sql}}
}

// A stream that ends a request inside a transaction gets a baton and
// continues it in its next request; a stream left idle is rolled back.
func TestBatonsHoldTransactions(t *testing.T) {
	defer func(old time.Duration) { streamIdle = old }(streamIdle)
	srv, err := NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	v3(t, hs.URL, map[string]any{"requests": []any{exec("CREATE TABLE t(a)")}})
	out := v3(t, hs.URL, map[string]any{"requests": []any{exec("BEGIN"), exec("INSERT INTO t VALUES (1)")}})
	baton, _ := out["baton"].(string)
	if baton == "" {
		t.Fatalf("no baton for an open transaction: %v", out)
	}
	out = v3(t, hs.URL, map[string]any{"baton": baton, "requests": []any{exec("INSERT INTO t VALUES (2)"), exec("COMMIT")}})
	if out["baton"] != nil {
		t.Fatalf("a baton after COMMIT: %v", out)
	}
	if st := v3(t, hs.URL, map[string]any{"baton": baton, "requests": []any{exec("SELECT 1")}}); st["status"] != http.StatusBadRequest {
		t.Fatalf("a used baton was accepted: %v", st)
	}
	streamIdle = time.Millisecond
	out = v3(t, hs.URL, map[string]any{"requests": []any{exec("BEGIN"), exec("INSERT INTO t VALUES (3)")}})
	if out["baton"] == nil {
		t.Fatal("no baton")
	}
	// The next stream waits until the idle one is rolled back.
	out = v3(t, hs.URL, map[string]any{"requests": []any{exec("SELECT count(*) FROM t")}})
	res := out["results"].([]any)[0].(map[string]any)["response"].(map[string]any)["result"].(map[string]any)
	if n := res["rows"].([]any)[0].([]any)[0].(map[string]any)["value"]; n != "2" {
		t.Fatalf("count %v: want the committed 2 rows only", n)
	}
}

func TestSyncLockRefusesASecondSync(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.db")
	unlock, err := lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "EBUSY") {
		t.Fatalf("pull during another sync: %v", err)
	}
	unlock()
	if _, err := Pull(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "not set up for sync") {
		t.Fatalf("pull after the lock is released: %v", err)
	}
}
