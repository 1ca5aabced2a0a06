package mount

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// handle is an open file: an engine handle, which keeps the inode alive
// while open even after its last name is removed.
type handle struct {
	s *Server
	f *vfs.File
}

var (
	_ fs.FileReader   = (*handle)(nil)
	_ fs.FileWriter   = (*handle)(nil)
	_ fs.FileFlusher  = (*handle)(nil)
	_ fs.FileFsyncer  = (*handle)(nil)
	_ fs.FileReleaser = (*handle)(nil)
)

// splitRead is the size from which a read is split into parts read in
// parallel, each by one statement on its own reader connection.
const splitRead = 512 << 10

// readParts is how many parts a large read is split into (the engine
// has four reader connections).
const readParts = 4

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if len(dest) < splitRead {
		n, err := h.f.ReadAt(dest, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, h.s.errno(err)
		}
		return fuse.ReadResultData(dest[:n]), 0
	}
	// A large read (readahead sends 1 MiB) is split: a database whose
	// pages of one file are scattered (free pages reused after deletes)
	// is read with several requests in flight instead of one page at a
	// time, and a warm one with more than one core.
	part := (len(dest)/readParts + 4095) &^ 4095
	type result struct {
		n   int
		err error
	}
	var res [readParts]result
	var wg sync.WaitGroup
	for i := range readParts {
		lo := min(i*part, len(dest))
		hi := min(lo+part, len(dest))
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := h.f.ReadAt(dest[lo:hi], off+int64(lo))
			res[i] = result{n, err}
		}()
	}
	wg.Wait()
	total := 0
	for i := range readParts {
		r := res[i]
		if r.err != nil && !errors.Is(r.err, io.EOF) {
			return nil, h.s.errno(r.err)
		}
		total += r.n
		if lo := i * part; lo+r.n < min(lo+part, len(dest)) {
			break // end of file inside this part
		}
	}
	return fuse.ReadResultData(dest[:total]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	// A write by an unprivileged process clears the set-ID bits
	// (CAP_HANDLE_KILLPRIV_V2). The kernel sends such writes through at
	// once, in the writer's name; uid 0 stands for CAP_FSETID.
	if c, ok := fuse.FromContext(ctx); ok && c.Uid != 0 {
		if st, err := h.s.fs.StatIno(h.f.Ino()); err == nil {
			if m, ok := dropSetID(st); ok {
				if _, err := h.s.fs.SetattrIno(h.f.Ino(), vfs.Setattr{Mode: &m}); err != nil {
					return 0, h.s.errno(err)
				}
			}
		}
	}
	n, err := h.f.WriteAt(data, off)
	if err != nil {
		return 0, h.s.errno(err)
	}
	return uint32(n), 0
}

// Flush is close(2) of one descriptor. The kernel has sent the file's
// dirty pages before; committing the open group makes what the program
// closed visible to other processes when close(2) returns.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	return h.s.errno(h.s.fs.CommitGroup())
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return h.s.errno(h.f.Sync())
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	return h.s.errno(h.f.Close())
}

// dirHandle is an open directory. It reads the whole listing with the
// attributes of every entry in one query (on the first read, and again
// after a rewind), so READDIRPLUS needs no lookup per entry.
type dirHandle struct {
	n       *node
	st      vfs.Stat // attributes at opendir (see Getattr)
	mu      sync.Mutex
	entries []vfs.DirEntry
	loaded  bool
	pos     int // next position; 0 and 1 are "." and ".."
	last    *vfs.DirEntry
}

var (
	_ fs.FileReaddirenter = (*dirHandle)(nil)
	_ fs.FileLookuper     = (*dirHandle)(nil)
	_ fs.FileSeekdirer    = (*dirHandle)(nil)
	_ fs.FileFsyncdirer   = (*dirHandle)(nil)
	_ fs.FileReleasedirer = (*dirHandle)(nil)
)

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.loaded {
		es, err := d.n.s.fs.ReaddirPlusIno(d.n.ino)
		if err != nil {
			return nil, d.n.s.errno(err)
		}
		d.entries, d.loaded = es, true
	}
	d.last = nil
	pos := d.pos
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
	case pos-2 < len(d.entries):
		d.pos++
		e := &d.entries[pos-2]
		d.last = e
		return &fuse.DirEntry{Name: e.Name, Ino: uint64(e.Stat.Ino), Mode: e.Stat.Mode, Off: uint64(pos + 1)}, 0
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
		d.loaded, d.entries = false, nil
	}
	d.pos, d.last = int(off), nil
	return 0
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return d.n.s.errno(d.n.s.fs.Sync())
}

func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {}
