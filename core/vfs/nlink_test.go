package vfs_test

import (
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// A directory reports 2 links plus one per subdirectory through every
// way of reading attributes, while the database keeps the 1 of the
// AgentFS format; the counts follow mkdir, rmdir, rename and exchange,
// and commits of another connection.
func TestNlink_Directories(t *testing.T) {
	path := filepath.Join(tempDir(t), "a.db")
	a := openAgentAt(t, path)
	f := a.FS
	for _, d := range []string{"/d", "/d/s1", "/d/s2", "/d/s3", "/e"} {
		must(t, f.Mkdir(ctx, d, 0o755))
	}
	writeFile(t, f, "/d/file", "x")
	want := func(p string, n uint32) {
		t.Helper()
		st := lstat(t, f, p)
		if st.Nlink != n {
			t.Errorf("lstat %s: nlink %d, want %d", p, st.Nlink, n)
		}
		if got, err := f.StatIno(ctx, st.Ino); err != nil || got.Nlink != n {
			t.Errorf("StatIno %s: nlink %d (%v), want %d", p, got.Nlink, err, n)
		}
		if got, err := f.StatInos(ctx, []int64{st.Ino}); err != nil || got[st.Ino].Nlink != n {
			t.Errorf("StatInos %s: nlink %d (%v), want %d", p, got[st.Ino].Nlink, err, n)
		}
		dir, name := filepath.Split(p)
		ents, err := f.ReaddirPlus(ctx, dir)
		must(t, err)
		for _, e := range ents {
			if e.Name == name && e.Stat.Nlink != n {
				t.Errorf("readdir-plus %s: nlink %d, want %d", p, e.Stat.Nlink, n)
			}
		}
	}
	want("/d", 5)
	want("/d/s1", 2)
	want("/", 4)
	want("/d/file", 1)
	must(t, f.Rmdir(ctx, "/d/s3"))
	want("/d", 4)
	must(t, f.Rename(ctx, "/d/s2", "/e/s2"))
	want("/d", 3)
	want("/e", 3)
	must(t, f.Rename(ctx, "/d/s1", "/d/s1b")) // same parent
	want("/d", 3)
	must(t, f.Rename2(ctx, "/d/file", "/e/s2", vfs.RenameExchange))
	want("/d", 4)
	want("/e", 2)
	must(t, f.Mkdir(ctx, "/e/t", 0o755))
	must(t, f.Rename(ctx, "/e/t", "/d/s1b")) // replaces an empty directory
	want("/d", 4)
	want("/e", 2)

	// Another connection adds a subdirectory: the cached count goes.
	b := openAgentAt(t, path)
	must(t, b.FS.Mkdir(ctx, "/d/other", 0o755))
	want("/d", 5)

	// The database keeps 1 for every directory.
	if n := queryInt(t, a, "SELECT count(*) FROM fs_inode WHERE (mode & 61440) = 16384 AND nlink <> 1"); n != 0 {
		t.Errorf("%d directories stored with nlink other than 1", n)
	}
}
