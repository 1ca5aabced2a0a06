package vfs_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func TestFS_WriteFileModeAndTimes(t *testing.T) {
	f := newFS(t)
	at, mt := time.Unix(1600000000, 111), time.Unix(1700000000, 222)
	if err := f.WriteFile(ctx, "/a", []byte("x"), vfs.WriteOptions{Perm: 0o600, SetPerm: true, Atime: at, Mtime: mt}); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Perm() != 0o600 || !st.Atime.Equal(at) || !st.Mtime.Equal(mt) {
		t.Fatalf("got perm %o atime %v mtime %v; want 600 %v %v", st.Perm(), st.Atime, st.Mtime, at, mt)
	}
	// Replacing keeps the mode unless SetPerm; SetPerm takes 0 literally.
	if err := f.WriteFile(ctx, "/a", []byte("yy"), vfs.WriteOptions{Perm: 0o755}); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Stat(ctx, "/a"); st.Perm() != 0o600 || st.Size != 2 {
		t.Fatalf("after plain replace: perm %o size %d; want 600 2", st.Perm(), st.Size)
	}
	if err := f.WriteFile(ctx, "/a", []byte("z"), vfs.WriteOptions{Perm: 0, SetPerm: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Stat(ctx, "/a"); st.Perm() != 0 || !st.IsRegular() {
		t.Fatalf("after SetPerm 0: mode %o; want regular file with perm 0", st.Mode)
	}
}

func TestFS_PathMaxCountsNUL(t *testing.T) {
	f := newFS(t)
	long := "/" + strings.Repeat("a/", 2047) + "b" // 4096 bytes
	if len(long) != vfs.PathMax {
		t.Fatalf("test path is %d bytes", len(long))
	}
	_, err := f.Stat(ctx, long)
	if !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Fatalf("Stat of a %d-byte path: %v, want ENAMETOOLONG", len(long), err)
	}
	_, err = f.Stat(ctx, long[:vfs.PathMax-1])
	if !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("Stat of a %d-byte path: %v, want ENOENT", vfs.PathMax-1, err)
	}
}

// Attributes travel packed as decimal text; negative times (before 1970)
// and large sizes must survive.
func TestFS_StatPreEpochTimes(t *testing.T) {
	f := newFS(t)
	if err := f.WriteFile(ctx, "/old", []byte("x"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(ctx, "/old", 1<<40); err != nil {
		t.Fatal(err)
	}
	at, mt := time.Unix(-86400*365, 5), time.Unix(-1, 999999999)
	if err := f.Utimens(ctx, "/old", &at, &mt, true); err != nil {
		t.Fatal(err)
	}
	for _, get := range []func() (vfs.Stat, error){
		func() (vfs.Stat, error) { return f.Stat(ctx, "/old") },
		func() (vfs.Stat, error) {
			es, err := f.ReaddirPlus(ctx, "/")
			if err != nil || len(es) != 1 {
				return vfs.Stat{}, err
			}
			return es[0].Stat, nil
		},
	} {
		st, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if !st.Atime.Equal(at) || !st.Mtime.Equal(mt) || st.Size != 1<<40 {
			t.Fatalf("got atime %v mtime %v size %d; want %v %v %d", st.Atime, st.Mtime, st.Size, at, mt, int64(1<<40))
		}
	}
}
