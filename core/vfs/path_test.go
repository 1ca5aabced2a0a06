package vfs_test

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// pathTree builds:
//
//	/d/           dir
//	/d/f          "file"
//	/d/sub/g      "g"
//	/ld -> d      symlink to a dir (relative)
//	/ldabs -> /d  symlink to a dir (absolute)
//	/lf -> d/f    symlink to a file
//	/ldang -> nowhere
//	/loop1 -> loop2, /loop2 -> loop1
//	/self -> self
//	/d/up -> ..   symlink to the parent
//	/lroot -> /
//	/chain1 -> chain2 -> chain3 -> d
func pathTree(t *testing.T) *vfs.FS {
	t.Helper()
	f := newFS(t)
	writeFile(t, f, "/d/f", "file")
	writeFile(t, f, "/d/sub/g", "g")
	for _, l := range [][2]string{
		{"d", "/ld"}, {"/d", "/ldabs"}, {"d/f", "/lf"}, {"nowhere", "/ldang"},
		{"loop2", "/loop1"}, {"loop1", "/loop2"}, {"self", "/self"}, {"..", "/d/up"},
		{"/", "/lroot"}, {"chain2", "/chain1"}, {"chain3", "/chain2"}, {"d", "/chain3"},
	} {
		must(t, f.Symlink(ctx, l[0], l[1]))
	}
	return f
}

func TestFS_Stat(t *testing.T) {
	f := pathTree(t)
	d := lstat(t, f, "/d")
	file := lstat(t, f, "/d/f")
	g := lstat(t, f, "/d/sub/g")
	sub := lstat(t, f, "/d/sub")
	for _, tc := range []struct {
		path  string
		ino   int64 // 0: expect an error
		errno syscall.Errno
	}{
		{"/", 1, 0},
		{"", 0, syscall.ENOENT},
		{"/d", d.Ino, 0},
		{"d", d.Ino, 0}, // relative paths start at the root
		{"//d//f", file.Ino, 0},
		{"/d/f", file.Ino, 0},
		{"/ld", d.Ino, 0},           // final symlink followed
		{"/ld/f", file.Ino, 0},      // symlink in the middle followed
		{"/ldabs/sub/g", g.Ino, 0},  // absolute target
		{"/chain1/sub/g", g.Ino, 0}, // chain of symlinks
		{"/lf", file.Ino, 0},
		{"/ld/", d.Ino, 0}, // trailing slash on a symlink to a dir works
		{"/ld/.", d.Ino, 0},
		{"/lroot", 1, 0},
		{"/lroot/d/f", file.Ino, 0},
		{"/d/up", 1, 0},
		{"/d/up/d/sub", sub.Ino, 0},
		{"/d/sub/../f", file.Ino, 0},
		{"/d/./sub/./g", g.Ino, 0},
		{"/..", 1, 0}, // ".." at the root is the root
		{"/../../d", d.Ino, 0},
		{"/d/../..", 1, 0},
		{"/.", 1, 0},
		{".", 1, 0},
		{"/ld/..", 1, 0}, // ".." after a symlink is the target's parent
		{"/ld/sub/..", d.Ino, 0},
		{"/ld/sub/../..", 1, 0},
		{"/missing", 0, syscall.ENOENT},
		{"/missing/x", 0, syscall.ENOENT},
		{"/d/missing/x", 0, syscall.ENOENT},
		{"/d/f/x", 0, syscall.ENOTDIR}, // a file in the middle
		{"/d/f/", 0, syscall.ENOTDIR},  // trailing slash on a file
		{"/d/f/.", 0, syscall.ENOTDIR},
		{"/d/f/..", 0, syscall.ENOTDIR},
		{"/lf/", 0, syscall.ENOTDIR}, // trailing slash on a symlink to a file
		{"/lf/x", 0, syscall.ENOTDIR},
		{"/ldang", 0, syscall.ENOENT},
		{"/ldang/x", 0, syscall.ENOENT},
		{"/loop1", 0, syscall.ELOOP},
		{"/loop1/x", 0, syscall.ELOOP},
		{"/self", 0, syscall.ELOOP},
		{"/self/", 0, syscall.ELOOP},
		{"/d/sub/g/../f", 0, syscall.ENOTDIR},
	} {
		st, err := f.Stat(ctx, tc.path)
		wantErrno(t, "Stat("+tc.path+")", err, tc.errno)
		if err == nil && st.Ino != tc.ino {
			t.Errorf("Stat(%q).Ino: got %d, want %d", tc.path, st.Ino, tc.ino)
		}
	}
}

func TestFS_Lstat(t *testing.T) {
	f := pathTree(t)
	d := lstat(t, f, "/d")
	for _, tc := range []struct {
		path     string
		symlink  bool
		ino      int64 // checked when non-zero
		errno    syscall.Errno
		typeName string
	}{
		{path: "/ld", symlink: true},
		{path: "/lf", symlink: true},
		{path: "/ldang", symlink: true}, // dangling: Lstat works
		{path: "/loop1", symlink: true}, // loops: Lstat works
		{path: "/self", symlink: true},
		{path: "/ld/", ino: d.Ino},       // trailing slash follows
		{path: "/ld/sub/..", ino: d.Ino}, // middle symlinks always followed
		{path: "/ldang/", errno: syscall.ENOENT},
		{path: "/lf/", errno: syscall.ENOTDIR},
		{path: "/loop1/", errno: syscall.ELOOP},
		{path: "/d/up", symlink: true},
	} {
		st, err := f.Lstat(ctx, tc.path)
		wantErrno(t, "Lstat("+tc.path+")", err, tc.errno)
		if err != nil {
			continue
		}
		if st.IsSymlink() != tc.symlink {
			t.Errorf("Lstat(%q).IsSymlink: got %v, want %v", tc.path, st.IsSymlink(), tc.symlink)
		}
		if tc.ino != 0 && st.Ino != tc.ino {
			t.Errorf("Lstat(%q).Ino: got %d, want %d", tc.path, st.Ino, tc.ino)
		}
	}
	st := lstat(t, f, "/ld")
	if got, want := st.Size, int64(len("d")); got != want {
		t.Errorf("Lstat(/ld).Size: got %d, want %d (length of the target)", got, want)
	}
	if got, want := st.FileMode()&fs.ModeSymlink, fs.ModeSymlink; got != want {
		t.Errorf("Lstat(/ld).FileMode: got %v, want symlink bit", st.FileMode())
	}
}

func TestFS_Readlink(t *testing.T) {
	f := pathTree(t)
	for _, tc := range []struct {
		path, want string
		errno      syscall.Errno
	}{
		{"/ld", "d", 0},
		{"/ldabs", "/d", 0},
		{"/ldang", "nowhere", 0},
		{"/self", "self", 0},
		{"/ld/sub/../up", "..", 0}, // middle symlink followed
		{"/d", "", syscall.EINVAL},
		{"/d/f", "", syscall.EINVAL},
		{"/", "", syscall.EINVAL},
		{"/missing", "", syscall.ENOENT},
		{"/d/f/x", "", syscall.ENOTDIR},
	} {
		got, err := f.Readlink(ctx, tc.path)
		wantErrno(t, "Readlink("+tc.path+")", err, tc.errno)
		if got != tc.want {
			t.Errorf("Readlink(%q): got %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestFS_Symlink(t *testing.T) {
	f := pathTree(t)
	for _, tc := range []struct {
		target, path string
		errno        syscall.Errno
	}{
		{"x", "/new1", 0},
		{"/d/f", "/d/new2", 0},
		{"x", "/ld/new3", 0}, // parent reached through a symlink
		{"x", "/d", syscall.EEXIST},
		{"x", "/d/f", syscall.EEXIST},
		{"x", "/ldang", syscall.EEXIST}, // a dangling link is an entry
		{"x", "/", syscall.EEXIST},
		{"x", "/missing/l", syscall.ENOENT},
		{"x", "/d/f/l", syscall.ENOTDIR},
		{"", "/empty", syscall.ENOENT},
		{"x", "/" + strings.Repeat("n", 256), syscall.ENAMETOOLONG},
		{"x\x00y", "/nul", syscall.EINVAL},
		{"x", "/new4/", syscall.ENOENT}, // symlink(2): a missing "name/"
		{"x", "/d/f/", syscall.EEXIST},
	} {
		err := f.Symlink(ctx, tc.target, tc.path)
		wantErrno(t, "Symlink("+tc.target+", "+tc.path+")", err, tc.errno)
	}
	if got, err := f.Readlink(ctx, "/d/new3"); err != nil || got != "x" {
		t.Errorf("Readlink(/d/new3): got %q, %v; want x", got, err)
	}
	// Date-looking and non-UTF-8 targets come back byte-exact.
	for _, target := range []string{"2024-01-01", "2024-01-01 10:00:00", "\xff\xfe", "12:30:00"} {
		must(t, f.Symlink(ctx, target, "/t"))
		got, err := f.Readlink(ctx, "/t")
		if err != nil || got != target {
			t.Errorf("Readlink of a link to %q: got %q, %v", target, got, err)
		}
		must(t, f.Unlink(ctx, "/t"))
	}
}

func TestFS_Names(t *testing.T) {
	f := newFS(t)
	n255 := strings.Repeat("x", 255)
	n256 := strings.Repeat("x", 256)
	for _, tc := range []struct {
		path  string
		errno syscall.Errno
	}{
		{"/" + n255, 0},
		{"/" + n256, syscall.ENAMETOOLONG},
		{"/" + n256 + "/x", syscall.ENAMETOOLONG},
		{"/a\x00b", syscall.EINVAL},
		{"/" + strings.Repeat("a/", 2048) + "x", syscall.ENAMETOOLONG}, // 4097 bytes
		{"/\xff\xfe", 0},
		{"/2024-01-01", 0},
		{"/2024-01-01 10:00:00", 0},
		{"/2024-01-01T10:00:00Z", 0},
		{"/10:00", 0},
		{"/ spaced name ", 0},
		{"/ünïcødé", 0},
		{"/-", 0},
	} {
		err := f.WriteFile(ctx, tc.path, []byte("x"), vfs.WriteOptions{})
		wantErrno(t, "WriteFile("+short(tc.path)+")", err, tc.errno)
		_, err = f.Stat(ctx, tc.path)
		wantErrno(t, "Stat("+short(tc.path)+")", err, tc.errno)
	}
	got := readdir(t, f, "/")
	want := []string{" spaced name ", "-", "10:00", "2024-01-01", "2024-01-01 10:00:00", "2024-01-01T10:00:00Z", n255, "\xc3\xbcn\xc3\xafc\xc3\xb8d\xc3\xa9", "\xff\xfe"}
	if !equalStrings(got, want) {
		t.Errorf("Readdir(/): got %q, want %q", got, want)
	}
	// Every other read path returns names byte-exact too.
	ents, err := f.ReaddirPlus(ctx, "/")
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	if !equalStrings(names, want) {
		t.Errorf("ReaddirPlus(/) names: got %q, want %q", names, want)
	}
	paths, err := f.Paths(ctx)
	must(t, err)
	wantPaths := []string{"/"}
	for _, n := range want {
		wantPaths = append(wantPaths, "/"+n)
	}
	if !equalStrings(paths, wantPaths) {
		t.Errorf("Paths(): got %q, want %q", paths, wantPaths)
	}
	// Date-looking names as directories, renamed, linked and with xattrs.
	must(t, f.Mkdir(ctx, "/2024-01-02", 0o755))
	must(t, f.Rename(ctx, "/2024-01-01", "/2024-01-02/2024-01-03 00:00:00"))
	must(t, f.Link(ctx, "/2024-01-02/2024-01-03 00:00:00", "/2024-01-02/2025-12-31"))
	if got, want := readdir(t, f, "/2024-01-02"), []string{"2024-01-03 00:00:00", "2025-12-31"}; !equalStrings(got, want) {
		t.Errorf("Readdir(/2024-01-02): got %q, want %q", got, want)
	}
	must(t, f.Setxattr(ctx, "/2024-01-02", "user.2024-01-01", []byte("2024-01-01"), 0, true))
	if got, err := f.Listxattr(ctx, "/2024-01-02", true); err != nil || !equalStrings(got, []string{"user.2024-01-01"}) {
		t.Errorf("Listxattr: got %q, %v", got, err)
	}
	if got, err := f.Getxattr(ctx, "/2024-01-02", "user.2024-01-01", true); err != nil || string(got) != "2024-01-01" {
		t.Errorf("Getxattr: got %q, %v", got, err)
	}
	// Non-UTF-8 directory names work as path components.
	must(t, f.Mkdir(ctx, "/\xfe", 0o755))
	writeFile(t, f, "/\xfe/\x80", "bin")
	wantContent(t, f, "/\xfe/\x80", "bin")
	if got := readdir(t, f, "/\xfe"); !equalStrings(got, []string{"\x80"}) {
		t.Errorf("Readdir(/\\xfe): got %q", got)
	}
	// The walk also preserves names.
	var walked []string
	must(t, f.Walk(ctx, "/2024-01-02", func(p string, _ vfs.Stat) error { walked = append(walked, p); return nil }))
	if want := []string{"/2024-01-02", "/2024-01-02/2024-01-03 00:00:00", "/2024-01-02/2025-12-31"}; !equalStrings(walked, want) {
		t.Errorf("Walk: got %q, want %q", walked, want)
	}
}

func TestFS_Errors(t *testing.T) {
	f := newFS(t)
	_, err := f.Stat(ctx, "/missing")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(Stat(/missing), fs.ErrNotExist): got false for %v", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("errors.As(%v, *fs.PathError): got false, want true", err)
	}
	if got, want := pe.Path, "/missing"; got != want {
		t.Errorf("PathError.Path: got %q, want %q", got, want)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.ENOENT {
		t.Errorf("errors.As(err, *syscall.Errno): got %v, want ENOENT", errno)
	}
	if got, ok := pe.Err.(syscall.Errno); !ok || got != syscall.ENOENT {
		t.Errorf("PathError.Err: got %#v, want syscall.ENOENT", pe.Err)
	}
	writeFile(t, f, "/x", "")
	err = f.Mkdir(ctx, "/x", 0o755)
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("errors.Is(Mkdir over a file, fs.ErrExist): got false for %v", err)
	}
	// Errno sees through wrapping.
	if got := vfs.Errno(errors.Join(errors.New("context"), err)); got != syscall.EEXIST {
		t.Errorf("Errno(wrapped EEXIST): got %v", got)
	}
	if got := vfs.Errno(errors.New("plain")); got != 0 {
		t.Errorf("Errno(plain error): got %v, want 0", got)
	}
	if got := vfs.Errno(nil); got != 0 {
		t.Errorf("Errno(nil): got %v, want 0", got)
	}
	ok, err := f.Exists(ctx, "/x")
	if !ok || err != nil {
		t.Errorf("Exists(/x): got %v, %v; want true, nil", ok, err)
	}
	ok, err = f.Exists(ctx, "/nope")
	if ok || err != nil {
		t.Errorf("Exists(/nope): got %v, %v; want false, nil", ok, err)
	}
	_, err = f.Exists(ctx, "/x/y")
	wantErrno(t, "Exists(/x/y)", err, syscall.ENOTDIR)
	wantErrno(t, "Access(/x)", f.Access(ctx, "/x", 4), 0)
	wantErrno(t, "Access(/nope)", f.Access(ctx, "/nope", 4), syscall.ENOENT)
}
