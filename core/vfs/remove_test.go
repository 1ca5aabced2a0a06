package vfs_test

import (
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func TestRemove(t *testing.T) {
	f := newFS(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.MkdirAll(ctx, "/d/sub", 0o755))
	must(f.WriteFile(ctx, "/d/sub/x", []byte("x"), vfs.WriteOptions{}))
	must(f.WriteFile(ctx, "/file", []byte("y"), vfs.WriteOptions{}))
	must(f.Symlink(ctx, "/d", "/link"))

	for _, tc := range []struct {
		path             string
		recursive, force bool
		want             syscall.Errno
	}{
		{"/missing", false, false, syscall.ENOENT},
		{"/missing", false, true, 0},
		{"/missing/deeper", true, true, 0},
		{"/file/child", false, true, syscall.ENOTDIR},
		{"/d", false, false, syscall.EISDIR},
		{"/d", false, true, syscall.EISDIR},
		{"/", true, true, syscall.EBUSY},
		{"/link", false, false, 0}, // the link, not its target directory
		{"/file", false, false, 0},
		{"/d", true, false, 0},
		{"/d", true, false, syscall.ENOENT},
	} {
		err := f.Remove(ctx, tc.path, tc.recursive, tc.force)
		if got := vfs.Errno(err); got != tc.want || (err != nil && got == 0) {
			t.Errorf("Remove(%q, recursive=%v, force=%v) = %v, want %s", tc.path, tc.recursive, tc.force, err, errnoName(tc.want))
		}
	}
	names, err := f.Readdir(ctx, "/")
	must(err)
	if len(names) != 0 {
		t.Errorf("left %v", names)
	}
}
