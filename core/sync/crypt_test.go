//go:build cgo

package sync

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Sync plus encryption at rest: a push from an encrypted database, a
// bootstrap and a pull into another encrypted database with another key
// and cipher; the contents arrive byte-identical, and no file of either
// machine (database, WAL, the sync base, its metadata) holds the
// plaintext. The server holds plain pages, as the protocol defines.
func TestSyncEncrypted(t *testing.T) {
	ctx := context.Background()
	srv, err := NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	url := hs.URL + "/enc"
	dir := t.TempDir()
	keyA := &store.Encryption{Cipher: "aes256gcm", Key: bytes.Repeat([]byte{1}, 32)}
	keyB := &store.Encryption{Cipher: "aegis128l", Key: bytes.Repeat([]byte{2}, 16)}
	pa, pb := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")

	marker := []byte("MARKER-SYNC-CRYPT-1")
	big := bytes.Repeat([]byte("MARKER-SYNC-CRYPT-BIG-"), 20000) // chunks over many pages
	if err := Prepare(ctx, pa, url, Options{}, core.Options{Create: true, Encryption: keyA}); err != nil {
		t.Fatal(err)
	}
	write := func(p string, e *store.Encryption, name string, data []byte) {
		t.Helper()
		a, err := core.Open(ctx, p, core.Options{Encryption: e})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.FS.WriteFile(ctx, name, data, vfs.WriteOptions{Perm: 0o644, CreateParents: true}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string, e *store.Encryption, name string) []byte {
		t.Helper()
		a, err := core.Open(ctx, p, core.Options{Encryption: e})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := a.FS.ReadFile(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write(pa, keyA, "/m.txt", marker)
	write(pa, keyA, "/big.bin", big)
	// Pushing without the key, or with the wrong one, is refused before
	// anything is sent.
	if _, err := Push(ctx, pa, Options{}); !errors.Is(err, store.ErrNeedKey) {
		t.Fatalf("push without the key: %v", err)
	}
	if _, err := Push(ctx, pa, Options{Encryption: keyB}); err == nil {
		t.Fatal("push with another key succeeded")
	}
	if res, err := Push(ctx, pa, Options{Encryption: &store.Encryption{Key: keyA.Key}}); err != nil || res.Rows == 0 {
		t.Fatalf("push = %+v, %v", res, err)
	}
	// Machine B bootstraps with its own key and cipher.
	if err := Prepare(ctx, pb, url, Options{}, core.Options{Create: true, Encryption: keyB}); err != nil {
		t.Fatal(err)
	}
	if got := read(pb, keyB, "/m.txt"); !bytes.Equal(got, marker) {
		t.Fatalf("b reads %q", got)
	}
	if got := read(pb, keyB, "/big.bin"); !bytes.Equal(got, big) {
		t.Fatalf("b reads %d bytes of big.bin, want %d identical", len(got), len(big))
	}
	// B changes a file and pushes; A pulls it.
	marker2 := []byte("MARKER-SYNC-CRYPT-2")
	write(pb, keyB, "/m2.txt", marker2)
	if _, err := Push(ctx, pb, Options{Encryption: keyB}); err != nil {
		t.Fatal(err)
	}
	if res, err := Pull(ctx, pa, Options{Encryption: keyA}); err != nil || res.Applied == 0 {
		t.Fatalf("a pull = %+v, %v", res, err)
	}
	if got := read(pa, keyA, "/m2.txt"); !bytes.Equal(got, marker2) {
		t.Fatalf("a reads %q", got)
	}
	if st, err := GetStats(ctx, pa, Options{Encryption: keyA}); err != nil || st.CDCOperations != 0 {
		t.Fatalf("stats = %+v, %v", st, err)
	}
	if err := Checkpoint(ctx, pa, Options{Encryption: keyA}); err != nil {
		t.Fatal(err)
	}
	// No plaintext on either machine.
	for _, p := range []string{pa, pb} {
		for _, f := range []string{p, p + "-wal", basePath(p), metaPath(p)} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for _, m := range [][]byte{[]byte("MARKER-SYNC-CRYPT"), []byte("SQLite format 3")} {
				if bytes.Contains(b, m) {
					t.Errorf("%s holds %q", f, m)
				}
			}
		}
	}
	// The server holds plain pages (the protocol's), so the remote's
	// database is an ordinary agent database.
	remote, err := os.ReadFile(filepath.Join(srv.dir, "enc.db"))
	if err != nil || !bytes.HasPrefix(remote, []byte("SQLite format 3")) {
		t.Fatalf("the server's database is not plain SQLite (%v)", err)
	}
}
