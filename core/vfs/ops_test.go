package vfs_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func TestFS_Mkdir(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/file", "")
	must(t, f.Symlink(ctx, "nowhere", "/ldang"))
	must(t, f.Symlink(ctx, "file", "/lfile"))
	must(t, f.Mkdir(ctx, "/dir", 0o755))
	must(t, f.Symlink(ctx, "dir", "/ldir"))
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/new", 0},
		{"/new2/", 0},
		{"/dir/sub", 0},
		{"/ldir/sub2", 0}, // parent through a symlink
		{"/new", syscall.EEXIST},
		{"/file", syscall.EEXIST},
		{"/file/", syscall.EEXIST}, // mkdir(2): an existing entry is EEXIST
		{"/ldang", syscall.EEXIST}, // a dangling link is an existing entry
		{"/ldang/", syscall.EEXIST},
		{"/ldir/", syscall.EEXIST},
		{"/", syscall.EEXIST},
		{"/dir/.", syscall.EEXIST},
		{"/dir/..", syscall.EEXIST},
		{"/..", syscall.EEXIST},
		{"/missing/x", syscall.ENOENT},
		{"/file/x", syscall.ENOTDIR},
		{"/lfile/x", syscall.ENOTDIR},
		{"/ldang/x", syscall.ENOENT},
		{"/" + strings.Repeat("d", 256), syscall.ENAMETOOLONG},
		{"/bad\x00name", syscall.EINVAL},
	} {
		wantErrno(t, "Mkdir("+short(tc.path)+")", f.Mkdir(ctx, tc.path, 0o755), tc.errno)
	}
	// Mkdir through a dangling symlink must not create the link's target.
	if _, err := f.Lstat(ctx, "/nowhere"); vfs.Errno(err) != syscall.ENOENT {
		t.Errorf("Lstat(/nowhere) after Mkdir(/ldang/): got %v, want ENOENT", err)
	}
	if st := lstat(t, f, "/dir/sub2"); !st.IsDir() || st.Mode != 0o040755 {
		t.Errorf("Lstat(/dir/sub2): got mode %o, want 40755", st.Mode)
	}
	if got := readdir(t, f, "/dir"); !equalStrings(got, []string{"sub", "sub2"}) {
		t.Errorf("Readdir(/dir): got %q", got)
	}
}

func TestFS_MkdirAll(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/file", "")
	must(t, f.Mkdir(ctx, "/d", 0o755))
	must(t, f.Symlink(ctx, "d", "/ld"))
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/a/b/c", 0},
		{"/a/b/c", 0}, // existing: no error
		{"/a/b/c/", 0},
		{"/", 0},
		{"/ld/x/y", 0}, // through a symlink to a dir
		{"/ld", 0},     // an existing symlink to a dir
		{"/file", syscall.ENOTDIR},
		{"/file/x/y", syscall.ENOTDIR},
		{"/a/../e/./f", 0},
	} {
		wantErrno(t, "MkdirAll("+tc.path+")", f.MkdirAll(ctx, tc.path, 0o755), tc.errno)
	}
	for _, p := range []string{"/a/b/c", "/d/x/y", "/e/f"} {
		if st, err := f.Stat(ctx, p); err != nil || !st.IsDir() {
			t.Errorf("Stat(%q) after MkdirAll: got %v, %v; want a directory", p, st.Mode, err)
		}
	}
	// Nothing is created when MkdirAll fails halfway.
	writeFile(t, f, "/g/file", "")
	wantErrno(t, "MkdirAll over a file", f.MkdirAll(ctx, "/h/i/../../g/file/j", 0o755), syscall.ENOTDIR)
	if _, err := f.Lstat(ctx, "/h"); vfs.Errno(err) != syscall.ENOENT {
		t.Errorf("Lstat(/h) after a failed MkdirAll: got %v, want ENOENT", err)
	}
}

func TestFS_Readdir(t *testing.T) {
	f := newFS(t)
	names := []string{"b", "a", "C", "z.txt", "a.b", "aa", "0", "_"}
	for i, n := range names {
		writeFile(t, f, "/d/"+n, strings.Repeat("x", i))
	}
	must(t, f.Mkdir(ctx, "/d/sub", 0o700))
	must(t, f.Symlink(ctx, "a", "/d/lnk"))
	must(t, f.Mknod(ctx, "/d/fifo", 0o010600, 0))
	want := []string{"0", "C", "_", "a", "a.b", "aa", "b", "fifo", "lnk", "sub", "z.txt"}
	if got := readdir(t, f, "/d"); !equalStrings(got, want) {
		t.Errorf("Readdir(/d): got %q, want %q", got, want)
	}
	ents, err := f.ReaddirPlus(ctx, "/d")
	must(t, err)
	if len(ents) != len(want) {
		t.Fatalf("ReaddirPlus(/d): got %d entries, want %d", len(ents), len(want))
	}
	for i, e := range ents {
		if e.Name != want[i] {
			t.Errorf("ReaddirPlus(/d)[%d].Name: got %q, want %q", i, e.Name, want[i])
		}
		st := lstat(t, f, "/d/"+e.Name)
		if e.Stat != st {
			t.Errorf("ReaddirPlus(/d)[%q].Stat: got %+v, want Lstat %+v", e.Name, e.Stat, st)
		}
	}
	byName := map[string]vfs.Stat{}
	for _, e := range ents {
		byName[e.Name] = e.Stat
	}
	if got := byName["aa"].Size; got != 5 {
		t.Errorf("ReaddirPlus size of aa: got %d, want 5", got)
	}
	if got := byName["sub"].Mode; got != 0o040700 {
		t.Errorf("ReaddirPlus mode of sub: got %o, want 40700", got)
	}
	if got := byName["lnk"].TypeLetter(); got != "l" {
		t.Errorf("ReaddirPlus type of lnk: got %q, want l (not followed)", got)
	}
	if got := byName["fifo"].TypeLetter(); got != "p" {
		t.Errorf("ReaddirPlus type of fifo: got %q, want p", got)
	}
	// Empty directory, through a symlink, and errors.
	if got, err := f.Readdir(ctx, "/d/sub"); err != nil || len(got) != 0 {
		t.Errorf("Readdir(empty): got %q, %v", got, err)
	}
	must(t, f.Symlink(ctx, "d", "/ld"))
	if got := readdir(t, f, "/ld"); !equalStrings(got, want) {
		t.Errorf("Readdir(/ld): got %q", got)
	}
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/d/a", syscall.ENOTDIR},
		{"/d/lnk", syscall.ENOTDIR},
		{"/nope", syscall.ENOENT},
		{"/d/a/", syscall.ENOTDIR},
	} {
		_, err := f.Readdir(ctx, tc.path)
		wantErrno(t, "Readdir("+tc.path+")", err, tc.errno)
		_, err = f.ReaddirPlus(ctx, tc.path)
		wantErrno(t, "ReaddirPlus("+tc.path+")", err, tc.errno)
	}
}

func TestFS_Unlink(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/d/f", "x")
	writeFile(t, f, "/d/g", "x")
	must(t, f.Symlink(ctx, "d", "/ld"))
	must(t, f.Symlink(ctx, "d/f", "/lf"))
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/d", syscall.EISDIR},
		{"/d/", syscall.EISDIR},
		{"/", syscall.EISDIR},
		{"/nope", syscall.ENOENT},
		{"/nope/x", syscall.ENOENT},
		{"/d/f/x", syscall.ENOTDIR},
		{"/d/f/", syscall.ENOTDIR},
		{"/ld/", syscall.ENOTDIR}, // unlink(2): a symlink with a trailing slash
		{"/lf/", syscall.ENOTDIR},
		{"/ld/f", 0}, // through a symlink in the middle
		{"/ld", 0},   // removes the link, not the directory
		{"/lf", 0},   // removes the (now dangling) link
		{"/d/f", syscall.ENOENT},
	} {
		wantErrno(t, "Unlink("+tc.path+")", f.Unlink(ctx, tc.path), tc.errno)
	}
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"d"}) {
		t.Errorf("Readdir(/): got %q, want [d]", got)
	}
	if got := readdir(t, f, "/d"); !equalStrings(got, []string{"g"}) {
		t.Errorf("Readdir(/d): got %q, want [g]", got)
	}
}

func TestFS_Rmdir(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	must(t, f.MkdirAll(ctx, "/d/empty", 0o755))
	must(t, f.MkdirAll(ctx, "/full/sub", 0o755))
	writeFile(t, f, "/file", "")
	must(t, f.Symlink(ctx, "d/empty", "/lempty"))
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/", syscall.EBUSY},
		{"/full", syscall.ENOTEMPTY},
		{"/file", syscall.ENOTDIR},
		{"/file/", syscall.ENOTDIR},
		{"/lempty", syscall.ENOTDIR},  // a symlink is not a directory
		{"/lempty/", syscall.ENOTDIR}, // not followed even with a slash
		{"/nope", syscall.ENOENT},
		{"/d/empty/.", syscall.EINVAL},
		{"/d/empty/..", syscall.ENOTEMPTY}, // as rmdir(2): ".." is never empty
		{"/..", syscall.ENOTEMPTY},
		{"/.", syscall.EINVAL},
		{"/file/x", syscall.ENOTDIR},
		{"/d/empty/", 0},
		{"/d/empty", syscall.ENOENT},
		{"/full/sub", 0},
		{"/full", 0},
	} {
		wantErrno(t, "Rmdir("+tc.path+")", f.Rmdir(ctx, tc.path), tc.errno)
	}
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"d", "file", "lempty"}) {
		t.Errorf("Readdir(/): got %q", got)
	}
	// The removed directories' inodes are gone.
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_inode"); n != 4 {
		t.Errorf("inodes after rmdir: got %d, want 4 (/, /d, /file, /lempty)", n)
	}
}

func TestFS_Rename(t *testing.T) {
	base := func(t *testing.T, f *vfs.FS) {
		writeFile(t, f, "/a/f1", "one")
		writeFile(t, f, "/a/f2", "two")
		writeFile(t, f, "/b/g", "gee")
		must(t, f.Mkdir(ctx, "/a/empty", 0o755))
		must(t, f.Mkdir(ctx, "/c", 0o755))
		must(t, f.Symlink(ctx, "a", "/la"))
		must(t, f.Symlink(ctx, "a/f1", "/lf1"))
		must(t, f.Link(ctx, "/a/f1", "/b/hard"))
	}
	for _, tc := range []struct {
		name     string
		old, new string
		flags    int
		errno    syscall.Errno
		check    map[string]string // path -> content ("" dir, "->x" symlink to x, "!" absent)
	}{
		{"replace file", "/a/f1", "/a/f2", 0, 0, map[string]string{"/a/f2": "one", "/a/f1": "!"}},
		{"new name", "/a/f1", "/a/f3", 0, 0, map[string]string{"/a/f3": "one", "/a/f1": "!"}},
		{"across dirs", "/a/f1", "/c/x", 0, 0, map[string]string{"/c/x": "one", "/a/f1": "!"}},
		{"replace empty dir", "/c", "/a/empty", 0, 0, map[string]string{"/a/empty": "", "/c": "!"}},
		{"dir across dirs", "/a/empty", "/c/e", 0, 0, map[string]string{"/c/e": "", "/a/empty": "!"}},
		{"dir onto non-empty dir", "/c", "/a", 0, syscall.ENOTEMPTY, nil},
		{"dir onto its parent", "/a/empty", "/a", 0, syscall.ENOTEMPTY, nil},
		// The target being an ancestor of the source is found before the
		// types are compared, as in Linux.
		{"file onto its parent", "/a/f1", "/a", 0, syscall.ENOTEMPTY, nil},
		{"file onto root", "/a/f1", "/", 0, syscall.EBUSY, nil},
		{"noreplace onto dot", "/a/f1", "/c/.", vfs.RenameNoReplace, syscall.EEXIST, nil},
		{"missing source, target under a file", "/nope", "/a/f1/x", 0, syscall.ENOTDIR, nil},
		{"source with slash, missing target dir", "/a/f1/", "/nope/x", 0, syscall.ENOENT, nil},
		{"exchange file with slash", "/a/f1/", "/b/g", vfs.RenameExchange, syscall.ENOTDIR, nil},
		{"exchange onto missing with slash", "/a/f1/", "/b/nope", vfs.RenameExchange, syscall.ENOENT, nil},
		{"exchange file and dir with slash", "/a/f1", "/c/", vfs.RenameExchange, 0, map[string]string{"/c": "one", "/a/f1": ""}},
		{"noreplace same file", "/a/f1", "/a/f1", vfs.RenameNoReplace, syscall.EEXIST, nil},
		{"dir onto file", "/c", "/a/f1", 0, syscall.ENOTDIR, nil},
		{"file onto dir", "/a/f1", "/c", 0, syscall.EISDIR, nil},
		{"into own subtree", "/a", "/a/empty/x", 0, syscall.EINVAL, nil},
		{"onto own child", "/a", "/a/empty", 0, syscall.EINVAL, nil},
		{"into itself through a link", "/a", "/la/x", 0, syscall.EINVAL, nil},
		{"same path", "/a/f1", "/a/f1", 0, 0, map[string]string{"/a/f1": "one"}},
		{"same dir", "/a", "/a", 0, 0, map[string]string{"/a/f1": "one"}},
		{"same path other spelling", "/a/f1", "/la/../a/./f1", 0, 0, map[string]string{"/a/f1": "one"}},
		{"hard-link pair no-op", "/a/f1", "/b/hard", 0, 0, map[string]string{"/a/f1": "one", "/b/hard": "one"}},
		{"symlink itself", "/la", "/c/la", 0, 0, map[string]string{"/c/la": "->a", "/la": "!", "/a/f1": "one"}},
		{"symlink onto file", "/lf1", "/a/f2", 0, 0, map[string]string{"/a/f2": "->a/f1", "/a/f1": "one"}},
		{"missing source", "/nope", "/x", 0, syscall.ENOENT, nil},
		{"missing target dir", "/a/f1", "/nope/x", 0, syscall.ENOENT, nil},
		{"target under a file", "/a/f1", "/a/f2/x", 0, syscall.ENOTDIR, nil},
		{"source under a file", "/a/f1/x", "/y", 0, syscall.ENOTDIR, nil},
		{"file with trailing slash", "/a/f1/", "/y", 0, syscall.ENOTDIR, nil},
		{"onto trailing slash", "/a/f1", "/y/", 0, syscall.ENOTDIR, nil},
		{"dir onto trailing slash", "/c", "/y/", 0, 0, map[string]string{"/y": ""}},
		{"symlink with trailing slash", "/la/", "/y", 0, syscall.ENOTDIR, map[string]string{"/a/f1": "one", "/la": "->a"}},
		{"dir onto symlink with slash", "/c", "/la/", 0, syscall.ENOTDIR, map[string]string{"/a/f1": "one", "/c": ""}},
		{"root", "/", "/x", 0, syscall.EBUSY, nil},
		{"onto root", "/c", "/", 0, syscall.EBUSY, nil},
		{"dot", "/a/.", "/x", 0, syscall.EBUSY, nil},
		{"name too long", "/a/f1", "/" + strings.Repeat("n", 256), 0, syscall.ENAMETOOLONG, nil},
		{"noreplace existing", "/a/f1", "/a/f2", vfs.RenameNoReplace, syscall.EEXIST, map[string]string{"/a/f1": "one", "/a/f2": "two"}},
		{"noreplace new", "/a/f1", "/a/f9", vfs.RenameNoReplace, 0, map[string]string{"/a/f9": "one", "/a/f1": "!"}},
		{"exchange files", "/a/f1", "/b/g", vfs.RenameExchange, 0, map[string]string{"/a/f1": "gee", "/b/g": "one", "/b/hard": "one"}},
		{"exchange file and dir", "/a/f1", "/c", vfs.RenameExchange, 0, map[string]string{"/c": "one", "/a/f1": ""}},
		{"exchange dirs", "/a", "/b", vfs.RenameExchange, 0, map[string]string{"/b/f1": "one", "/a/g": "gee"}},
		{"exchange missing target", "/a/f1", "/a/nope", vfs.RenameExchange, syscall.ENOENT, map[string]string{"/a/f1": "one"}},
		{"exchange missing source", "/a/nope", "/a/f1", vfs.RenameExchange, syscall.ENOENT, map[string]string{"/a/f1": "one"}},
		{"exchange into own subtree", "/a", "/a/empty", vfs.RenameExchange, syscall.EINVAL, nil},
		{"exchange with ancestor", "/a/empty", "/a", vfs.RenameExchange, syscall.EINVAL, nil},
		{"both flags", "/a/f1", "/a/f2", vfs.RenameExchange | vfs.RenameNoReplace, syscall.EINVAL, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := openAgent(t)
			f := a.FS
			base(t, f)
			err := f.Rename2(ctx, tc.old, tc.new, tc.flags)
			wantErrno(t, "Rename2("+short(tc.old)+", "+short(tc.new)+")", err, tc.errno)
			for p, want := range tc.check {
				st, err := f.Lstat(ctx, p)
				switch {
				case want == "!":
					if vfs.Errno(err) != syscall.ENOENT {
						t.Errorf("Lstat(%q): got %v, want ENOENT", p, err)
					}
				case err != nil:
					t.Errorf("Lstat(%q): %v", p, err)
				case want == "":
					if !st.IsDir() {
						t.Errorf("%q: got mode %o, want a directory", p, st.Mode)
					}
				case strings.HasPrefix(want, "->"):
					if got, err := f.Readlink(ctx, p); err != nil || got != want[2:] {
						t.Errorf("Readlink(%q): got %q, %v; want %q", p, got, err, want[2:])
					}
				default:
					wantContent(t, f, p, want)
				}
			}
			checkIntegrity(t, a)
		})
	}
}

func TestFS_Link(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	writeFile(t, f, "/a/f", "data")
	must(t, f.Mkdir(ctx, "/b", 0o755))
	must(t, f.Symlink(ctx, "a/f", "/lf"))
	must(t, f.Symlink(ctx, "nowhere", "/ldang"))
	for _, tc := range []struct {
		old, new string
		errno    syscall.Errno
	}{
		{"/a/f", "/b/f2", 0},
		{"/a/f", "/a/f3", 0},
		{"/a/f", "/a/f", syscall.EEXIST},
		{"/a/f", "/b", syscall.EEXIST},
		{"/a/f", "/ldang", syscall.EEXIST},
		{"/a", "/b/dirlink", syscall.EPERM},
		{"/a", "/nope/x", syscall.ENOENT}, // the new name is checked first
		{"/a", "/a/f", syscall.EEXIST},
		{"/a/f", "/b/new/", syscall.ENOENT},
		{"/nope", "/b/x", syscall.ENOENT},
		{"/a/f", "/nope/x", syscall.ENOENT},
		{"/a/f", "/a/f/x", syscall.ENOTDIR},
		{"/a/f/", "/b/x", syscall.ENOTDIR},
		{"/ldang", "/b/ldang2", 0}, // links the symlink itself
		{"/lf", "/b/lf2", 0},
	} {
		wantErrno(t, "Link("+tc.old+", "+tc.new+")", f.Link(ctx, tc.old, tc.new), tc.errno)
	}
	st := lstat(t, f, "/a/f")
	if st.Nlink != 3 {
		t.Errorf("Nlink of /a/f with 3 names: got %d, want 3", st.Nlink)
	}
	for _, p := range []string{"/b/f2", "/a/f3"} {
		if got := lstat(t, f, p); got.Ino != st.Ino || got.Nlink != 3 {
			t.Errorf("Lstat(%q): got ino %d nlink %d, want ino %d nlink 3", p, got.Ino, got.Nlink, st.Ino)
		}
	}
	if got := lstat(t, f, "/b/lf2"); !got.IsSymlink() || got.Ino != lstat(t, f, "/lf").Ino || got.Nlink != 2 {
		t.Errorf("Lstat(/b/lf2): got %+v, want the symlink inode with 2 links", got)
	}
	// Data is shared: a write through one name shows through the others.
	h, err := f.Open(ctx, "/b/f2", os.O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt([]byte("DA"), 0)
	must(t, err)
	must(t, h.Close())
	wantContent(t, f, "/a/f", "DAta")
	wantContent(t, f, "/a/f3", "DAta")
	must(t, f.Truncate(ctx, "/a/f3", 1))
	wantContent(t, f, "/b/f2", "D")
	// Unlinking one keeps the others.
	must(t, f.Unlink(ctx, "/a/f"))
	wantContent(t, f, "/b/f2", "D")
	if got := lstat(t, f, "/a/f3"); got.Nlink != 2 {
		t.Errorf("Nlink after one unlink: got %d, want 2", got.Nlink)
	}
	must(t, f.Unlink(ctx, "/a/f3"))
	if got := lstat(t, f, "/b/f2"); got.Nlink != 1 {
		t.Errorf("Nlink after two unlinks: got %d, want 1", got.Nlink)
	}
	must(t, f.Unlink(ctx, "/b/f2"))
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_inode WHERE ino = ?", st.Ino); n != 0 {
		t.Errorf("inode rows after the last unlink: got %d, want 0", n)
	}
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_data WHERE ino = ?", st.Ino); n != 0 {
		t.Errorf("data rows after the last unlink: got %d, want 0", n)
	}
	checkIntegrity(t, a)
}

func TestFS_Chmod(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "")
	must(t, f.Mkdir(ctx, "/d", 0o755))
	must(t, f.Symlink(ctx, "f", "/lf"))
	must(t, f.Mknod(ctx, "/fifo", 0o010644, 0))
	for _, tc := range []struct {
		path string
		perm uint32
		want uint32
	}{
		{"/f", 0o600, 0o100600},
		{"/f", 0o4755, 0o104755},
		{"/f", 0o170777, 0o100777}, // type bits in the argument are ignored
		{"/d", 0o1777, 0o041777},
		{"/fifo", 0o600, 0o010600},
		{"/lf", 0o640, 0o100640}, // follows the link
	} {
		must(t, f.Chmod(ctx, tc.path, tc.perm))
		st, err := f.Stat(ctx, tc.path)
		must(t, err)
		if st.Mode != tc.want {
			t.Errorf("Chmod(%q, %o): got mode %o, want %o", tc.path, tc.perm, st.Mode, tc.want)
		}
	}
	if st := lstat(t, f, "/lf"); st.Mode != 0o120777 {
		t.Errorf("symlink mode after chmod through it: got %o, want 120777", st.Mode)
	}
	wantErrno(t, "Chmod(/nope)", f.Chmod(ctx, "/nope", 0o644), syscall.ENOENT)
	st := lstat(t, f, "/f")
	if got := st.FileMode(); got.Perm() != 0o640 {
		t.Errorf("FileMode.Perm: got %v", got)
	}
}

func TestFS_Chown(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "")
	must(t, f.Symlink(ctx, "f", "/lf"))
	must(t, f.Chown(ctx, "/f", 1000, 100, true))
	check := func(path string, uid, gid uint32) {
		t.Helper()
		st := lstat(t, f, path)
		if st.UID != uid || st.GID != gid {
			t.Errorf("owner of %s: got %d:%d, want %d:%d", path, st.UID, st.GID, uid, gid)
		}
	}
	check("/f", 1000, 100)
	must(t, f.Chown(ctx, "/f", -1, 200, true))
	check("/f", 1000, 200)
	must(t, f.Chown(ctx, "/f", 300, -1, true))
	check("/f", 300, 200)
	must(t, f.Chown(ctx, "/f", -1, -1, true))
	check("/f", 300, 200)
	must(t, f.Chown(ctx, "/lf", 7, 8, false)) // lchown
	check("/lf", 7, 8)
	check("/f", 300, 200)
	must(t, f.Chown(ctx, "/lf", 9, -1, true))
	check("/f", 9, 200)
	check("/lf", 7, 8)
	must(t, f.Chown(ctx, "/f", 4294967295-1, 0, true))
	check("/f", 4294967294, 0)
	wantErrno(t, "Chown(/nope)", f.Chown(ctx, "/nope", 1, 1, true), syscall.ENOENT)
}

func TestFS_Utimens(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "")
	must(t, f.Symlink(ctx, "f", "/lf"))
	at := time.Unix(1700000000, 123456789)
	mt := time.Unix(1600000000, 987654321)
	must(t, f.Utimens(ctx, "/f", &at, &mt, true))
	st := lstat(t, f, "/f")
	if !st.Atime.Equal(at) || !st.Mtime.Equal(mt) {
		t.Errorf("times: got atime %v mtime %v, want %v %v", st.Atime, st.Mtime, at, mt)
	}
	if st.Atime.Nanosecond() != 123456789 {
		t.Errorf("atime nanoseconds: got %d, want 123456789", st.Atime.Nanosecond())
	}
	// nil leaves a time unchanged.
	mt2 := time.Unix(1500000000, 1)
	must(t, f.Utimens(ctx, "/f", nil, &mt2, true))
	st = lstat(t, f, "/f")
	if !st.Atime.Equal(at) || !st.Mtime.Equal(mt2) {
		t.Errorf("times after nil atime: got %v %v, want %v %v", st.Atime, st.Mtime, at, mt2)
	}
	// The times survive a reopen-like cache drop: read through ReaddirPlus.
	ents, err := f.ReaddirPlus(ctx, "/")
	must(t, err)
	for _, e := range ents {
		if e.Name == "f" && (!e.Stat.Atime.Equal(at) || !e.Stat.Mtime.Equal(mt2)) {
			t.Errorf("ReaddirPlus times: got %v %v", e.Stat.Atime, e.Stat.Mtime)
		}
	}
	// Times before 1970 too.
	old := time.Unix(-100, 5)
	must(t, f.Utimens(ctx, "/lf", &old, &old, false))
	if st := lstat(t, f, "/lf"); !st.Mtime.Equal(old) {
		t.Errorf("symlink mtime: got %v, want %v", st.Mtime, old)
	}
	if st := lstat(t, f, "/f"); !st.Mtime.Equal(mt2) {
		t.Errorf("target mtime changed by an lutimes: got %v", st.Mtime)
	}
	// Writing updates mtime and ctime.
	before := time.Now().Add(-time.Second)
	must(t, f.WriteFile(ctx, "/f", []byte("x"), vfs.WriteOptions{}))
	if st := lstat(t, f, "/f"); st.Mtime.Before(before) || st.Ctime.Before(before) {
		t.Errorf("times after a write: got mtime %v ctime %v, want after %v", st.Mtime, st.Ctime, before)
	}
	wantErrno(t, "Utimens(/nope)", f.Utimens(ctx, "/nope", &at, &at, true), syscall.ENOENT)
}

func TestFS_Mknod(t *testing.T) {
	f := newFS(t)
	for _, tc := range []struct {
		path   string
		mode   uint32
		rdev   uint64
		want   uint32
		letter string
		rdevW  uint64
		errno  syscall.Errno
	}{
		{"/fifo", schema.ModeFIFO | 0o644, 0, 0o010644, "p", 0, 0},
		{"/chr", schema.ModeChar | 0o600, 0x0103, 0o020600, "c", 0x0103, 0},
		{"/blk", schema.ModeBlock | 0o660, 0x0801, 0o060660, "b", 0x0801, 0},
		{"/sock", schema.ModeSocket | 0o755, 5, 0o140755, "s", 0, 0},
		{"/reg", 0o644, 0, 0o100644, "f", 0, 0},
		{"/dir", schema.ModeDir | 0o755, 0, 0, "", 0, syscall.EINVAL},
		{"/lnk", schema.ModeSymlink | 0o777, 0, 0, "", 0, syscall.EINVAL},
		{"/fifo", schema.ModeFIFO | 0o644, 0, 0, "", 0, syscall.EEXIST},
		{"/nope/x", schema.ModeFIFO | 0o644, 0, 0, "", 0, syscall.ENOENT},
		{"/new/", schema.ModeFIFO | 0o644, 0, 0, "", 0, syscall.ENOENT},
		{"/fifo/", schema.ModeFIFO | 0o644, 0, 0, "", 0, syscall.EEXIST},
	} {
		err := f.Mknod(ctx, tc.path, tc.mode, tc.rdev)
		wantErrno(t, "Mknod("+tc.path+")", err, tc.errno)
		if err != nil || tc.errno != 0 {
			continue
		}
		st := lstat(t, f, tc.path)
		if st.Mode != tc.want || st.TypeLetter() != tc.letter || st.Rdev != tc.rdevW {
			t.Errorf("Lstat(%q): got mode %o type %s rdev %#x, want %o %s %#x", tc.path, st.Mode, st.TypeLetter(), st.Rdev, tc.want, tc.letter, tc.rdevW)
		}
	}
	_, err := f.Open(ctx, "/fifo", os.O_RDONLY, 0)
	wantErrno(t, "Open(fifo)", err, 0)
	err = f.WriteFile(ctx, "/chr", []byte("x"), vfs.WriteOptions{})
	wantErrno(t, "WriteFile(chr)", err, syscall.EINVAL)
}

func TestFS_Statfs(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	s0, err := f.Statfs(ctx)
	must(t, err)
	writeFile(t, f, "/a", strings.Repeat("x", 10000))
	writeFile(t, f, "/d/b", "12345")
	s, err := f.Statfs(ctx)
	must(t, err)
	if s.BlockSize != cs {
		t.Errorf("BlockSize: got %d, want %d", s.BlockSize, cs)
	}
	if s.NameMax != 255 {
		t.Errorf("NameMax: got %d, want 255", s.NameMax)
	}
	if s.Files != s0.Files+3 || s.Files != queryInt(t, a, "SELECT COUNT(*) FROM fs_inode") {
		t.Errorf("Files: got %d, want %d", s.Files, s0.Files+3)
	}
	if s.DataBytes != 10005 {
		t.Errorf("DataBytes: got %d, want 10005", s.DataBytes)
	}
	if s.Blocks < s.BlocksFree || s.BlocksFree < 0 || s.FilesFree <= 0 {
		t.Errorf("Blocks %d, BlocksFree %d, FilesFree %d: not sane", s.Blocks, s.BlocksFree, s.FilesFree)
	}
	if s.DBFileBytes <= 0 || s.DBFileBytes < s.DataBytes {
		t.Errorf("DBFileBytes: got %d, want > DataBytes %d", s.DBFileBytes, s.DataBytes)
	}
	if s.Blocks-s.BlocksFree < s.DataBytes/s.BlockSize {
		t.Errorf("used blocks %d less than the data %d", s.Blocks-s.BlocksFree, s.DataBytes/s.BlockSize)
	}
}

func TestFS_Xattr(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "")
	must(t, f.Symlink(ctx, "f", "/lf"))
	must(t, f.Setxattr(ctx, "/f", "user.a", []byte("1"), 0, true))
	must(t, f.Setxattr(ctx, "/f", "user.b", []byte{}, 0, true))
	must(t, f.Setxattr(ctx, "/f", "user.bin", []byte{0, 0xff, 1}, 0, true))
	must(t, f.Setxattr(ctx, "/lf", "trusted.l", []byte("on link"), 0, false))
	for _, tc := range []struct {
		name   string
		path   string
		follow bool
		want   string
		errno  syscall.Errno
	}{
		{"user.a", "/f", true, "1", 0},
		{"user.b", "/f", true, "", 0},
		{"user.bin", "/f", true, "\x00\xff\x01", 0},
		{"user.a", "/lf", true, "1", 0},
		{"user.a", "/lf", false, "", syscall.ENODATA},
		{"trusted.l", "/lf", false, "on link", 0},
		{"user.nope", "/f", true, "", syscall.ENODATA},
		{"user.a", "/nope", true, "", syscall.ENOENT},
	} {
		got, err := f.Getxattr(ctx, tc.path, tc.name, tc.follow)
		wantErrno(t, "Getxattr("+tc.path+", "+tc.name+")", err, tc.errno)
		if err == nil && string(got) != tc.want {
			t.Errorf("Getxattr(%s, %s): got %q, want %q", tc.path, tc.name, got, tc.want)
		}
	}
	if got, err := f.Listxattr(ctx, "/f", true); err != nil || !equalStrings(got, []string{"user.a", "user.b", "user.bin"}) {
		t.Errorf("Listxattr(/f): got %q, %v", got, err)
	}
	if got, err := f.Listxattr(ctx, "/lf", false); err != nil || !equalStrings(got, []string{"trusted.l"}) {
		t.Errorf("Listxattr(/lf, nofollow): got %q, %v", got, err)
	}
	writeFile(t, f, "/g", "")
	if got, err := f.Listxattr(ctx, "/g", true); err != nil || len(got) != 0 {
		t.Errorf("Listxattr(no attributes): got %q, %v", got, err)
	}
	big := bytes.Repeat([]byte("v"), 64<<10)
	for _, tc := range []struct {
		what  string
		name  string
		value []byte
		flags int
		errno syscall.Errno
	}{
		{"create existing", "user.a", []byte("2"), vfs.XattrCreate, syscall.EEXIST},
		{"replace missing", "user.new", []byte("2"), vfs.XattrReplace, syscall.ENODATA},
		{"replace existing", "user.a", []byte("3"), vfs.XattrReplace, 0},
		{"create new", "user.c", []byte("4"), vfs.XattrCreate, 0},
		{"64 KiB", "user.big", big, 0, 0},
		{"64 KiB + 1", "user.big2", append(big, 'x'), 0, syscall.E2BIG},
		{"empty name", "", []byte("x"), 0, syscall.ERANGE},
		{"long name", strings.Repeat("n", 256), []byte("x"), 0, syscall.ERANGE},
	} {
		wantErrno(t, "Setxattr "+tc.what, f.Setxattr(ctx, "/f", tc.name, tc.value, tc.flags, true), tc.errno)
	}
	if got, _ := f.Getxattr(ctx, "/f", "user.a", true); string(got) != "3" {
		t.Errorf("Getxattr after replace: got %q, want 3", got)
	}
	if got, _ := f.Getxattr(ctx, "/f", "user.big", true); !bytes.Equal(got, big) {
		t.Errorf("Getxattr(user.big): got %d bytes, want %d", len(got), len(big))
	}
	wantErrno(t, "Removexattr", f.Removexattr(ctx, "/f", "user.a", true), 0)
	wantErrno(t, "Removexattr again", f.Removexattr(ctx, "/f", "user.a", true), syscall.ENODATA)
	wantErrno(t, "Getxattr removed", func() error { _, err := f.Getxattr(ctx, "/f", "user.a", true); return err }(), syscall.ENODATA)
	wantErrno(t, "Removexattr missing file", f.Removexattr(ctx, "/nope", "user.a", true), syscall.ENOENT)
	// Attributes belong to the inode: shared by hard links, gone with it.
	must(t, f.Link(ctx, "/f", "/f2"))
	if got, _ := f.Getxattr(ctx, "/f2", "user.c", true); string(got) != "4" {
		t.Errorf("Getxattr through a hard link: got %q, want 4", got)
	}
}

// TestFS_UnlinkedOpen checks that a file whose last name is removed stays
// usable through its open handles and disappears at the last Close.
func TestFS_UnlinkedOpen(t *testing.T) {
	for _, remove := range []string{"unlink", "rename over", "removeall", "rmdir parent tree"} {
		t.Run(remove, func(t *testing.T) {
			a := openAgent(t)
			f := a.FS
			writeFile(t, f, "/d/f", "hello")
			h, err := f.Open(ctx, "/d/f", os.O_RDWR, 0)
			must(t, err)
			h2, err := f.Open(ctx, "/d/f", os.O_RDONLY, 0)
			must(t, err)
			ino := h.Ino()
			switch remove {
			case "unlink":
				must(t, f.Unlink(ctx, "/d/f"))
			case "rename over":
				writeFile(t, f, "/d/g", "other")
				must(t, f.Rename(ctx, "/d/g", "/d/f"))
			case "removeall":
				must(t, f.RemoveAll(ctx, "/d/f"))
			case "rmdir parent tree":
				must(t, f.RemoveAll(ctx, "/d"))
			}
			if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_dentry WHERE ino = ?", ino); n != 0 {
				t.Errorf("directory entries of the removed file: got %d, want 0", n)
			}
			// Still readable and writable.
			_, err = h.WriteAt([]byte(" world"), 5)
			must(t, err)
			buf := make([]byte, 11)
			n, err := h2.ReadAt(buf, 0)
			if n != 11 || (err != nil && err != io.EOF) || string(buf) != "hello world" {
				t.Errorf("ReadAt on the unlinked file: got %d, %v, %q", n, err, buf[:n])
			}
			st, err := h.Stat()
			must(t, err)
			if st.Nlink != 0 || st.Size != 11 {
				t.Errorf("Stat of the unlinked file: got nlink %d size %d, want 0 and 11", st.Nlink, st.Size)
			}
			must(t, h.Truncate(3))
			must(t, h.Close())
			// The other handle keeps it alive.
			if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_inode WHERE ino = ?", ino); n != 1 {
				t.Errorf("inode rows with one handle open: got %d, want 1", n)
			}
			n, err = h2.ReadAt(buf, 0)
			if n != 3 || string(buf[:n]) != "hel" {
				t.Errorf("ReadAt after truncate: got %d, %v, %q", n, err, buf[:n])
			}
			must(t, h2.Close())
			for _, table := range []string{"fs_inode", "fs_data"} {
				if n := queryInt(t, a, "SELECT COUNT(*) FROM "+table+" WHERE ino = ?", ino); n != 0 {
					t.Errorf("%s rows after the last Close: got %d, want 0", table, n)
				}
			}
			checkIntegrity(t, a)
		})
	}
	t.Run("close with names left", func(t *testing.T) {
		a := openAgent(t)
		f := a.FS
		writeFile(t, f, "/f", "x")
		h, err := f.Open(ctx, "/f", os.O_RDONLY, 0)
		must(t, err)
		must(t, h.Close())
		wantContent(t, f, "/f", "x")
	})
}

func TestFS_RemoveAll(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	// A tree of 2000 files, some hard-linked from outside.
	for i := 0; i < 2000; i++ {
		p := "/tree/d" + itoa(i%10) + "/s" + itoa(i%7) + "/f" + itoa(i)
		must(t, f.WriteFile(ctx, p, []byte(p), vfs.WriteOptions{CreateParents: true}))
	}
	must(t, f.Symlink(ctx, "/outside", "/tree/lnk"))
	writeFile(t, f, "/outside", "survives")
	must(t, f.Link(ctx, "/tree/d3/s3/f3", "/keep"))       // outside link into the tree
	must(t, f.Link(ctx, "/tree/d4/s4/f4", "/tree/d5/hl")) // two links inside
	must(t, f.Link(ctx, "/tree/d4/s4/f4", "/keep2"))
	must(t, f.Setxattr(ctx, "/tree/d1", "user.x", []byte("1"), 0, true))
	keep := lstat(t, f, "/keep")
	if keep.Nlink != 2 {
		t.Fatalf("Nlink of /keep before: got %d, want 2", keep.Nlink)
	}
	must(t, f.RemoveAll(ctx, "/tree"))
	if _, err := f.Lstat(ctx, "/tree"); vfs.Errno(err) != syscall.ENOENT {
		t.Errorf("Lstat(/tree) after RemoveAll: got %v, want ENOENT", err)
	}
	if got := lstat(t, f, "/keep"); got.Nlink != 1 || got.Ino != keep.Ino {
		t.Errorf("Lstat(/keep): got nlink %d ino %d, want 1 and %d", got.Nlink, got.Ino, keep.Ino)
	}
	if got := lstat(t, f, "/keep2"); got.Nlink != 1 {
		t.Errorf("Lstat(/keep2): got nlink %d, want 1", got.Nlink)
	}
	wantContent(t, f, "/keep", "/tree/d3/s3/f3")
	wantContent(t, f, "/outside", "survives")
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"keep", "keep2", "outside"}) {
		t.Errorf("Readdir(/): got %q", got)
	}
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_inode"); n != 4 {
		t.Errorf("inodes left: got %d, want 4", n)
	}
	for _, table := range []string{"fs_xattr", "fs_symlink"} {
		if n := queryInt(t, a, "SELECT COUNT(*) FROM "+table); n != 0 {
			t.Errorf("%s rows left: got %d, want 0", table, n)
		}
	}
	checkIntegrity(t, a)

	writeFile(t, f, "/d/f", "")
	must(t, f.Symlink(ctx, "d", "/ld"))
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/nope", 0},
		{"/nope/deeper", 0},
		{"/d/f/x", syscall.ENOTDIR},
		{"/", syscall.EBUSY},
		{"/d/.", syscall.EINVAL},
		{"/ld/", syscall.ENOTDIR}, // never through a symlink
		{"/ld", 0},                // removes the link only
		{"/keep", 0},
	} {
		wantErrno(t, "RemoveAll("+tc.path+")", f.RemoveAll(ctx, tc.path), tc.errno)
	}
	wantContent(t, f, "/d/f", "")
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"d", "keep2", "outside"}) {
		t.Errorf("Readdir(/): got %q", got)
	}
}

func TestFS_CopyFile(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	data := pattern(3*cs+17, 5)
	must(t, f.WriteFile(ctx, "/src", data, vfs.WriteOptions{Perm: 0o640}))
	must(t, f.CopyFile(ctx, "/src", "/dst"))
	got, err := f.ReadFile(ctx, "/dst")
	must(t, err)
	wantBytes(t, "ReadFile(/dst)", got, data)
	if st := lstat(t, f, "/dst"); st.Perm() != 0o640 || st.Ino == lstat(t, f, "/src").Ino || st.Nlink != 1 {
		t.Errorf("Lstat(/dst): got perm %o ino %d nlink %d", st.Perm(), st.Ino, st.Nlink)
	}
	// The copy is independent.
	must(t, f.WriteFile(ctx, "/src", []byte("changed"), vfs.WriteOptions{}))
	got, _ = f.ReadFile(ctx, "/dst")
	wantBytes(t, "copy after changing the source", got, data)
	// Over an existing, longer file.
	must(t, f.WriteFile(ctx, "/long", pattern(10*cs, 9), vfs.WriteOptions{}))
	must(t, f.CopyFile(ctx, "/src", "/long"))
	wantContent(t, f, "/long", "changed")
	// Sparse source.
	must(t, f.Truncate(ctx, "/src", 2*cs))
	must(t, f.CopyFile(ctx, "/src", "/sparse"))
	wantContent(t, f, "/sparse", "changed"+strings.Repeat("\x00", 2*cs-7))
	must(t, f.Mkdir(ctx, "/dir", 0o755))
	must(t, f.Symlink(ctx, "src", "/lsrc"))
	for _, tc := range []struct {
		src, dst string
		errno    syscall.Errno
	}{
		{"/lsrc", "/viaLink", 0},
		{"/src", "/src", 0},
		{"/nope", "/x", syscall.ENOENT},
		{"/dir", "/x", syscall.EISDIR},
		{"/src", "/dir", syscall.EISDIR},
		{"/src", "/nope/x", syscall.ENOENT},
	} {
		wantErrno(t, "CopyFile("+tc.src+", "+tc.dst+")", f.CopyFile(ctx, tc.src, tc.dst), tc.errno)
	}
	wantContent(t, f, "/src", "changed"+strings.Repeat("\x00", 2*cs-7))
	checkIntegrity(t, a)
}

// ReadFileInto takes memory from the caller's allocator for large files;
// an allocator that declines (nil), as the Node addon does for small and
// empty files, must not turn an empty file into ESTALE.
func TestFS_ReadFileIntoAllocator(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/empty", "")
	writeFile(t, f, "/small", "hello")
	declines := func(int) []byte { return nil }
	for _, name := range []string{"/empty", "/small"} {
		got, err := f.ReadFileInto(ctx, name, declines)
		if err != nil {
			t.Fatalf("ReadFileInto(%s): %v", name, err)
		}
		want, _ := f.ReadFile(ctx, name)
		if !bytes.Equal(got, want) {
			t.Fatalf("ReadFileInto(%s) = %q, want %q", name, got, want)
		}
	}
	var given []byte
	got, err := f.ReadFileInto(ctx, "/small", func(n int) []byte { given = make([]byte, n); return given })
	if err != nil || string(got) != "hello" || &got[0] != &given[0] {
		t.Fatalf("ReadFileInto with an allocator = %q, %v; want hello in the given memory", got, err)
	}
	_, err = f.ReadFileInto(ctx, "/", declines)
	wantErrno(t, "ReadFileInto(/)", err, syscall.EISDIR)
}
