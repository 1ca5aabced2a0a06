package vfs_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/vfs"
)

const cs = 4096 // chunk size of a default database

func TestFS_Open(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/d/f", "hello")
	must(t, f.Symlink(ctx, "d/f", "/lf"))
	must(t, f.Symlink(ctx, "d/new", "/ldang"))
	must(t, f.Symlink(ctx, "d", "/ld"))
	for _, tc := range []struct {
		name  string
		path  string
		flags int
		errno syscall.Errno
	}{
		{"read existing", "/d/f", os.O_RDONLY, 0},
		{"missing", "/d/nope", os.O_RDONLY, syscall.ENOENT},
		{"missing parent", "/nope/x", os.O_RDWR | os.O_CREATE, syscall.ENOENT},
		{"file parent", "/d/f/x", os.O_RDWR | os.O_CREATE, syscall.ENOTDIR},
		{"create", "/d/c1", os.O_RDWR | os.O_CREATE, 0},
		{"create existing", "/d/f", os.O_RDWR | os.O_CREATE, 0},
		{"excl existing", "/d/f", os.O_RDWR | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		{"excl dir", "/d", os.O_RDWR | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		{"excl through symlink", "/lf", os.O_RDWR | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		// O_CREAT|O_EXCL does not follow a final symlink, even a dangling one.
		{"excl dangling symlink", "/ldang", os.O_RDWR | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		{"excl new", "/d/c2", os.O_RDWR | os.O_CREATE | os.O_EXCL, 0},
		{"write dir", "/d", os.O_WRONLY, syscall.EISDIR},
		{"rdwr dir", "/d", os.O_RDWR, syscall.EISDIR},
		{"read dir", "/d", os.O_RDONLY, 0},
		{"create on dir", "/d", os.O_WRONLY | os.O_CREATE, syscall.EISDIR},
		{"trailing slash file", "/d/f/", os.O_RDONLY, syscall.ENOTDIR},
		{"trailing slash create", "/d/c3/", os.O_RDWR | os.O_CREATE, syscall.EISDIR},
		// With O_CREAT, "name/" is EISDIR before anything is looked up.
		{"trailing slash create on a file", "/d/f/", os.O_RDWR | os.O_CREATE, syscall.EISDIR},
		{"trailing slash create on a symlink", "/lf/", os.O_RDONLY | os.O_CREATE, syscall.EISDIR},
		{"trailing slash create on a dir", "/d/", os.O_RDONLY | os.O_CREATE, syscall.EISDIR},
		{"create on a dir read-only", "/d", os.O_RDONLY | os.O_CREATE, syscall.EISDIR},
		{"truncate a dir", "/d", os.O_RDONLY | os.O_TRUNC, syscall.EISDIR},
		{"excl root", "/", os.O_RDONLY | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		{"excl dot dot", "/d/..", os.O_RDWR | os.O_CREATE | os.O_EXCL, syscall.EEXIST},
		{"create under a file", "/d/f/x", os.O_RDWR | os.O_CREATE, syscall.ENOTDIR},
		{"O_DIRECTORY on file", "/d/f", os.O_RDONLY | hostfs.ODirectory, syscall.ENOTDIR},
		{"O_DIRECTORY on dir", "/d", os.O_RDONLY | hostfs.ODirectory, 0},
		{"O_NOFOLLOW on symlink", "/lf", os.O_RDONLY | hostfs.ONoFollow, syscall.ELOOP},
		{"O_NOFOLLOW middle symlink", "/ld/f", os.O_RDONLY | hostfs.ONoFollow, 0},
		{"follow symlink", "/lf", os.O_RDONLY, 0},
		{"create root", "/", os.O_RDWR | os.O_CREATE, syscall.EISDIR},
		{"create dot", "/d/.", os.O_RDWR | os.O_CREATE, syscall.EISDIR},
	} {
		h, err := f.Open(ctx, tc.path, tc.flags, 0o644)
		wantErrno(t, tc.name+": Open("+tc.path+")", err, tc.errno)
		if err == nil {
			must(t, h.Close())
		}
	}
	// Creating through a dangling symlink creates its target.
	h, err := f.Open(ctx, "/ldang", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	must(t, h.Close())
	if st, err := f.Lstat(ctx, "/d/new"); err != nil || !st.IsRegular() {
		t.Errorf("Lstat(/d/new) after create through dangling link: got %v, %v", st.Mode, err)
	}
	// Creating does not change an existing file; the mode is masked by the type.
	wantContent(t, f, "/d/f", "hello")
	st := lstat(t, f, "/d/c1")
	if got, want := st.Mode, uint32(0o100644); got != want {
		t.Errorf("mode of a created file: got %o, want %o", got, want)
	}
}

func TestFS_OpenTrunc(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "hello world")
	// O_TRUNC without write access leaves the file alone.
	h, err := f.Open(ctx, "/f", os.O_RDONLY|os.O_TRUNC, 0)
	must(t, err)
	must(t, h.Close())
	wantContent(t, f, "/f", "hello world")
	h, err = f.Open(ctx, "/f", os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	wantContent(t, f, "/f", "")
	_, err = h.Write([]byte("ab"))
	must(t, err)
	must(t, h.Close())
	wantContent(t, f, "/f", "ab")
	// A truncated file grown again reads zeros, never the old bytes.
	must(t, f.Truncate(ctx, "/f", 6))
	wantContent(t, f, "/f", "ab\x00\x00\x00\x00")
	// Create truncates.
	h, err = f.Create(ctx, "/f")
	must(t, err)
	must(t, h.Close())
	wantContent(t, f, "/f", "")
}

func TestFS_OpenAppend(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "abc")
	h, err := f.Open(ctx, "/f", os.O_RDWR|os.O_APPEND, 0)
	must(t, err)
	defer h.Close()
	_, err = h.Write([]byte("de"))
	must(t, err)
	// Seek does not move appends.
	if _, err := h.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	_, err = h.Write([]byte("fg"))
	must(t, err)
	// Even WriteAt with an offset appends, as pwrite on Linux with O_APPEND.
	_, err = h.WriteAt([]byte("hi"), 0)
	must(t, err)
	wantContent(t, f, "/f", "abcdefghi")
	// The offset after an append is the end of the file.
	if off, err := h.Seek(0, io.SeekCurrent); err != nil || off != 7 {
		t.Errorf("offset after append: got %d, %v; want 7", off, err)
	}
	// Another writer grows the file; the next append still goes to the end.
	must(t, f.WriteFile(ctx, "/f", []byte("XYZ"), vfs.WriteOptions{Append: true}))
	_, err = h.Write([]byte("!"))
	must(t, err)
	wantContent(t, f, "/f", "abcdefghiXYZ!")
}

func TestFS_OpenAccessMode(t *testing.T) {
	f := newFS(t)
	writeFile(t, f, "/f", "abc")
	ro, err := f.Open(ctx, "/f", os.O_RDONLY, 0)
	must(t, err)
	_, err = ro.Write([]byte("x"))
	wantErrno(t, "Write on O_RDONLY", err, syscall.EBADF)
	_, err = ro.WriteAt([]byte("x"), 0)
	wantErrno(t, "WriteAt on O_RDONLY", err, syscall.EBADF)
	wantErrno(t, "Truncate on O_RDONLY", ro.Truncate(0), syscall.EBADF)
	buf := make([]byte, 3)
	_, err = ro.Read(buf)
	wantErrno(t, "Read on O_RDONLY", err, 0)
	must(t, ro.Close())
	wantContent(t, f, "/f", "abc")

	wo, err := f.Open(ctx, "/f", os.O_WRONLY, 0)
	must(t, err)
	_, err = wo.Read(buf)
	wantErrno(t, "Read on O_WRONLY", err, syscall.EBADF)
	_, err = wo.ReadAt(buf, 0)
	wantErrno(t, "ReadAt on O_WRONLY", err, syscall.EBADF)
	_, err = wo.Write([]byte("X"))
	wantErrno(t, "Write on O_WRONLY", err, 0)
	must(t, wo.Close())
	wantContent(t, f, "/f", "Xbc")

	// A closed handle fails with EBADF everywhere.
	_, err = wo.Write([]byte("x"))
	wantErrno(t, "Write after Close", err, syscall.EBADF)
	_, err = wo.Stat()
	wantErrno(t, "Stat after Close", err, syscall.EBADF)
	wantErrno(t, "Close twice", wo.Close(), syscall.EBADF)
	wantErrno(t, "Sync after Close", wo.Sync(), syscall.EBADF)

	rw, err := f.Open(ctx, "/f", os.O_RDWR, 0)
	must(t, err)
	defer rw.Close()
	_, err = rw.ReadAt(buf, -1)
	wantErrno(t, "ReadAt(-1)", err, syscall.EINVAL)
	_, err = rw.WriteAt(buf, -1)
	wantErrno(t, "WriteAt(-1)", err, syscall.EINVAL)
	wantErrno(t, "Truncate(-1)", rw.Truncate(-1), syscall.EINVAL)
	_, err = rw.Seek(-1, io.SeekStart)
	wantErrno(t, "Seek(-1)", err, syscall.EINVAL)
	_, err = rw.Seek(0, 7)
	wantErrno(t, "Seek(whence 7)", err, syscall.EINVAL)
	if off, err := rw.Seek(-1, io.SeekEnd); err != nil || off != 2 {
		t.Errorf("Seek(-1, SeekEnd): got %d, %v; want 2", off, err)
	}
	n, err := rw.Read(buf)
	if n != 1 || err != nil || buf[0] != 'c' {
		t.Errorf("Read at 2: got %d, %v, %q; want 1, nil, c", n, err, buf[:n])
	}
	n, err = rw.Read(buf)
	if n != 0 || err != io.EOF {
		t.Errorf("Read at EOF: got %d, %v; want 0, EOF", n, err)
	}
	n, err = rw.ReadAt(buf, 1)
	if n != 2 || err != io.EOF || string(buf[:n]) != "bc" {
		t.Errorf("ReadAt(1) short: got %d, %v, %q; want 2, EOF, bc", n, err, buf[:n])
	}

	// Directories open read-only; reading them is EISDIR.
	must(t, f.Mkdir(ctx, "/d", 0o755))
	dh, err := f.Open(ctx, "/d", os.O_RDONLY, 0)
	must(t, err)
	_, err = dh.ReadAt(buf, 0)
	wantErrno(t, "ReadAt on a directory", err, syscall.EISDIR)
	must(t, dh.Close())
}

// TestFS_ReadWriteAt checks offsets around chunk boundaries.
func TestFS_ReadWriteAt(t *testing.T) {
	offsets := []int64{0, 1, cs - 1, cs, cs + 1, 2*cs - 1, 3*cs + 5}
	lengths := []int{1, 2, cs - 1, cs, cs + 1, 2*cs + 7, 3 * cs} // 3*cs spans 3 or 4 chunks
	f := newFS(t)
	base := pattern(5*cs+123, 1)
	i := 0
	for _, off := range offsets {
		for _, n := range lengths {
			i++
			path := "/f"
			must(t, f.WriteFile(ctx, path, base, vfs.WriteOptions{}))
			want := append([]byte(nil), base...)
			data := pattern(n, byte(i))
			if end := int(off) + n; end > len(want) {
				want = append(want, make([]byte, end-len(want))...)
			}
			copy(want[off:], data)

			h, err := f.Open(ctx, path, os.O_RDWR, 0)
			must(t, err)
			if got, err := h.WriteAt(data, off); err != nil || got != n {
				t.Fatalf("WriteAt(%d bytes, %d): got %d, %v", n, off, got, err)
			}
			// pread of the same range.
			buf := make([]byte, n)
			if got, err := h.ReadAt(buf, off); err != nil || got != n {
				t.Fatalf("ReadAt(%d bytes, %d): got %d, %v", n, off, got, err)
			}
			wantBytes(t, "ReadAt after WriteAt", buf, data)
			// pread around the range, crossing its edges.
			lo := max(off-3, 0)
			buf = make([]byte, n+6)
			got, err := h.ReadAt(buf, lo)
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			wantBytes(t, "ReadAt around the write", buf[:got], want[lo:min(int(lo)+n+6, len(want))])
			must(t, h.Close())
			all, err := f.ReadFile(ctx, path)
			must(t, err)
			wantBytes(t, "ReadFile after WriteAt", all, want)
			if t.Failed() {
				t.Fatalf("offset %d, length %d", off, n)
			}
		}
	}
}

// TestFS_ReadWrite checks sequential Write and Read with the handle offset.
func TestFS_ReadWrite(t *testing.T) {
	f := newFS(t)
	h, err := f.Create(ctx, "/f")
	must(t, err)
	defer h.Close()
	var want []byte
	for i, n := range []int{1, cs - 2, 3, cs, 3*cs + 1, 5} {
		p := pattern(n, byte(i))
		if got, err := h.Write(p); err != nil || got != n {
			t.Fatalf("Write(%d): got %d, %v", n, got, err)
		}
		want = append(want, p...)
	}
	st, err := h.Stat()
	must(t, err)
	if st.Size != int64(len(want)) {
		t.Errorf("Size: got %d, want %d", st.Size, len(want))
	}
	if _, err := h.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(h, 1<<30))
	must(t, err)
	wantBytes(t, "ReadAll", got, want)
	// Write in the middle through the offset.
	if _, err := h.Seek(cs-1, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	mid := pattern(cs+2, 99)
	_, err = h.Write(mid)
	must(t, err)
	copy(want[cs-1:], mid)
	all, err := f.ReadFile(ctx, "/f")
	must(t, err)
	wantBytes(t, "ReadFile", all, want)
	// Writing past the end after a Seek leaves zeros.
	if _, err := h.Seek(int64(len(want))+10, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	_, err = h.Write([]byte("end"))
	must(t, err)
	want = append(append(want, make([]byte, 10)...), "end"...)
	all, err = f.ReadFile(ctx, "/f")
	must(t, err)
	wantBytes(t, "ReadFile after a write past the end", all, want)
}

func TestFS_Sparse(t *testing.T) {
	f := newFS(t)
	t.Run("truncate up", func(t *testing.T) {
		writeFile(t, f, "/t", "abc")
		must(t, f.Truncate(ctx, "/t", 3*cs+10))
		want := append([]byte("abc"), make([]byte, 3*cs+7)...)
		got, err := f.ReadFile(ctx, "/t")
		must(t, err)
		wantBytes(t, "ReadFile after truncate up", got, want)
		st := lstat(t, f, "/t")
		if st.Size != 3*cs+10 {
			t.Errorf("Size: got %d, want %d", st.Size, 3*cs+10)
		}
		// Write inside the hole.
		h, err := f.Open(ctx, "/t", os.O_RDWR, 0)
		must(t, err)
		_, err = h.WriteAt([]byte("mid"), 2*cs-1)
		must(t, err)
		must(t, h.Close())
		copy(want[2*cs-1:], "mid")
		got, err = f.ReadFile(ctx, "/t")
		must(t, err)
		wantBytes(t, "ReadFile after a write in the hole", got, want)
	})
	t.Run("far pwrite", func(t *testing.T) {
		// A gap larger than 1 MiB stays a hole; it must read as zeros.
		writeFile(t, f, "/far", "head")
		h, err := f.Open(ctx, "/far", os.O_RDWR, 0)
		must(t, err)
		off := int64(3<<20 + 17)
		_, err = h.WriteAt([]byte("tail"), off)
		must(t, err)
		must(t, h.Close())
		want := make([]byte, off+4)
		copy(want, "head")
		copy(want[off:], "tail")
		got, err := f.ReadFile(ctx, "/far")
		must(t, err)
		wantBytes(t, "ReadFile of a file with a 3 MiB hole", got, want)
		// A pread inside the hole.
		h, err = f.Open(ctx, "/far", os.O_RDONLY, 0)
		must(t, err)
		buf := bytes.Repeat([]byte{0xAA}, 2*cs)
		n, err := h.ReadAt(buf, 1<<20+5)
		if n != len(buf) || err != nil {
			t.Fatalf("ReadAt in the hole: got %d, %v", n, err)
		}
		wantBytes(t, "ReadAt in the hole", buf, make([]byte, 2*cs))
		must(t, h.Close())
	})
	t.Run("small gap", func(t *testing.T) {
		writeFile(t, f, "/gap", "abc")
		h, err := f.Open(ctx, "/gap", os.O_RDWR, 0)
		must(t, err)
		_, err = h.WriteAt([]byte("xyz"), 2*cs+1)
		must(t, err)
		must(t, h.Close())
		want := make([]byte, 2*cs+4)
		copy(want, "abc")
		copy(want[2*cs+1:], "xyz")
		got, err := f.ReadFile(ctx, "/gap")
		must(t, err)
		wantBytes(t, "ReadFile after a write past the end", got, want)
	})
	t.Run("truncate down then up", func(t *testing.T) {
		data := pattern(3*cs, 7)
		for _, cut := range []int64{0, 1, cs - 1, cs, cs + 100, 2*cs + 1} {
			must(t, f.WriteFile(ctx, "/tr", data, vfs.WriteOptions{}))
			must(t, f.Truncate(ctx, "/tr", cut))
			must(t, f.Truncate(ctx, "/tr", 3*cs))
			want := append(append([]byte(nil), data[:cut]...), make([]byte, 3*cs-cut)...)
			got, err := f.ReadFile(ctx, "/tr")
			must(t, err)
			wantBytes(t, "truncate to "+itoa(int(cut))+" then back up", got, want)
			// The same through a handle, and growing with a write.
			must(t, f.WriteFile(ctx, "/tr", data, vfs.WriteOptions{}))
			h, err := f.Open(ctx, "/tr", os.O_RDWR, 0)
			must(t, err)
			must(t, h.Truncate(cut))
			_, err = h.WriteAt([]byte("Z"), 3*cs-1)
			must(t, err)
			must(t, h.Close())
			want[3*cs-1] = 'Z'
			got, err = f.ReadFile(ctx, "/tr")
			must(t, err)
			wantBytes(t, "truncate to "+itoa(int(cut))+" then write at the end", got, want)
		}
	})
	t.Run("errors", func(t *testing.T) {
		must(t, f.Mkdir(ctx, "/dir", 0o755))
		must(t, f.Mknod(ctx, "/fifo", 0o010644, 0))
		for _, tc := range []struct {
			path  string
			size  int64
			errno syscall.Errno
		}{
			{"/dir", 0, syscall.EISDIR},
			{"/fifo", 0, syscall.EINVAL},
			{"/nope", 0, syscall.ENOENT},
			{"/t", -1, syscall.EINVAL},
			{"/t/", 0, syscall.ENOTDIR},
		} {
			wantErrno(t, "Truncate("+tc.path+")", f.Truncate(ctx, tc.path, tc.size), tc.errno)
		}
	})
}

// TestFS_WriteFileLarge writes 64 MiB in one transaction and reads it back.
func TestFS_WriteFileLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB")
	}
	a := openAgent(t)
	f := a.FS
	data := pattern(64<<20, 3)
	must(t, f.WriteFile(ctx, "/big", data, vfs.WriteOptions{}))
	got, err := f.ReadFile(ctx, "/big")
	must(t, err)
	wantBytes(t, "ReadFile(/big)", got, data)
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_data WHERE ino = ?", lstat(t, f, "/big").Ino); n != 64<<20/cs {
		t.Errorf("chunks: got %d, want %d", n, 64<<20/cs)
	}
	// Rewriting a smaller content drops the extra chunks.
	must(t, f.WriteFile(ctx, "/big", []byte("small"), vfs.WriteOptions{}))
	wantContent(t, f, "/big", "small")
	if n := queryInt(t, a, "SELECT COUNT(*) FROM fs_data WHERE ino = ?", lstat(t, f, "/big").Ino); n != 1 {
		t.Errorf("chunks after rewrite: got %d, want 1", n)
	}
}

func TestFS_WriteFile(t *testing.T) {
	f := newFS(t)
	must(t, f.Symlink(ctx, "/d/target", "/ldang"))
	must(t, f.Mkdir(ctx, "/d", 0o755))
	for _, tc := range []struct {
		path  string
		opts  vfs.WriteOptions
		errno syscall.Errno
	}{
		{"/d/a", vfs.WriteOptions{}, 0},
		{"/x/y/z", vfs.WriteOptions{}, syscall.ENOENT},
		{"/x/y/z", vfs.WriteOptions{CreateParents: true}, 0},
		{"/d/a", vfs.WriteOptions{Exclusive: true}, syscall.EEXIST},
		{"/ldang", vfs.WriteOptions{Exclusive: true}, syscall.EEXIST},
		{"/d", vfs.WriteOptions{}, syscall.EISDIR},
		{"/d/a/b", vfs.WriteOptions{}, syscall.ENOTDIR},
		{"/d/a/b", vfs.WriteOptions{CreateParents: true}, syscall.ENOTDIR},
		{"/d/new/", vfs.WriteOptions{}, syscall.EISDIR},
		{"/", vfs.WriteOptions{}, syscall.EISDIR},
		{"/ldang", vfs.WriteOptions{}, 0}, // creates the target
	} {
		err := f.WriteFile(ctx, tc.path, []byte("data"), tc.opts)
		wantErrno(t, "WriteFile("+tc.path+")", err, tc.errno)
	}
	wantContent(t, f, "/d/target", "data")
	wantContent(t, f, "/x/y/z", "data")
	must(t, f.WriteFile(ctx, "/d/a", []byte("more"), vfs.WriteOptions{Append: true}))
	wantContent(t, f, "/d/a", "datamore")
	must(t, f.WriteFile(ctx, "/d/p", nil, vfs.WriteOptions{Perm: 0o600}))
	if st := lstat(t, f, "/d/p"); st.Mode != 0o100600 || st.Size != 0 {
		t.Errorf("Lstat(/d/p): got mode %o size %d, want 100600 and 0", st.Mode, st.Size)
	}
	// A WriteFile that fails after creating parents leaves nothing behind,
	// in the database and in the caches.
	err := f.WriteFile(ctx, "/m1/m2/", []byte("x"), vfs.WriteOptions{CreateParents: true})
	wantErrno(t, "WriteFile(/m1/m2/)", err, syscall.EISDIR)
	_, err = f.Stat(ctx, "/m1")
	wantErrno(t, "Stat(/m1) after a failed WriteFile", err, syscall.ENOENT)
	if got := readdir(t, f, "/"); !equalStrings(got, []string{"d", "ldang", "x"}) {
		t.Errorf("Readdir(/): got %q", got)
	}
	// The umask applies to new files and directories.
	a, err := core.Open(ctx, filepath.Join(tempDir(t), "u.db"), core.Options{Create: true, FS: vfs.Options{Umask: 0o027, UID: 1000, GID: 100}})
	must(t, err)
	defer a.Close()
	must(t, a.FS.WriteFile(ctx, "/u", nil, vfs.WriteOptions{Perm: 0o666}))
	must(t, a.FS.Mkdir(ctx, "/ud", 0o777))
	if st := lstat(t, a.FS, "/u"); st.Perm() != 0o640 || st.UID != 1000 || st.GID != 100 {
		t.Errorf("file with umask 027, uid 1000: got perm %o uid %d gid %d", st.Perm(), st.UID, st.GID)
	}
	if st := lstat(t, a.FS, "/ud"); st.Perm() != 0o750 {
		t.Errorf("dir perm with umask 027: got %o, want 750", st.Perm())
	}
}
