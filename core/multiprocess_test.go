package core_test

// Several processes on one database file: the test binary re-executes
// itself (TestHelperProcess with a role in the environment) so that the
// engines under test run in real, separate processes with their own
// connections, caches and SQLite locks.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Environment of a helper process.
const (
	envHelperRole = "AGENTFS_TEST_HELPER_ROLE"
	envHelperDB   = "AGENTFS_TEST_HELPER_DB"
	envHelperProc = "AGENTFS_TEST_HELPER_PROC" // index of the process
	envHelperN    = "AGENTFS_TEST_HELPER_N"    // operations, or generation base
	envHelperKey  = "AGENTFS_TEST_HELPER_KEY"  // hex key of an encrypted database
)

// TestHelperProcess is not a test: it is the body of the child processes
// of the multi-process and crash tests. It does nothing unless started by
// them. Errors go to stderr, prefixed "ERROR:", with exit status 1.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(envHelperRole)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "writer":
		err = helperWriter()
	case "visibility":
		err = helperVisibility()
	case "create":
		err = helperCreate()
	case "crash":
		err = helperCrash()
	case "churn":
		err = helperChurn()
	case "crash-open":
		err = helperCrashOpen()
	case "atomic-write":
		err = helperAtomicWrite()
	case "touch":
		err = helperTouch()
	default:
		err = fmt.Errorf("unknown helper role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helperEnvInt(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: bad %s: %v\n", name, err)
		os.Exit(2)
	}
	return n
}

// helperBarrier tells the parent the child is ready and waits for the
// go-ahead (a line, or EOF, on stdin), so that children start together.
func helperBarrier() {
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// helperProc is a running child process.
type helperProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *lineCollector
	stderr *syncBuffer
	done   chan struct{}
	err    error // of Wait, valid after done
}

// syncBuffer is a bytes.Buffer safe for the copying goroutine of exec and
// the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lineCollector receives a child's stdout: complete lines are kept, in
// order, and announced on a channel; a partial last line (a child killed
// in the middle of a write) is never reported.
type lineCollector struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	ch      chan string
}

func newLineCollector() *lineCollector { return &lineCollector{ch: make(chan string, 1<<16)} }

func (l *lineCollector) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.lines = append(l.lines, line)
		select {
		case l.ch <- line:
		default: // nobody listens; the line stays in lines
		}
	}
}

// Lines returns the complete lines received so far.
func (l *lineCollector) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// startHelper starts the test binary as a child with the given role.
func startHelper(t *testing.T, role, db string, proc, n int) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envHelperRole+"="+role,
		envHelperDB+"="+db,
		envHelperProc+"="+strconv.Itoa(proc),
		envHelperN+"="+strconv.Itoa(n),
	)
	h := &helperProc{cmd: cmd, stdout: newLineCollector(), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	var err error
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper %s: %v", role, err)
	}
	go func() {
		h.err = cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// expectLine waits for the next line of the child's stdout.
func (h *helperProc) expectLine(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	select {
	case line := <-h.stdout.ch:
		if line != want {
			t.Fatalf("helper said %q, want %q; stderr:\n%s", line, want, h.stderr.String())
		}
	case <-h.done:
		t.Fatalf("helper exited (%v) before saying %q; stderr:\n%s", h.err, want, h.stderr.String())
	case <-time.After(timeout):
		t.Fatalf("helper did not say %q within %v; stderr:\n%s", want, timeout, h.stderr.String())
	}
}

// wait waits for the child to exit and checks it succeeded without any
// busy/locked error reaching it.
func (h *helperProc) wait(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(timeout):
		_ = h.cmd.Process.Kill()
		<-h.done
		t.Fatalf("%s did not finish within %v; stderr:\n%s", name, timeout, h.stderr.String())
	}
	stderr := h.stderr.String()
	low := strings.ToLower(stderr)
	if strings.Contains(low, "database is locked") || strings.Contains(low, "busy") {
		t.Errorf("%s: a busy/locked error reached the caller (the engine must wait for the other process):\n%s", name, stderr)
	}
	if h.err != nil {
		t.Fatalf("%s failed: %v; stderr:\n%s", name, h.err, stderr)
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("%s wrote to stderr:\n%s", name, stderr)
	}
}

// ---- concurrent writers -----------------------------------------------

const mpTool = "mp-tool"

func mpOwnPath(proc, j int) string    { return fmt.Sprintf("/p%d/f%03d.txt", proc, j) }
func mpSharedPath(proc, j int) string { return fmt.Sprintf("/shared/p%d-%03d.txt", proc, j) }
func mpKey(proc, j int) string        { return fmt.Sprintf("p%d:k%03d", proc, j) }

// mpContent varies in size so that writes cross chunk boundaries.
func mpContent(proc, j int) []byte {
	line := fmt.Sprintf("process %d, file %d\n", proc, j)
	return bytes.Repeat([]byte(line), 1+(j*37)%400)
}

type mpValue struct {
	Proc int    `json:"proc"`
	N    int    `json:"n"`
	Tag  string `json:"tag"`
}

// helperWriter is one of the concurrent writers: n rounds of a file in
// its own directory, a file in a shared directory, a read-back, a kv key
// and a tool call (start, success).
func helperWriter() error {
	db, proc, n := os.Getenv(envHelperDB), helperEnvInt(envHelperProc), helperEnvInt(envHelperN)
	helperBarrier()
	ctx := context.Background()
	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	for j := 0; j < n; j++ {
		data := mpContent(proc, j)
		for _, p := range []string{mpOwnPath(proc, j), mpSharedPath(proc, j)} {
			if err := a.FS.WriteFile(ctx, p, data, vfs.WriteOptions{CreateParents: true}); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
		}
		// Read back through caches that the other process keeps
		// invalidating.
		got, err := a.FS.ReadFile(ctx, mpOwnPath(proc, j))
		if err != nil {
			return fmt.Errorf("read back %s: %w", mpOwnPath(proc, j), err)
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("read back %s: %d bytes differ from the %d written", mpOwnPath(proc, j), len(got), len(data))
		}
		if err := a.KV.Set(ctx, mpKey(proc, j), mpValue{Proc: proc, N: j, Tag: "v"}); err != nil {
			return fmt.Errorf("kv set %s: %w", mpKey(proc, j), err)
		}
		params, _ := json.Marshal(mpValue{Proc: proc, N: j, Tag: "params"})
		id, err := a.Tools.Start(ctx, mpTool, params)
		if err != nil {
			return fmt.Errorf("tool start %d: %w", j, err)
		}
		result, _ := json.Marshal(mpValue{Proc: proc, N: j, Tag: "result"})
		if err := a.Tools.Success(ctx, id, result); err != nil {
			return fmt.Errorf("tool success %d (id %d): %w", j, id, err)
		}
		if j%50 == 49 {
			names, err := a.FS.Readdir(ctx, "/shared")
			if err != nil {
				return fmt.Errorf("readdir /shared: %w", err)
			}
			own := 0
			for _, name := range names {
				if strings.HasPrefix(name, fmt.Sprintf("p%d-", proc)) {
					own++
				}
			}
			if own != j+1 {
				return fmt.Errorf("readdir /shared after %d writes lists %d of this process's files", j+1, own)
			}
		}
	}
	return a.Close()
}

func TestMultiProcess_ConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	const procs, n = 2, 300
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "mp.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	hs := make([]*helperProc, procs)
	for i := range hs {
		hs[i] = startHelper(t, "writer", db, i, n)
	}
	for _, h := range hs {
		h.expectLine(t, "ready", time.Minute)
	}
	for _, h := range hs {
		_ = h.stdin.Close() // go
	}
	for i, h := range hs {
		h.wait(t, fmt.Sprintf("writer %d", i), 3*time.Minute)
	}
	t.Logf("%d processes x %d rounds (2 files, 1 kv key, 1 tool call each) in %v", procs, n, time.Since(start).Round(time.Millisecond))

	a, err = core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := 0; i < procs; i++ {
		names, err := a.FS.Readdir(ctx, fmt.Sprintf("/p%d", i))
		if err != nil || len(names) != n {
			t.Errorf("/p%d has %d entries (%v), want %d", i, len(names), err, n)
		}
		for j := 0; j < n; j++ {
			want := mpContent(i, j)
			for _, p := range []string{mpOwnPath(i, j), mpSharedPath(i, j)} {
				got, err := a.FS.ReadFile(ctx, p)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes, %v; want the %d bytes written", p, len(got), err, len(want))
				}
			}
			var v mpValue
			if err := a.KV.Get(ctx, mpKey(i, j), &v); err != nil || v != (mpValue{Proc: i, N: j, Tag: "v"}) {
				t.Errorf("kv %s = %+v, %v", mpKey(i, j), v, err)
			}
		}
	}
	if names, err := a.FS.Readdir(ctx, "/shared"); err != nil || len(names) != procs*n {
		t.Errorf("/shared has %d entries (%v), want %d", len(names), err, procs*n)
	}
	if keys, err := a.KV.List(ctx, "", 0); err != nil || len(keys) != procs*n {
		t.Errorf("kv has %d keys (%v), want %d", len(keys), err, procs*n)
	}

	calls, err := a.Tools.List(ctx, toolcalls.Filter{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != procs*n {
		t.Errorf("%d tool calls, want %d", len(calls), procs*n)
	}
	seen := map[[2]int]bool{}
	for _, c := range calls {
		var p, r mpValue
		if c.Name != mpTool || c.Status != toolcalls.StatusSuccess || json.Unmarshal(c.Parameters, &p) != nil || json.Unmarshal(c.Result, &r) != nil ||
			p.Tag != "params" || r != (mpValue{Proc: p.Proc, N: p.N, Tag: "result"}) || c.CompletedAt == nil || c.Error != nil {
			t.Errorf("tool call %d is not a completed mp-tool call of the test: %+v (params %s, result %s)", c.ID, c, c.Parameters, c.Result)
			continue
		}
		k := [2]int{p.Proc, p.N}
		if seen[k] {
			t.Errorf("tool call for process %d round %d recorded twice", p.Proc, p.N)
		}
		seen[k] = true
	}
	if len(seen) != procs*n {
		t.Errorf("%d distinct tool calls, want %d", len(seen), procs*n)
	}
	requireClean(t, "after concurrent writers", a)
}

// ---- concurrent creation ----------------------------------------------

// helperCreate opens (creating) a database that may not exist yet, at the
// same moment as another process, and writes to it.
func helperCreate() error {
	db, proc := os.Getenv(envHelperDB), helperEnvInt(envHelperProc)
	helperBarrier()
	ctx := context.Background()
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	for j := 0; j < 20; j++ {
		if err := a.FS.WriteFile(ctx, mpOwnPath(proc, j), mpContent(proc, j), vfs.WriteOptions{CreateParents: true}); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if err := a.KV.Set(ctx, mpKey(proc, j), mpValue{Proc: proc, N: j, Tag: "v"}); err != nil {
			return fmt.Errorf("kv set: %w", err)
		}
	}
	return a.Close()
}

// helperTouch opens the database (with the key in envHelperKey, if any),
// writes /touch-PROC and closes it: a short-lived second process, like a
// CLI command run beside a long-lived engine.
func helperTouch() error {
	db, proc := os.Getenv(envHelperDB), helperEnvInt(envHelperProc)
	var enc *store.Encryption
	if k := os.Getenv(envHelperKey); k != "" {
		key, err := hex.DecodeString(k)
		if err != nil {
			return err
		}
		enc = &store.Encryption{Key: key}
	}
	ctx := context.Background()
	a, err := core.Open(ctx, db, core.Options{Encryption: enc})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	if err := a.FS.WriteFile(ctx, fmt.Sprintf("/touch-%d", proc), []byte("touched"), vfs.WriteOptions{}); err != nil {
		a.Close()
		return fmt.Errorf("write: %w", err)
	}
	return a.Close()
}

func TestMultiProcess_ConcurrentCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	const procs = 2
	db := filepath.Join(t.TempDir(), "new.db")
	hs := make([]*helperProc, procs)
	for i := range hs {
		hs[i] = startHelper(t, "create", db, i, 0)
	}
	for _, h := range hs {
		h.expectLine(t, "ready", time.Minute)
	}
	for _, h := range hs {
		_ = h.stdin.Close()
	}
	for i, h := range hs {
		h.wait(t, fmt.Sprintf("creator %d", i), time.Minute)
	}
	ctx := context.Background()
	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := 0; i < procs; i++ {
		for j := 0; j < 20; j++ {
			if got, err := a.FS.ReadFile(ctx, mpOwnPath(i, j)); err != nil || !bytes.Equal(got, mpContent(i, j)) {
				t.Errorf("%s: %d bytes, %v", mpOwnPath(i, j), len(got), err)
			}
		}
	}
	if keys, err := a.KV.List(ctx, "", 0); err != nil || len(keys) != procs*20 {
		t.Errorf("kv has %d keys (%v), want %d", len(keys), err, procs*20)
	}
	requireClean(t, "after concurrent creation", a)
}

// ---- visibility of another process's writes ---------------------------

const (
	visOld     = "old content\n"
	visNew     = "new content written by the other process, longer than the old one\n"
	visCreated = "created by the other process\n"
)

// helperVisibility changes, from another process, everything the parent
// has cached.
func helperVisibility() error {
	ctx := context.Background()
	a, err := core.Open(ctx, os.Getenv(envHelperDB), core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	steps := []struct {
		what string
		fn   func() error
	}{
		{"rewrite", func() error { return a.FS.WriteFile(ctx, "/v/file.txt", []byte(visNew), vfs.WriteOptions{}) }},
		{"chmod", func() error { return a.FS.Chmod(ctx, "/v/file.txt", 0o600) }},
		{"create", func() error { return a.FS.WriteFile(ctx, "/v/new.txt", []byte(visCreated), vfs.WriteOptions{}) }},
		{"unlink", func() error { return a.FS.Unlink(ctx, "/v/gone.txt") }},
		{"rename", func() error { return a.FS.Rename(ctx, "/v/moved-from.txt", "/v/moved-to.txt") }},
		{"mkdir", func() error { return a.FS.Mkdir(ctx, "/v/sub", 0o755) }},
		{"symlink", func() error { return a.FS.Symlink(ctx, "file.txt", "/v/link") }},
		{"retarget", func() error {
			if err := a.FS.Unlink(ctx, "/v/oldlink"); err != nil {
				return err
			}
			return a.FS.Symlink(ctx, "new.txt", "/v/oldlink")
		}},
		{"kv", func() error { return a.KV.Set(ctx, "k", "new") }},
		{"kv delete", func() error { _, err := a.KV.Delete(ctx, "k-gone"); return err }},
		{"tool", func() error {
			id, err := a.Tools.Start(ctx, "child-tool", json.RawMessage(`{"x":1}`))
			if err != nil {
				return err
			}
			return a.Tools.Success(ctx, id, json.RawMessage(`"done"`))
		}},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return a.Close()
}

func TestMultiProcess_ChangesVisibleToOpenInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "vis.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.FS.WriteFile(ctx, "/v/file.txt", []byte(visOld), vfs.WriteOptions{CreateParents: true}))
	must(a.FS.WriteFile(ctx, "/v/gone.txt", []byte("to be removed"), vfs.WriteOptions{}))
	must(a.FS.WriteFile(ctx, "/v/moved-from.txt", []byte("moving"), vfs.WriteOptions{}))
	must(a.FS.Symlink(ctx, "file.txt", "/v/oldlink"))
	must(a.KV.Set(ctx, "k", "old"))
	must(a.KV.Set(ctx, "k-gone", 1))

	// Fill every cache: entries, attributes, negative lookups, link
	// targets, and keep a handle open.
	if got, err := a.FS.ReadFile(ctx, "/v/file.txt"); err != nil || string(got) != visOld {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	for _, p := range []string{"/v/gone.txt", "/v/moved-from.txt", "/v/oldlink"} {
		if _, err := a.FS.Lstat(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/v/new.txt", "/v/moved-to.txt", "/v/sub", "/v/link"} {
		if _, err := a.FS.Lstat(ctx, p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("lstat %s before: %v, want ENOENT", p, err)
		}
	}
	if tgt, err := a.FS.Readlink(ctx, "/v/oldlink"); err != nil || tgt != "file.txt" {
		t.Fatalf("readlink = %q, %v", tgt, err)
	}
	if _, err := a.FS.Readdir(ctx, "/v"); err != nil {
		t.Fatal(err)
	}
	h, err := a.FS.Open(ctx, "/v/file.txt", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var s string
	must(a.KV.Get(ctx, "k", &s))

	child := startHelper(t, "visibility", db, 0, 0)
	child.wait(t, "visibility writer", time.Minute)

	// The same, already open instance must see every change at once.
	st, err := a.FS.Stat(ctx, "/v/file.txt")
	if err != nil || st.Size != int64(len(visNew)) || st.Perm() != 0o600 {
		t.Errorf("stat /v/file.txt: size %d, mode %o, %v; want size %d, mode 600", st.Size, st.Perm(), err, len(visNew))
	}
	if got, err := a.FS.ReadFile(ctx, "/v/file.txt"); err != nil || string(got) != visNew {
		t.Errorf("ReadFile /v/file.txt = %q, %v; want the other process's content", got, err)
	}
	buf := make([]byte, 200)
	if n, err := h.ReadAt(buf, 0); string(buf[:n]) != visNew || (err != nil && err != io.EOF) {
		t.Errorf("ReadAt on a handle opened before = %q, %v; want the other process's content", buf[:n], err)
	}
	if got, err := a.FS.ReadFile(ctx, "/v/new.txt"); err != nil || string(got) != visCreated {
		t.Errorf("ReadFile /v/new.txt = %q, %v", got, err)
	}
	for _, p := range []string{"/v/gone.txt", "/v/moved-from.txt"} {
		if _, err := a.FS.Lstat(ctx, p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("lstat %s after the other process removed it: %v, want ENOENT", p, err)
		}
	}
	if got, err := a.FS.ReadFile(ctx, "/v/moved-to.txt"); err != nil || string(got) != "moving" {
		t.Errorf("ReadFile /v/moved-to.txt = %q, %v", got, err)
	}
	if st, err := a.FS.Stat(ctx, "/v/sub"); err != nil || !st.IsDir() {
		t.Errorf("stat /v/sub: %+v, %v", st, err)
	}
	if got, err := a.FS.ReadFile(ctx, "/v/link"); err != nil || string(got) != visNew {
		t.Errorf("ReadFile via new symlink = %q, %v", got, err)
	}
	if tgt, err := a.FS.Readlink(ctx, "/v/oldlink"); err != nil || tgt != "new.txt" {
		t.Errorf("readlink of the re-created symlink = %q, %v; want new.txt", tgt, err)
	}
	if got, err := a.FS.ReadFile(ctx, "/v/oldlink"); err != nil || string(got) != visCreated {
		t.Errorf("ReadFile via re-created symlink = %q, %v", got, err)
	}
	names, err := a.FS.Readdir(ctx, "/v")
	want := []string{"file.txt", "link", "moved-to.txt", "new.txt", "oldlink", "sub"}
	if err != nil || strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("readdir /v = %q, %v; want %q", names, err, want)
	}
	if err := a.KV.Get(ctx, "k", &s); err != nil || s != "new" {
		t.Errorf("kv k = %q, %v; want new", s, err)
	}
	if _, err := a.KV.GetJSON(ctx, "k-gone"); err == nil {
		t.Errorf("kv k-gone still present after the other process deleted it")
	}
	if calls, err := a.Tools.List(ctx, toolcalls.Filter{}); err != nil || len(calls) != 1 || calls[0].Status != toolcalls.StatusSuccess {
		t.Errorf("tool calls = %+v, %v; want the other process's one call", calls, err)
	}
	requireClean(t, "after the other process's changes", a)
}

// ---- reads while another process writes -------------------------------

// churnContent is one of two self-describing contents of different sizes
// (more than one chunk each), so that a read mixing two versions, or the
// size of one with the data of the other, is recognisable.
func churnContent(v int) []byte {
	if v%2 == 0 {
		return bytes.Repeat([]byte("version A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), 150) // 6150 bytes
	}
	return bytes.Repeat([]byte("version B, longer: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"), 200) // 13800 bytes
}

// helperChurn rewrites /churn/file.txt alternately with the two contents
// and creates and removes /churn/flicker.txt, until stdin is closed.
func helperChurn() error {
	a, err := core.Open(context.Background(), os.Getenv(envHelperDB), core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	fmt.Println("ready")
	for i := 0; ; i++ {
		select {
		case <-stop:
			return a.Close()
		default:
		}
		if err := a.FS.WriteFile(context.Background(), "/churn/file.txt", churnContent(i), vfs.WriteOptions{}); err != nil {
			return fmt.Errorf("rewrite: %w", err)
		}
		if i%2 == 0 {
			err = a.FS.WriteFile(context.Background(), "/churn/flicker.txt", []byte("here"), vfs.WriteOptions{})
		} else {
			err = a.FS.Unlink(context.Background(), "/churn/flicker.txt")
		}
		if err != nil {
			return fmt.Errorf("flicker %d: %w", i, err)
		}
	}
}

// TestMultiProcess_ReadsDuringOtherProcessWrites: while another process
// rewrites a file and creates/removes another, each read here must see
// one committed state: a whole version of the content (never the size of
// one version with the data of the other), and a present or absent file
// (never an I/O error).
func TestMultiProcess_ReadsDuringOtherProcessWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "churn.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.FS.WriteFile(ctx, "/churn/file.txt", churnContent(0), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	child := startHelper(t, "churn", db, 0, 0)
	child.expectLine(t, "ready", time.Minute)

	const maxReported = 5
	var torn, statErrs, reads, stats int
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		got, err := a.FS.ReadFile(ctx, "/churn/file.txt")
		reads++
		if err != nil {
			if statErrs++; statErrs <= maxReported {
				t.Errorf("ReadFile /churn/file.txt while another process rewrites it: %v", err)
			}
		} else if !bytes.Equal(got, churnContent(0)) && !bytes.Equal(got, churnContent(1)) {
			if torn++; torn <= maxReported {
				n := min(len(got), 60)
				t.Errorf("ReadFile returned %d bytes that are neither version (%d or %d bytes), starting %q, ending %q",
					len(got), len(churnContent(0)), len(churnContent(1)), got[:n], got[len(got)-n:])
			}
		}
		_, err = a.FS.Stat(ctx, "/churn/flicker.txt")
		stats++
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if statErrs++; statErrs <= maxReported {
				t.Errorf("Stat /churn/flicker.txt while another process creates and removes it: %v (want success or ENOENT)", err)
			}
		}
	}
	_ = child.stdin.Close()
	child.wait(t, "churn writer", time.Minute)
	t.Logf("%d reads, %d stats: %d torn reads, %d errors", reads, stats, torn, statErrs)
	requireClean(t, "after churn", a)
}
