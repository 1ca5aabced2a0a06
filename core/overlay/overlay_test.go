//go:build unix

package overlay_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/overlay"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
	"golang.org/x/sys/unix"
)

var ctx = context.Background()

// tempDir is t.TempDir without "#" (see core/vfs helpers_test.go).
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "overlay-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// writeTree creates files (path -> content; a trailing "/" makes a
// directory, "->target" a symlink) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(c) > 2 && c[:2] == "->" {
			if err := os.Symlink(c[2:], full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotTree records every path under dir with its mode, size, mtime
// and content, to prove the base is untouched.
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newOverlay makes a base directory with files and an overlay above it.
func newOverlay(t testing.TB, files map[string]string) (*core.Agent, string) {
	t.Helper()
	base := filepath.Join(tempDir(t), "base")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, base, files)
	a, err := overlay.Create(ctx, filepath.Join(tempDir(t), "delta.db"), base, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, base
}

func errno(err error) syscall.Errno { return vfs.Errno(err) }

func TestOverlay_FallthroughAndWrites(t *testing.T) {
	a, base := newOverlay(t, map[string]string{
		"a.txt": "alpha", "dir/b.txt": "beta", "dir/sub/c.txt": "gamma", "link": "->a.txt", "empty/": "",
	})
	before := snapshotTree(t, base)
	if a.FS.Base() != base {
		t.Fatalf("Base() = %q, want %q", a.FS.Base(), base)
	}
	got, err := a.FS.ReadFile(ctx, "/dir/sub/c.txt")
	if err != nil || string(got) != "gamma" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if got, err := a.FS.ReadFile(ctx, "/link"); err != nil || string(got) != "alpha" {
		t.Fatalf("ReadFile(link) = %q, %v", got, err)
	}
	if tgt, err := a.FS.Readlink(ctx, "/link"); err != nil || tgt != "a.txt" {
		t.Fatalf("Readlink = %q, %v", tgt, err)
	}
	if _, err := a.FS.Stat(ctx, "/missing"); errno(err) != syscall.ENOENT {
		t.Fatalf("Stat(missing) = %v, want ENOENT", err)
	}
	names, err := a.FS.Readdir(ctx, "/")
	if want := []string{"a.txt", "dir", "empty", "link"}; err != nil || !slices.Equal(names, want) {
		t.Fatalf("Readdir(/) = %v, %v; want %v", names, err, want)
	}
	// Writes land in the delta; the base is untouched.
	if err := a.FS.WriteFile(ctx, "/dir/new.txt", []byte("new"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.FS.WriteFile(ctx, "/a.txt", []byte("ALPHA!"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	names, err = a.FS.Readdir(ctx, "/dir")
	if want := []string{"b.txt", "new.txt", "sub"}; err != nil || !slices.Equal(names, want) {
		t.Fatalf("Readdir(/dir) = %v, %v; want %v (merged)", names, err, want)
	}
	if got, _ := a.FS.ReadFile(ctx, "/a.txt"); string(got) != "ALPHA!" {
		t.Fatalf("a.txt = %q", got)
	}
	if err := a.FS.Chmod(ctx, "/dir/b.txt", 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.FS.Stat(ctx, "/dir/b.txt"); st.Perm() != 0o600 {
		t.Fatalf("mode = %o", st.Perm())
	}
	if after := snapshotTree(t, base); !mapsEqual(before, after) {
		t.Fatalf("base changed:\nbefore %v\nafter  %v", before, after)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestOverlay_WhiteoutsAndRemoval(t *testing.T) {
	a, base := newOverlay(t, map[string]string{
		"keep.txt": "k", "gone.txt": "g", "tree/x/1": "1", "tree/x/2": "2", "tree/y": "y", "d/": "",
	})
	before := snapshotTree(t, base)
	if err := a.FS.Unlink(ctx, "/gone.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FS.Stat(ctx, "/gone.txt"); errno(err) != syscall.ENOENT {
		t.Fatalf("Stat(gone) = %v, want ENOENT", err)
	}
	if err := a.FS.RemoveAll(ctx, "/tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FS.Stat(ctx, "/tree/x/1"); errno(err) != syscall.ENOENT {
		t.Fatalf("Stat(tree/x/1) = %v, want ENOENT", err)
	}
	if err := a.FS.Rmdir(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	names, _ := a.FS.Readdir(ctx, "/")
	if want := []string{"keep.txt"}; !slices.Equal(names, want) {
		t.Fatalf("Readdir = %v, want %v", names, want)
	}
	// A name can come back as a new file.
	if err := a.FS.WriteFile(ctx, "/gone.txt", []byte("again"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.FS.ReadFile(ctx, "/gone.txt"); string(got) != "again" {
		t.Fatalf("gone.txt = %q", got)
	}
	var whiteouts []string
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		var err error
		whiteouts, err = c.Strings("SELECT CAST(path AS BLOB) FROM fs_whiteout ORDER BY path")
		return err
	})
	if want := []string{"/d", "/gone.txt", "/tree"}; err != nil || !slices.Equal(whiteouts, want) {
		t.Fatalf("whiteouts = %v, %v; want %v", whiteouts, err, want)
	}
	// Reopened, the delta still hides them.
	p := a.Path()
	a.Close()
	b, err := core.Open(ctx, p, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.FS.Stat(ctx, "/tree"); errno(err) != syscall.ENOENT {
		t.Fatalf("after reopen Stat(tree) = %v, want ENOENT", err)
	}
	if after := snapshotTree(t, base); !mapsEqual(before, after) {
		t.Fatal("base changed")
	}
}

func TestOverlay_RenameAndInodeStability(t *testing.T) {
	a, _ := newOverlay(t, map[string]string{"f.txt": "file", "dir/in.txt": "inside", "dir/deep/z": "z"})
	st1, err := a.FS.Stat(ctx, "/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Copy-up of data keeps the inode number.
	fh, err := a.FS.Open(ctx, "/f.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte("F"), 0); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	st2, _ := a.FS.Stat(ctx, "/f.txt")
	if st2.Ino != st1.Ino {
		t.Fatalf("ino after write = %d, before %d", st2.Ino, st1.Ino)
	}
	if got, _ := a.FS.ReadFile(ctx, "/f.txt"); string(got) != "File" {
		t.Fatalf("content = %q, want File", got)
	}
	if err := a.FS.Rename(ctx, "/f.txt", "/g.txt"); err != nil {
		t.Fatal(err)
	}
	st3, err := a.FS.Stat(ctx, "/g.txt")
	if err != nil || st3.Ino != st1.Ino {
		t.Fatalf("renamed ino = %d, %v; want %d", st3.Ino, err, st1.Ino)
	}
	if _, err := a.FS.Stat(ctx, "/f.txt"); errno(err) != syscall.ENOENT {
		t.Fatalf("old name: %v, want ENOENT", err)
	}
	// A base directory renamed keeps showing its base content.
	if err := a.FS.Rename(ctx, "/dir", "/moved"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.FS.ReadFile(ctx, "/moved/deep/z"); err != nil || string(got) != "z" {
		t.Fatalf("moved/deep/z = %q, %v", got, err)
	}
	if _, err := a.FS.Stat(ctx, "/dir/in.txt"); errno(err) != syscall.ENOENT {
		t.Fatalf("old dir: %v, want ENOENT", err)
	}
	// fs_origin maps the delta inode to the base inode.
	info, ok, err := a.FS.OverlayInfo(ctx, st1.Ino)
	if err != nil || !ok || info.Path != "/f.txt" {
		t.Fatalf("OverlayInfo = %+v, %v, %v", info, ok, err)
	}
	var baseIno int64
	if err := a.DB.Do(ctx, func(c *store.Conn) error {
		return c.QueryRow("SELECT base_ino FROM fs_origin WHERE delta_ino = ?", st1.Ino).Scan(&baseIno)
	}); err != nil || baseIno != info.BaseIno {
		t.Fatalf("fs_origin base_ino = %d, %v; want %d", baseIno, err, info.BaseIno)
	}
}

func TestOverlay_PerChunkCopyUp(t *testing.T) {
	base := filepath.Join(tempDir(t), "base")
	os.MkdirAll(base, 0o755)
	const size = 64 << 20 // sparse base file
	big := filepath.Join(base, "big.bin")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte("tail"), size-4); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	a, err := overlay.Create(ctx, filepath.Join(tempDir(t), "delta.db"), base, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.FS.Stat(ctx, "/big.bin")
	if err != nil || st.Size != size {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	f, err := a.FS.Open(ctx, "/big.bin", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	patch := bytes.Repeat([]byte("x"), 4096)
	if _, err := f.WriteAt(patch, 10<<20); err != nil { // aligned 4 KiB
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("yy"), 20<<20+4095); err != nil { // straddles two chunks
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if _, err := f.ReadAt(buf, size-8); err != nil || string(buf[4:]) != "tail" {
		t.Fatalf("tail = %q, %v", buf, err)
	}
	f.Close()
	var chunks, bytesStored int64
	if err := a.DB.Do(ctx, func(c *store.Conn) error {
		return c.QueryRow("SELECT COUNT(*), COALESCE(SUM(length(data)), 0) FROM fs_data WHERE ino = ?", st.Ino).Scan(&chunks, &bytesStored)
	}); err != nil {
		t.Fatal(err)
	}
	if chunks != 3 || bytesStored != 3*4096 {
		t.Fatalf("stored %d chunks, %d bytes; want 3 chunks of 4096 (per-chunk copy-up)", chunks, bytesStored)
	}
	// The content reads as base + patches.
	g, _ := a.FS.Open(ctx, "/big.bin", os.O_RDONLY, 0)
	defer g.Close()
	got := make([]byte, 4096+2)
	g.ReadAt(got, 10<<20-1)
	if got[0] != 0 || !bytes.Equal(got[1:4097], patch) || got[4097] != 0 {
		t.Fatalf("patched region wrong")
	}
	two := make([]byte, 2)
	g.ReadAt(two, 20<<20+4095)
	if string(two) != "yy" {
		t.Fatalf("straddling write = %q", two)
	}
	// Truncate then grow: the base bytes past the cut must not come back.
	if err := a.FS.Truncate(ctx, "/big.bin", 100); err != nil {
		t.Fatal(err)
	}
	if err := a.FS.Truncate(ctx, "/big.bin", size); err != nil {
		t.Fatal(err)
	}
	g2, _ := a.FS.Open(ctx, "/big.bin", os.O_RDONLY, 0)
	defer g2.Close()
	if _, err := g2.ReadAt(buf, size-8); err != nil || !bytes.Equal(buf, make([]byte, 8)) {
		t.Fatalf("after truncate+grow tail = %q, %v; want zeros", buf, err)
	}
}

func TestOverlay_BaseChangedIsStale(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"f": "original"})
	if _, err := a.FS.Stat(ctx, "/f"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "f"), []byte("changed on the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FS.ReadFile(ctx, "/f"); !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("ReadFile after the base changed = %v, want ESTALE", err)
	}
}

// A copied-up entry has the host's inode number (tools that cache stat
// data, like git's index, see the same files); entries created in the
// delta are numbered from vfs.DeltaInoBase; a hard link of the base stays
// one inode.
func TestOverlay_HostInodeNumbers(t *testing.T) {
	base := filepath.Join(tempDir(t), "base")
	writeTree(t, base, map[string]string{"f.txt": "f", "d/g.txt": "g"})
	if err := os.Link(filepath.Join(base, "f.txt"), filepath.Join(base, "d/hard")); err != nil {
		t.Fatal(err)
	}
	a, err := overlay.Create(ctx, filepath.Join(tempDir(t), "delta.db"), base, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, p := range []string{"f.txt", "d", "d/g.txt", "d/hard"} {
		var hst syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(base, p), &hst); err != nil {
			t.Fatal(err)
		}
		st, err := a.FS.Lstat(ctx, "/"+p)
		if err != nil || st.Ino != int64(hst.Ino) {
			t.Fatalf("Lstat(%s).Ino = %d, %v; want the host's %d", p, st.Ino, err, hst.Ino)
		}
		if st.Mtime.UnixNano() != hostfs.Mtime(&hst).UnixNano() || st.Ctime.UnixNano() != hostfs.Ctime(&hst).UnixNano() || st.Size != hst.Size && !st.IsDir() {
			t.Fatalf("Lstat(%s) = %+v, host %+v", p, st, hst)
		}
	}
	// The two base names of one file are one delta inode.
	st, _ := a.FS.Stat(ctx, "/d/hard")
	if st.Nlink != 2 {
		t.Fatalf("nlink of a base hard link = %d, want 2", st.Nlink)
	}
	if err := a.FS.WriteFile(ctx, "/f.txt", []byte("through one name"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.FS.ReadFile(ctx, "/d/hard"); string(got) != "through one name" {
		t.Fatalf("the other name reads %q", got)
	}
	if err := a.FS.WriteFile(ctx, "/new.txt", []byte("n"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.FS.Stat(ctx, "/new.txt"); st.Ino <= vfs.DeltaInoBase {
		t.Fatalf("a new file has inode %d, want above %d", st.Ino, vfs.DeltaInoBase)
	}
}

// Extended attributes of base files come up with them (user.* and the
// like; the host's security.* and system.* stay behind), and changing
// them changes the delta only.
func TestOverlay_BaseXattrs(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"f": "data", "d/g": "g", "l": "->f"})
	if err := unix.Setxattr(filepath.Join(base, "f"), "user.origin", []byte("host"), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			t.Skip("the base's filesystem has no user xattrs")
		}
		t.Fatal(err)
	}
	must(t, unix.Setxattr(filepath.Join(base, "d"), "user.dir", []byte{0, 1, 2}, 0))
	big := bytes.Repeat([]byte("v"), 2000) // past the first read buffer
	must(t, unix.Setxattr(filepath.Join(base, "d", "g"), "user.big", big, 0))
	if v, err := a.FS.Getxattr(ctx, "/f", "user.origin", true); err != nil || string(v) != "host" {
		t.Fatalf("Getxattr(/f) = %q, %v; want host", v, err)
	}
	if v, err := a.FS.Getxattr(ctx, "/d", "user.dir", true); err != nil || !bytes.Equal(v, []byte{0, 1, 2}) {
		t.Fatalf("Getxattr(/d) = %v, %v", v, err)
	}
	if v, err := a.FS.Getxattr(ctx, "/d/g", "user.big", true); err != nil || !bytes.Equal(v, big) {
		t.Fatalf("Getxattr(/d/g) = %d bytes, %v; want 2000", len(v), err)
	}
	// Through the symlink (followed) and on it (not followed: none).
	if v, err := a.FS.Getxattr(ctx, "/l", "user.origin", true); err != nil || string(v) != "host" {
		t.Fatalf("Getxattr(/l, follow) = %q, %v", v, err)
	}
	if names, err := a.FS.Listxattr(ctx, "/l", false); err != nil || len(names) != 0 {
		t.Fatalf("Listxattr(/l, nofollow) = %v, %v; want none", names, err)
	}
	must(t, a.FS.Setxattr(ctx, "/f", "user.origin", []byte("delta"), 0, true))
	if v, _ := a.FS.Getxattr(ctx, "/f", "user.origin", true); string(v) != "delta" {
		t.Fatalf("after Setxattr: %q", v)
	}
	hv := make([]byte, 16)
	n, err := unix.Getxattr(filepath.Join(base, "f"), "user.origin", hv)
	if err != nil || string(hv[:n]) != "host" {
		t.Fatalf("base xattr = %q, %v; want it untouched", hv[:n], err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
