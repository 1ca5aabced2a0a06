//go:build cgo

package sync

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// restartable serves a Server that the test can close and open again on
// the same directory (a server restart) behind one URL.
type restartable struct {
	t   *testing.T
	dir string
	mu  gosync.Mutex
	srv *Server
	hs  *httptest.Server
}

func newRestartable(t *testing.T, limit int64) *restartable {
	r := &restartable{t: t, dir: t.TempDir()}
	r.open(limit)
	r.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		h := r.srv.Handler()
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(func() { r.hs.Close(); r.srv.Close() })
	return r
}

func (r *restartable) open(limit int64) {
	s, err := NewServer(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	s.HistoryBytes = limit
	r.mu.Lock()
	r.srv = s
	r.mu.Unlock()
}

func (r *restartable) restart(limit int64) {
	r.mu.Lock()
	old := r.srv
	r.mu.Unlock()
	if err := old.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.open(limit)
}

func writeFiles(t *testing.T, path string, files map[string][]byte) {
	ctx := t.Context()
	t.Helper()
	a, err := core.Open(context.Background(), path, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// In name order: where a file's pages land in the database (inside a
	// partial bootstrap's prefix or not) must not change from run to run.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		if err := a.FS.MkdirAll(ctx, filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := a.FS.WriteFile(ctx, name, data, vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path, name string) []byte {
	ctx := t.Context()
	t.Helper()
	a, err := core.Open(context.Background(), path, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	data, err := a.FS.ReadFile(ctx, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

func received(t *testing.T, path string) int64 {
	t.Helper()
	m, err := ReadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	return m.ReceivedByte
}

// A 24 MiB agent bootstrapped by a 1 MiB prefix receives about 1 MiB;
// reading a file outside it fetches that file's pages (about its size,
// not the database's) at the bootstrap's revision, byte-identical, also
// after the remote changed the file and after a server restart; a pull
// then brings the remote's version; a push from the partial agent works.
func TestPartialBootstrapLazyRead(t *testing.T) {
	ctx := context.Background()
	rs := newRestartable(t, 0)
	url := rs.hs.URL + "/agent"
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if err := Bootstrap(ctx, a, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewSource(1))
	files := map[string][]byte{}
	for i := range 24 {
		data := make([]byte, 1<<20)
		rnd.Read(data)
		files[fmt.Sprintf("/data/f%02d", i)] = data
	}
	writeFiles(t, a, files)
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(rs.dir, "agent.db"))
	if err != nil || st.Size() < 24<<20 {
		t.Fatalf("remote database: %v %v", st, err)
	}

	if err := Bootstrap(ctx, b, url, Options{Partial: &Partial{BootstrapLength: 1 << 20}}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	boot := received(t, b)
	if boot < 1<<20 || boot > 1<<20+64<<10 {
		t.Fatalf("a 1 MiB prefix bootstrap received %d bytes (database %d)", boot, st.Size())
	}
	if !IsPartial(b) {
		t.Fatal("not partial after a prefix bootstrap")
	}
	if s, err := GetStats(ctx, b, Options{}); err != nil || s.MissingPages == 0 || s.CDCOperations != -1 {
		t.Fatalf("stats of a partial agent: %+v %v", s, err)
	}
	// The remote changes f20 after b's bootstrap: b still reads its
	// revision's version (pages from the server's history).
	old20 := files["/data/f20"]
	new20 := bytes.Repeat([]byte("new twenty "), 50000)
	writeFiles(t, a, map[string][]byte{"/data/f20": new20})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, b, "/data/f13"); !bytes.Equal(got, files["/data/f13"]) {
		t.Fatalf("f13: %d bytes, differ", len(got))
	}
	after := received(t, b)
	t.Logf("database %d bytes; prefix bootstrap received %d; reading a 1 MiB file %d more", st.Size(), boot, after-boot)
	// Its pages, in segments, read-ahead doubling on a sequential read:
	// at most about twice the file, never the database.
	if d := after - boot; d < 1<<20 || d > 4<<20 {
		t.Fatalf("reading one 1 MiB file received %d bytes", d)
	}
	rs.restart(0)
	if got := readFile(t, b, "/data/f20"); !bytes.Equal(got, old20) {
		t.Fatalf("f20 at the bootstrap's revision after a restart: %d bytes, differ", len(got))
	}
	if total := received(t, b); total > 10<<20 {
		t.Fatalf("two files read, %d bytes received of a %d-byte database", total, st.Size())
	}
	// A local change, then a pull and a push: the agent is made whole,
	// gets the remote's f20, and sends its change.
	writeFiles(t, b, map[string][]byte{"/from-b": []byte("written on b")})
	if _, err := Pull(ctx, b, Options{}); err != nil {
		t.Fatal(err)
	}
	if IsPartial(b) {
		t.Fatal("still partial after a pull")
	}
	if got := readFile(t, b, "/data/f20"); !bytes.Equal(got, new20) {
		t.Fatal("f20 after the pull is not the remote's")
	}
	if res, err := Push(ctx, b, Options{}); err != nil || res.Rows == 0 {
		t.Fatalf("push: %+v %v", res, err)
	}
	if _, err := Pull(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, a, "/from-b"); string(got) != "written on b" {
		t.Fatalf("a reads %q", got)
	}
	for name, data := range files {
		if name == "/data/f20" {
			continue
		}
		if got := readFile(t, b, name); !bytes.Equal(got, data) {
			t.Fatalf("%s differs after the pull", name)
		}
	}
}

// A push straight after a partial bootstrap (no pull before) sends the
// local change; pages written locally are never overwritten by a fetch.
func TestPartialPushAfterBootstrap(t *testing.T) {
	ctx := context.Background()
	rs := newRestartable(t, 0)
	url := rs.hs.URL + "/agent"
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	if err := Bootstrap(ctx, a, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	writeFiles(t, a, map[string][]byte{"/big1": big, "/big2": big, "/big3": big})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, b, url, Options{Partial: &Partial{BootstrapLength: 64 << 10, SegmentSize: 16 << 10, Prefetch: true}}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, b, map[string][]byte{"/big2": []byte("replaced on b"), "/small": []byte("s")})
	if got := readFile(t, b, "/big2"); string(got) != "replaced on b" {
		t.Fatalf("b reads %q", got)
	}
	if res, err := Push(ctx, b, Options{}); err != nil || res.Rows == 0 {
		t.Fatalf("push: %+v %v", res, err)
	}
	if err := Bootstrap(ctx, c, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/big2"); string(got) != "replaced on b" {
		t.Fatalf("c reads %q", got)
	}
	if got := readFile(t, c, "/big3"); !bytes.Equal(got, big) {
		t.Fatal("big3 differs")
	}
	ag, err := core.Open(ctx, b, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if rep, err := ag.Fsck(ctx, false); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}

// A query bootstrap receives the pages the server reads running the
// query; the rest of the agent is still readable.
func TestPartialQueryBootstrap(t *testing.T) {
	ctx := context.Background()
	rs := newRestartable(t, 0)
	url := rs.hs.URL + "/agent"
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if err := Bootstrap(ctx, a, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 4<<20)
	writeFiles(t, a, map[string][]byte{"/big": big, "/notes.md": []byte("hello")})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, b, url, Options{Partial: &Partial{BootstrapQuery: "SELECT * FROM fs_dentry"}}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	n := received(t, b)
	t.Logf("query bootstrap received %d bytes", n)
	if n > 256<<10 {
		t.Fatalf("a query bootstrap of the dentries received %d bytes", n)
	}
	if got := readFile(t, b, "/notes.md"); string(got) != "hello" {
		t.Fatalf("notes: %q", got)
	}
	// A pull while the remote is unchanged keeps the agent partial.
	before := received(t, b)
	if res, err := Pull(ctx, b, Options{}); err != nil || res.Changed || !IsPartial(b) {
		t.Fatalf("pull of an unchanged remote: %+v %v, partial %v", res, err, IsPartial(b))
	}
	if d := received(t, b) - before; d > 1024 {
		t.Fatalf("a pull of an unchanged remote received %d bytes", d)
	}
	if got := readFile(t, b, "/big"); !bytes.Equal(got, big) {
		t.Fatal("big differs")
	}
}

// The server keeps page history up to its bound: a revision whose
// pages were dropped is refused with 410, and a lazy read of a partial
// agent pinned to it fails with the hint to bootstrap again.
func TestHistoryBound(t *testing.T) {
	ctx := context.Background()
	rs := newRestartable(t, 64<<10)
	url := rs.hs.URL + "/agent"
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if err := Bootstrap(ctx, a, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("a"), 1<<20)
	writeFiles(t, a, map[string][]byte{"/big": big})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, b, url, Options{Partial: &Partial{BootstrapLength: 8 << 10}}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, a, map[string][]byte{"/big": bytes.Repeat([]byte("b"), 1<<20)})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadMeta(b)
	r, _ := newRemote(url, Options{})
	_, err := r.pull(ctx, pullRequest{ServerRevision: m.Revision, ServerPagesSel: encodeRoaring([]uint32{1})}, func(uint64, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "410") {
		t.Fatalf("a pruned revision: %v", err)
	}
	ag, err := core.Open(ctx, b, core.Options{})
	if err == nil {
		_, err = ag.FS.ReadFile(ctx, "/big")
		ag.Close()
	}
	if err == nil {
		t.Fatal("read a file at a pruned revision")
	}
}

// A database changed while the server was stopped (here: its mtime) is
// not the one the history describes: a new epoch, pinned reads refused,
// incremental pulls answered with every page, agents still in step.
func TestHistoryDroppedWhenFileChangedWhileStopped(t *testing.T) {
	ctx := context.Background()
	rs := newRestartable(t, 0)
	url := rs.hs.URL + "/agent"
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if err := Bootstrap(ctx, a, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, a, map[string][]byte{"/f": bytes.Repeat([]byte("f"), 64<<10)})
	if _, err := Push(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadMeta(a)
	rs.restart(0)
	r, _ := newRemote(url, Options{})
	sel := encodeRoaring([]uint32{0})
	if _, err := r.pull(ctx, pullRequest{ServerRevision: m.Revision, ServerPagesSel: sel}, func(uint64, []byte) error { return nil }); err != nil {
		t.Fatalf("a restart with the file unchanged keeps the revision: %v", err)
	}
	rs.mu.Lock()
	rs.srv.Close()
	rs.mu.Unlock()
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(rs.dir, "agent.db"), future, future); err != nil {
		t.Fatal(err)
	}
	rs.open(0)
	_, err := r.pull(ctx, pullRequest{ServerRevision: m.Revision, ServerPagesSel: sel}, func(uint64, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "410") {
		t.Fatalf("a revision of the old epoch: %v", err)
	}
	if err := Bootstrap(ctx, b, url, Options{}, core.Options{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, b, map[string][]byte{"/g": []byte("g")})
	if _, err := Push(ctx, b, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, a, "/g"); string(got) != "g" {
		t.Fatalf("a reads %q", got)
	}
}
