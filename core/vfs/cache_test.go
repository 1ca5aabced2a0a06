package vfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// TestFS_CacheCoherence opens the same database twice, as two processes
// would, and checks that each sees the other's changes at once: the
// caches of an instance must be dropped when another connection commits.
func TestFS_CacheCoherence(t *testing.T) {
	p := filepath.Join(tempDir(t), "a.db")
	a1 := openAgentAt(t, p)
	a2 := openAgentAt(t, p)
	f1, f2 := a1.FS, a2.FS

	// other runs an unrelated operation on the first instance between the
	// change and the check. The cache must be dropped whatever the
	// first instance does in between: KV and tool-call operations share
	// its connection.
	type between struct {
		name string
		run  func(t *testing.T)
	}
	for _, b := range []between{
		{"nothing", func(t *testing.T) {}},
		{"kv", func(t *testing.T) {
			if _, err := a1.KV.GetJSON(ctx, "k"); err == nil {
				t.Fatal("unexpected key")
			}
		}},
		{"kv write", func(t *testing.T) { must(t, a1.KV.Set(ctx, "k2", 1)) }},
		{"tools", func(t *testing.T) {
			_, err := a1.Tools.List(ctx, toolcalls.Filter{})
			must(t, err)
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			must(t, f1.RemoveAll(ctx, "/w"))
			must(t, f1.MkdirAll(ctx, "/w", 0o755))
			writeFile(t, f1, "/w/f", "one")
			// Fill the first instance's caches.
			wantContent(t, f1, "/w/f", "one")
			readdir(t, f1, "/w")
			_, _ = f1.Stat(ctx, "/w/g") // negative entry
			_, _ = f1.ReaddirPlus(ctx, "/w")

			must(t, f2.WriteFile(ctx, "/w/f", []byte("second"), vfs.WriteOptions{}))
			b.run(t)
			wantContent(t, f1, "/w/f", "second")
			if st := lstat(t, f1, "/w/f"); st.Size != 6 {
				t.Errorf("size seen by the first instance: got %d, want 6", st.Size)
			}

			must(t, f2.Rename(ctx, "/w/f", "/w/g"))
			b.run(t)
			if _, err := f1.Stat(ctx, "/w/f"); vfs.Errno(err) != syscall.ENOENT {
				t.Errorf("Stat(/w/f) after another instance renamed it: got %v, want ENOENT", err)
			}
			wantContent(t, f1, "/w/g", "second")
			if got := readdir(t, f1, "/w"); !equalStrings(got, []string{"g"}) {
				t.Errorf("Readdir(/w) after rename: got %q, want [g]", got)
			}

			must(t, f2.Unlink(ctx, "/w/g"))
			b.run(t)
			if _, err := f1.Stat(ctx, "/w/g"); vfs.Errno(err) != syscall.ENOENT {
				t.Errorf("Stat(/w/g) after another instance deleted it: got %v, want ENOENT", err)
			}

			must(t, f2.Mkdir(ctx, "/w/g", 0o700))
			b.run(t)
			if st, err := f1.Stat(ctx, "/w/g"); err != nil || !st.IsDir() {
				t.Errorf("Stat(/w/g) after another instance made it a directory: got %o, %v", st.Mode, err)
			}

			must(t, f2.Chmod(ctx, "/w/g", 0o750))
			b.run(t)
			if st := lstat(t, f1, "/w/g"); st.Perm() != 0o750 {
				t.Errorf("perm after another instance's chmod: got %o, want 750", st.Perm())
			}

			must(t, f2.Rmdir(ctx, "/w/g"))
			must(t, f2.Symlink(ctx, "target", "/w/g"))
			b.run(t)
			if got, err := f1.Readlink(ctx, "/w/g"); err != nil || got != "target" {
				t.Errorf("Readlink after another instance made a link: got %q, %v", got, err)
			}

			// A write by the first instance uses fresh state too.
			writeFile(t, f2, "/w/app", "abc")
			wantContent(t, f1, "/w/app", "abc")
			must(t, f2.WriteFile(ctx, "/w/app", []byte("defgh"), vfs.WriteOptions{}))
			b.run(t)
			must(t, f1.WriteFile(ctx, "/w/app", []byte("!"), vfs.WriteOptions{Append: true}))
			wantContent(t, f2, "/w/app", "defgh!")
			wantContent(t, f1, "/w/app", "defgh!")

			// An open handle of the first instance sees the new size.
			h, err := f1.Open(ctx, "/w/app", os.O_RDWR|os.O_APPEND, 0)
			must(t, err)
			must(t, f2.WriteFile(ctx, "/w/app", []byte("0123456789"), vfs.WriteOptions{}))
			b.run(t)
			_, err = h.Write([]byte("+"))
			must(t, err)
			must(t, h.Close())
			wantContent(t, f2, "/w/app", "0123456789+")
		})
	}
}

// TestFS_OpenUnlinkRace opens and unlinks the same file concurrently: an
// Open that succeeded must give a usable handle, never ESTALE, however the
// two interleave.
func TestFS_OpenUnlinkRace(t *testing.T) {
	f := newFS(t)
	for i := 0; i < 200; i++ {
		writeFile(t, f, "/f", "data")
		var wg sync.WaitGroup
		var h *vfs.File
		var openErr error
		wg.Add(2)
		go func() { defer wg.Done(); h, openErr = f.Open(ctx, "/f", os.O_RDONLY, 0) }()
		go func() { defer wg.Done(); _ = f.Unlink(ctx, "/f") }()
		wg.Wait()
		if openErr != nil {
			wantErrno(t, "Open racing Unlink", openErr, syscall.ENOENT)
			continue
		}
		buf := make([]byte, 4)
		if n, err := h.ReadAt(buf, 0); n != 4 || string(buf) != "data" {
			t.Fatalf("iteration %d: ReadAt through a handle opened before the unlink: got %d, %v, %q", i, n, err, buf[:n])
		}
		must(t, h.Close())
	}
}

// A directory created or listed here is known in full, so lookups of
// missing names in it skip the database; a name another connection adds
// must still appear.
func TestFS_CompleteDirectorySeesForeignCreates(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.db")
	a := openAgentAt(t, p).FS
	b := openAgentAt(t, p).FS
	if err := a.Mkdir(ctx, "/fresh", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stat(ctx, "/fresh/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a missing name: %v, want not exist", err)
	}
	if err := b.WriteFile(ctx, "/fresh/x", []byte("from b"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.ReadFile(ctx, "/fresh/x"); err != nil || string(got) != "from b" {
		t.Fatalf("ReadFile after a foreign create = %q, %v", got, err)
	}
	if _, err := a.Readdir(ctx, "/fresh"); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile(ctx, "/fresh/y", []byte("y"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if names, err := a.Readdir(ctx, "/fresh"); err != nil || len(names) != 2 {
		t.Fatalf("Readdir after a second foreign create = %v, %v; want [x y]", names, err)
	}
	if _, err := a.Stat(ctx, "/fresh/y"); err != nil {
		t.Fatalf("Stat of the foreign file: %v", err)
	}
}
