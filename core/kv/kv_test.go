package kv_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/store"
)

var ctx = context.Background()

// openAgent opens a fresh engine. The directory comes from os.MkdirTemp:
// t.TempDir can contain "#", which the store does not escape in its
// SQLite URI.
func openAgent(t *testing.T) *core.Agent {
	t.Helper()
	d, err := os.MkdirTemp("", "kv-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	a, err := core.Open(ctx, filepath.Join(d, "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func keys(es []kv.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestStore_SetJSON(t *testing.T) {
	s := openAgent(t).KV
	for _, tc := range []struct {
		in, want string
	}{
		{`null`, `null`},
		{`true`, `true`},
		{`false`, `false`},
		{`0`, `0`},
		{`-17`, `-17`},
		{`1.5`, `1.5`},
		{`1e100`, `1e100`},
		{`-0.0`, `-0.0`},
		{`9007199254740993`, `9007199254740993`}, // not representable as float64: kept as text
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`""`, `""`},
		{`"hello"`, `"hello"`},
		{`"2024-01-01"`, `"2024-01-01"`},
		{`"2024-01-01 10:00:00"`, `"2024-01-01 10:00:00"`},
		{`"ünïcødé \u00e9 \ud83d\ude00 😀"`, `"ünïcødé \u00e9 \ud83d\ude00 😀"`},
		{`"tab\tnl\nquote\"nul\u0000"`, `"tab\tnl\nquote\"nul\u0000"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{` [ 1 , "a" , null , [ ] , { } ] `, `[1,"a",null,[],{}]`},
		{"{\n  \"b\": {\"c\": [true, false]},\n  \"a\": 1\n}", `{"b":{"c":[true,false]},"a":1}`}, // key order kept
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`},
	} {
		key := "k:" + tc.in
		if err := s.SetJSON(ctx, key, []byte(tc.in)); err != nil {
			t.Errorf("SetJSON(%s): %v", tc.in, err)
			continue
		}
		got, err := s.GetJSON(ctx, key)
		if err != nil || string(got) != tc.want {
			t.Errorf("GetJSON after SetJSON(%s): got %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// Date-looking values stored bare (not JSON strings) cannot exist, but
	// every read path must still return the stored text byte-exact.
	es, err := s.List(ctx, "k:\"2024", 0)
	if err != nil || len(es) != 2 || string(es[0].Value) != `"2024-01-01 10:00:00"` || string(es[1].Value) != `"2024-01-01"` {
		t.Errorf("List of date-like values: got %v, %v", es, err)
	}
}

func TestStore_Set(t *testing.T) {
	s := openAgent(t).KV
	type rec struct {
		Name  string            `json:"name"`
		Tags  []string          `json:"tags"`
		Score float64           `json:"score"`
		Meta  map[string]string `json:"meta"`
		When  time.Time         `json:"when"`
	}
	in := rec{Name: "x", Tags: []string{"a", "b"}, Score: 2.5, Meta: map[string]string{"k": "v"}, When: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)}
	if err := s.Set(ctx, "rec", in); err != nil {
		t.Fatal(err)
	}
	var out rec
	if err := s.Get(ctx, "rec", &out); err != nil {
		t.Fatal(err)
	}
	if out.Name != in.Name || !slices.Equal(out.Tags, in.Tags) || out.Score != in.Score || out.Meta["k"] != "v" || !out.When.Equal(in.When) {
		t.Errorf("Get: got %+v, want %+v", out, in)
	}
	for _, v := range []any{nil, true, 42, -1.25, "s", []int{1, 2}, map[string]any{"a": []any{1.0, "x"}}} {
		if err := s.Set(ctx, "v", v); err != nil {
			t.Fatalf("Set(%v): %v", v, err)
		}
		var got any
		if err := s.Get(ctx, "v", &got); err != nil {
			t.Fatalf("Get after Set(%v): %v", v, err)
		}
		want, _ := json.Marshal(v)
		gotJSON, _ := json.Marshal(got)
		if string(gotJSON) != string(want) {
			t.Errorf("round trip of %v: got %s, want %s", v, gotJSON, want)
		}
	}
	// Values that cannot be encoded fail without storing anything.
	if err := s.Set(ctx, "bad", make(chan int)); err == nil {
		t.Error("Set(chan): got nil error")
	}
	if _, err := s.GetJSON(ctx, "bad"); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("GetJSON(bad) after a failed Set: got %v, want ErrNotFound", err)
	}
	// Decoding into a wrong type is an error.
	var n int
	if err := s.Get(ctx, "rec", &n); err == nil {
		t.Error("Get of an object into an int: got nil error")
	}
}

func TestStore_Invalid(t *testing.T) {
	s := openAgent(t).KV
	for _, v := range []string{``, ` `, `{`, `[1,]`, `{'a':1}`, `undefined`, `NaN`, `1 2`, `"unterminated`, `{"a":1}x`, "\"\xff\"", `01`} {
		if err := s.SetJSON(ctx, "k", []byte(v)); err == nil {
			t.Errorf("SetJSON(%q): got nil error, want invalid JSON", v)
		}
	}
	for _, k := range []string{"", "a\x00b", "\xff\xfe"} {
		if err := s.SetJSON(ctx, k, []byte(`1`)); err == nil {
			t.Errorf("SetJSON with key %q: got nil error", k)
		}
	}
	if es, err := s.List(ctx, "", 0); err != nil || len(es) != 0 {
		t.Errorf("List after only invalid sets: got %v, %v; want none", es, err)
	}
}

func TestStore_GetMissing(t *testing.T) {
	s := openAgent(t).KV
	if err := s.Set(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	// Keys that cannot exist (NUL, not UTF-8) are simply not found, and
	// a NUL does not cut the key short.
	for _, k := range []string{"a\x00b", "\xff", "a\xc3", ""} {
		if _, err := s.GetJSON(ctx, k); !errors.Is(err, kv.ErrNotFound) {
			t.Errorf("GetJSON(%q): got %v, want ErrNotFound", k, err)
		}
		if ok, err := s.Delete(ctx, k); ok || err != nil {
			t.Errorf("Delete(%q): got %v, %v; want false, nil", k, ok, err)
		}
	}
	if got, err := s.GetJSON(ctx, "a"); err != nil || string(got) != "1" {
		t.Errorf("GetJSON(a): got %s, %v", got, err)
	}
	_, err := s.GetJSON(ctx, "nope")
	if !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("GetJSON(nope): got %v, want ErrNotFound", err)
	}
	var v any
	if err := s.Get(ctx, "nope", &v); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("Get(nope): got %v, want ErrNotFound", err)
	}
}

func TestStore_Delete(t *testing.T) {
	s := openAgent(t).KV
	if err := s.Set(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{"a", true}, {"a", false}, {"never", false}, {"", false}} {
		got, err := s.Delete(ctx, tc.key)
		if err != nil || got != tc.want {
			t.Errorf("Delete(%q): got %v, %v; want %v", tc.key, got, err, tc.want)
		}
	}
	if _, err := s.GetJSON(ctx, "a"); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("GetJSON after Delete: got %v, want ErrNotFound", err)
	}
}

func TestStore_Timestamps(t *testing.T) {
	a := openAgent(t)
	s := a.KV
	before := time.Now().Unix()
	if err := s.Set(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Unix()
	es, err := s.List(ctx, "k", 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("List: %v, %v", es, err)
	}
	e := es[0]
	if e.CreatedAt < before || e.CreatedAt > after || e.UpdatedAt != e.CreatedAt {
		t.Errorf("timestamps of a new key: got created %d updated %d, want both in [%d, %d]", e.CreatedAt, e.UpdatedAt, before, after)
	}
	// Age the row, then update it: created_at stays, updated_at moves.
	err = a.DB.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("UPDATE kv_store SET created_at = 1000, updated_at = 2000 WHERE key = 'k'")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "k", 2); err != nil {
		t.Fatal(err)
	}
	es, _ = s.List(ctx, "k", 0)
	if e := es[0]; e.CreatedAt != 1000 || e.UpdatedAt < before || string(e.Value) != "2" {
		t.Errorf("after an update: got created %d updated %d value %s, want created 1000, updated >= %d, value 2", e.CreatedAt, e.UpdatedAt, e.Value, before)
	}
}

func TestStore_List(t *testing.T) {
	s := openAgent(t).KV
	all := []string{"user:1", "user:10", "user:2", "users", "USER:3", "u_x", "100%", "user", "use", "user;", "2024-01-01", "2024-01-01 10:00:00"}
	for i, k := range all {
		if err := s.Set(ctx, k, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"user:", 0, []string{"user:1", "user:10", "user:2"}},
		{"user:", 2, []string{"user:1", "user:10"}},
		{"user:1", 0, []string{"user:1", "user:10"}},
		{"user", 0, []string{"user", "user:1", "user:10", "user:2", "user;", "users"}},
		{"u", 0, []string{"u_x", "use", "user", "user:1", "user:10", "user:2", "user;", "users"}},
		{"u_", 0, []string{"u_x"}},    // "_" is not a wildcard
		{"100%", 0, []string{"100%"}}, // nor is "%"
		{"10", 0, []string{"100%"}},
		{"USER", 0, []string{"USER:3"}}, // case sensitive
		{"User", 0, []string{}},
		{"user:3", 0, []string{}},
		{"2024-01-01", 0, []string{"2024-01-01", "2024-01-01 10:00:00"}},
		{"", 0, []string{"100%", "2024-01-01", "2024-01-01 10:00:00", "USER:3", "u_x", "use", "user", "user:1", "user:10", "user:2", "user;", "users"}},
		{"", 3, []string{"100%", "2024-01-01", "2024-01-01 10:00:00"}},
		{"", -1, []string{"100%", "2024-01-01", "2024-01-01 10:00:00", "USER:3", "u_x", "use", "user", "user:1", "user:10", "user:2", "user;", "users"}},
	} {
		es, err := s.List(ctx, tc.prefix, tc.limit)
		if err != nil {
			t.Errorf("List(%q, %d): %v", tc.prefix, tc.limit, err)
			continue
		}
		if got := keys(es); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q, %d): got %q, want %q", tc.prefix, tc.limit, got, tc.want)
		}
	}
	es, _ := s.List(ctx, "user:10", 0)
	if len(es) != 1 || string(es[0].Value) != "1" {
		t.Errorf("List(user:10) value: got %v, want 1", es)
	}
}

// TestStore_ListUTF8 checks prefixes whose bytes end in 0xBF or 0xFF-like
// values, where the exclusive upper bound of the range scan must carry
// into the previous byte, and the largest code points.
func TestStore_ListUTF8(t *testing.T) {
	s := openAgent(t).KV
	all := []string{"ÿ", "ÿa", "ÿÿ", "þ", "Ā", "ÿ\u0100", "y", "z", "\uffff", "\uffffx", "\U0010FFFF", "\U0010FFFFz", "\U0010FFFE", "é", "e\u0301"}
	for i, k := range all {
		if err := s.Set(ctx, k, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"ÿ", []string{"ÿ", "ÿa", "ÿÿ", "ÿ\u0100"}},
		{"ÿÿ", []string{"ÿÿ"}},
		{"þ", []string{"þ"}},
		{"\uffff", []string{"\uffff", "\uffffx"}},
		{"\U0010FFFF", []string{"\U0010FFFF", "\U0010FFFFz"}},
		{"\xf4\x8f\xbf", []string{"\U0010FFFE", "\U0010FFFF", "\U0010FFFFz"}}, // a byte prefix cut inside a rune
		{"\xff", []string{}},
		{"\xc3", []string{"é", "þ", "ÿ", "ÿa", "ÿÿ", "ÿ\u0100"}},
		{"e", []string{"e\u0301"}},
	} {
		es, err := s.List(ctx, tc.prefix, 0)
		if err != nil {
			t.Errorf("List(%q): %v", tc.prefix, err)
			continue
		}
		if got := keys(es); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q): got %q, want %q", tc.prefix, got, tc.want)
		}
	}
	// Every key comes back byte-exact.
	es, err := s.List(ctx, "", 0)
	if err != nil || len(es) != len(all) {
		t.Fatalf("List(all): got %d, %v", len(es), err)
	}
	for i := 1; i < len(es); i++ {
		if strings.Compare(es[i-1].Key, es[i].Key) >= 0 {
			t.Errorf("List order: %q before %q", es[i-1].Key, es[i].Key)
		}
	}
}
