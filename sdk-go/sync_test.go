//go:build cgo

package agentfs_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
	"github.com/agentfs-go/agentfs/core/sync/synctest"
)

// Two machines share an agent through the engine's sync server (the one
// `agentfs serve sync` runs): Options.SyncRemoteURL bootstraps, Push,
// Pull, Sync and SyncStats move and report the changes.
func TestSync_SDK(t *testing.T) {
	ctx := context.Background()
	base := synctest.Start(t, nil)
	url := base + "/shared"
	dir := t.TempDir()

	a, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "a.db"), SyncRemoteURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.FS().WriteFile(ctx, "/notes.md", []byte("from a"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.KV().Set(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	st, err := a.SyncStats(ctx)
	if err != nil || st.CDCOperations == 0 || st.RemoteURL != url {
		t.Fatalf("stats before push = %+v, %v", st, err)
	}
	if res, err := a.Push(ctx); err != nil || res.Rows == 0 {
		t.Fatalf("push = %+v, %v", res, err)
	}
	if st, err := a.SyncStats(ctx); err != nil || st.CDCOperations != 0 || st.LastPushUnixTime == nil {
		t.Fatalf("stats after push = %+v, %v", st, err)
	}

	b, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "b.db"), SyncRemoteURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.FS().ReadFile(ctx, "/notes.md"); err != nil || string(got) != "from a" {
		t.Fatalf("b after bootstrap: %q, %v", got, err)
	}
	if err := b.FS().WriteFile(ctx, "/b.txt", []byte("from b"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, res, err := b.Sync(ctx); err != nil || res.Rows == 0 {
		t.Fatalf("b sync = %+v, %v", res, err)
	}
	pr, err := a.Pull(ctx)
	if err != nil || !pr.Changed || pr.Applied == 0 {
		t.Fatalf("a pull = %+v, %v", pr, err)
	}
	if got, err := a.FS().ReadFile(ctx, "/b.txt"); err != nil || string(got) != "from b" {
		t.Fatalf("a after pull: %q, %v", got, err)
	}

	// An existing database synced with another URL, and one never synced.
	if _, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "a.db"), SyncRemoteURL: base + "/other"}); err == nil || !strings.Contains(err.Error(), "is synced with") {
		t.Fatalf("open with another remote: %v", err)
	}
	c, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "c.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Pull(ctx); err == nil || !strings.Contains(err.Error(), "not set up for sync") {
		t.Fatalf("pull of an agent without a remote: %v", err)
	}
}

// The same operations on an agent of `agentfs serve http` (Remote): the
// server's agent, set up for sync beside it, syncs with the server's
// token.
func TestSync_Remote(t *testing.T) {
	ctx := context.Background()
	url := synctest.Start(t, nil) + "/r"

	data := t.TempDir()
	if err := agentsync.Prepare(ctx, filepath.Join(data, "synced.db"), url, agentsync.Options{}, core.Options{Create: true}); err != nil {
		t.Fatal(err)
	}
	dir, err := rpc.NewAgentDir(data, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(rpc.NewHTTPHandler(dir, rpc.HTTPOptions{Version: "test", Token: testToken}))
	defer func() { web.Close(); dir.Close() }()
	r, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: web.URL, Agent: "synced", Token: testToken, HTTPClient: web.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.FS().WriteFile(ctx, "/remote.txt", []byte("via serve http"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := r.SyncStats(ctx); err != nil || st.CDCOperations == 0 || st.RemoteURL != url {
		t.Fatalf("stats = %+v, %v", st, err)
	}
	if _, res, err := r.Sync(ctx); err != nil || res.Rows == 0 {
		t.Fatalf("sync = %+v, %v", res, err)
	}
	if res, err := r.Pull(ctx); err != nil || res.Changed {
		t.Fatalf("pull after sync = %+v, %v", res, err)
	}
	if res, err := r.Push(ctx); err != nil || res.Rows != 0 {
		t.Fatalf("push with nothing new = %+v, %v", res, err)
	}
	b, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(t.TempDir(), "b.db"), SyncRemoteURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.FS().ReadFile(ctx, "/remote.txt"); err != nil || string(got) != "via serve http" {
		t.Fatalf("b reads %q, %v", got, err)
	}
	// An agent of the server without a remote: FAILED_PRECONDITION.
	plain, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: web.URL, Agent: "plain", Token: testToken, Create: true, HTTPClient: web.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Pull(ctx); err == nil || !strings.Contains(err.Error(), "not set up for sync") {
		t.Fatalf("pull of a plain agent: %v", err)
	}
}

// A partial bootstrap (Options.SyncPartial) receives a prefix of the
// remote, far less than the whole, and fetches the rest when read.
func TestSync_Partial(t *testing.T) {
	ctx := context.Background()
	url := synctest.Start(t, nil) + "/partial"
	dir := t.TempDir()

	// ~3 MiB on the remote; /big/last.bin is written last, past any prefix.
	noise := func(seed byte, n int) []byte {
		b := make([]byte, n)
		x := uint64(seed)*0x9e3779b97f4a7c15 | 1
		for i := range b {
			x ^= x >> 12
			x ^= x << 25
			x ^= x >> 27
			b[i] = byte((x * 0x2545f4914f6cdd1d) >> 56)
		}
		return b
	}
	last := noise(99, 256<<10)
	w, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "w.db"), SyncRemoteURL: url})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := w.FS().WriteFile(ctx, fmt.Sprintf("/big/f%d.bin", i), noise(byte(i+1), 256<<10), agentfs.WriteOptions{CreateParents: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.FS().WriteFile(ctx, "/big/last.bin", last, agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()

	received := func(a *agentfs.AgentFS) int64 {
		t.Helper()
		st, err := a.SyncStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.NetworkReceivedBytes
	}
	full, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "full.db"), SyncRemoteURL: url})
	if err != nil {
		t.Fatal(err)
	}
	whole := received(full)
	full.Close()
	if whole < 3<<20 {
		t.Fatalf("a full bootstrap received %d bytes", whole)
	}

	part, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "part.db"), SyncRemoteURL: url,
		SyncPartial: &agentsync.Partial{BootstrapLength: 128 << 10, SegmentSize: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	boot := received(part)
	if boot <= 0 || boot >= whole/8 {
		t.Fatalf("partial bootstrap received %d of %d", boot, whole)
	}
	// A file outside the prefix comes over the network when read.
	if got, err := part.FS().ReadFile(ctx, "/big/last.bin"); err != nil || !bytes.Equal(got, last) {
		t.Fatalf("read past the prefix: %d bytes, %v", len(got), err)
	}
	if after := received(part); after <= boot || after >= whole {
		t.Fatalf("received %d after the read (bootstrap %d, whole %d)", after, boot, whole)
	}

	q, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "q.db"), SyncRemoteURL: url,
		SyncPartial: &agentsync.Partial{BootstrapQuery: "SELECT name FROM fs_dentry WHERE parent_ino = 1", Prefetch: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if n := received(q); n <= 0 || n >= 1<<20 {
		t.Fatalf("query bootstrap received %d", n)
	}
	if got, err := q.FS().ReadFile(ctx, "/big/last.bin"); err != nil || !bytes.Equal(got, last) {
		t.Fatalf("read after a query bootstrap: %d bytes, %v", len(got), err)
	}

	if _, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "bad.db"), SyncRemoteURL: url,
		SyncPartial: &agentsync.Partial{BootstrapLength: 4096, BootstrapQuery: "SELECT 1"}}); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Fatalf("length and query: %v", err)
	}
	if _, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(dir, "nourl.db"), SyncPartial: &agentsync.Partial{BootstrapLength: 4096}}); err == nil || !strings.Contains(err.Error(), "SyncRemoteURL") {
		t.Fatalf("partial without a remote: %v", err)
	}
}
