//go:build !js

package core_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func cryptKey(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

var cryptCiphers = map[string]int{"aes128gcm": 16, "aes256gcm": 32, "aegis128l": 16, "aegis128x2": 16, "aegis128x4": 16, "aegis256": 32, "aegis256x2": 32, "aegis256x4": 32}

// An encrypted agent keeps files, kv values and tool calls across opens,
// and none of its plaintext reaches the database, its WAL or a snapshot.
func TestCrypt_RoundTripNoPlaintextOnDisk(t *testing.T) {
	ctx := context.Background()
	for name, n := range cryptCiphers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a.db")
			enc := &store.Encryption{Cipher: name, Key: cryptKey(n, 0x42)}
			a, err := core.Open(ctx, p, core.Options{Create: true, Encryption: enc})
			if err != nil {
				t.Fatal(err)
			}
			marker := "MARKER-FILE-c0ffee-" + name
			big := bytes.Repeat([]byte(marker+"\n"), 20000) // overflow pages too
			if err := a.FS.WriteFile(ctx, "/secret/"+marker+".txt", big, vfs.WriteOptions{CreateParents: true}); err != nil {
				t.Fatal(err)
			}
			if err := a.KV.Set(ctx, "MARKER-KEY-kv", "MARKER-VALUE-kv"); err != nil {
				t.Fatal(err)
			}
			// While open, the WAL holds the latest pages: look there too.
			a.DB.Flush()
			snap := filepath.Join(dir, "snap.db")
			if err := a.DB.CopyTo(ctx, snap); err != nil {
				t.Fatal(err)
			}
			files := []string{p, p + "-wal", snap}
			noMarkers(t, files, marker, "MARKER-KEY-kv", "MARKER-VALUE-kv", "SQLite format 3")
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			noMarkers(t, files, marker, "MARKER-KEY-kv", "MARKER-VALUE-kv", "SQLite format 3")

			for _, path := range []string{p, snap} {
				b, err := core.Open(ctx, path, core.Options{Encryption: enc})
				if err != nil {
					t.Fatal(err)
				}
				got, err := b.FS.ReadFile(ctx, "/secret/"+marker+".txt")
				if err != nil || !bytes.Equal(got, big) {
					t.Fatalf("%s: read back %d bytes (%v), want %d", path, len(got), err, len(big))
				}
				var v string
				if err := b.KV.Get(ctx, "MARKER-KEY-kv", &v); err != nil || v != "MARKER-VALUE-kv" {
					t.Fatalf("kv: %q %v", v, err)
				}
				b.Close()
			}
		})
	}
}

func noMarkers(t *testing.T, files []string, markers ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("%s (%d bytes) contains %q in the clear", filepath.Base(f), len(b), m)
			}
		}
	}
}

// Every wrong way to open refuses with one line that names the fix, and
// leaves the file byte-identical.
func TestCrypt_BadInputLeavesFileAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	encPath, plainPath := filepath.Join(dir, "enc.db"), filepath.Join(dir, "plain.db")
	enc := &store.Encryption{Cipher: "aes256gcm", Key: cryptKey(32, 1)}
	for _, c := range []struct {
		path string
		enc  *store.Encryption
	}{{encPath, enc}, {plainPath, nil}} {
		a, err := core.Open(ctx, c.path, core.Options{Create: true, Encryption: c.enc})
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	for _, c := range []struct {
		name, path string
		enc        *store.Encryption
		want       string
	}{
		{"wrong key", encPath, &store.Encryption{Cipher: "aes256gcm", Key: cryptKey(32, 2)}, "wrong key"},
		{"wrong cipher", encPath, &store.Encryption{Cipher: "aegis256", Key: cryptKey(32, 1)}, "--cipher aes256gcm"},
		{"wrong key length", encPath, &store.Encryption{Cipher: "aes256gcm", Key: cryptKey(16, 1)}, "needs a 32-byte key"},
		{"unknown cipher", encPath, &store.Encryption{Cipher: "rot13", Key: cryptKey(32, 1)}, "unknown cipher"},
		{"key for a plain db", plainPath, enc, "not encrypted"},
		{"no key", encPath, nil, "is encrypted"},
	} {
		before := sum(t, c.path)
		_, err := core.Open(ctx, c.path, core.Options{Encryption: c.enc})
		if err == nil {
			t.Fatalf("%s: opened", c.name)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, msg, c.want)
		}
		if c.enc != nil && bytes.Contains([]byte(msg), []byte(string(c.enc.Key))) {
			t.Errorf("%s: error shows the key", c.name)
		}
		if sum(t, c.path) != before {
			t.Errorf("%s: file changed", c.name)
		}
		for _, s := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(c.path + s); err == nil {
				t.Errorf("%s: left %s behind", c.name, s)
			}
		}
	}
}

func sum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Convert encrypts a plain database and decrypts it back, whole.
func TestCrypt_Convert(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.db")
	a, err := core.Open(ctx, plain, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("MARKER-CONVERT\n"), 5000)
	if err := a.FS.WriteFile(ctx, "/f", data, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	for _, name := range []string{"aes256gcm", "aegis128l"} {
		enc := &store.Encryption{Cipher: name, Key: cryptKey(cryptCiphers[name], 9)}
		encPath, back := filepath.Join(dir, name+".db"), filepath.Join(dir, name+"-back.db")
		if err := store.Convert(ctx, plain, encPath, nil, enc, nil); err != nil {
			t.Fatal(err)
		}
		noMarkers(t, []string{encPath}, "MARKER-CONVERT")
		if err := store.Convert(ctx, encPath, back, enc, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			p   string
			enc *store.Encryption
		}{{encPath, enc}, {back, nil}} {
			b, err := core.Open(ctx, c.p, core.Options{Encryption: c.enc})
			if err != nil {
				t.Fatalf("%s: %v", c.p, err)
			}
			got, err := b.FS.ReadFile(ctx, "/f")
			b.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: read %d bytes (%v)", c.p, len(got), err)
			}
		}
	}
}
