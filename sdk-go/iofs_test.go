package agentfs_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// populate writes a small tree with files of several sizes, nested and
// empty directories and symlinks.
func populate(t *testing.T, f agentfs.FileSystem) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.MkdirAll(ctx, "/docs/deep/er", 0o755))
	must(f.Mkdir(ctx, "/empty", 0o700))
	must(f.WriteFile(ctx, "/hello.txt", []byte("hello\n"), agentfs.WriteOptions{}))
	must(f.WriteFile(ctx, "/docs/a.md", []byte("# A\n"), agentfs.WriteOptions{}))
	must(f.WriteFile(ctx, "/docs/deep/er/big.bin", make([]byte, 3*4096+17), agentfs.WriteOptions{Perm: 0o600}))
	must(f.WriteFile(ctx, "/docs/deep/zero", nil, agentfs.WriteOptions{}))
	// Larger than the view's read-ahead block, with a pattern that shows
	// misplaced bytes.
	huge := make([]byte, 150_001)
	for i := range huge {
		huge[i] = byte(i*7 + i/251)
	}
	must(f.WriteFile(ctx, "/docs/huge.bin", huge, agentfs.WriteOptions{}))
	must(f.Symlink(ctx, "hello.txt", "/link.txt"))
	must(f.Symlink(ctx, "/docs", "/docs-link"))
}

func TestIOFS(t *testing.T) {
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{Path: filepath.Join(t.TempDir(), "io.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	testIOFS(t, a.FS())
}

// testIOFS checks the io/fs view of a populated filesystem (local or remote).
func testIOFS(t *testing.T, f agentfs.FileSystem) {
	populate(t, f)
	fsys := agentfs.NewIOFS(context.Background(), f)
	if err := fstest.TestFS(fsys, "hello.txt", "docs/a.md", "docs/huge.bin", "docs/deep/er/big.bin", "docs/deep/zero", "empty", "link.txt", "docs-link"); err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(fsys, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "a.md", "huge.bin", "deep/er/big.bin", "deep/zero"); err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(sub, "a.md")
	if err != nil || string(b) != "# A\n" {
		t.Fatalf("ReadFile(sub, a.md) = %q, %v", b, err)
	}
	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		walked = append(walked, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Lexical order within each directory, parents first.
	want := []string{".", "docs", "docs/a.md", "docs/deep", "docs/deep/er", "docs/deep/er/big.bin", "docs/deep/zero", "docs/huge.bin", "docs-link", "empty", "hello.txt", "link.txt"}
	if !slices.Equal(walked, want) {
		t.Errorf("WalkDir = %v, want %v", walked, want)
	}
	info, err := fs.Stat(fsys, "docs/deep/er/big.bin")
	if err != nil || info.Size() != 3*4096+17 || info.Mode() != 0o600 {
		t.Errorf("Stat big.bin = %v, %v", info, err)
	}
	if _, ok := info.Sys().(agentfs.Stat); !ok {
		t.Errorf("Sys() is %T, want agentfs.Stat", info.Sys())
	}
	li, err := fs.Lstat(fsys, "link.txt")
	if err != nil || li.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat link.txt = %v, %v", li, err)
	}
	if target, err := fs.ReadLink(fsys, "link.txt"); err != nil || target != "hello.txt" {
		t.Errorf("ReadLink = %q, %v", target, err)
	}
	if _, err := fsys.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := fsys.Open("/abs"); !errors.Is(err, fs.ErrInvalid) || !errors.As(err, &pe) || pe.Path != "/abs" {
		t.Errorf("Open(/abs) = %v, want ErrInvalid", err)
	}
	if _, err := fs.ReadFile(fsys, "docs"); err == nil {
		t.Error("ReadFile(docs) succeeded on a directory")
	}
}
