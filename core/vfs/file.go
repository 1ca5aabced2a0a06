package vfs

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// errStale means an open file's inode vanished behind our back (another
// process removed it and it was not known to be open there).
var errStale = syscall.ESTALE

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// File is an open file. Its inode stays alive while the File is open, even
// when every name of it is removed (unlinked-but-open semantics, within
// this process).
// handleCtx is the context of a File's reads and writes. A handle
// outlives the call that opened it (a FUSE open and the reads that follow
// are separate requests), so, like os.File's, its operations are bounded
// by their size, not by the opener's deadline.
var handleCtx = context.Background()

type File struct {
	fs     *FS
	ino    int64
	path   string
	flags  int
	mu     sync.Mutex
	off    int64
	closed bool
	// atomic is set for a file opened with OAtomic: writes go to it, and
	// Close commits it.
	atomic *AtomicFile
}

// OAtomic is an open flag of this engine (no Linux flag has this bit):
// with O_WRONLY|O_CREATE|O_TRUNC (and optionally O_EXCL) it opens an
// atomic replacement of the file (CreateAtomic). Writes must be
// sequential from offset 0 (ESPIPE otherwise), reads are EBADF, the file
// keeps its old content until Close makes the new one visible at once,
// and Abort (a client whose connection ends) discards it. It is how a
// client streams a large file through handles (pwrite by pwrite) without
// a reader ever seeing it half written.
const OAtomic = 1 << 30

// ONoFollow and ODirectory are O_NOFOLLOW and O_DIRECTORY in the flags
// Open takes, with the same values on every platform the engine builds
// for (Windows has neither in package syscall).
const (
	ONoFollow  = hostfs.ONoFollow
	ODirectory = hostfs.ODirectory
)

// openAtomic opens path with OAtomic.
func (f *FS) openAtomic(ctx context.Context, path string, flags int, perm uint32) (*File, error) {
	base := flags &^ (OAtomic | os.O_EXCL)
	if base != os.O_WRONLY|os.O_CREATE|os.O_TRUNC {
		return nil, pathErr("open", path, syscall.EINVAL)
	}
	// The handle outlives the call that opened it (its writes are later
	// requests): its batches run without the opener's cancellation.
	a, err := f.CreateAtomic(context.WithoutCancel(ctx), path, WriteOptions{Perm: perm, Exclusive: flags&os.O_EXCL != 0})
	if err != nil {
		return nil, err
	}
	return &File{fs: f, path: path, flags: flags, atomic: a}, nil
}

// atomicWrite is Write and WriteAt of an OAtomic file; h.mu is held.
func (h *File) atomicWrite(p []byte, off int64) (int, error) {
	if off != h.atomic.Size() {
		return 0, pathErr("write", h.path, syscall.ESPIPE)
	}
	n, err := h.atomic.Write(p)
	h.off = h.atomic.Size()
	return n, err
}

// Abort closes the file; an OAtomic file is discarded instead of
// committed, so its path keeps its old content.
func (h *File) Abort() error {
	if h.atomic == nil {
		return h.Close()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	return h.atomic.Abort()
}

// Open opens path with os.O_* flags (O_RDONLY, O_WRONLY, O_RDWR, O_CREATE,
// O_EXCL, O_TRUNC, O_APPEND) and syscall.O_NOFOLLOW / O_DIRECTORY.
func (f *FS) Open(ctx context.Context, path string, flags int, perm uint32) (*File, error) {
	if flags&OAtomic != 0 {
		return f.openAtomic(ctx, path, flags, perm)
	}
	h, _, err := f.openHandle(ctx, path, flags, false, func(c *store.Conn, now time.Time) (int64, error) {
		// O_CREAT|O_EXCL never follows a final symlink: even a dangling
		// one makes the open fail with EEXIST (open(2)), instead of
		// creating the link's target.
		creat := flags&os.O_CREATE != 0
		excl := creat && flags&os.O_EXCL != 0
		follow := flags&hostfs.ONoFollow == 0 && !excl
		var l loc
		var err error
		if creat {
			l, err = f.resolveCreate(c, path, excl, follow)
		} else {
			l, err = f.resolve(c, "open", path, follow)
		}
		if err != nil {
			return 0, err
		}
		return f.openLoc(c, path, l, flags, perm, f.DefaultOwner(), now)
	})
	return h, err
}

// openLoc opens the entry l, creating it (owned by o) when it is missing
// and flags has O_CREATE, truncating it with O_TRUNC; both APIs end here.
// It returns the inode opened.
func (f *FS) openLoc(c *store.Conn, path string, l loc, flags int, perm uint32, o Owner, now time.Time) (int64, error) {
	excl := flags&os.O_CREATE != 0 && flags&os.O_EXCL != 0
	if l.ino == 0 {
		if flags&os.O_CREATE == 0 {
			return 0, pathErr("open", path, syscall.ENOENT)
		}
		if err := f.creatable(c, "open", path, l); err != nil {
			return 0, err
		}
		return f.newInode(c, l.parent, l.name, schema.ModeRegular|f.applyUmask(perm), 0, 0, o, now)
	}
	if excl {
		return 0, pathErr("open", path, syscall.EEXIST)
	}
	if l.st.IsSymlink() {
		return 0, pathErr("open", path, syscall.ELOOP)
	}
	if flags&hostfs.ODirectory != 0 && !l.st.IsDir() {
		return 0, pathErr("open", path, syscall.ENOTDIR)
	}
	// A directory opens read-only, without O_CREAT or O_TRUNC.
	if l.st.IsDir() && flags&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		return 0, pathErr("open", path, syscall.EISDIR)
	}
	if flags&os.O_TRUNC != 0 && flags&(os.O_WRONLY|os.O_RDWR) != 0 && l.st.IsRegular() && l.st.Size > 0 {
		return l.ino, f.truncate(c, l.ino, l.st.Size, 0, now)
	}
	return l.ino, nil
}

// openHandle runs op, which opens (and may create) an inode, and returns
// a handle on it, with its attributes after the open when wantStat.
func (f *FS) openHandle(ctx context.Context, path string, flags int, wantStat bool, op func(c *store.Conn, now time.Time) (int64, error)) (*File, Stat, error) {
	var ino int64
	var st Stat
	// The handle is registered while the database lock is still held:
	// registered after it, an Unlink running in between saw the inode as
	// not open and purged it, and the new handle failed with ESTALE.
	registered := false
	unregister := func() {
		f.openMu.Lock()
		if f.open[ino]--; f.open[ino] <= 0 {
			delete(f.open, ino)
		}
		f.openMu.Unlock()
		registered = false
	}
	register := func(c *store.Conn) error {
		if registered {
			// A read runs again when another process committed during
			// the first run (store.DB.Do): undo the first registration.
			unregister()
		}
		var err error
		if ino, err = op(c, time.Now()); err != nil {
			return err
		}
		if wantStat {
			if st, err = f.mustInode(c, ino, "open", path); err != nil {
				return err
			}
		}
		f.openMu.Lock()
		f.open[ino]++
		f.openMu.Unlock()
		registered = true
		return nil
	}
	var err error
	if flags&(os.O_CREATE|os.O_TRUNC) != 0 {
		err = f.write(ctx, register)
	} else {
		err = f.read(ctx, register)
	}
	if err != nil {
		if registered { // the commit failed after op succeeded
			unregister()
		}
		return nil, Stat{}, err
	}
	return &File{fs: f, ino: ino, path: path, flags: flags}, st, nil
}

// Create creates or truncates a file for reading and writing.
func (f *FS) Create(ctx context.Context, path string) (*File, error) {
	return f.Open(ctx, path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Ino is the inode number of the open file.
func (h *File) Ino() int64 { return h.ino }

// Name is the path the file was opened with.
func (h *File) Name() string { return h.path }

func (h *File) check(op string, write bool) error {
	if h.closed {
		return pathErr(op, h.path, syscall.EBADF)
	}
	acc := h.flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	if write && acc == os.O_RDONLY {
		return pathErr(op, h.path, syscall.EBADF)
	}
	if !write && acc == os.O_WRONLY {
		return pathErr(op, h.path, syscall.EBADF)
	}
	return nil
}

// ReadAt reads len(p) bytes at offset off. At the end of the file it
// returns fewer bytes and io.EOF, as io.ReaderAt requires.
func (h *File) ReadAt(p []byte, off int64) (int, error) {
	if err := h.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", h.path, syscall.EINVAL)
	}
	n, err := h.fs.readAt(handleCtx, h.ino, p, off)
	if err != nil {
		if errnoOf(err) != 0 {
			err = pathErr("read", h.path, errnoOf(err))
		}
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes p at offset off (at the end of the file in O_APPEND mode).
func (h *File) WriteAt(p []byte, off int64) (int, error) {
	if err := h.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", h.path, syscall.EINVAL)
	}
	if h.atomic != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.atomicWrite(p, off)
	}
	_, err := h.writeAt(p, off, h.flags&os.O_APPEND != 0)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *File) writeAt(p []byte, off int64, appendMode bool) (int64, error) {
	var end int64
	err := h.fs.write(handleCtx, func(c *store.Conn) error {
		st, ok, err := h.fs.inode(c, h.ino)
		if err != nil {
			return err
		}
		if !ok {
			return pathErr("write", h.path, errStale)
		}
		if appendMode {
			off = st.Size
		}
		end = off + int64(len(p))
		if err := h.fs.pwrite(c, h.ino, off, p, time.Now()); err != nil {
			if err == errStale {
				return pathErr("write", h.path, errStale)
			}
			return err
		}
		return nil
	})
	return end, err
}

// Read reads from the current offset.
func (h *File) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.ReadAt(p, h.off)
	h.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Write writes at the current offset (or the end in O_APPEND mode).
func (h *File) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("write", true); err != nil {
		return 0, err
	}
	if h.atomic != nil {
		return h.atomicWrite(p, h.off)
	}
	end, err := h.writeAt(p, h.off, h.flags&os.O_APPEND != 0)
	if err != nil {
		return 0, err
	}
	h.off = end
	return len(p), nil
}

// Seek sets the offset for the next Read or Write.
func (h *File) Seek(offset int64, whence int) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += h.off
	case io.SeekEnd:
		st, err := h.Stat()
		if err != nil {
			return 0, err
		}
		offset += st.Size
	default:
		return 0, pathErr("seek", h.path, syscall.EINVAL)
	}
	if offset < 0 {
		return 0, pathErr("seek", h.path, syscall.EINVAL)
	}
	h.off = offset
	return offset, nil
}

// Stat returns the attributes of the open file.
func (h *File) Stat() (Stat, error) {
	if h.closed {
		return Stat{}, pathErr("fstat", h.path, syscall.EBADF)
	}
	if h.atomic != nil {
		// Not a file yet: what it will be.
		return Stat{Mode: schema.ModeRegular | h.fs.applyUmask(h.atomic.opts.Perm), Size: h.atomic.Size(),
			UID: h.fs.opts.UID, GID: h.fs.opts.GID, Blksize: int64(h.fs.chunkSize)}, nil
	}
	var st Stat
	err := h.fs.read(handleCtx, func(c *store.Conn) error {
		s, ok, err := h.fs.inode(c, h.ino)
		if err != nil {
			return err
		}
		if !ok {
			return pathErr("fstat", h.path, errStale)
		}
		st = s
		return h.fs.dirLinks(c, &st)
	})
	return st, err
}

// Truncate changes the size of the open file.
func (h *File) Truncate(size int64) error {
	if err := h.check("ftruncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("ftruncate", h.path, syscall.EINVAL)
	}
	if h.atomic != nil {
		if size == h.atomic.Size() {
			return nil
		}
		return pathErr("ftruncate", h.path, syscall.EINVAL)
	}
	return h.fs.write(handleCtx, func(c *store.Conn) error {
		st, ok, err := h.fs.inode(c, h.ino)
		if err != nil {
			return err
		}
		if !ok {
			return pathErr("ftruncate", h.path, errStale)
		}
		if !st.IsRegular() {
			return pathErr("ftruncate", h.path, syscall.EINVAL)
		}
		return h.fs.truncate(c, h.ino, st.Size, size, time.Now())
	})
}

// Sync makes the file's committed writes durable.
func (h *File) Sync() error {
	if h.closed {
		return pathErr("fsync", h.path, syscall.EBADF)
	}
	if h.atomic != nil {
		return nil // nothing is visible before Close
	}
	return h.fs.Sync(handleCtx)
}

// Close releases the file. When it was the last handle of an inode that
// has no names left, the inode and its data are deleted.
func (h *File) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return pathErr("close", h.path, syscall.EBADF)
	}
	h.closed = true
	if h.atomic != nil {
		return h.atomic.Commit()
	}
	f := h.fs
	f.openMu.Lock()
	f.open[h.ino]--
	last := f.open[h.ino] <= 0
	_, orphan := f.orphans[h.ino]
	if last {
		delete(f.open, h.ino)
		delete(f.orphans, h.ino)
	}
	f.openMu.Unlock()
	if !last || !orphan {
		// No operation of this filesystem removed a name of the inode
		// while it was open: it still has one (another process that
		// removes it purges it at once, not knowing it is open here).
		return nil
	}
	return f.write(handleCtx, func(c *store.Conn) error {
		var nlink int64
		err := c.QueryRow("SELECT nlink FROM fs_inode WHERE ino = ?", h.ino).Scan(&nlink)
		if isNoRows(err) || (err == nil && nlink > 0) {
			return nil
		}
		if err != nil {
			return err
		}
		return f.purge(c, h.ino)
	})
}
