//go:build unix

package overlay_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/overlay"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func diffLines(t *testing.T, changes []overlay.Change) []string {
	t.Helper()
	var out []string
	for _, c := range changes {
		out = append(out, string(c.Op)+" "+c.Type+" "+c.Path)
	}
	return out
}

// edit makes one change of every kind through the overlay.
func edit(t *testing.T, fsys *vfs.FS) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fsys.WriteFile(ctx, "/new.txt", []byte("new file"), vfs.WriteOptions{}))
	must(fsys.WriteFile(ctx, "/src/main.go", []byte("package main // changed\n"), vfs.WriteOptions{}))
	must(fsys.Unlink(ctx, "/obsolete.txt"))
	must(fsys.Rename(ctx, "/old-name.txt", "/docs/new-name.txt"))
	must(fsys.Chmod(ctx, "/run.sh", 0o755))
	must(fsys.Symlink(ctx, "src/main.go", "/main-link"))
	must(fsys.RemoveAll(ctx, "/build"))
	must(fsys.MkdirAll(ctx, "/newdir/deep", 0o750))
	must(fsys.WriteFile(ctx, "/newdir/deep/f", []byte("deep"), vfs.WriteOptions{}))
	must(fsys.Rename(ctx, "/assets", "/static"))
	must(fsys.Unlink(ctx, "/link-to-remove"))
	must(fsys.Link(ctx, "/new.txt", "/newdir/hard-link"))
	must(fsys.Mknod(ctx, "/pipe", syscall.S_IFIFO|0o640, 0))
}

func baseFiles() map[string]string {
	return map[string]string{
		"src/main.go":         "package main\n",
		"src/util.go":         "package main // util\n",
		"obsolete.txt":        "old",
		"old-name.txt":        "moved content",
		"run.sh":              "#!/bin/sh\necho hi\n",
		"docs/readme.md":      "readme",
		"build/out/a.o":       "obj",
		"build/out/b.o":       "obj",
		"assets/logo.svg":     "<svg/>",
		"assets/css/site.css": "body{}",
		"link-to-remove":      "->src/util.go",
		"unchanged.txt":       "same",
	}
}

func TestDiff(t *testing.T) {
	a, _ := newOverlay(t, baseFiles())
	// Reading and listing change nothing.
	if _, err := a.FS.ReadFile(ctx, "/unchanged.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FS.Paths(ctx); err != nil {
		t.Fatal(err)
	}
	changes, err := overlay.Diff(t.Context(), a)
	if err != nil || len(changes) != 0 {
		t.Fatalf("Diff before edits = %v, %v; want none", diffLines(t, changes), err)
	}
	edit(t, a.FS)
	changes, err = overlay.Diff(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"D dir /assets",
		"D dir /build",
		"A file /docs/new-name.txt",
		"D symlink /link-to-remove",
		"A symlink /main-link",
		"A file /new.txt",
		"A dir /newdir",
		"A dir /newdir/deep",
		"A file /newdir/deep/f",
		"A file /newdir/hard-link",
		"D file /obsolete.txt",
		"D file /old-name.txt",
		"A fifo /pipe",
		"M file /run.sh",
		"M file /src/main.go",
		"A dir /static",
		"A dir /static/css",
		"A file /static/css/site.css",
		"A file /static/logo.svg",
	}
	if got := diffLines(t, changes); !slices.Equal(got, want) {
		t.Fatalf("Diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCommit(t *testing.T) {
	// A 4 KiB patch inside a larger base file keeps the rest.
	big := strings.Repeat("0123456789abcdef", 1024) // 16 KiB
	files := baseFiles()
	files["big.bin"] = big
	a, base := newOverlay(t, files)
	edit(t, a.FS)
	f, err := a.FS.Open(ctx, "/big.bin", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("PATCH"), 5000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := a.FS.Utimens(ctx, "/new.txt", &mtime, &mtime, true); err != nil {
		t.Fatal(err)
	}
	want, err := overlay.Diff(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{DryRun: true})
	if err != nil || dry.Applied || len(dry.Changes) != len(want) {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if _, err := os.Stat(filepath.Join(base, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run wrote the host: %v", err)
	}
	res, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{})
	if err != nil || !res.Applied {
		t.Fatalf("Commit = %+v, %v", res, err)
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(base, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if read("new.txt") != "new file" || read("src/main.go") != "package main // changed\n" ||
		read("docs/new-name.txt") != "moved content" || read("newdir/deep/f") != "deep" ||
		read("static/css/site.css") != "body{}" || read("src/util.go") != "package main // util\n" {
		t.Fatal("host content wrong after commit")
	}
	if got := read("big.bin"); got != big[:5000]+"PATCH"+big[5005:] {
		t.Fatal("big.bin: per-chunk content not reproduced")
	}
	for _, p := range []string{"obsolete.txt", "old-name.txt", "build", "assets", "link-to-remove"} {
		if _, err := os.Lstat(filepath.Join(base, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still on the host: %v", p, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(base, "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode = %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(base, "newdir")); st.Mode().Perm() != 0o750 {
		t.Errorf("newdir mode = %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(base, "new.txt")); !st.ModTime().Equal(mtime) {
		t.Errorf("new.txt mtime = %v, want %v", st.ModTime(), mtime)
	}
	if tgt, err := os.Readlink(filepath.Join(base, "main-link")); err != nil || tgt != "src/main.go" {
		t.Errorf("main-link = %q, %v", tgt, err)
	}
	var s1, s2 syscall.Stat_t
	if syscall.Stat(filepath.Join(base, "new.txt"), &s1) != nil || syscall.Stat(filepath.Join(base, "newdir/hard-link"), &s2) != nil ||
		s1.Ino != s2.Ino || s1.Nlink != 2 {
		t.Errorf("hard link not reproduced: inodes %d, %d, nlink %d", s1.Ino, s2.Ino, s1.Nlink)
	}
	if st, err := os.Lstat(filepath.Join(base, "pipe")); err != nil || st.Mode()&os.ModeNamedPipe == 0 || st.Mode().Perm() != 0o640 {
		t.Errorf("pipe = %v, %v", st, err)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".agentfs-commit") {
			t.Errorf("staging directory left behind: %s", e.Name())
		}
	}
	// The delta is empty: no more changes, and the overlay shows the host.
	if changes, err := overlay.Diff(t.Context(), a); err != nil || len(changes) != 0 {
		t.Fatalf("Diff after commit = %v, %v", diffLines(t, changes), err)
	}
	if got, err := a.FS.ReadFile(ctx, "/docs/new-name.txt"); err != nil || string(got) != "moved content" {
		t.Fatalf("overlay after commit = %q, %v", got, err)
	}
}

func TestCommit_RefusesChangedBase(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"f.txt": "one", "g.txt": "two"})
	if err := a.FS.Chmod(ctx, "/f.txt", 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.FS.WriteFile(ctx, "/g.txt", []byte("agent"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The host changes f.txt behind the overlay's back.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(base, "f.txt"), []byte("host edit"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{})
	var ce *overlay.ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{"/f.txt"}) || !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("Commit = %v, want a conflict on /f.txt", err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "g.txt")); string(b) != "two" {
		t.Fatalf("a refused commit wrote g.txt: %q", b)
	}
	res, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{Force: true})
	if err != nil || !res.Applied || !slices.Equal(res.Conflicts, []string{"/f.txt"}) {
		t.Fatalf("forced Commit = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "g.txt")); string(b) != "agent" {
		t.Fatalf("g.txt = %q", b)
	}
	st, _ := os.Stat(filepath.Join(base, "f.txt"))
	if b, _ := os.ReadFile(filepath.Join(base, "f.txt")); string(b) != "host edit" || st.Mode().Perm() != 0o600 {
		t.Fatalf("f.txt = %q %v; want the host's content with the overlay's mode", b, st.Mode())
	}
}

// Deleting a file or a tree that the host changed afterwards is a
// conflict too: the commit would throw the host's change away.
func TestCommit_RefusesDeletingChangedBase(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"f.txt": "one", "tree/a": "a", "tree/sub/b": "b", "other": "o"})
	if err := a.FS.Unlink(ctx, "/f.txt"); err != nil {
		t.Fatal(err)
	}
	// As rm -rf does it through a mount: one entry at a time.
	for _, p := range []string{"/tree/sub/b", "/tree/a"} {
		if err := a.FS.Unlink(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/tree/sub", "/tree"} {
		if err := a.FS.Rmdir(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.FS.Unlink(ctx, "/other"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(base, "f.txt"), []byte("host edit"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "tree/sub/b"), []byte("host edit"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{})
	var ce *overlay.ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{"/f.txt", "/tree"}) {
		t.Fatalf("Commit = %v, want conflicts on /f.txt and /tree", err)
	}
	if _, err := os.Stat(filepath.Join(base, "other")); err != nil {
		t.Fatalf("a refused commit deleted other: %v", err)
	}
	if _, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"f.txt", "tree", "other"} {
		if _, err := os.Lstat(filepath.Join(base, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a forced commit: %v", p, err)
		}
	}
}

// A commit that fails halfway puts the host back as it was: every file
// replaced, deleted or added before the failure is restored.
func TestCommit_FailureRestoresHost(t *testing.T) {
	for _, failAt := range []int{1, 3, 6, 10, 1000} {
		a, base := newOverlay(t, baseFiles())
		edit(t, a.FS)
		before := snapshotTree(t, base)
		changes, err := overlay.Diff(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var failed string
		restore := overlay.SetHostChangeHook(func(p string) error {
			n++
			if n == failAt {
				failed = p
				return syscall.EIO
			}
			return nil
		})
		_, err = overlay.Commit(t.Context(), a, overlay.CommitOptions{})
		restore()
		if failAt > n {
			// Past the last host change: the commit succeeds.
			t.Logf("%d host changes in a commit", n)
			if err != nil {
				t.Fatalf("failAt %d (after %d host changes): Commit = %v", failAt, n, err)
			}
			continue
		}
		if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "undone") {
			t.Fatalf("failAt %d (%s): Commit = %v, want EIO and the host restored", failAt, failed, err)
		}
		if after := snapshotTree(t, base); !mapsEqual(before, after) {
			t.Fatalf("failAt %d (%s): host changed:\nbefore %v\nafter  %v", failAt, failed, before, after)
		}
		entries, _ := os.ReadDir(base)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".agentfs-commit") {
				t.Errorf("staging directory left behind: %s", e.Name())
			}
		}
		// The delta still has every change: a second commit applies them.
		again, err := overlay.Diff(t.Context(), a)
		if err != nil || len(again) != len(changes) {
			t.Fatalf("Diff after the failed commit: %d changes, %v; want %d", len(again), err, len(changes))
		}
		if res, err := overlay.Commit(t.Context(), a, overlay.CommitOptions{}); err != nil || !res.Applied {
			t.Fatalf("second Commit = %+v, %v", res, err)
		}
	}
}
