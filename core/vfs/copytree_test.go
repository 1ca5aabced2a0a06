package vfs_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// CopyTree is the one tree copy of the engine: the CLI's `fs cp -r` and
// the sandbox's cp both call it.
func TestCopyTree(t *testing.T) {
	f := newFS(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.MkdirAll(ctx, "/src/sub", 0o750))
	must(f.WriteFile(ctx, "/src/a.txt", []byte("alpha"), vfs.WriteOptions{}))
	must(f.WriteFile(ctx, "/src/sub/b.txt", []byte("beta"), vfs.WriteOptions{}))
	must(f.Symlink(ctx, "a.txt", "/src/link"))
	must(f.Mknod(ctx, "/src/fifo", syscall.S_IFIFO|0o640, 0))
	old := time.Unix(1_000_000_000, 0)
	must(f.Utimens(ctx, "/src/a.txt", &old, &old, true))

	t.Run("copy", func(t *testing.T) {
		var seen []string
		must(vfs.CopyTree(f.Bind(ctx), "/src", "/dst", vfs.CopyOptions{Done: func(rel string, _ vfs.Stat, created bool) {
			if created {
				seen = append(seen, rel)
			}
		}}))
		if len(seen) != 6 {
			t.Errorf("Done saw %q, want the top and 5 entries", seen)
		}
		if b, _ := f.ReadFile(ctx, "/dst/sub/b.txt"); string(b) != "beta" {
			t.Errorf("/dst/sub/b.txt = %q", b)
		}
		if target, err := f.Readlink(ctx, "/dst/link"); err != nil || target != "a.txt" {
			t.Errorf("/dst/link = %q, %v: want a copy of the link", target, err)
		}
		if st, err := f.Lstat(ctx, "/dst/fifo"); err != nil || st.Type() != syscall.S_IFIFO {
			t.Errorf("/dst/fifo: %v %o, want a fifo", err, st.Mode)
		}
		if st, _ := f.Stat(ctx, "/dst/sub"); st.Perm() != 0o750 {
			t.Errorf("/dst/sub perm %o, want the source's 750", st.Perm())
		}
		if st, _ := f.Stat(ctx, "/dst/a.txt"); st.Mtime.Equal(old) {
			t.Errorf("without Preserve the copy kept the source's mtime")
		}
	})
	t.Run("merge, preserve, no-clobber", func(t *testing.T) {
		must(f.MkdirAll(ctx, "/m/sub", 0o700))
		must(f.WriteFile(ctx, "/m/a.txt", []byte("mine"), vfs.WriteOptions{}))
		must(vfs.CopyTree(f.Bind(ctx), "/src", "/m", vfs.CopyOptions{NoClobber: true, Preserve: true}))
		if b, _ := f.ReadFile(ctx, "/m/a.txt"); string(b) != "mine" {
			t.Errorf("NoClobber replaced /m/a.txt: %q", b)
		}
		if b, _ := f.ReadFile(ctx, "/m/sub/b.txt"); string(b) != "beta" {
			t.Errorf("merge did not copy /m/sub/b.txt: %q", b)
		}
		must(vfs.CopyTree(f.Bind(ctx), "/src", "/m", vfs.CopyOptions{Preserve: true}))
		if st, _ := f.Stat(ctx, "/m/a.txt"); !st.Mtime.Equal(old) {
			t.Errorf("Preserve: mtime %v, want %v", st.Mtime, old)
		}
		if st, _ := f.Stat(ctx, "/m/sub"); st.Perm() != 0o750 {
			t.Errorf("Preserve: /m/sub perm %o, want 750", st.Perm())
		}
	})
	t.Run("deref", func(t *testing.T) {
		must(vfs.CopyTree(f.Bind(ctx), "/src", "/d", vfs.CopyOptions{Deref: true}))
		if st, err := f.Lstat(ctx, "/d/link"); err != nil || !st.IsRegular() {
			t.Errorf("Deref: /d/link is %o, %v; want a regular file", st.Mode, err)
		}
	})
	t.Run("into itself", func(t *testing.T) {
		err := vfs.CopyTree(f.Bind(ctx), "/src", "/src/sub/x", vfs.CopyOptions{})
		var ce *vfs.CopyError
		if !errors.As(err, &ce) || vfs.Errno(err) != syscall.EINVAL {
			t.Fatalf("err = %v, want a CopyError with EINVAL", err)
		}
		if msg := ce.Message("src", "src/sub/x"); msg != "cannot copy a directory, src, into itself, src/sub/x" {
			t.Errorf("message %q", msg)
		}
		if ok, _ := f.Exists(ctx, "/src/sub/x"); ok {
			t.Errorf("refused copy left /src/sub/x")
		}
	})
	t.Run("failures go on when Failed says so", func(t *testing.T) {
		must(f.MkdirAll(ctx, "/f", 0o755))
		must(f.Mkdir(ctx, "/f/a.txt", 0o755)) // a directory where a file goes
		var failed []string
		must(vfs.CopyTree(f.Bind(ctx), "/src", "/f", vfs.CopyOptions{Failed: func(e *vfs.CopyError) error {
			failed = append(failed, e.Op+" "+e.Rel)
			return nil
		}}))
		if len(failed) != 1 || failed[0] != "overwrite a.txt" {
			t.Errorf("failed = %q, want [overwrite a.txt]", failed)
		}
		if b, _ := f.ReadFile(ctx, "/f/sub/b.txt"); string(b) != "beta" {
			t.Errorf("the copy stopped at the failure")
		}
		err := vfs.CopyTree(f.Bind(ctx), "/src", "/f", vfs.CopyOptions{})
		if vfs.Errno(err) != syscall.EISDIR {
			t.Errorf("without Failed: %v, want EISDIR", err)
		}
	})
	t.Run("stop", func(t *testing.T) {
		n := 0
		err := vfs.CopyTree(f.Bind(ctx), "/src", "/s", vfs.CopyOptions{Stop: func() bool { n++; return n > 2 }})
		if !errors.Is(err, vfs.ErrCopyStopped) {
			t.Errorf("err = %v, want ErrCopyStopped", err)
		}
	})
}
