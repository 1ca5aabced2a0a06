package core_test

// Compatibility with Turso's AgentFS as written by npm agentfs-sdk 0.6.4,
// both ways, through the harness in tests/compat (see its README.md):
//
//   - TestCompat_ReadsAgentfsSDK: the SDK writes the fixture, the engine
//     reads it and must describe it exactly as the SDK does (dump.mjs).
//   - TestCompat_AgentfsSDKReadsEngine: the engine writes the fixture, the
//     SDK's dump.mjs must describe it exactly as expected.
//
// Both compare with tests/compat/expected-fixture.json byte for byte.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// repoRoot finds the repository root (the directory holding go.work and
// tests/compat) from the test's working directory (core/).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if fileExists(filepath.Join(dir, "go.work")) && fileExists(filepath.Join(dir, "tests", "compat")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.work + tests/compat) not found above the working directory")
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// compatHarness returns the node binary and the repository root, or skips
// the test when the harness cannot run (fails instead with
// AGENTFS_REQUIRE_COMPAT=1, as CI sets).
func compatHarness(t *testing.T) (node, root string) {
	t.Helper()
	root = repoRoot(t)
	var missing string
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		missing = "node is not on PATH"
	case !fileExists(filepath.Join(root, "tests", "compat", "node_modules", "turso-agentfs")):
		missing = "tests/compat/node_modules is missing (run: cd tests/compat && npm install)"
	}
	if missing != "" {
		if os.Getenv("AGENTFS_REQUIRE_COMPAT") == "1" {
			t.Fatalf("agentfs-sdk compatibility harness unavailable: %s (AGENTFS_REQUIRE_COMPAT=1)", missing)
		}
		t.Skipf("agentfs-sdk compatibility harness unavailable: %s; set AGENTFS_REQUIRE_COMPAT=1 to fail instead", missing)
	}
	return node, root
}

// runNode runs a script of tests/compat (path relative to the repository
// root) and returns its standard output.
func runNode(t *testing.T, node, root, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %s: %v\nstderr:\n%s", script, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func expectedFixture(t *testing.T, root string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "tests", "compat", "expected-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---- canonical JSON, as dump.mjs prints it ----------------------------

// jsObject is a JavaScript object: a missing key is an undefined field,
// a key holding nil is null.
type jsObject map[string]any

// parseJS decodes JSON text as JSON.parse does: numbers become float64
// (out-of-range ones become infinities, which print as null), objects
// jsObject, arrays []any.
func parseJS(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value in %q", raw)
	}
	return fromDecoded(v), nil
}

func fromDecoded(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !math.IsInf(f, 0) {
			return math.NaN() // cannot happen for valid JSON
		}
		return f
	case map[string]any:
		o := make(jsObject, len(v))
		for k, x := range v {
			o[k] = fromDecoded(x)
		}
		return o
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = fromDecoded(x)
		}
		return out
	}
	return v
}

// mustParseJS is parseJS for values the engine has stored.
func mustParseJS(t *testing.T, what string, raw []byte) any {
	t.Helper()
	v, err := parseJS(raw)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// encodeJS is JSON.stringify(v, null, 2) + "\n".
func encodeJS(v any) []byte {
	var b bytes.Buffer
	writeJS(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func writeJS(b *bytes.Buffer, v any, indent string) {
	inner := indent + "  "
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(formatJSNumber(v))
	case int:
		b.WriteString(formatJSNumber(float64(v)))
	case int64:
		b.WriteString(formatJSNumber(float64(v)))
	case uint32:
		b.WriteString(formatJSNumber(float64(v)))
	case string:
		quoteJS(b, v)
	case []string:
		arr := make([]any, len(v))
		for i, s := range v {
			arr[i] = s
		}
		writeJS(b, arr, indent)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, x := range v {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(inner)
			writeJS(b, x, inner)
		}
		b.WriteString("\n" + indent + "]")
	case jsObject:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sortJSKeys(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(inner)
			quoteJS(b, k)
			b.WriteString(": ")
			writeJS(b, v[k], inner)
		}
		b.WriteString("\n" + indent + "}")
	default:
		panic(fmt.Sprintf("writeJS: unsupported type %T", v))
	}
}

// sortJSKeys orders keys as JSON.stringify enumerates the object built by
// dump.mjs's canonical(): it inserts keys sorted bytewise (UTF-8), but a
// JavaScript object always lists integer-like keys ("0", "42") first, in
// numeric order.
func sortJSKeys(keys []string) {
	sort.Slice(keys, func(i, j int) bool {
		a, aok := jsArrayIndex(keys[i])
		b, bok := jsArrayIndex(keys[j])
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return keys[i] < keys[j] // Go compares strings bytewise: UTF-8 order
	})
}

func jsArrayIndex(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n < 1<<32-1
}

// formatJSNumber is Number.prototype.toString (what JSON.stringify
// writes); infinities and NaN are null.
func formatJSNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	if f == 0 {
		return "0" // also -0
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 -> 1e-7, as JavaScript writes exponents.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

// quoteJS writes s as JSON.stringify does: only '"', '\\' and control
// characters are escaped; everything else (including U+2028, U+2029, '<',
// '&') is written as raw UTF-8. Invalid UTF-8 becomes U+FFFD, as when the
// SDK decodes such text.
func quoteJS(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// canonicalDump describes the database through the engine exactly as
// tests/compat/dump.mjs describes it through agentfs-sdk.
func canonicalDump(t *testing.T, a *core.Agent) []byte {
	t.Helper()
	ctx := context.Background()

	// files: walk from "/" with readdir + lstat, symlinks not followed.
	files := []any{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := a.FS.Readdir(ctx, dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		for _, name := range names {
			p := dir + "/" + name
			if dir == "/" {
				p = "/" + name
			}
			st, err := a.FS.Lstat(ctx, p)
			if err != nil {
				t.Fatalf("lstat %s: %v", p, err)
			}
			e := jsObject{"path": p, "mode": int64(st.Mode & 0o7777)}
			switch st.Mode & schema.ModeType {
			case schema.ModeDir:
				e["type"] = "dir"
				files = append(files, e)
				walk(p)
			case schema.ModeRegular:
				e["type"] = "file"
				data, err := a.FS.ReadFile(ctx, p)
				if err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
				sum := sha256.Sum256(data)
				e["size"] = st.Size
				e["sha256"] = hex.EncodeToString(sum[:])
				if int64(len(data)) != st.Size {
					e["content_length"] = int64(len(data))
				}
				files = append(files, e)
			case schema.ModeSymlink:
				e["type"] = "symlink"
				target, err := a.FS.Readlink(ctx, p)
				if err != nil {
					t.Fatalf("readlink %s: %v", p, err)
				}
				e["target"] = target
				files = append(files, e)
			default:
				e["type"] = "other"
				e["raw_mode"] = int64(st.Mode)
				files = append(files, e)
			}
		}
	}
	walk("/")
	sort.SliceStable(files, func(i, j int) bool {
		return files[i].(jsObject)["path"].(string) < files[j].(jsObject)["path"].(string)
	})

	// kv: every key, values decoded and re-encoded.
	entries, err := a.KV.List(ctx, "", 0)
	if err != nil {
		t.Fatalf("kv list: %v", err)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
	kvs := []any{}
	for _, e := range entries {
		kvs = append(kvs, jsObject{"key": e.Key, "value": mustParseJS(t, "kv value of "+e.Key, e.Value)})
	}
	userEntries, err := a.KV.List(ctx, "user:", 0)
	if err != nil {
		t.Fatalf("kv list user: %v", err)
	}
	userKeys := []string{}
	for _, e := range userEntries {
		userKeys = append(userKeys, e.Key)
	}
	sort.Strings(userKeys)

	// tools: every call, by id.
	calls, err := a.Tools.List(ctx, toolcalls.Filter{Ascending: true})
	if err != nil {
		t.Fatalf("tool calls: %v", err)
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].ID < calls[j].ID })
	tools := []any{}
	for _, c := range calls {
		o := jsObject{"id": c.ID, "name": c.Name, "status": c.Status}
		if c.Parameters != nil {
			o["parameters"] = mustParseJS(t, fmt.Sprintf("parameters of tool call %d", c.ID), c.Parameters)
		}
		if c.Result != nil {
			o["result"] = mustParseJS(t, fmt.Sprintf("result of tool call %d", c.ID), c.Result)
		}
		if c.Error != nil {
			o["error"] = *c.Error
		}
		tools = append(tools, o)
	}

	return encodeJS(jsObject{"files": files, "kv": kvs, "kv_prefix_user": userKeys, "tools": tools})
}

// compareDump fails the test when got differs from want, with a diff.
func compareDump(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	dir := t.TempDir()
	gp, wp := filepath.Join(dir, "got.json"), filepath.Join(dir, "expected-fixture.json")
	_ = os.WriteFile(gp, got, 0o644)
	_ = os.WriteFile(wp, want, 0o644)
	var diff string
	if out, err := exec.Command("diff", "-u", wp, gp).CombinedOutput(); len(out) > 0 {
		diff = string(out)
		if lines := strings.SplitAfter(diff, "\n"); len(lines) > 200 {
			diff = strings.Join(lines[:200], "") + "... (diff truncated)\n"
		}
	} else {
		diff = fmt.Sprintf("(diff unavailable: %v)\n%s", err, firstDifference(got, want))
	}
	t.Errorf("%s differs from tests/compat/expected-fixture.json (- expected, + got):\n%s", what, diff)
}

func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d:\n- %s\n+ %s", i+1, wl, gl)
		}
	}
	return "no line differs (trailing bytes?)"
}

func requireClean(t *testing.T, what string, a *core.Agent) {
	t.Helper()
	rep, err := a.Fsck(context.Background(), false)
	if err != nil {
		t.Fatalf("%s: fsck: %v", what, err)
	}
	if !rep.Clean() {
		var b strings.Builder
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "\n  [%s] %s", p.Rule, p.Detail)
		}
		t.Errorf("%s: fsck found %d problem(s):%s", what, len(rep.Problems), b.String())
	}
}

// TestCanonicalJSON_MatchesJSONStringify pins the encoder against outputs
// of JSON.stringify(canonical(v), null, 2) computed with Node 20.
func TestCanonicalJSON_MatchesJSONStringify(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":[],"c":{}}`, "{\n  \"a\": [],\n  \"b\": 1,\n  \"c\": {}\n}\n"},
		{`{"10":1,"9":2,"a":3,"01":4,"-1":5}`, "{\n  \"9\": 2,\n  \"10\": 1,\n  \"-1\": 5,\n  \"01\": 4,\n  \"a\": 3\n}\n"},
		{`[1e21,1e-7,123456789012345680000,0.000001,-0,1E400,2.50]`, "[\n  1e+21,\n  1e-7,\n  123456789012345680000,\n  0.000001,\n  0,\n  null,\n  2.5\n]\n"},
		{`"\u2028<&>\u0001\u007f\b\f\/é"`, "\"\u2028<&>\\u0001\u007f\\b\\f/é\"\n"},
		{`{"é":1,"z":2,"Z":3}`, "{\n  \"Z\": 3,\n  \"z\": 2,\n  \"é\": 1\n}\n"},
	}
	for _, c := range cases {
		v, err := parseJS([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := string(encodeJS(v)); got != c.want {
			t.Errorf("encode %s:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestCompat_ReadsAgentfsSDK(t *testing.T) {
	node, root := compatHarness(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "sdk.db")
	runNode(t, node, root, "tests/compat/write-fixture.mjs", db)
	want := expectedFixture(t, root)

	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatalf("open the database written by agentfs-sdk: %v", err)
	}
	compareDump(t, "the engine's dump of the agentfs-sdk fixture", canonicalDump(t, a), want)
	requireClean(t, "agentfs-sdk fixture", a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// The engine added its own tables on open; the SDK must not mind.
	compareDump(t, "agentfs-sdk's dump after the engine opened its database",
		runNode(t, node, root, "tests/compat/dump.mjs", db), want)
}

// fixtureOp is one operation of tests/compat/fixture-ops.json.
type fixtureOp struct {
	Op          string          `json:"op"`
	Path        string          `json:"path"`
	Target      string          `json:"target"`
	Text        *string         `json:"text"`
	Pattern     *int            `json:"pattern"`
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Name        string          `json:"name"`
	As          string          `json:"as"`
	Ref         string          `json:"ref"`
	Parameters  json.RawMessage `json:"parameters"`
	Result      json.RawMessage `json:"result"`
	Error       *string         `json:"error"`
	StartedAt   int64           `json:"startedAt"`
	CompletedAt int64           `json:"completedAt"`
}

// compactArg is JSON.stringify of an optional argument: nil stays nil
// (undefined, SQL NULL), present values are compacted.
func compactArg(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// replayFixture applies fixture-ops.json with the semantics of the
// agentfs-sdk calls that write-fixture.mjs makes.
func replayFixture(t *testing.T, a *core.Agent, root string) {
	t.Helper()
	ctx := context.Background()
	raw, err := os.ReadFile(filepath.Join(root, "tests", "compat", "fixture-ops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Ops []fixtureOp `json:"ops"`
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatalf("fixture-ops.json: %v", err)
	}
	ids := map[string]int64{}
	for i, op := range fixture.Ops {
		var err error
		switch op.Op {
		case "mkdir": // agentfs-sdk: parent must exist, mode 0755
			err = a.FS.Mkdir(ctx, op.Path, 0o755)
		case "writeFile": // agentfs-sdk: creates missing parents, mode 0644
			var data []byte
			switch {
			case op.Text != nil:
				data = []byte(*op.Text)
			case op.Pattern != nil:
				data = make([]byte, *op.Pattern)
				for i := range data {
					data[i] = byte(i % 256)
				}
			default:
				t.Fatalf("op %d: writeFile without content", i)
			}
			err = a.FS.WriteFile(ctx, op.Path, data, vfs.WriteOptions{CreateParents: true, Perm: 0o644})
		case "symlink":
			err = a.FS.Symlink(ctx, op.Target, op.Path)
		case "kvSet":
			err = a.KV.SetJSON(ctx, op.Key, compactArg(t, op.Value))
		case "toolStart":
			ids[op.As], err = a.Tools.Start(ctx, op.Name, compactArg(t, op.Parameters))
		case "toolSuccess":
			err = a.Tools.Success(ctx, ids[op.Ref], compactArg(t, op.Result))
		case "toolError":
			err = a.Tools.Fail(ctx, ids[op.Ref], *op.Error)
		case "toolRecord":
			var msg *string // agentfs-sdk: `error || null`, status error iff error is truthy
			if op.Error != nil && *op.Error != "" {
				msg = op.Error
			}
			_, err = a.Tools.Record(ctx, op.Name, time.Unix(op.StartedAt, 0), time.Unix(op.CompletedAt, 0),
				compactArg(t, op.Parameters), compactArg(t, op.Result), msg)
		default:
			t.Fatalf("op %d: unknown op %q", i, op.Op)
		}
		if err != nil {
			t.Fatalf("op %d (%s %s%s): %v", i, op.Op, op.Path, op.Key, err)
		}
	}
}

func TestCompat_AgentfsSDKReadsEngine(t *testing.T) {
	node, root := compatHarness(t)
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "engine.db")
	want := expectedFixture(t, root)

	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	replayFixture(t, a, root)
	// Engine-only data lives in tables of its own, invisible to the SDK.
	const xname, xvalue = "user.agentfs-go.origin", "engine"
	if err := a.FS.Setxattr(ctx, "/a/hello.txt", xname, []byte(xvalue), 0, true); err != nil {
		t.Fatal(err)
	}
	// The engine's own view first: a failure here is on the write side.
	compareDump(t, "the engine's dump of its own fixture", canonicalDump(t, a), want)
	requireClean(t, "engine-written fixture", a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// Opening with the SDK writes to the database: dump a copy.
	sdkCopy := filepath.Join(dir, "sdk-copy.db")
	copyDB(t, db, sdkCopy)
	compareDump(t, "agentfs-sdk's dump of the engine-written fixture",
		runNode(t, node, root, "tests/compat/dump.mjs", sdkCopy), want)

	// After the SDK has opened (and written to) it, the engine still reads
	// it the same, with its own data intact.
	a, err = core.Open(ctx, sdkCopy, core.Options{})
	if err != nil {
		t.Fatalf("reopen after agentfs-sdk: %v", err)
	}
	defer a.Close()
	compareDump(t, "the engine's dump after agentfs-sdk opened the database", canonicalDump(t, a), want)
	requireClean(t, "engine-written fixture after agentfs-sdk", a)
	if v, err := a.FS.Getxattr(ctx, "/a/hello.txt", xname, true); err != nil || string(v) != xvalue {
		t.Errorf("xattr %s after agentfs-sdk = %q, %v; want %q", xname, v, err, xvalue)
	}
}

// copyDB copies a closed database with its side files, if any.
func copyDB(t *testing.T, src, dst string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentfs-sdk 0.6.4 keeps fractional seconds as REAL; the timeline, the
// SDKs' getRecent and fsck read them.
func TestCompat_ReadsFractionalToolTimes(t *testing.T) {
	node, root := compatHarness(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "frac.db")
	runNode(t, node, root, "tests/compat/record-fractional.mjs", db)
	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	calls, err := a.Tools.List(ctx, toolcalls.Filter{})
	if err != nil {
		t.Fatalf("List over agentfs-sdk's fractional times: %v", err)
	}
	got := map[string][2]int64{}
	for _, c := range calls {
		if c.CompletedAt == nil {
			t.Fatalf("%s: no completion time", c.Name)
		}
		got[c.Name] = [2]int64{c.StartedAt, *c.CompletedAt}
	}
	want := map[string][2]int64{"fetch": {1700000000, 1700000001}, "exec": {1700000005, 1700000006}}
	if !maps.Equal(got, want) {
		t.Errorf("times read as %v, want %v (whole seconds)", got, want)
	}
	requireClean(t, "fractional tool times", a)
}
