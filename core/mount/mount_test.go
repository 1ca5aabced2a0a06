//go:build linux

package mount_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mount"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// TestErrnos runs every namespace operation with its error cases through
// the kernel and checks the errno a program sees.
func TestErrnos(t *testing.T) {
	fx := mountT(t)
	p := fx.p
	must(t, os.MkdirAll(p("d/sub"), 0o755))
	must(t, os.Mkdir(p("empty"), 0o755))
	writeFile(t, p("f"), "file")
	writeFile(t, p("d/sub/g"), "g")
	must(t, os.Symlink("f", p("lf")))
	long := strings.Repeat("n", 256)
	for _, tc := range []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"mkdir new", unix.Mkdir(p("new"), 0o755), 0},
		{"mkdir existing", unix.Mkdir(p("d"), 0o755), syscall.EEXIST},
		{"mkdir over file", unix.Mkdir(p("f"), 0o755), syscall.EEXIST},
		{"mkdir missing parent", unix.Mkdir(p("nope/x"), 0o755), syscall.ENOENT},
		{"mkdir under file", unix.Mkdir(p("f/x"), 0o755), syscall.ENOTDIR},
		{"mkdir long name", unix.Mkdir(p(long), 0o755), syscall.ENAMETOOLONG},
		{"rmdir non-empty", unix.Rmdir(p("d")), syscall.ENOTEMPTY},
		{"rmdir file", unix.Rmdir(p("f")), syscall.ENOTDIR},
		{"rmdir missing", unix.Rmdir(p("nope")), syscall.ENOENT},
		{"rmdir empty", unix.Rmdir(p("empty")), 0},
		{"unlink dir", unix.Unlink(p("d")), syscall.EISDIR},
		{"unlink missing", unix.Unlink(p("nope")), syscall.ENOENT},
		{"open missing", openErr(p("nope"), os.O_RDONLY), syscall.ENOENT},
		{"open excl existing", openErr(p("f"), os.O_CREATE|os.O_EXCL|os.O_WRONLY), syscall.EEXIST},
		{"open excl symlink", openErr(p("lf"), os.O_CREATE|os.O_EXCL|os.O_WRONLY), syscall.EEXIST},
		{"open dir for writing", openErr(p("d"), os.O_WRONLY), syscall.EISDIR},
		{"open nofollow symlink", openErr(p("lf"), os.O_RDONLY|syscall.O_NOFOLLOW), syscall.ELOOP},
		{"open O_DIRECTORY on file", openErr(p("f"), os.O_RDONLY|syscall.O_DIRECTORY), syscall.ENOTDIR},
		{"create in missing dir", openErr(p("nope/x"), os.O_CREATE|os.O_WRONLY), syscall.ENOENT},
		{"link dir", unix.Link(p("d"), p("dlink")), syscall.EPERM},
		{"link onto existing", unix.Link(p("f"), p("d/sub/g")), syscall.EEXIST},
		{"link missing", unix.Link(p("nope"), p("x")), syscall.ENOENT},
		{"symlink existing", unix.Symlink("x", p("f")), syscall.EEXIST},
		{"readlink file", readlinkErr(p("f")), syscall.EINVAL},
		{"rename missing", unix.Rename(p("nope"), p("x")), syscall.ENOENT},
		{"rename dir into itself", unix.Rename(p("d"), p("d/sub/x")), syscall.EINVAL},
		{"rename file over dir", unix.Rename(p("f"), p("d")), syscall.EISDIR},
		{"rename dir over file", unix.Rename(p("d"), p("f")), syscall.ENOTDIR},
		{"rename dir over non-empty dir", unix.Rename(p("new"), p("d")), syscall.ENOTEMPTY},
		{"truncate dir", unix.Truncate(p("d"), 0), syscall.EISDIR},
		{"getxattr missing", getxattrErr(p("f"), "user.none"), syscall.ENODATA},
		{"removexattr missing", unix.Removexattr(p("f"), "user.none"), syscall.ENODATA},
		{"setxattr replace missing", unix.Setxattr(p("f"), "user.none", []byte("v"), unix.XATTR_REPLACE), syscall.ENODATA},
		{"chmod missing", unix.Chmod(p("nope"), 0o644), syscall.ENOENT},
	} {
		wantErrno(t, tc.what, tc.err, tc.want)
	}
	must(t, unix.Setxattr(p("f"), "user.k", []byte("v"), 0))
	wantErrno(t, "setxattr create existing", unix.Setxattr(p("f"), "user.k", []byte("w"), unix.XATTR_CREATE), syscall.EEXIST)
	// A write through a read-only descriptor is refused.
	fd, err := unix.Open(p("f"), unix.O_RDONLY, 0)
	must(t, err)
	_, err = unix.Write(fd, []byte("x"))
	wantErrno(t, "write to O_RDONLY", err, syscall.EBADF)
	unix.Close(fd)
}

func openErr(path string, flags int) error {
	fd, err := unix.Open(path, flags, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func readlinkErr(path string) error {
	_, err := os.Readlink(path)
	return err
}

func getxattrErr(path, name string) error {
	_, err := unix.Getxattr(path, name, make([]byte, 64))
	return err
}

// TestAttributes checks what stat(2) shows: inode numbers from the
// database, link counts, blocks, nanosecond times, owners and modes, and
// setattr (chmod, chown, utimens, truncate).
func TestAttributes(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	writeFile(t, fx.p("f"), strings.Repeat("x", 5000))
	must(t, os.Mkdir(fx.p("d"), 0o750))
	var st unix.Stat_t
	must(t, unix.Lstat(fx.p("f"), &st))
	if st.Nlink != 1 || st.Size != 5000 || st.Blocks != 16 || st.Blksize != 4096 || st.Mode != unix.S_IFREG|0o644 {
		t.Errorf("stat f: nlink %d size %d blocks %d blksize %d mode %o", st.Nlink, st.Size, st.Blocks, st.Blksize, st.Mode)
	}
	// The inode number is the database's.
	a := openSecond(t, fx)
	dbst, err := a.FS.Lstat(ctx, "/f")
	must(t, err)
	if st.Ino != uint64(dbst.Ino) {
		t.Errorf("ino: mount %d, database %d", st.Ino, dbst.Ino)
	}
	var dst unix.Stat_t
	must(t, unix.Lstat(fx.p("d"), &dst))
	if dst.Mode != unix.S_IFDIR|0o750 || dst.Nlink < 1 {
		t.Errorf("stat d: mode %o nlink %d", dst.Mode, dst.Nlink)
	}
	// Nanosecond times.
	ts := []unix.Timespec{{Sec: 1_000_000_000, Nsec: 123456789}, {Sec: 1_500_000_000, Nsec: 987654321}}
	must(t, unix.UtimesNano(fx.p("f"), ts))
	must(t, unix.Lstat(fx.p("f"), &st))
	if st.Atim != ts[0] || st.Mtim != ts[1] {
		t.Errorf("utimens: atime %v mtime %v, want %v %v", st.Atim, st.Mtim, ts[0], ts[1])
	}
	// UTIME_NOW and UTIME_OMIT.
	before := time.Now().Add(-2 * time.Second)
	must(t, unix.UtimesNanoAt(unix.AT_FDCWD, fx.p("f"), []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}, 0))
	must(t, unix.Lstat(fx.p("f"), &st))
	if st.Atim != ts[0] || time.Unix(st.Mtim.Unix()).Before(before) {
		t.Errorf("utimens omit/now: atime %v mtime %v", st.Atim, st.Mtim)
	}
	must(t, os.Chmod(fx.p("f"), 0o4755))
	must(t, os.Chown(fx.p("f"), 1234, 5678))
	must(t, unix.Lstat(fx.p("f"), &st))
	if st.Mode != unix.S_IFREG|0o755&^0 && st.Mode&0o777 != 0o755 || st.Uid != 1234 || st.Gid != 5678 {
		t.Errorf("chmod/chown: mode %o uid %d gid %d", st.Mode, st.Uid, st.Gid)
	}
	// Symlink ownership (lchown) and times.
	must(t, os.Symlink("f", fx.p("l")))
	must(t, os.Lchown(fx.p("l"), 42, 43))
	must(t, unix.Lstat(fx.p("l"), &st))
	if st.Uid != 42 || st.Gid != 43 || st.Mode&unix.S_IFMT != unix.S_IFLNK || st.Size != 1 {
		t.Errorf("lchown: %+v", st)
	}
	// Truncate: shrink, grow (zeros), through a descriptor too.
	must(t, os.Truncate(fx.p("f"), 3))
	if got := readFile(t, fx.p("f")); got != "xxx" {
		t.Errorf("after truncate: %q", got)
	}
	must(t, os.Truncate(fx.p("f"), 6))
	if got := readFile(t, fx.p("f")); got != "xxx\x00\x00\x00" {
		t.Errorf("after growing: %q", got)
	}
	fh, err := os.OpenFile(fx.p("f"), os.O_RDWR, 0)
	must(t, err)
	must(t, fh.Truncate(1))
	must(t, fh.Close())
	if got := readFile(t, fx.p("f")); got != "x" {
		t.Errorf("after ftruncate: %q", got)
	}
	// The creator owns new files.
	writeFile(t, fx.p("mine"), "")
	must(t, unix.Lstat(fx.p("mine"), &st))
	if st.Uid != uint32(os.Geteuid()) || st.Gid != uint32(os.Getegid()) {
		t.Errorf("new file owned by %d:%d", st.Uid, st.Gid)
	}
}

// openSecond opens the mounted database a second time, as another process
// would (its own connection).
func openSecond(t testing.TB, fx *fixture) *core.Agent {
	t.Helper()
	a, err := core.Open(context.Background(), fx.db, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestDirectoryLinkCount: stat(2) of a directory through the mount shows
// 2 links plus one per subdirectory, as on a disk filesystem (what
// pjdfstest and find's leaf optimisation expect), following mkdir, rmdir
// and rename; the database keeps 1 for directories (the AgentFS format)
// and stays clean for fsck.
func TestDirectoryLinkCount(t *testing.T) {
	fx := mountT(t)
	for _, d := range []string{"d", "d/a", "d/b", "d/c", "e"} {
		must(t, os.Mkdir(fx.p(d), 0o755))
	}
	writeFile(t, fx.p("d/f"), "x")
	links := func(name string) uint64 {
		t.Helper()
		var st unix.Stat_t
		must(t, unix.Lstat(fx.p(name), &st))
		return uint64(st.Nlink) // uint32 on arm64, uint64 on amd64
	}
	if n := links("d"); n != 5 {
		t.Errorf("nlink of a directory with 3 subdirectories: %d, want 5", n)
	}
	if n := links("d/a"); n != 2 {
		t.Errorf("nlink of an empty directory: %d, want 2", n)
	}
	if n := links(""); n != 4 {
		t.Errorf("nlink of the root with 2 subdirectories: %d, want 4", n)
	}
	if out, err := exec.Command("stat", "-c", "%h", fx.p("d")).Output(); err == nil && strings.TrimSpace(string(out)) != "5" {
		t.Errorf("stat -c %%h d: %q, want 5", out)
	}
	must(t, os.Remove(fx.p("d/c")))
	if n := links("d"); n != 4 {
		t.Errorf("nlink after rmdir: %d, want 4", n)
	}
	must(t, os.Rename(fx.p("d/b"), fx.p("e/b")))
	if n := links("d"); n != 3 {
		t.Errorf("nlink after a subdirectory was renamed out: %d, want 3", n)
	}
	if n := links("e"); n != 3 {
		t.Errorf("nlink of the directory it was renamed into: %d, want 3", n)
	}
	// A listing (readdir-plus) gives the kernel the same counts.
	ents, err := os.ReadDir(fx.dir)
	must(t, err)
	for _, e := range ents {
		if e.Name() == "d" {
			fi, err := e.Info()
			must(t, err)
			if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 3 {
				t.Errorf("nlink of d after a listing: %d, want 3", n)
			}
		}
	}
	fx.stop(t)
	a := openSecond(t, fx)
	var wrong int64
	must(t, a.DB.Do(t.Context(), func(c *store.Conn) error {
		return c.QueryRow("SELECT count(*) FROM fs_inode WHERE (mode & 61440) = 16384 AND nlink <> 1").Scan(&wrong)
	}))
	if wrong != 0 {
		t.Errorf("%d directories stored with nlink other than 1 (the AgentFS format keeps 1)", wrong)
	}
	rep, err := a.Fsck(t.Context(), false)
	must(t, err)
	if !rep.Clean() {
		t.Errorf("fsck: %+v", rep.Problems)
	}
}

// TestOpenFlags covers O_CREAT, O_EXCL, O_TRUNC and O_APPEND.
func TestOpenFlags(t *testing.T) {
	fx := mountT(t)
	f := fx.p("f")
	fd, err := unix.Open(f, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o600)
	must(t, err)
	unix.Write(fd, []byte("hello world"))
	unix.Close(fd)
	var st unix.Stat_t
	must(t, unix.Stat(f, &st))
	if st.Mode&0o777 != 0o600 || st.Size != 11 {
		t.Errorf("created: mode %o size %d", st.Mode, st.Size)
	}
	// O_APPEND writes at the end, whatever the offset.
	fd, err = unix.Open(f, unix.O_WRONLY|unix.O_APPEND, 0)
	must(t, err)
	unix.Seek(fd, 0, io.SeekStart)
	unix.Write(fd, []byte("!"))
	unix.Write(fd, []byte("?"))
	unix.Close(fd)
	if got := readFile(t, f); got != "hello world!?" {
		t.Errorf("append: %q", got)
	}
	// Two appenders interleave without overwriting each other.
	a1, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	a2, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	a1.WriteString("1")
	a2.WriteString("2")
	a1.WriteString("3")
	a1.Close()
	a2.Close()
	if got := readFile(t, f); got != "hello world!?123" {
		t.Errorf("two appenders: %q", got)
	}
	// O_TRUNC empties.
	fd, err = unix.Open(f, unix.O_RDWR|unix.O_TRUNC, 0)
	must(t, err)
	unix.Write(fd, []byte("new"))
	unix.Close(fd)
	if got := readFile(t, f); got != "new" {
		t.Errorf("trunc: %q", got)
	}
	// O_CREAT without O_EXCL opens the existing file.
	fd, err = unix.Open(f, unix.O_CREAT|unix.O_RDWR, 0o644)
	must(t, err)
	buf := make([]byte, 10)
	n, _ := unix.Read(fd, buf)
	unix.Close(fd)
	if string(buf[:n]) != "new" {
		t.Errorf("O_CREAT on existing: %q", buf[:n])
	}
	// Write-only descriptors work with the writeback cache (partial pages
	// are read back by the kernel).
	fd, err = unix.Open(f, unix.O_WRONLY, 0)
	must(t, err)
	unix.Pwrite(fd, []byte("N"), 0)
	must(t, unix.Fsync(fd))
	unix.Close(fd)
	if got := readFile(t, f); got != "New" {
		t.Errorf("write-only pwrite: %q", got)
	}
}

// TestSparseAndLarge reads holes as zeros and moves megabytes through
// requests of up to MaxWrite.
func TestSparseAndLarge(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	f, err := os.Create(fx.p("sparse"))
	must(t, err)
	_, err = f.WriteAt([]byte("end"), 10<<20)
	must(t, err)
	must(t, f.Close())
	fd, err := unix.Open(fx.p("sparse"), unix.O_RDONLY, 0)
	must(t, err)
	buf := make([]byte, 4096)
	n, err := unix.Pread(fd, buf, 5<<20)
	must(t, err)
	if n != 4096 || !bytes.Equal(buf, make([]byte, 4096)) {
		t.Errorf("pread in hole: %d bytes, zero %v", n, bytes.Equal(buf[:n], make([]byte, n)))
	}
	n, err = unix.Pread(fd, buf, 10<<20)
	must(t, err)
	if string(buf[:n]) != "end" {
		t.Errorf("pread at end: %q", buf[:n])
	}
	n, err = unix.Pread(fd, buf, 20<<20)
	if n != 0 || err != nil {
		t.Errorf("pread past EOF: %d, %v", n, err)
	}
	unix.Close(fd)
	var st unix.Stat_t
	must(t, unix.Stat(fx.p("sparse"), &st))
	if st.Size != 10<<20+3 {
		t.Errorf("sparse size %d", st.Size)
	}
	// 8 MiB of random data, written in odd-sized pieces.
	data := make([]byte, 8<<20+123)
	rand.Read(data)
	f, err = os.Create(fx.p("big"))
	must(t, err)
	for off := 0; off < len(data); {
		n := min(len(data)-off, 777_777)
		_, err := f.Write(data[off : off+n])
		must(t, err)
		off += n
	}
	must(t, f.Close())
	if got, err := os.ReadFile(fx.p("big")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("big file differs (%v)", err)
	}
	// What the database holds is the same (another connection).
	a := openSecond(t, fx)
	got, err := a.FS.ReadFile(ctx, "/big")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Errorf("database copy of big file differs")
	}
}

// TestUnlinkedOpen: a file keeps working while open after its last name
// is gone, and disappears from the database at the last close.
func TestUnlinkedOpen(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	writeFile(t, fx.p("f"), "before")
	a := openSecond(t, fx)
	st, err := a.FS.Lstat(ctx, "/f")
	must(t, err)
	f, err := os.OpenFile(fx.p("f"), os.O_RDWR, 0)
	must(t, err)
	must(t, os.Remove(fx.p("f")))
	if _, err := os.Lstat(fx.p("f")); !os.IsNotExist(err) {
		t.Fatalf("lstat after unlink: %v", err)
	}
	_, err = f.WriteAt([]byte("AFTER"), 0)
	must(t, err)
	must(t, f.Sync())
	buf := make([]byte, 6)
	_, err = f.ReadAt(buf, 0)
	must(t, err)
	if string(buf) != "AFTERe" {
		t.Errorf("read after unlink: %q", buf)
	}
	fi, err := f.Stat()
	must(t, err)
	if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 0 {
		t.Errorf("fstat nlink after unlink: %d", n)
	}
	// Still in the database while open (nlink 0).
	if got, err := a.FS.StatIno(ctx, st.Ino); err != nil || got.Nlink != 0 {
		t.Errorf("database while open: %+v, %v", got, err)
	}
	must(t, f.Close())
	eventually(t, "inode purged after last close", 5*time.Second, func() bool {
		_, err := a.FS.StatIno(ctx, st.Ino)
		return vfs.Errno(err) == syscall.ENOENT
	})
}

// TestRename covers replace, RENAME_NOREPLACE and RENAME_EXCHANGE of files
// and directories, across directories.
func TestRename(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	p := fx.p
	must(t, os.MkdirAll(p("a/x"), 0o755))
	must(t, os.MkdirAll(p("b"), 0o755))
	writeFile(t, p("a/f"), "F")
	writeFile(t, p("b/g"), "G")
	writeFile(t, p("a/x/inner"), "I")
	// Plain rename replaces.
	must(t, os.Rename(p("a/f"), p("b/g")))
	if got := readFile(t, p("b/g")); got != "F" {
		t.Errorf("replace: %q", got)
	}
	if _, err := os.Lstat(p("a/f")); !os.IsNotExist(err) {
		t.Errorf("old name still there: %v", err)
	}
	writeFile(t, p("a/f"), "F2")
	wantErrno(t, "noreplace onto existing", unix.Renameat2(unix.AT_FDCWD, p("a/f"), unix.AT_FDCWD, p("b/g"), unix.RENAME_NOREPLACE), syscall.EEXIST)
	must(t, unix.Renameat2(unix.AT_FDCWD, p("a/f"), unix.AT_FDCWD, p("b/new"), unix.RENAME_NOREPLACE))
	// Exchange a file and a directory across directories.
	must(t, unix.Renameat2(unix.AT_FDCWD, p("b/new"), unix.AT_FDCWD, p("a/x"), unix.RENAME_EXCHANGE))
	if got := readFile(t, p("a/x")); got != "F2" {
		t.Errorf("exchange: a/x = %q", got)
	}
	if got := readFile(t, p("b/new/inner")); got != "I" {
		t.Errorf("exchange: b/new/inner = %q", got)
	}
	wantErrno(t, "exchange with missing", unix.Renameat2(unix.AT_FDCWD, p("a/x"), unix.AT_FDCWD, p("b/missing"), unix.RENAME_EXCHANGE), syscall.ENOENT)
	wantErrno(t, "noreplace|exchange", unix.Renameat2(unix.AT_FDCWD, p("a/x"), unix.AT_FDCWD, p("b/g"), unix.RENAME_EXCHANGE|unix.RENAME_NOREPLACE), syscall.EINVAL)
	// A directory moves with its contents; an empty directory can be
	// replaced.
	must(t, os.Mkdir(p("emptydir"), 0o755))
	must(t, unix.Rename(p("b/new"), p("emptydir"))) // os.Rename refuses an existing directory
	if got := readFile(t, p("emptydir/inner")); got != "I" {
		t.Errorf("dir rename: %q", got)
	}
	names, _ := os.ReadDir(p("b"))
	if len(names) != 1 || names[0].Name() != "g" {
		t.Errorf("b after renames: %v", names)
	}
	// The database agrees once the renames are committed (group
	// commit: within mount.DefaultCommitDelay).
	a := openSecond(t, fx)
	want := []string{"/", "/a", "/a/x", "/b", "/b/g", "/emptydir", "/emptydir/inner"}
	var paths []string
	eventually(t, "renames committed", commitBound, func() bool {
		var err error
		paths, err = a.FS.Paths(ctx)
		must(t, err)
		return slices.Equal(paths, want)
	})
}

// commitBound is how long a change through the mount may take to reach
// the database (group commit), with slack for a loaded machine.
const commitBound = mount.DefaultCommitDelay + 2*time.Second

// TestLinksAndSymlinks: hard links across directories share an inode;
// symbolic links resolve; mkfifo makes a working FIFO.
func TestLinksAndSymlinks(t *testing.T) {
	fx := mountT(t)
	p := fx.p
	must(t, os.Mkdir(p("a"), 0o755))
	must(t, os.Mkdir(p("b"), 0o755))
	writeFile(t, p("a/f"), "one")
	must(t, os.Link(p("a/f"), p("b/g")))
	var s1, s2 unix.Stat_t
	must(t, unix.Stat(p("a/f"), &s1))
	must(t, unix.Stat(p("b/g"), &s2))
	if s1.Ino != s2.Ino || s1.Nlink != 2 || s2.Nlink != 2 {
		t.Errorf("hard link: ino %d/%d nlink %d/%d", s1.Ino, s2.Ino, s1.Nlink, s2.Nlink)
	}
	writeFile(t, p("b/g"), "two")
	if got := readFile(t, p("a/f")); got != "two" {
		t.Errorf("write through the other link: %q", got)
	}
	must(t, os.Remove(p("a/f")))
	must(t, unix.Stat(p("b/g"), &s2))
	if s2.Nlink != 1 {
		t.Errorf("nlink after unlink: %d", s2.Nlink)
	}
	// Symlinks.
	must(t, os.Symlink("../b/g", p("a/l")))
	if got, err := os.Readlink(p("a/l")); err != nil || got != "../b/g" {
		t.Errorf("readlink: %q %v", got, err)
	}
	if got := readFile(t, p("a/l")); got != "two" {
		t.Errorf("through symlink: %q", got)
	}
	must(t, os.Symlink("dangling", p("a/d")))
	if _, err := os.Stat(p("a/d")); !os.IsNotExist(err) {
		t.Errorf("stat dangling: %v", err)
	}
	// FIFO.
	must(t, unix.Mkfifo(p("fifo"), 0o644))
	var st unix.Stat_t
	must(t, unix.Lstat(p("fifo"), &st))
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Fatalf("mkfifo made mode %o", st.Mode)
	}
	fifo, err := os.OpenFile(p("fifo"), os.O_RDWR, 0)
	must(t, err)
	fifo.Write([]byte("through the pipe"))
	buf := make([]byte, 64)
	n, _ := fifo.Read(buf)
	fifo.Close()
	if string(buf[:n]) != "through the pipe" {
		t.Errorf("fifo read %q", buf[:n])
	}
	// mknod of a regular file and a character device (the mount is
	// nodev: it can be made, not opened).
	must(t, unix.Mknod(p("reg"), unix.S_IFREG|0o600, 0))
	must(t, unix.Mknod(p("chr"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	must(t, unix.Lstat(p("chr"), &st))
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
		t.Errorf("mknod chr: mode %o rdev %x", st.Mode, st.Rdev)
	}
}

// TestXattrsAndStatfs covers the extended attribute calls (with the size
// queries of a zero-length buffer) and statfs.
func TestXattrsAndStatfs(t *testing.T) {
	fx := mountT(t)
	f := fx.p("f")
	writeFile(t, f, "")
	must(t, unix.Setxattr(f, "user.a", []byte("alpha"), 0))
	must(t, unix.Setxattr(f, "user.b", []byte{}, 0))
	must(t, unix.Setxattr(f, "user.a", []byte("ALPHA"), unix.XATTR_REPLACE))
	n, err := unix.Getxattr(f, "user.a", nil)
	if err != nil || n != 5 {
		t.Errorf("getxattr size query: %d %v", n, err)
	}
	buf := make([]byte, 2)
	_, err = unix.Getxattr(f, "user.a", buf)
	wantErrno(t, "getxattr small buffer", err, syscall.ERANGE)
	buf = make([]byte, 64)
	n, err = unix.Getxattr(f, "user.a", buf)
	if err != nil || string(buf[:n]) != "ALPHA" {
		t.Errorf("getxattr: %q %v", buf[:n], err)
	}
	n, err = unix.Listxattr(f, nil)
	if err != nil || n != len("user.a\x00user.b\x00") {
		t.Errorf("listxattr size: %d %v", n, err)
	}
	n, err = unix.Listxattr(f, buf)
	if err != nil || string(buf[:n]) != "user.a\x00user.b\x00" {
		t.Errorf("listxattr: %q %v", buf[:n], err)
	}
	must(t, unix.Removexattr(f, "user.a"))
	n, _ = unix.Listxattr(f, buf)
	if string(buf[:n]) != "user.b\x00" {
		t.Errorf("after removexattr: %q", buf[:n])
	}
	// Directories and symlinks (lsetxattr on a symlink is refused for
	// user.* by the kernel; trusted.* works as root).
	must(t, os.Mkdir(fx.p("d"), 0o755))
	must(t, unix.Setxattr(fx.p("d"), "user.dir", []byte("1"), 0))
	var sfs unix.Statfs_t
	must(t, unix.Statfs(fx.dir, &sfs))
	if sfs.Bsize != 4096 || sfs.Namelen != 255 || sfs.Blocks == 0 || sfs.Files == 0 {
		t.Errorf("statfs: %+v", sfs)
	}
	if sfs.Type != 0x65735546 { // FUSE_SUPER_MAGIC
		t.Errorf("statfs type %x", sfs.Type)
	}
}

// TestReaddir lists a large directory (several READDIRPLUS requests) and
// checks names and types, rewinddir included.
func TestReaddir(t *testing.T) {
	fx := mountT(t)
	var want []string
	for i := range 600 {
		name := fmt.Sprintf("file-%04d-%s", i, strings.Repeat("n", i%50))
		want = append(want, name)
		writeFile(t, fx.p(name), "")
	}
	must(t, os.Mkdir(fx.p("zdir"), 0o755))
	must(t, os.Symlink("x", fx.p("zlink")))
	want = append(want, "zdir", "zlink")
	sort.Strings(want)
	d, err := os.Open(fx.dir)
	must(t, err)
	defer d.Close()
	for round := range 2 {
		es, err := d.ReadDir(-1)
		must(t, err)
		var got []string
		for _, e := range es {
			got = append(got, e.Name())
			typ := e.Type()
			switch {
			case e.Name() == "zdir" && !typ.IsDir(), e.Name() == "zlink" && typ&os.ModeSymlink == 0,
				strings.HasPrefix(e.Name(), "file-") && !typ.IsRegular():
				t.Errorf("type of %s: %v", e.Name(), typ)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: readdir gave %d names, want %d", round, len(got), len(want))
		}
		_, err = d.Seek(0, io.SeekStart)
		must(t, err)
	}
	// Changes through the mount show in the next listing (the kernel
	// keeps listings and drops them on changes), read here in small
	// pieces by a second descriptor.
	for _, name := range want[:10] {
		must(t, os.Remove(fx.p(name)))
	}
	want = want[10:]
	for i := range 5 {
		name := fmt.Sprintf("added-%d", i)
		writeFile(t, fx.p(name), "")
		want = append(want, name)
	}
	sort.Strings(want)
	fd, err := unix.Open(fx.dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	var got []string
	for buf := make([]byte, 512); ; {
		n, err := unix.Getdents(fd, buf)
		must(t, err)
		if n == 0 {
			break
		}
		_, _, got = unix.ParseDirent(buf[:n], -1, got)
	}
	unix.Close(fd)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("after changes: readdir gave %d names, want %d", len(got), len(want))
	}
	// "." and ".." are listed.
	raw := make([]byte, 1<<16)
	fd, err = unix.Open(fx.p("zdir"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	n, err := unix.Getdents(fd, raw)
	unix.Close(fd)
	must(t, err)
	var names []string
	_, _, names = unix.ParseDirent(raw[:n], -1, names)
	if len(names) != 0 { // ParseDirent drops "." and ".."
		t.Errorf("empty dir lists %v", names)
	}
	if n == 0 {
		t.Errorf("getdents of an empty directory returned nothing (no . and ..)")
	}
}

// TestMmap writes through a shared mapping and reads through a private
// one; the data reaches the database at msync.
func TestMmap(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	const size = 3*4096 + 100
	writeFile(t, fx.p("m"), strings.Repeat("a", size))
	fd, err := unix.Open(fx.p("m"), unix.O_RDWR, 0)
	must(t, err)
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	must(t, err)
	if mem[0] != 'a' || mem[size-1] != 'a' {
		t.Errorf("mapped content %q...%q", mem[0], mem[size-1])
	}
	copy(mem[4096:], "written through mmap")
	must(t, unix.Msync(mem, unix.MS_SYNC))
	must(t, unix.Munmap(mem))
	unix.Close(fd)
	got := readFile(t, fx.p("m"))
	if got[4096:4096+20] != "written through mmap" || len(got) != size {
		t.Errorf("after mmap write: %q (len %d)", got[4090:4120], len(got))
	}
	a := openSecond(t, fx)
	db, err := a.FS.ReadFile(ctx, "/m")
	must(t, err)
	if string(db) != got {
		t.Errorf("database differs from the mapped file")
	}
	// Read-only private mapping.
	fd, err = unix.Open(fx.p("m"), unix.O_RDONLY, 0)
	must(t, err)
	mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_PRIVATE)
	must(t, err)
	if string(mem[4096:4096+20]) != "written through mmap" {
		t.Errorf("private mapping: %q", mem[4096:4116])
	}
	unix.Munmap(mem)
	unix.Close(fd)
}

// TestOtherProcessWrites: the database stays usable beside the mount.
// A second connection's changes become visible through the mount within
// the watcher's bound (mount.DefaultPollInterval and the time to compare;
// the kernel's own caches last mount.DefaultTimeout, much longer), and
// writes through the mount are visible to it once the file is closed.
func TestOtherProcessWrites(t *testing.T) {
	ctx := t.Context()
	fx := mountT(t)
	a := openSecond(t, fx)
	// Prime the kernel's caches: attributes, entries, a negative entry
	// and the page cache.
	writeFile(t, fx.p("cached"), "old content")
	readFile(t, fx.p("cached"))
	must(t, os.Mkdir(fx.p("dir"), 0o755))
	if _, err := os.Stat(fx.p("new")); !os.IsNotExist(err) {
		t.Fatal(err)
	}
	writeFile(t, fx.p("gone"), "x")
	readFile(t, fx.p("gone"))

	// A liveness bound, not a speed claim: the watcher polls every
	// DefaultPollInterval; the slack covers a loaded 2-core machine.
	bound := mount.DefaultPollInterval + 30*time.Second
	must(t, a.FS.WriteFile(ctx, "/new", []byte("from the SDK"), vfs.WriteOptions{}))
	must(t, a.FS.WriteFile(ctx, "/cached", []byte("new and longer content"), vfs.WriteOptions{}))
	must(t, a.FS.Unlink(ctx, "/gone"))
	must(t, a.FS.Chmod(ctx, "/dir", 0o700))
	start := time.Now()
	eventually(t, "new file visible", bound, func() bool {
		b, err := os.ReadFile(fx.p("new"))
		return err == nil && string(b) == "from the SDK"
	})
	eventually(t, "changed file visible", bound-time.Since(start), func() bool {
		b, err := os.ReadFile(fx.p("cached"))
		return err == nil && string(b) == "new and longer content"
	})
	eventually(t, "removed file gone", bound-time.Since(start), func() bool {
		_, err := os.Lstat(fx.p("gone"))
		return os.IsNotExist(err)
	})
	eventually(t, "chmod visible", bound-time.Since(start), func() bool {
		fi, err := os.Stat(fx.p("dir"))
		return err == nil && fi.Mode().Perm() == 0o700
	})
	t.Logf("changes by another connection visible through the mount after %v", time.Since(start))

	// The other way: what a program closed is committed when close(2)
	// returns; other changes within the group commit delay.
	writeFile(t, fx.p("from-mount"), "hello")
	if got, err := a.FS.ReadFile(ctx, "/from-mount"); err != nil || string(got) != "hello" {
		t.Errorf("second connection reads %q, %v", got, err)
	}
	must(t, os.Rename(fx.p("from-mount"), fx.p("dir/renamed")))
	took := eventually(t, "rename visible", commitBound, func() bool {
		_, err := a.FS.Lstat(ctx, "/dir/renamed")
		return err == nil
	})
	t.Logf("a rename through the mount reached the database after %v", took)
	// A file kept open: its writes are visible after fsync.
	f, err := os.OpenFile(fx.p("open"), os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	f.WriteString("kept open")
	must(t, f.Sync())
	if got, err := a.FS.ReadFile(ctx, "/open"); err != nil || string(got) != "kept open" {
		t.Errorf("after fsync the database has %q, %v", got, err)
	}
	f.Close()
}

// TestParallel runs many writers and readers at once through the mount.
func TestParallel(t *testing.T) {
	fx := mountT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := fx.p(fmt.Sprintf("w%d", w))
			if err := os.Mkdir(dir, 0o755); err != nil {
				errs <- err
				return
			}
			for i := range 50 {
				name := filepath.Join(dir, fmt.Sprintf("f%d", i))
				content := strings.Repeat(fmt.Sprint(w, i), 100)
				if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
					errs <- err
					return
				}
				b, err := os.ReadFile(name)
				if err != nil || string(b) != content {
					errs <- fmt.Errorf("%s: %v", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range 8 {
		es, err := os.ReadDir(fx.p(fmt.Sprintf("w%d", w)))
		if err != nil || len(es) != 50 {
			t.Errorf("w%d: %d entries, %v", w, len(es), err)
		}
	}
}

// TestSetIDBits: the server clears set-user-ID and set-group-ID bits as
// Linux does (it tells the kernel it handles this, which saves round
// trips): on chown always, on write and truncate only by a process without
// CAP_FSETID; set-group-ID only on group-executable files.
func TestSetIDBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to write as another user")
	}
	fx := mountT(t, "AGENTFS_MOUNT_TEST_ALLOW_OTHER=1")
	must(t, os.Chmod(filepath.Dir(fx.dir), 0o755)) // let nobody reach the mount
	mode := func(name string) uint32 {
		t.Helper()
		var st unix.Stat_t
		must(t, unix.Stat(fx.p(name), &st))
		return st.Mode & 0o7777
	}
	// asNobody runs a shell command as uid/gid 65534 in the mount.
	asNobody := func(cmdline string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", "cd "+fx.dir+" && "+cmdline)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s as nobody: %v\n%s", cmdline, err, out)
		}
	}
	for _, tc := range []struct {
		name      string
		mode      uint32
		op        func(name string)
		wantAfter uint32
	}{
		{"chown", 0o6775, func(n string) { must(t, os.Chown(fx.p(n), 0, 0)) }, 0o775},
		{"chown-sgid-no-gx", 0o6764, func(n string) { must(t, os.Chown(fx.p(n), 0, 0)) }, 0o2764},
		{"root-write", 0o6777, func(n string) { writeFile(t, fx.p(n), "root") }, 0o6777},
		{"write", 0o6777, func(n string) { asNobody("printf x >> " + n) }, 0o777},
		{"write-sgid-no-gx", 0o6766, func(n string) { asNobody("printf x >> " + n) }, 0o2766},
		{"truncate", 0o4777, func(n string) { asNobody(": > " + n) }, 0o777},
		{"dir-chown", 0o2775, func(n string) { must(t, os.Chown(fx.p(n), 0, 0)) }, 0o2775},
	} {
		if tc.name == "dir-chown" {
			must(t, os.Mkdir(fx.p(tc.name), 0o755))
		} else {
			writeFile(t, fx.p(tc.name), "data")
		}
		must(t, unix.Chmod(fx.p(tc.name), tc.mode))
		if got := mode(tc.name); got != tc.mode {
			t.Fatalf("%s: chmod gave %o", tc.name, got)
		}
		tc.op(tc.name)
		if got := mode(tc.name); got != tc.wantAfter {
			t.Errorf("%s: mode %o after, want %o", tc.name, got, tc.wantAfter)
		}
	}
}
