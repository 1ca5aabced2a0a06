package vfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// stream yields n deterministic bytes (seeded) without holding them, and
// hashes them as they go; after fail bytes (when fail > 0) it returns
// failErr instead, and it calls onRead with the bytes produced so far
// after every read. The bytes are a 64 KiB seeded block repeated, with
// the offset stamped every 4 KiB so that no two chunks are alike; copies
// keep it cheap under -race, where a loop per byte is not.
type stream struct {
	n, off  int64
	block   []byte
	h       hashWriter
	fail    int64
	failErr error
	onRead  func(off int64)
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

const streamBlock = 64 << 10

func newStream(n int64, seed uint64) *stream {
	s := &stream{n: n, block: make([]byte, streamBlock), h: sha256.New()}
	x := seed*0x9E3779B97F4A7C15 | 1
	for i := 0; i < streamBlock; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(s.block[i:], x)
	}
	return s
}

func (s *stream) Read(p []byte) (int, error) {
	if s.fail > 0 && s.off >= s.fail {
		return 0, s.failErr
	}
	if s.off >= s.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n-s.off, 1<<20)]
	for i := 0; i < len(p); {
		i += copy(p[i:], s.block[(s.off+int64(i))%streamBlock:])
	}
	end := s.off + int64(len(p))
	for a := (s.off + 4095) / 4096 * 4096; a+8 <= end; a += 4096 {
		binary.LittleEndian.PutUint64(p[a-s.off:], uint64(a))
	}
	s.h.Write(p)
	s.off += int64(len(p))
	if s.onRead != nil {
		s.onRead(s.off)
	}
	return len(p), nil
}

// fileHash hashes a file read through a handle in 1 MiB pieces (so a
// large file is never whole in memory) and returns its size.
func fileHash(t testing.TB, f *vfs.FS, path string) ([]byte, int64) {
	t.Helper()
	h, err := f.Open(ctx, path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer h.Close()
	sum := sha256.New()
	n, err := io.CopyBuffer(sum, h, make([]byte, 1<<20))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return sum.Sum(nil), n
}

func wantHash(t testing.TB, f *vfs.FS, path string, want []byte, size int64) {
	t.Helper()
	got, n := fileHash(t, f, path)
	if n != size || string(got) != string(want) {
		t.Errorf("%s: %d bytes, hash %x; want %d bytes, hash %x (old content expected intact, or the new one whole)", path, n, got[:6], size, want[:6])
	}
}

// wantNoStaging checks that no nameless inode is left and fsck is clean.
func wantNoStaging(t testing.TB, a *core.Agent) {
	t.Helper()
	if n := queryInt(t, a, `SELECT COUNT(*) FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)`); n != 0 {
		t.Errorf("%d nameless inodes left (staging not discarded)", n)
	}
	checkIntegrity(t, a)
}

const oldSize = 3<<20 + 777 // the content a failed write must leave

func withOld(t testing.TB) (*core.Agent, []byte) {
	a := openAgent(t)
	old := pattern(oldSize, 7)
	must(t, a.FS.WriteFile(ctx, "/f", old, vfs.WriteOptions{Perm: 0o600}))
	return a, old
}

// TestAttack_Atomic_ReaderFailsKeepsOld: a producer that fails after 20 MiB
// (several staged batches) leaves the old content, and nothing staged.
func TestAttack_Atomic_ReaderFailsKeepsOld(t *testing.T) {
	a, old := withOld(t)
	boom := errors.New("producer died")
	s := newStream(64<<20, 1)
	s.fail, s.failErr = 20<<20, boom
	n, err := a.FS.WriteFileFrom(ctx, "/f", s, vfs.WriteOptions{})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFileFrom = %d, %v; want the reader's error", n, err)
	}
	wantBytes(t, "/f after a failed write", []byte(readFile(t, a.FS, "/f")), old)
	wantNoStaging(t, a)
}

// TestAttack_Atomic_CancelKeepsOld: a context cancelled in the middle of
// the stream leaves the old content.
func TestAttack_Atomic_CancelKeepsOld(t *testing.T) {
	a, old := withOld(t)
	cctx, cancel := context.WithCancel(ctx)
	s := newStream(64<<20, 2)
	s.onRead = func(off int64) {
		if off >= 13<<20 {
			cancel()
		}
	}
	_, err := a.FS.WriteFileFrom(cctx, "/f", s, vfs.WriteOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteFileFrom = %v; want context.Canceled", err)
	}
	wantBytes(t, "/f after a cancelled write", []byte(readFile(t, a.FS, "/f")), old)
	wantNoStaging(t, a)
	// A new file cancelled the same way is not created, nor its parents.
	cctx, cancel = context.WithCancel(ctx)
	s = newStream(64<<20, 3)
	s.onRead = func(off int64) {
		if off >= 9<<20 {
			cancel()
		}
	}
	if _, err := a.FS.WriteFileFrom(cctx, "/new/dir/g", s, vfs.WriteOptions{CreateParents: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteFileFrom(new) = %v; want context.Canceled", err)
	}
	if ok, _ := a.FS.Exists(ctx, "/new"); ok {
		t.Errorf("/new exists after a cancelled write with CreateParents")
	}
	wantNoStaging(t, a)
}

// TestAttack_Atomic_StreamMemoryBounded: a 256 MiB stream is written with
// a bounded heap (sampled at every 8 MiB the producer yields), and reads
// back whole.
func TestAttack_Atomic_StreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("256 MiB")
	}
	a, old := withOld(t)
	const size = 256 << 20
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	s := newStream(size, 4)
	next := int64(0)
	s.onRead = func(off int64) {
		if off < next {
			return
		}
		next = off + 8<<20
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	n, err := a.FS.WriteFileFrom(ctx, "/f", s, vfs.WriteOptions{})
	if runtime.GOOS == "js" && errors.Is(err, syscall.ENOMEM) {
		// The WebAssembly build keeps the whole database (and its
		// rollback journal) in memory: there, 256 MiB may not fit, and
		// what must hold is that the failure loses nothing.
		wantBytes(t, "/f after a write that ran out of memory", []byte(readFile(t, a.FS, "/f")), old)
		wantNoStaging(t, a)
		t.Skipf("out of memory in the in-memory database, old content kept: %v", err)
	}
	if err != nil || n != size {
		t.Fatalf("WriteFileFrom = %d, %v", n, err)
	}
	const bound = 64 << 20
	t.Logf("heap in use: %d MiB before, peak %d MiB during a %d MiB stream", base>>20, peak>>20, size>>20)
	if peak > base+bound {
		t.Errorf("heap in use peaked at %d MiB (%d MiB before): the stream is held in memory (bound %d MiB)", peak>>20, base>>20, bound>>20)
	}
	wantHash(t, a.FS, "/f", s.h.Sum(nil), size)
	wantNoStaging(t, a)
}

// TestAtomic_ReplaceKeepsInode: replacing an existing file from a stream
// keeps what "cat new > file" keeps: inode number, mode, owner, extended
// attributes, hard links and open handles see the new content.
func TestAtomic_ReplaceKeepsInode(t *testing.T) {
	a, _ := withOld(t)
	f := a.FS
	must(t, f.Link(ctx, "/f", "/g"))
	must(t, f.Setxattr(ctx, "/f", "user.k", []byte("v"), 0, true))
	before := lstat(t, f, "/f")
	h, err := f.Open(ctx, "/f", os.O_RDONLY, 0)
	must(t, err)
	defer h.Close()
	s := newStream(9<<20+5, 5)
	if _, err := f.WriteFileFrom(ctx, "/f", s, vfs.WriteOptions{Perm: 0o777}); err != nil {
		t.Fatal(err)
	}
	after := lstat(t, f, "/f")
	if after.Ino != before.Ino || after.Mode != before.Mode || after.Nlink != 2 || after.Size != 9<<20+5 {
		t.Errorf("after the replace: ino %d mode %o nlink %d size %d; want ino %d mode %o nlink 2 size %d",
			after.Ino, after.Mode, after.Nlink, after.Size, before.Ino, before.Mode, 9<<20+5)
	}
	wantHash(t, f, "/g", s.h.Sum(nil), 9<<20+5)
	if hs, err := h.Stat(); err != nil || hs.Size != 9<<20+5 {
		t.Errorf("a handle open before the replace: size %d, %v; want the new size", hs.Size, err)
	}
	if v, err := f.Getxattr(ctx, "/f", "user.k", true); err != nil || string(v) != "v" {
		t.Errorf("xattr after replace = %q, %v", v, err)
	}
	wantNoStaging(t, a)
}

// TestAtomic_CreateChecks: the errors of open(2) come at CreateAtomic,
// and a new file gets opts.Perm (under the umask) and its parents.
func TestAtomic_CreateChecks(t *testing.T) {
	a, _ := withOld(t)
	f := a.FS
	must(t, f.Mkdir(ctx, "/d", 0o755))
	for _, c := range []struct {
		path string
		opts vfs.WriteOptions
		want syscall.Errno
	}{
		{"/d", vfs.WriteOptions{}, syscall.EISDIR},
		{"/f", vfs.WriteOptions{Exclusive: true}, syscall.EEXIST},
		{"/missing/x", vfs.WriteOptions{}, syscall.ENOENT},
		{"/f/x", vfs.WriteOptions{}, syscall.ENOTDIR},
		{"/f", vfs.WriteOptions{Append: true}, syscall.EINVAL},
	} {
		_, err := f.CreateAtomic(ctx, c.path, c.opts)
		wantErrno(t, "CreateAtomic("+c.path+")", err, c.want)
	}
	s := newStream(5<<20, 6)
	if _, err := f.WriteFileFrom(ctx, "/p/q/new", s, vfs.WriteOptions{Perm: 0o640, CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	if st := lstat(t, f, "/p/q/new"); st.Perm() != 0o640 || st.Nlink != 1 || st.Size != 5<<20 {
		t.Errorf("new file: mode %o nlink %d size %d", st.Perm(), st.Nlink, st.Size)
	}
	wantHash(t, f, "/p/q/new", s.h.Sum(nil), 5<<20)
	// A directory made where the file was to go while it was staged: the
	// commit fails, nothing is left.
	w, err := f.CreateAtomic(ctx, "/late", vfs.WriteOptions{})
	must(t, err)
	if _, err := io.Copy(w, newStream(6<<20, 8)); err != nil {
		t.Fatal(err)
	}
	must(t, f.Mkdir(ctx, "/late", 0o755))
	wantErrno(t, "Commit over a new directory", w.Commit(), syscall.EISDIR)
	wantNoStaging(t, a)
}

// TestAttack_Atomic_StagingSurvivesFsckAndReclaim: a staging inode in
// progress is no orphan for fsck (check or repair) nor for the reclaim of
// dead writers; one whose writer is gone is reclaimed at the next
// writable open, and is what fsck reports and repairs before that.
func TestAttack_Atomic_StagingSurvivesFsckAndReclaim(t *testing.T) {
	a, _ := withOld(t)
	f := a.FS
	// A client cannot mark a file of its own as staging.
	wantErrno(t, "setxattr agentfs.staging", f.Setxattr(ctx, "/f", "agentfs.staging", []byte("linux:x:1:1"), 0, true), syscall.EPERM)
	w, err := f.CreateAtomic(ctx, "/f", vfs.WriteOptions{})
	must(t, err)
	s := newStream(10<<20, 9)
	if _, err := io.CopyN(w, s, 9<<20); err != nil {
		t.Fatal(err)
	}
	for _, repair := range []bool{false, true} {
		rep, err := a.Fsck(ctx, repair)
		if err != nil || !rep.Clean() || rep.Repaired != 0 {
			t.Fatalf("fsck(repair=%v) during a staged write: %+v, %v", repair, rep, err)
		}
	}
	if n, err := f.ReclaimStaging(ctx); err != nil || n != 0 {
		t.Fatalf("ReclaimStaging during a staged write = %d, %v; want 0", n, err)
	}
	if _, err := io.Copy(w, s); err != nil {
		t.Fatal(err)
	}
	must(t, w.Commit())
	wantHash(t, f, "/f", s.h.Sum(nil), 10<<20)

	// A dead writer's staging inode: what a kill -9 leaves (made by hand
	// here; core's crash tests make it with a real kill).
	dead := func(tok string) {
		err := a.DB.Write(ctx, func(c *store.Conn) error {
			r, err := c.Exec("INSERT INTO fs_inode (mode, nlink, size, atime, mtime, ctime) VALUES (?, 0, 4, 0, 0, 0)", 0o100644)
			if err != nil {
				return err
			}
			ino, _ := r.LastInsertId()
			if _, err := c.Exec("INSERT INTO fs_data (ino, chunk_index, data) VALUES (?, 0, x'01020304')", ino); err != nil {
				return err
			}
			_, err = c.Exec("INSERT INTO fs_xattr (ino, name, value) VALUES (?, 'agentfs.staging', ?)", ino, []byte(tok))
			return err
		})
		must(t, err)
	}
	dead("linux:another-boot:1:1")
	dead("unix:another-host:1")
	rep, err := a.Fsck(ctx, false)
	must(t, err)
	if len(rep.Problems) != 2 || rep.Problems[0].Rule != "orphan" || !rep.Problems[0].Repairable {
		t.Errorf("fsck with two dead staging inodes: %+v; want 2 repairable orphans", rep.Problems)
	}
	if n, err := f.ReclaimStaging(ctx); err != nil || n != 2 {
		t.Errorf("ReclaimStaging = %d, %v; want 2", n, err)
	}
	wantNoStaging(t, a)
	// And at the next writable open.
	dead("linux:another-boot:1:1")
	path := a.DB.Path()
	must(t, a.Close())
	ro, err := core.Open(ctx, path, core.Options{ReadOnly: true})
	must(t, err)
	if n := queryInt(t, ro, `SELECT COUNT(*) FROM fs_xattr WHERE name = 'agentfs.staging'`); n != 1 {
		t.Errorf("a read-only open changed the staging inodes: %d left, want 1", n)
	}
	must(t, ro.Close())
	b := openAgentAt(t, path)
	wantNoStaging(t, b)
}

// TestAttack_Atomic_HandleWrites: a file opened with OAtomic (what the
// SDKs' streaming writers use through open/pwrite/close) keeps its old
// content while it is written, shows the new one at Close, and keeps the
// old one after Abort.
func TestAttack_Atomic_HandleWrites(t *testing.T) {
	a, old := withOld(t)
	f := a.FS
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC | vfs.OAtomic
	for _, commit := range []bool{false, true} {
		h, err := f.Open(ctx, "/f", flags, 0o644)
		must(t, err)
		s := newStream(9<<20+3, 10)
		buf := make([]byte, 1<<20)
		var off int64
		for {
			n, err := s.Read(buf)
			if n > 0 {
				if _, werr := h.WriteAt(buf[:n], off); werr != nil {
					t.Fatal(werr)
				}
				off += int64(n)
			}
			if err == io.EOF {
				break
			}
			must(t, err)
		}
		wantBytes(t, "/f while an OAtomic handle writes it", []byte(readFile(t, f, "/f")), old)
		if st, err := h.Stat(); err != nil || st.Size != off {
			t.Errorf("Stat of the handle = %d, %v; want %d", st.Size, err, off)
		}
		_, err = h.WriteAt([]byte("x"), 5)
		wantErrno(t, "WriteAt backwards", err, syscall.ESPIPE)
		_, err = h.ReadAt(buf, 0)
		wantErrno(t, "ReadAt", err, syscall.EBADF)
		if !commit {
			must(t, h.Abort())
			wantBytes(t, "/f after Abort", []byte(readFile(t, f, "/f")), old)
			continue
		}
		must(t, h.Close())
		wantHash(t, f, "/f", s.h.Sum(nil), off)
	}
	_, err := f.Open(ctx, "/f", os.O_RDWR|os.O_CREATE|vfs.OAtomic, 0o644)
	wantErrno(t, "OAtomic without O_WRONLY|O_TRUNC", err, syscall.EINVAL)
	wantNoStaging(t, a)
}
