package agentfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"
)

// IOFS is a read-only io/fs view of an agent's filesystem (local or
// remote): it implements fs.FS, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS,
// fs.SubFS and fs.ReadLinkFS, so fs.WalkDir, fs.Glob, template.ParseFS,
// http.FS and the rest of the standard library work on it.
//
// Names are io/fs names: unrooted, slash-separated, "." for the root of
// the view. Open follows symlinks as the filesystem does; an absolute
// symlink target refers to the agent's root, also in a Sub view.
type IOFS struct {
	ctx  context.Context
	fsys FileSystem
	root string // absolute agent path of ".": "/" or "/a/b"
}

// NewIOFS returns the io/fs view of fsys. Every call uses ctx.
func NewIOFS(ctx context.Context, fsys FileSystem) *IOFS {
	return &IOFS{ctx: ctx, fsys: fsys, root: "/"}
}

var (
	_ fs.ReadDirFS   = (*IOFS)(nil)
	_ fs.ReadFileFS  = (*IOFS)(nil)
	_ fs.StatFS      = (*IOFS)(nil)
	_ fs.SubFS       = (*IOFS)(nil)
	_ fs.ReadLinkFS  = (*IOFS)(nil)
	_ fs.ReadDirFile = (*dirFile)(nil)
	_ io.ReaderAt    = (*ioFile)(nil)
	_ io.Seeker      = (*ioFile)(nil)
)

// abs maps an io/fs name to the agent path, or fails with fs.ErrInvalid.
func (v *IOFS) abs(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return v.root, nil
	}
	return path.Join(v.root, name), nil
}

// rename reports an engine error under the io/fs name it was asked for.
func rename(err error, op, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Open opens a file or directory for reading.
func (v *IOFS) Open(name string) (fs.File, error) {
	p, err := v.abs("open", name)
	if err != nil {
		return nil, err
	}
	st, err := v.fsys.Stat(v.ctx, p)
	if err != nil {
		return nil, rename(err, "open", name)
	}
	info := fileInfo{name: path.Base(name), st: st}
	if st.IsDir() {
		return &dirFile{v: v, path: p, name: name, info: info}, nil
	}
	f, err := v.fsys.Open(v.ctx, p, os.O_RDONLY, 0)
	if err != nil {
		return nil, rename(err, "open", name)
	}
	return &ioFile{f: f, name: name, info: info}, nil
}

// ReadDir lists a directory, sorted by name.
func (v *IOFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := v.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	es, err := v.fsys.ReaddirPlus(v.ctx, p)
	if err != nil {
		return nil, rename(err, "readdir", name)
	}
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		out[i] = dirEntry{fileInfo{name: e.Name, st: e.Stat}}
	}
	return out, nil
}

// ReadFile returns the content of a file.
func (v *IOFS) ReadFile(name string) ([]byte, error) {
	p, err := v.abs("read", name)
	if err != nil {
		return nil, err
	}
	b, err := v.fsys.ReadFile(v.ctx, p)
	if err != nil {
		return nil, rename(err, "read", name)
	}
	return b, nil
}

// Stat describes a file, following symlinks.
func (v *IOFS) Stat(name string) (fs.FileInfo, error) {
	p, err := v.abs("stat", name)
	if err != nil {
		return nil, err
	}
	st, err := v.fsys.Stat(v.ctx, p)
	if err != nil {
		return nil, rename(err, "stat", name)
	}
	return fileInfo{name: path.Base(name), st: st}, nil
}

// Lstat describes a file without following a final symlink.
func (v *IOFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := v.abs("lstat", name)
	if err != nil {
		return nil, err
	}
	st, err := v.fsys.Lstat(v.ctx, p)
	if err != nil {
		return nil, rename(err, "lstat", name)
	}
	return fileInfo{name: path.Base(name), st: st}, nil
}

// ReadLink returns the target of a symlink.
func (v *IOFS) ReadLink(name string) (string, error) {
	p, err := v.abs("readlink", name)
	if err != nil {
		return "", err
	}
	t, err := v.fsys.Readlink(v.ctx, p)
	if err != nil {
		return "", rename(err, "readlink", name)
	}
	return t, nil
}

// Sub is the view of the subtree at dir.
func (v *IOFS) Sub(dir string) (fs.FS, error) {
	p, err := v.abs("sub", dir)
	if err != nil {
		return nil, err
	}
	return &IOFS{ctx: v.ctx, fsys: v.fsys, root: p}, nil
}

// fileInfo is fs.FileInfo of an engine Stat; Sys returns the Stat.
type fileInfo struct {
	name string
	st   Stat
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.st.Size }
func (i fileInfo) Mode() fs.FileMode  { return i.st.FileMode() }
func (i fileInfo) ModTime() time.Time { return i.st.Mtime }
func (i fileInfo) IsDir() bool        { return i.st.IsDir() }
func (i fileInfo) Sys() any           { return i.st }

type dirEntry struct{ info fileInfo }

func (d dirEntry) Name() string               { return d.info.name }
func (d dirEntry) IsDir() bool                { return d.info.IsDir() }
func (d dirEntry) Type() fs.FileMode          { return d.info.Mode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.info, nil }
func (d dirEntry) String() string             { return fs.FormatDirEntry(d) }

// ioFile is an open regular file of an IOFS. Reads go through a one-block
// read-ahead cache: consumers of io/fs read in small pieces (bufio,
// iotest, 1-byte reads of a template parser) and a remote agent pays a
// round trip per call. The view is read-only, so only writes by others
// while the file is open can be missed, as with any read-ahead.
type ioFile struct {
	f    File
	name string
	info fileInfo

	mu     sync.Mutex
	off    int64
	buf    []byte // cached data at bufOff
	bufOff int64
	bufEnd bool // the file ended right after buf when it was read
	cached bool
}

// ioBlock is the read-ahead size.
const ioBlock = 64 << 10

func (f *ioFile) Stat() (fs.FileInfo, error) {
	st, err := f.f.Stat()
	if err != nil {
		return nil, rename(err, "stat", f.name)
	}
	return fileInfo{name: f.info.name, st: st}, nil
}

func (f *ioFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readAt(p, off)
}

func (f *ioFile) readAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		end := f.bufOff + int64(len(f.buf))
		switch {
		case f.cached && pos >= f.bufOff && pos < end:
			n += copy(p[n:], f.buf[pos-f.bufOff:])
			continue
		case f.cached && f.bufEnd && pos >= end:
			return n, io.EOF
		case len(p)-n >= ioBlock:
			// A large read gains nothing from the cache.
			m, err := f.f.ReadAt(p[n:], pos)
			return n + m, err
		}
		if f.buf == nil {
			f.buf = make([]byte, ioBlock)
		}
		m, err := f.f.ReadAt(f.buf[:ioBlock], pos)
		if err != nil && err != io.EOF {
			f.cached = false
			return n, rename(err, "read", f.name)
		}
		f.buf, f.bufOff, f.bufEnd, f.cached = f.buf[:m], pos, m < ioBlock, true
		if m == 0 {
			return n, io.EOF
		}
	}
	return n, nil
}

func (f *ioFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.readAt(p, f.off)
	f.off += int64(n)
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

func (f *ioFile) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		st, err := f.f.Stat()
		if err != nil {
			return 0, rename(err, "seek", f.name)
		}
		offset += st.Size
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	f.off = offset
	return offset, nil
}

func (f *ioFile) Close() error { return f.f.Close() }

// dirFile is an open directory of an IOFS; its entries are read on the
// first ReadDir.
type dirFile struct {
	v       *IOFS
	path    string
	name    string
	info    fileInfo
	entries []fs.DirEntry
	read    bool
	closed  bool
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *dirFile) Close() error {
	if d.closed {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	d.closed = true
	return nil
}

func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.closed {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.read {
		es, err := d.v.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.entries, d.read = es, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		if out == nil {
			out = []fs.DirEntry{}
		}
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}
