//go:build linux

package mount

import (
	"context"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// Directories are listed without OPENDIR and RELEASEDIR.
//
// With the watcher on, the kernel caches listings (FOPEN_CACHE_DIR), so
// after the first listing of a directory the only requests an
// opendir/getdents/close costs are OPENDIR and RELEASEDIR: two of the
// three round trips per directory of `git status` or `find`. Answering
// OPENDIR with ENOSYS makes the kernel (Linux 5.1 and later) stop sending
// both and cache every listing (fs/fuse/file.c: "Default for no-open").
// READDIR(PLUS) then arrives with file handle 0, which go-fuse's bridge
// does not serve; rawFS opens a bridge handle for the one request and
// releases it after, in this process.
//
// A listing is read in pieces at positional offsets (each request fills
// one page). The first piece reads the whole listing with every entry's
// attributes in one query and keeps it on the node, together with the
// directory's stamp; the next pieces use it while the directory is
// unchanged, so a listing costs one query, not one per piece.

// rawFS is go-fuse's bridge with OPENDIR declined (see above).
type rawFS struct {
	fuse.RawFileSystem
	noOpendir bool
	srv       *fuse.Server // set before it serves
}

func (r *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	// Older kernels (before 5.1, which announces NO_OPENDIR_SUPPORT at
	// INIT) would fail the opendir(2) instead.
	if r.noOpendir && r.srv.KernelSettings().Flags64()&fuse.CAP_NO_OPENDIR_SUPPORT != 0 {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.OpenDir(cancel, in, out)
}

func (r *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, r.RawFileSystem.ReadDir)
}

func (r *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, r.RawFileSystem.ReadDirPlus)
}

// readDir runs the bridge's READDIR or READDIRPLUS, on a handle of its
// own when the request came with file handle 0.
func (r *rawFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	read func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	if in.Fh != 0 {
		return read(cancel, in, out)
	}
	return r.withHandle(cancel, &in.InHeader, in.Flags, func(fh uint64) fuse.Status {
		in2 := *in
		in2.Fh = fh
		return read(cancel, &in2, out)
	})
}

func (r *rawFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if in.Fh != 0 {
		return r.RawFileSystem.FsyncDir(cancel, in)
	}
	return r.withHandle(cancel, &in.InHeader, 0, func(fh uint64) fuse.Status {
		in2 := *in
		in2.Fh = fh
		return r.RawFileSystem.FsyncDir(cancel, &in2)
	})
}

func (r *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	if in.Fh != 0 {
		r.RawFileSystem.ReleaseDir(in)
	}
}

// withHandle runs one request that came with file handle 0 on a bridge
// handle opened for it and released after.
func (r *rawFS) withHandle(cancel <-chan struct{}, h *fuse.InHeader, flags uint32, fn func(fh uint64) fuse.Status) fuse.Status {
	var oo fuse.OpenOut
	if st := r.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: *h, Flags: flags}, &oo); st != fuse.OK {
		return st
	}
	defer r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: *h, Fh: oo.Fh})
	return fn(oo.Fh)
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	st, err := n.s.fs.StatIno(opCtx(ctx), n.ino)
	if err != nil {
		return nil, 0, n.s.errno(err)
	}
	var fl uint32
	if n.s.opts.PollInterval > 0 {
		// The kernel keeps listings in its cache across opendir; it
		// drops them on changes made through the mount, and the watcher
		// on changes by other processes.
		fl = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	return &dirHandle{n: n, st: st}, fl, 0
}

// keepListing is the largest listing a directory node keeps after it was
// read to the end, for the kernel's last request.
const keepListing = 1024

// listing is a directory's entries as read at one stamp of it.
type listing struct {
	at      stamp
	entries []vfs.DirEntry
}

// dirHandle is an open directory (or, without OPENDIR, one request's).
// It reads the whole listing with the attributes of every entry in one
// query, so READDIRPLUS needs no lookup per entry.
type dirHandle struct {
	n    *node
	st   vfs.Stat // attributes at opendir
	mu   sync.Mutex
	l    *listing // nil until the first read
	pos  int      // next position; 0 and 1 are "." and ".."
	last *vfs.DirEntry
	// returned counts the entries this handle gave out: with file
	// handle 0 a handle lives for one request.
	returned int
}

var (
	_ fs.FileReaddirenter = (*dirHandle)(nil)
	_ fs.FileLookuper     = (*dirHandle)(nil)
	_ fs.FileSeekdirer    = (*dirHandle)(nil)
	_ fs.FileFsyncdirer   = (*dirHandle)(nil)
	_ fs.FileReleasedirer = (*dirHandle)(nil)
)

// load reads the listing, or takes the one kept on the node when this
// handle continues a listing (pos > 0) of the directory as it still is.
func (d *dirHandle) load(ctx context.Context) syscall.Errno {
	n := d.n
	if d.pos > 0 {
		if l := n.listing.Load(); l != nil && l.at == stampOf(d.st) {
			d.l = l
			return 0
		}
	}
	es, err := n.s.fs.ReaddirPlusIno(opCtx(ctx), n.ino)
	if err != nil {
		return n.s.errno(err)
	}
	d.l = &listing{at: stampOf(d.st), entries: es}
	n.listing.Store(d.l)
	return 0
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.l == nil {
		if errno := d.load(ctx); errno != 0 {
			return nil, errno
		}
	}
	d.last = nil
	pos := d.pos
	if pos-2 < len(d.l.entries) {
		d.returned++
	}
	switch {
	case pos == 0:
		d.pos++
		return &fuse.DirEntry{Name: ".", Ino: uint64(d.n.ino), Mode: syscall.S_IFDIR, Off: 1}, 0
	case pos == 1:
		d.pos++
		ino := uint64(d.n.ino)
		if _, p := d.n.Parent(); p != nil {
			ino = p.StableAttr().Ino
		}
		return &fuse.DirEntry{Name: "..", Ino: ino, Mode: syscall.S_IFDIR, Off: 2}, 0
	case pos-2 < len(d.l.entries):
		d.pos++
		e := &d.l.entries[pos-2]
		d.last = e
		return &fuse.DirEntry{Name: e.Name, Ino: uint64(e.Stat.Ino), Mode: e.Stat.Mode, Off: uint64(pos + 1)}, 0
	}
	// The end. The kernel asks once more, at this offset, before it
	// takes the listing as complete: keep a small listing for that
	// request (a large one is cheaper to read again than to keep), and
	// drop it when that request, which returns nothing, comes.
	if d.returned == 0 || len(d.l.entries) > keepListing {
		d.n.listing.CompareAndSwap(d.l, nil)
	}
	return nil, 0
}

// Lookup answers the READDIRPLUS lookup of the entry just returned from
// the listing's attributes.
func (d *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	d.mu.Lock()
	e := d.last
	d.mu.Unlock()
	if e == nil || e.Name != name {
		return d.n.Lookup(ctx, name, out)
	}
	return d.n.newChild(ctx, e.Stat, out), 0
}

// Seekdir moves to an offset returned earlier; 0 (rewinddir) reads the
// directory again.
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off == 0 {
		d.l = nil
	}
	d.pos, d.last = int(off), nil
	return 0
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return d.n.s.errno(d.n.s.fs.Sync(opCtx(ctx)))
}

func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {}
