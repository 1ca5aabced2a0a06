//go:build linux

package mount_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// More of the syscall-level suite: cases beyond mount_test.go.

// TestReplacedAndRemovedOpen: a file replaced by rename while open keeps
// its old content for the open descriptor; a directory removed while open
// behaves as on a native filesystem (fstat works with nlink 0, listing and
// creating fail with ENOENT); the replaced inode is purged from the
// database at the last close.
func TestReplacedAndRemovedOpen(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	writeFile(t, fx.p("old"), "old content")
	writeFile(t, fx.p("new"), "new content")
	a := openSecond(t, fx)
	st, err := a.FS.Lstat(ctx, "/old")
	must(t, err)
	f, err := os.Open(fx.p("old"))
	must(t, err)
	must(t, os.Rename(fx.p("new"), fx.p("old")))
	if got := readFile(t, fx.p("old")); got != "new content" {
		t.Errorf("by name after rename: %q", got)
	}
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 0)
	if string(buf[:n]) != "old content" {
		t.Errorf("open descriptor after rename over it: %q (%v)", buf[:n], err)
	}
	must(t, f.Close())
	eventually(t, "replaced inode purged after last close", commitBound, func() bool {
		_, err := a.FS.StatIno(ctx, st.Ino)
		return vfs.Errno(err) == syscall.ENOENT
	})

	// A directory removed while open.
	must(t, os.Mkdir(fx.p("d"), 0o755))
	fd, err := unix.Open(fx.p("d"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	defer unix.Close(fd)
	must(t, unix.Rmdir(fx.p("d")))
	var dst unix.Stat_t
	must(t, unix.Fstat(fd, &dst))
	if dst.Mode&unix.S_IFMT != unix.S_IFDIR {
		t.Errorf("fstat of removed dir: mode %o", dst.Mode)
	}
	if dst.Nlink != 0 {
		t.Errorf("fstat of removed dir: nlink %d", dst.Nlink)
	}
	// As on a native filesystem, listing and creating inside a removed
	// directory fail with ENOENT.
	_, err = unix.Getdents(fd, make([]byte, 4096))
	wantErrno(t, "getdents of removed dir", err, syscall.ENOENT)
	wantErrno(t, "create in removed dir", openAtErr(fd, "x", unix.O_CREAT|unix.O_WRONLY), syscall.ENOENT)
}

func openAtErr(dirfd int, name string, flags int) error {
	fd, err := unix.Openat(dirfd, name, flags, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// TestRenameMore: exchanging two directories moves their subtrees (and
// their ".." entries), a rename onto another name of the same inode does
// nothing, and a rename into a subdirectory keeps the inode number.
func TestRenameMore(t *testing.T) {
	fx := mountT(t)
	p := fx.p
	must(t, os.MkdirAll(p("x/in"), 0o755))
	must(t, os.MkdirAll(p("y/sub/deep"), 0o755))
	writeFile(t, p("x/in/fx"), "X")
	writeFile(t, p("y/sub/deep/fy"), "Y")
	var before unix.Stat_t
	must(t, unix.Stat(p("x/in"), &before))
	must(t, unix.Renameat2(unix.AT_FDCWD, p("x/in"), unix.AT_FDCWD, p("y/sub"), unix.RENAME_EXCHANGE))
	if got := readFile(t, p("y/sub/fx")); got != "X" {
		t.Errorf("y/sub/fx = %q", got)
	}
	if got := readFile(t, p("x/in/deep/fy")); got != "Y" {
		t.Errorf("x/in/deep/fy = %q", got)
	}
	var after, parent, dotdot unix.Stat_t
	must(t, unix.Stat(p("y/sub"), &after))
	if after.Ino != before.Ino {
		t.Errorf("exchanged directory changed inode: %d -> %d", before.Ino, after.Ino)
	}
	must(t, unix.Stat(p("y"), &parent))
	must(t, unix.Stat(p("y/sub/.."), &dotdot))
	if dotdot.Ino != parent.Ino {
		t.Errorf("y/sub/.. is inode %d, want y (%d)", dotdot.Ino, parent.Ino)
	}
	// Renaming a name onto another link of the same inode: both stay.
	writeFile(t, p("h1"), "same")
	must(t, os.Link(p("h1"), p("h2")))
	must(t, os.Rename(p("h1"), p("h2")))
	for _, n := range []string{"h1", "h2"} {
		if got := readFile(t, p(n)); got != "same" {
			t.Errorf("%s after rename onto its own link: %q", n, got)
		}
	}
	// A long chain of renames across directories keeps the inode.
	var st0, st1 unix.Stat_t
	must(t, unix.Stat(p("h1"), &st0))
	path := p("h1")
	for i := range 20 {
		next := p(filepath.Join("x", "in", "deep", strings.Repeat("r", i+1)))
		if i%2 == 1 {
			next = p(strings.Repeat("r", i+1))
		}
		must(t, os.Rename(path, next))
		path = next
	}
	must(t, unix.Stat(path, &st1))
	if st0.Ino != st1.Ino || readFile(t, path) != "same" {
		t.Errorf("after 20 renames: ino %d -> %d", st0.Ino, st1.Ino)
	}
}

// TestMmapMore: the page cache is shared between mappings and read(2);
// a mapping can write into a page added by ftruncate; writes through a
// shared mapping reach the database after munmap and close without msync.
func TestMmapMore(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	writeFile(t, fx.p("m"), strings.Repeat("a", 4096))
	fd, err := unix.Open(fx.p("m"), unix.O_RDWR, 0)
	must(t, err)
	must(t, unix.Ftruncate(fd, 3*4096))
	mem, err := unix.Mmap(fd, 0, 3*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	must(t, err)
	copy(mem[2*4096:], "third page")
	copy(mem[10:], "first")
	// read(2) through another descriptor sees the mapping's writes at
	// once (same page cache), before any msync.
	got, err := os.ReadFile(fx.p("m"))
	must(t, err)
	if len(got) != 3*4096 || string(got[10:15]) != "first" || string(got[2*4096:2*4096+10]) != "third page" {
		t.Errorf("read(2) beside the mapping: len %d %q %q", len(got), got[10:15], got[2*4096:2*4096+10])
	}
	if !bytes.Equal(got[4096:2*4096], make([]byte, 4096)) {
		t.Errorf("the page added by ftruncate is not zero")
	}
	// A write(2) is visible in the mapping.
	_, err = unix.Pwrite(fd, []byte("PWRITE"), 100)
	must(t, err)
	if string(mem[100:106]) != "PWRITE" {
		t.Errorf("mapping after pwrite: %q", mem[100:106])
	}
	must(t, unix.Munmap(mem))
	must(t, unix.Close(fd))
	// No msync: close flushes the dirty pages, and the commit follows.
	a := openSecond(t, fx)
	eventually(t, "mapped writes in the database", commitBound, func() bool {
		db, err := a.FS.ReadFile(ctx, "/m")
		return err == nil && len(db) == 3*4096 && string(db[10:15]) == "first" &&
			string(db[100:106]) == "PWRITE" && string(db[2*4096:2*4096+10]) == "third page"
	})
	// Mapping beyond the end of the file faults (SIGBUS) in the kernel;
	// mapping a directory is refused.
	dfd, err := unix.Open(fx.dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	_, err = unix.Mmap(dfd, 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	unix.Close(dfd)
	wantErrno(t, "mmap of a directory", err, syscall.ENODEV)
}

// TestMoreErrnos: errno cases not in TestErrnos.
func TestMoreErrnos(t *testing.T) {
	fx := mountT(t)
	p := fx.p
	writeFile(t, p("f"), "data")
	must(t, os.Mkdir(p("d"), 0o755))
	must(t, os.Symlink("loop2", p("loop1")))
	must(t, os.Symlink("loop1", p("loop2")))
	// Read(2) of a directory, ftruncate of a read-only descriptor, write
	// past the file size limit are refused by the kernel or the server.
	dfd, err := unix.Open(p("d"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	_, err = unix.Read(dfd, make([]byte, 10))
	unix.Close(dfd)
	wantErrno(t, "read of a directory", err, syscall.EISDIR)
	rfd, err := unix.Open(p("f"), unix.O_RDONLY, 0)
	must(t, err)
	wantErrno(t, "ftruncate O_RDONLY", unix.Ftruncate(rfd, 0), syscall.EINVAL)
	unix.Close(rfd)
	wantErrno(t, "open through a file", openErr(p("f/x"), os.O_RDONLY), syscall.ENOTDIR)
	wantErrno(t, "stat with trailing slash on file", unix.Stat(p("f")+"/", new(unix.Stat_t)), syscall.ENOTDIR)
	wantErrno(t, "symlink loop", openErr(p("loop1"), os.O_RDONLY), syscall.ELOOP)
	wantErrno(t, "rmdir of .", unix.Rmdir(fx.dir+"/d/."), syscall.EINVAL)
	wantErrno(t, "rename onto a missing directory", unix.Rename(p("f"), p("nope/f")), syscall.ENOENT)
	wantErrno(t, "mkfifo existing", unix.Mkfifo(p("f"), 0o644), syscall.EEXIST)
	wantErrno(t, "mknod missing dir", unix.Mknod(p("nope/n"), unix.S_IFIFO|0o644, 0), syscall.ENOENT)
	wantErrno(t, "link to a name in a missing dir", unix.Link(p("f"), p("nope/l")), syscall.ENOENT)
	wantErrno(t, "setxattr on missing", unix.Setxattr(p("nope"), "user.a", []byte("v"), 0), syscall.ENOENT)
	wantErrno(t, "system.* xattr refused", unix.Setxattr(p("f"), "system.other", []byte("v"), 0), syscall.EOPNOTSUPP)
	wantErrno(t, "truncate negative", unix.Truncate(p("f"), -1), syscall.EINVAL)
	// fdatasync and fsync of a directory work.
	fd, err := unix.Open(p("f"), unix.O_RDWR, 0)
	must(t, err)
	_, err = unix.Write(fd, []byte("D"))
	must(t, err)
	must(t, unix.Fdatasync(fd))
	unix.Close(fd)
	dfd, err = unix.Open(p("d"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	must(t, unix.Fsync(dfd))
	unix.Close(dfd)
}

// TestPermissions: with allow_other the kernel checks permission bits for
// other users (default_permissions), and files they create are theirs.
func TestPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to act as another user")
	}
	fx := mountT(t, "AGENTFS_MOUNT_TEST_ALLOW_OTHER=1")
	must(t, os.Chmod(filepath.Dir(fx.dir), 0o755))
	writeFile(t, fx.p("private"), "secret")
	must(t, os.Chmod(fx.p("private"), 0o600))
	must(t, os.Mkdir(fx.p("closed"), 0o755))
	must(t, os.Mkdir(fx.p("open"), 0o755))
	must(t, os.Chmod(fx.p("open"), 0o777)) // past the umask
	nobody := func(cmdline string) error {
		cmd := exec.Command("sh", "-c", "cd "+fx.dir+" && "+cmdline)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("as nobody: %s: %v: %s", cmdline, err, out)
		}
		return err
	}
	if err := nobody("cat private"); err == nil {
		t.Errorf("nobody read a 0600 file of root")
	}
	if err := nobody("touch closed/x"); err == nil {
		t.Errorf("nobody created a file in a 0755 directory of root")
	}
	if err := nobody("echo hi > open/mine && cat open/mine"); err != nil {
		t.Fatalf("nobody in a 0777 directory: %v", err)
	}
	var st unix.Stat_t
	must(t, unix.Stat(fx.p("open/mine"), &st))
	if st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("file created by nobody owned by %d:%d", st.Uid, st.Gid)
	}
	// Sticky directory: nobody cannot remove root's file in it.
	must(t, unix.Chmod(fx.p("open"), 0o1777))
	writeFile(t, fx.p("open/roots"), "r")
	if err := nobody("rm -f open/roots"); err == nil {
		t.Errorf("rm of root's file in a sticky directory succeeded for nobody")
	}
	if _, err := os.Stat(fx.p("open/roots")); err != nil {
		t.Errorf("root's file in the sticky directory: %v", err)
	}
}

// TestDirCache: the kernel keeps directory listings across opendir
// (FOPEN_CACHE_DIR); changes through the mount and by other processes
// must still show in the next listing.
func TestDirCache(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	must(t, os.Mkdir(fx.p("d"), 0o755))
	list := func() string {
		t.Helper()
		es, err := os.ReadDir(fx.p("d"))
		must(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, ",")
	}
	writeFile(t, fx.p("d/a"), "")
	if got := list(); got != "a" {
		t.Fatalf("listing: %q", got)
	}
	list() // served from the cache now
	writeFile(t, fx.p("d/b"), "")
	if got := list(); got != "a,b" {
		t.Errorf("after a create through the mount: %q", got)
	}
	must(t, os.Rename(fx.p("d/a"), fx.p("d/c")))
	if got := list(); got != "b,c" {
		t.Errorf("after a rename through the mount: %q", got)
	}
	must(t, os.Remove(fx.p("d/b")))
	if got := list(); got != "c" {
		t.Errorf("after an unlink through the mount: %q", got)
	}
	a := openSecond(t, fx)
	must(t, a.FS.WriteFile(ctx, "/d/from-sdk", nil, vfs.WriteOptions{}))
	must(t, a.FS.Unlink(ctx, "/d/c"))
	eventually(t, "listing shows the other process's changes", commitBound, func() bool {
		return list() == "from-sdk"
	})
}
