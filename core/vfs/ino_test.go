package vfs_test

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Tests of the inode-level API (the FUSE mount's): each method with its
// errno cases, and checks that it agrees with the path-based API.

// inoTree makes /d (dir) /d/sub (dir) /d/f (file "data") /l -> d/f and
// /dang -> nowhere, and returns the inode numbers by path.
func inoTree(t *testing.T, f *vfs.FS) map[string]int64 {
	t.Helper()
	must(t, f.MkdirAll(ctx, "/d/sub", 0o755))
	writeFile(t, f, "/d/f", "data")
	must(t, f.Symlink(ctx, "d/f", "/l"))
	must(t, f.Symlink(ctx, "nowhere", "/dang"))
	m := map[string]int64{"/": vfs.RootIno}
	for _, p := range []string{"/d", "/d/sub", "/d/f", "/l", "/dang"} {
		m[p] = lstat(t, f, p).Ino
	}
	return m
}

var owner = vfs.Owner{UID: 1000, GID: 2000}

func TestIno_Lookup(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	long := strings.Repeat("n", 256)
	for _, tc := range []struct {
		parent int64
		name   string
		want   int64
		errno  syscall.Errno
	}{
		{vfs.RootIno, "d", ino["/d"], 0},
		{ino["/d"], "f", ino["/d/f"], 0},
		{vfs.RootIno, "l", ino["/l"], 0}, // a symlink is not followed
		{vfs.RootIno, "dang", ino["/dang"], 0},
		{ino["/d"], ".", ino["/d"], 0},
		{ino["/d/sub"], "..", ino["/d"], 0},
		{vfs.RootIno, "..", vfs.RootIno, 0},
		{vfs.RootIno, "missing", 0, syscall.ENOENT},
		{ino["/d/f"], "x", 0, syscall.ENOTDIR}, // parent is a file
		{ino["/l"], "x", 0, syscall.ENOTDIR},   // parent is a symlink
		{999999, "x", 0, syscall.ENOENT},       // parent does not exist
		{vfs.RootIno, long, 0, syscall.ENAMETOOLONG},
		{vfs.RootIno, "a/b", 0, syscall.EINVAL},
		{vfs.RootIno, "a\x00b", 0, syscall.EINVAL},
		{vfs.RootIno, "", 0, syscall.ENOENT},
	} {
		st, err := f.Lookup(ctx, tc.parent, tc.name)
		wantErrno(t, "Lookup("+itoa(int(tc.parent))+", "+short(tc.name)+")", err, tc.errno)
		if err == nil && st.Ino != tc.want {
			t.Errorf("Lookup(%d, %q) = ino %d, want %d", tc.parent, tc.name, st.Ino, tc.want)
		}
	}
	// Attributes equal Lstat's.
	st, err := f.Lookup(ctx, ino["/d"], "f")
	must(t, err)
	if want := lstat(t, f, "/d/f"); st != want {
		t.Errorf("Lookup attributes %+v, Lstat %+v", st, want)
	}
}

func TestIno_StatAndReaddir(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	st, err := f.StatIno(ctx, ino["/d/f"])
	must(t, err)
	if st.Size != 4 || !st.IsRegular() || st.Nlink != 1 {
		t.Errorf("StatIno: %+v", st)
	}
	_, err = f.StatIno(ctx, 424242)
	wantErrno(t, "StatIno(missing)", err, syscall.ENOENT)
	es, err := f.ReaddirPlusIno(ctx, ino["/d"])
	must(t, err)
	if len(es) != 2 || es[0].Name != "f" || es[1].Name != "sub" || es[0].Stat.Ino != ino["/d/f"] || !es[1].Stat.IsDir() {
		t.Errorf("ReaddirPlusIno(/d) = %+v", es)
	}
	_, err = f.ReaddirPlusIno(ctx, ino["/d/f"])
	wantErrno(t, "ReaddirPlusIno(file)", err, syscall.ENOTDIR)
	_, err = f.ReaddirPlusIno(ctx, 424242)
	wantErrno(t, "ReaddirPlusIno(missing)", err, syscall.ENOENT)
	// StatInos returns the existing ones only.
	m, err := f.StatInos(ctx, []int64{ino["/d"], ino["/d/f"], 424242})
	must(t, err)
	if len(m) != 2 || m[ino["/d/f"]].Size != 4 {
		t.Errorf("StatInos: %+v", m)
	}
}

func TestIno_MkdirAt(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	for _, tc := range []struct {
		parent int64
		name   string
		errno  syscall.Errno
	}{
		{vfs.RootIno, "new", 0},
		{ino["/d"], "new", 0},
		{vfs.RootIno, "new", syscall.EEXIST},
		{vfs.RootIno, "d", syscall.EEXIST},
		{vfs.RootIno, "l", syscall.EEXIST},
		{vfs.RootIno, "dang", syscall.EEXIST}, // never creates the link's target
		{ino["/d"], ".", syscall.EEXIST},
		{ino["/d"], "..", syscall.EEXIST},
		{ino["/d/f"], "x", syscall.ENOTDIR},
		{424242, "x", syscall.ENOENT},
		{vfs.RootIno, strings.Repeat("n", 256), syscall.ENAMETOOLONG},
		{vfs.RootIno, "a/b", syscall.EINVAL},
	} {
		st, err := f.MkdirAt(ctx, tc.parent, tc.name, 0o750, owner)
		wantErrno(t, "MkdirAt("+itoa(int(tc.parent))+", "+short(tc.name)+")", err, tc.errno)
		if err == nil && (st.Mode != schema.ModeDir|0o750 || st.UID != 1000 || st.GID != 2000 || st.Nlink != 2) {
			t.Errorf("MkdirAt(%d, %q) attributes %+v", tc.parent, tc.name, st)
		}
	}
	if st := lstat(t, f, "/d/new"); st.UID != 1000 || st.GID != 2000 {
		t.Errorf("owner of /d/new: %d:%d", st.UID, st.GID)
	}
	if _, err := f.Lstat(ctx, "/nowhere"); vfs.Errno(err) != syscall.ENOENT {
		t.Errorf("MkdirAt through a dangling link created its target: %v", err)
	}
}

func TestIno_CreateAndOpen(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	for _, tc := range []struct {
		parent int64
		name   string
		flags  int
		errno  syscall.Errno
	}{
		{vfs.RootIno, "new", os.O_RDWR, 0},
		{vfs.RootIno, "new", os.O_RDWR, 0}, // exists: opened
		{vfs.RootIno, "new", os.O_RDWR | os.O_EXCL, syscall.EEXIST},
		{vfs.RootIno, "d", os.O_RDWR, syscall.EISDIR},
		{vfs.RootIno, "d", os.O_RDONLY, syscall.EISDIR}, // O_CREAT on a directory, as open(2)
		{vfs.RootIno, "l", os.O_RDWR, syscall.ELOOP},
		{vfs.RootIno, "dang", os.O_RDWR | os.O_EXCL, syscall.EEXIST},
		{vfs.RootIno, ".", os.O_RDWR, syscall.EISDIR},
		{vfs.RootIno, ".", os.O_RDWR | os.O_EXCL, syscall.EEXIST},
		{ino["/d/f"], "x", os.O_RDWR, syscall.ENOTDIR},
		{424242, "x", os.O_RDWR, syscall.ENOENT},
		{vfs.RootIno, strings.Repeat("n", 256), os.O_RDWR, syscall.ENAMETOOLONG},
	} {
		h, st, err := f.CreateAt(ctx, tc.parent, tc.name, tc.flags, 0o640, owner)
		wantErrno(t, "CreateAt("+itoa(int(tc.parent))+", "+short(tc.name)+")", err, tc.errno)
		if err == nil {
			if st.Ino != h.Ino() {
				t.Errorf("CreateAt(%q): stat ino %d, handle ino %d", tc.name, st.Ino, h.Ino())
			}
			h.Close()
		}
	}
	st := lstat(t, f, "/new")
	if st.Mode != schema.ModeRegular|0o640 || st.UID != 1000 || st.GID != 2000 {
		t.Errorf("created file: %+v", st)
	}
	// O_TRUNC truncates an existing file, and the returned size says so.
	h, st, err := f.CreateAt(ctx, ino["/d"], "f", os.O_RDWR|os.O_TRUNC, 0o644, owner)
	must(t, err)
	if st.Size != 0 {
		t.Errorf("CreateAt O_TRUNC: size %d", st.Size)
	}
	h.WriteAt([]byte("abc"), 0)
	h.Close()
	// OpenIno: flags as open(2); the handle reads and writes.
	h, err = f.OpenIno(ctx, ino["/d/f"], os.O_RDWR|os.O_APPEND)
	must(t, err)
	h.WriteAt([]byte("def"), 0) // O_APPEND: at the end
	buf := make([]byte, 10)
	n, err := h.ReadAt(buf, 0)
	if err != io.EOF || string(buf[:n]) != "abcdef" {
		t.Errorf("OpenIno O_APPEND: %q, %v", buf[:n], err)
	}
	h.Close()
	h, err = f.OpenIno(ctx, ino["/d/f"], os.O_WRONLY|os.O_TRUNC)
	must(t, err)
	h.Close()
	wantContent(t, f, "/d/f", "")
	for _, tc := range []struct {
		ino   int64
		flags int
		errno syscall.Errno
	}{
		{ino["/d"], os.O_RDONLY, 0},
		{ino["/d"], os.O_RDWR, syscall.EISDIR},
		{ino["/l"], os.O_RDONLY, syscall.ELOOP},
		{ino["/d/f"], os.O_RDONLY | hostfs.ODirectory, syscall.ENOTDIR},
		{424242, os.O_RDONLY, syscall.ENOENT},
	} {
		h, err := f.OpenIno(ctx, tc.ino, tc.flags)
		wantErrno(t, "OpenIno("+itoa(int(tc.ino))+")", err, tc.errno)
		if err == nil {
			h.Close()
		}
	}
	// Read-only handles refuse writes.
	h, err = f.OpenIno(ctx, ino["/d/f"], os.O_RDONLY)
	must(t, err)
	_, err = h.WriteAt([]byte("x"), 0)
	wantErrno(t, "WriteAt on O_RDONLY", err, syscall.EBADF)
	h.Close()
}

func TestIno_Remove(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	ino := inoTree(t, f)
	for _, tc := range []struct {
		what   string
		rmdir  bool
		parent int64
		name   string
		errno  syscall.Errno
	}{
		{"unlink dir", false, vfs.RootIno, "d", syscall.EISDIR},
		{"unlink missing", false, vfs.RootIno, "missing", syscall.ENOENT},
		{"unlink .", false, ino["/d"], ".", syscall.EISDIR},
		{"unlink in file", false, ino["/d/f"], "x", syscall.ENOTDIR},
		{"unlink symlink", false, vfs.RootIno, "l", 0}, // the link, not its target
		{"rmdir non-empty", true, vfs.RootIno, "d", syscall.ENOTEMPTY},
		{"rmdir file", true, ino["/d"], "f", syscall.ENOTDIR},
		{"rmdir .", true, ino["/d"], ".", syscall.EINVAL},
		{"rmdir ..", true, ino["/d/sub"], "..", syscall.ENOTEMPTY},
		{"rmdir missing", true, vfs.RootIno, "missing", syscall.ENOENT},
		{"rmdir empty", true, ino["/d"], "sub", 0},
		{"unlink file", false, ino["/d"], "f", 0},
		{"rmdir now empty", true, vfs.RootIno, "d", 0},
	} {
		var err error
		if tc.rmdir {
			err = f.RmdirAt(ctx, tc.parent, tc.name)
		} else {
			err = f.UnlinkAt(ctx, tc.parent, tc.name)
		}
		wantErrno(t, tc.what, err, tc.errno)
	}
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"dang"}) {
		t.Errorf("left: %q", got)
	}
	checkIntegrity(t, a)
}

func TestIno_Rename(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	ino := inoTree(t, f)
	must(t, f.Mkdir(ctx, "/e", 0o755))
	writeFile(t, f, "/e/g", "g")
	e := lstat(t, f, "/e").Ino
	for _, tc := range []struct {
		what       string
		op, np     int64
		oldn, newn string
		flags      int
		errno      syscall.Errno
	}{
		{"missing source", vfs.RootIno, vfs.RootIno, "missing", "x", 0, syscall.ENOENT},
		{"dir into itself", vfs.RootIno, ino["/d/sub"], "d", "x", 0, syscall.EINVAL},
		{"file over dir", ino["/d"], vfs.RootIno, "f", "e", 0, syscall.EISDIR},
		{"dir over file", vfs.RootIno, ino["/d"], "e", "f", 0, syscall.ENOTDIR},
		{"dir over non-empty dir", ino["/d"], vfs.RootIno, "sub", "e", 0, syscall.ENOTEMPTY},
		{"noreplace existing", ino["/d"], e, "f", "g", vfs.RenameNoReplace, syscall.EEXIST},
		{"exchange missing", ino["/d"], e, "f", "missing", vfs.RenameExchange, syscall.ENOENT},
		{"both flags", ino["/d"], e, "f", "g", vfs.RenameExchange | vfs.RenameNoReplace, syscall.EINVAL},
		{"unknown flag", ino["/d"], e, "f", "g", 4, syscall.EINVAL},
		{"source .", ino["/d"], e, ".", "x", 0, syscall.EBUSY},
		{"target ..", ino["/d"], e, "f", "..", 0, syscall.EBUSY},
		{"parent not a dir", ino["/d/f"], e, "x", "y", 0, syscall.ENOTDIR},
		{"exchange two files", ino["/d"], e, "f", "g", vfs.RenameExchange, 0}, // /d/f is "g", /e/g "data"
		{"replace across dirs", e, ino["/d"], "g", "f", 0, 0},
		{"noreplace to new name", ino["/d"], vfs.RootIno, "f", "top", vfs.RenameNoReplace, 0},
		{"same inode", vfs.RootIno, vfs.RootIno, "top", "top", 0, 0},
	} {
		err := f.RenameAt(ctx, tc.op, tc.oldn, tc.np, tc.newn, tc.flags)
		wantErrno(t, "RenameAt: "+tc.what, err, tc.errno)
	}
	wantContent(t, f, "/top", "data")
	if got := readdir(t, f, "/e"); len(got) != 0 {
		t.Errorf("/e after renames: %q", got)
	}
	if got := readdir(t, f, "/d"); !equalStrings(got, []string{"sub"}) {
		t.Errorf("/d after renames: %q", got)
	}
	// Exchanging a file and a directory across directories.
	must(t, f.RenameAt(ctx, vfs.RootIno, "top", ino["/d"], "sub", vfs.RenameExchange))
	if !lstat(t, f, "/top").IsDir() || !lstat(t, f, "/d/sub").IsRegular() {
		t.Errorf("exchange of a file and a directory did not swap them")
	}
	checkIntegrity(t, a)
}

func TestIno_Links(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	ino := inoTree(t, f)
	st, err := f.LinkAt(ctx, ino["/d/f"], vfs.RootIno, "hard")
	must(t, err)
	if st.Nlink != 2 || st.Ino != ino["/d/f"] {
		t.Errorf("LinkAt: %+v", st)
	}
	for _, tc := range []struct {
		what  string
		ino   int64
		par   int64
		name  string
		errno syscall.Errno
	}{
		{"existing name", ino["/d/f"], vfs.RootIno, "d", syscall.EEXIST},
		{"directory", ino["/d"], vfs.RootIno, "dlink", syscall.EPERM},
		{"missing inode", 424242, vfs.RootIno, "x", syscall.ENOENT},
		{"into a file", ino["/d/f"], ino["/d/f"], "x", syscall.ENOTDIR},
		{"name .", ino["/d/f"], ino["/d"], ".", syscall.EEXIST},
		{"symlink itself", ino["/l"], ino["/d"], "l2", 0},
	} {
		_, err := f.LinkAt(ctx, tc.ino, tc.par, tc.name)
		wantErrno(t, "LinkAt: "+tc.what, err, tc.errno)
	}
	// An open inode without names cannot get one back.
	h, err := f.OpenIno(ctx, ino["/d/f"], os.O_RDONLY)
	must(t, err)
	must(t, f.UnlinkAt(ctx, ino["/d"], "f"))
	must(t, f.UnlinkAt(ctx, vfs.RootIno, "hard"))
	_, err = f.LinkAt(ctx, ino["/d/f"], vfs.RootIno, "again")
	wantErrno(t, "LinkAt of an unlinked open file", err, syscall.ENOENT)
	h.Close()

	// Symlinks.
	st, err = f.SymlinkAt(ctx, ino["/d"], "s", "../target", owner)
	must(t, err)
	if !st.IsSymlink() || st.Size != 9 || st.UID != 1000 {
		t.Errorf("SymlinkAt: %+v", st)
	}
	target, err := f.ReadlinkIno(ctx, st.Ino)
	if err != nil || target != "../target" {
		t.Errorf("ReadlinkIno: %q %v", target, err)
	}
	for _, tc := range []struct {
		what   string
		par    int64
		name   string
		target string
		errno  syscall.Errno
	}{
		{"existing", ino["/d"], "s", "x", syscall.EEXIST},
		{"empty target", ino["/d"], "s2", "", syscall.ENOENT},
		{"NUL in target", ino["/d"], "s2", "a\x00b", syscall.EINVAL},
		{"parent file", ino["/l"], "s2", "x", syscall.ENOTDIR},
	} {
		_, err := f.SymlinkAt(ctx, tc.par, tc.name, tc.target, owner)
		wantErrno(t, "SymlinkAt: "+tc.what, err, tc.errno)
	}
	_, err = f.ReadlinkIno(ctx, ino["/d"])
	wantErrno(t, "ReadlinkIno(dir)", err, syscall.EINVAL)
	_, err = f.ReadlinkIno(ctx, 424242)
	wantErrno(t, "ReadlinkIno(missing)", err, syscall.ENOENT)
	checkIntegrity(t, a)
}

func TestIno_Mknod(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	for _, tc := range []struct {
		name  string
		mode  uint32
		rdev  uint64
		errno syscall.Errno
	}{
		{"fifo", schema.ModeFIFO | 0o644, 0, 0},
		{"chr", schema.ModeChar | 0o600, 0x0103, 0},
		{"sock", schema.ModeSocket | 0o755, 0, 0},
		{"plain", 0o600, 0, 0}, // no type: a regular file
		{"dir", schema.ModeDir | 0o755, 0, syscall.EINVAL},
		{"fifo", schema.ModeFIFO | 0o644, 0, syscall.EEXIST},
	} {
		st, err := f.MknodAt(ctx, ino["/d"], tc.name, tc.mode, tc.rdev, owner)
		wantErrno(t, "MknodAt("+tc.name+")", err, tc.errno)
		if err == nil {
			typ := tc.mode & schema.ModeType
			if typ == 0 {
				typ = schema.ModeRegular
			}
			if st.Type() != typ || st.Perm() != tc.mode&0o777 || st.Rdev != tc.rdev || st.UID != 1000 {
				t.Errorf("MknodAt(%s): %+v", tc.name, st)
			}
		}
	}
}

func TestIno_Setattr(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	mode, uid, gid := uint32(0o4711), uint32(7), uint32(8)
	size := int64(10)
	at, mt := time.Unix(1_000_000_000, 123), time.Unix(1_500_000_000, 456)
	st, err := f.SetattrIno(ctx, ino["/d/f"], vfs.Setattr{Mode: &mode, UID: &uid, GID: &gid, Size: &size, Atime: &at, Mtime: &mt})
	must(t, err)
	if st.Mode != schema.ModeRegular|0o4711 || st.UID != 7 || st.GID != 8 || st.Size != 10 ||
		!st.Atime.Equal(at) || !st.Mtime.Equal(mt) || st.Ctime.Before(time.Now().Add(-time.Minute)) {
		t.Errorf("SetattrIno: %+v", st)
	}
	if st != lstat(t, f, "/d/f") {
		t.Errorf("SetattrIno result %+v differs from Lstat", st)
	}
	wantContent(t, f, "/d/f", "data\x00\x00\x00\x00\x00\x00")
	// Ctime given (a writeback cache's times).
	ct := time.Unix(1_600_000_000, 789)
	st, err = f.SetattrIno(ctx, ino["/d/f"], vfs.Setattr{Mtime: &mt, Ctime: &ct})
	must(t, err)
	if !st.Ctime.Equal(ct) {
		t.Errorf("Ctime: %v", st.Ctime)
	}
	// Nothing to set: the attributes, unchanged.
	st2, err := f.SetattrIno(ctx, ino["/d/f"], vfs.Setattr{})
	must(t, err)
	if st2 != st {
		t.Errorf("empty Setattr changed %+v to %+v", st, st2)
	}
	zero, neg := int64(0), int64(-1)
	for _, tc := range []struct {
		what  string
		ino   int64
		a     vfs.Setattr
		errno syscall.Errno
	}{
		{"truncate dir", ino["/d"], vfs.Setattr{Size: &zero}, syscall.EISDIR},
		{"truncate symlink", ino["/l"], vfs.Setattr{Size: &zero}, syscall.EINVAL},
		{"negative size", ino["/d/f"], vfs.Setattr{Size: &neg}, syscall.EINVAL},
		{"missing", 424242, vfs.Setattr{Mode: &mode}, syscall.ENOENT},
		{"chmod symlink itself", ino["/l"], vfs.Setattr{UID: &uid}, 0},
	} {
		_, err := f.SetattrIno(ctx, tc.ino, tc.a)
		wantErrno(t, "SetattrIno: "+tc.what, err, tc.errno)
	}
	// A failed Setattr changes nothing (one transaction): the mode is
	// not applied when the size fails.
	m2 := uint32(0o600)
	_, err = f.SetattrIno(ctx, ino["/d"], vfs.Setattr{Mode: &m2, Size: &zero})
	wantErrno(t, "SetattrIno mode+size on dir", err, syscall.EISDIR)
	if st := lstat(t, f, "/d"); st.Perm() != 0o755 {
		t.Errorf("mode changed by a failed setattr: %o", st.Perm())
	}
}

func TestIno_Xattr(t *testing.T) {
	f := newFS(t)
	ino := inoTree(t, f)
	file := ino["/d/f"]
	must(t, f.SetxattrIno(ctx, file, "user.a", []byte("1"), 0))
	must(t, f.SetxattrIno(ctx, file, "user.b", nil, vfs.XattrCreate))
	for _, tc := range []struct {
		what  string
		err   error
		errno syscall.Errno
	}{
		{"create existing", f.SetxattrIno(ctx, file, "user.a", []byte("2"), vfs.XattrCreate), syscall.EEXIST},
		{"replace missing", f.SetxattrIno(ctx, file, "user.c", []byte("2"), vfs.XattrReplace), syscall.ENODATA},
		{"empty name", f.SetxattrIno(ctx, file, "", nil, 0), syscall.ERANGE},
		{"long name", f.SetxattrIno(ctx, file, strings.Repeat("n", 256), nil, 0), syscall.ERANGE},
		{"big value", f.SetxattrIno(ctx, file, "user.big", make([]byte, vfs.XattrValueMax+1), 0), syscall.E2BIG},
		{"missing inode", f.SetxattrIno(ctx, 424242, "user.a", nil, 0), syscall.ENOENT},
		{"remove missing", f.RemovexattrIno(ctx, file, "user.none"), syscall.ENODATA},
		{"remove on missing inode", f.RemovexattrIno(ctx, 424242, "user.a"), syscall.ENOENT},
		{"replace existing", f.SetxattrIno(ctx, file, "user.a", []byte("3"), vfs.XattrReplace), 0},
		{"symlink itself", f.SetxattrIno(ctx, ino["/l"], "trusted.x", []byte("l"), 0), 0},
	} {
		wantErrno(t, "SetxattrIno: "+tc.what, tc.err, tc.errno)
	}
	v, err := f.GetxattrIno(ctx, file, "user.a")
	if err != nil || string(v) != "3" {
		t.Errorf("GetxattrIno: %q %v", v, err)
	}
	v, err = f.GetxattrIno(ctx, file, "user.b")
	if err != nil || v == nil || len(v) != 0 {
		t.Errorf("GetxattrIno empty value: %q %v", v, err)
	}
	_, err = f.GetxattrIno(ctx, file, "user.none")
	wantErrno(t, "GetxattrIno missing", err, syscall.ENODATA)
	_, err = f.GetxattrIno(ctx, 424242, "user.a")
	wantErrno(t, "GetxattrIno missing inode", err, syscall.ENOENT)
	names, err := f.ListxattrIno(ctx, file)
	if err != nil || !equalStrings(names, []string{"user.a", "user.b"}) {
		t.Errorf("ListxattrIno: %q %v", names, err)
	}
	must(t, f.RemovexattrIno(ctx, file, "user.a"))
	// The path API sees the same attributes.
	names, err = f.Listxattr(ctx, "/d/f", true)
	if err != nil || !equalStrings(names, []string{"user.b"}) {
		t.Errorf("Listxattr after RemovexattrIno: %q %v", names, err)
	}
	if v, err := f.Getxattr(ctx, "/l", "trusted.x", false); err != nil || string(v) != "l" {
		t.Errorf("Getxattr of the symlink itself: %q %v", v, err)
	}
}

// TestIno_UnlinkedOpen: an inode opened with OpenIno survives the removal
// of its last name until the last handle is closed, whichever API
// removed it (unlink, rename over it, RemoveAll).
func TestIno_UnlinkedOpen(t *testing.T) {
	a := openAgent(t)
	f := a.FS
	for _, remove := range []struct {
		what string
		fn   func() error
	}{
		{"UnlinkAt", func() error { return f.UnlinkAt(ctx, vfs.RootIno, "f") }},
		{"RenameAt over it", func() error {
			writeFile(t, f, "/other", "other")
			return f.RenameAt(ctx, vfs.RootIno, "other", vfs.RootIno, "f", 0)
		}},
		{"RemoveAll of its directory", func() error { return f.RemoveAll(ctx, "/dir") }},
	} {
		path := "/f"
		if strings.HasPrefix(remove.what, "RemoveAll") {
			path = "/dir/f"
		}
		writeFile(t, f, path, "content")
		st := lstat(t, f, path)
		h, err := f.OpenIno(ctx, st.Ino, os.O_RDWR)
		must(t, err)
		must(t, remove.fn())
		if _, err := h.WriteAt([]byte("CONTENT"), 0); err != nil {
			t.Errorf("%s: write after removal: %v", remove.what, err)
		}
		if got, err := f.StatIno(ctx, st.Ino); err != nil || got.Nlink != 0 || got.Size != 7 {
			t.Errorf("%s: StatIno while open: %+v %v", remove.what, got, err)
		}
		must(t, h.Close())
		if _, err := f.StatIno(ctx, st.Ino); vfs.Errno(err) != syscall.ENOENT {
			t.Errorf("%s: inode after the last close: %v", remove.what, err)
		}
		f.RemoveAll(ctx, "/f")
		f.RemoveAll(ctx, "/other")
	}
	checkIntegrity(t, a)
	// A file closed without having lost its name stays.
	writeFile(t, f, "/kept", "x")
	h, err := f.OpenIno(ctx, lstat(t, f, "/kept").Ino, os.O_RDONLY)
	must(t, err)
	must(t, h.Close())
	wantContent(t, f, "/kept", "x")
}

// TestIno_Changes: Changes grows after a commit of another connection
// only.
func TestIno_Changes(t *testing.T) {
	a := openAgent(t)
	n0, err := a.FS.Changes(ctx)
	must(t, err)
	writeFile(t, a.FS, "/mine", "x")
	if n, _ := a.FS.Changes(ctx); n != n0 {
		t.Errorf("own write counted as foreign: %d -> %d", n0, n)
	}
	b := openAgentAt(t, a.Path())
	writeFile(t, b.FS, "/theirs", "y")
	if n, _ := a.FS.Changes(ctx); n == n0 {
		t.Errorf("foreign write not seen")
	}
}
