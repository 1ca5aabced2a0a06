//go:build linux

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
		if st, err := h.s.fs.StatIno(opCtx(ctx), h.f.Ino()); err == nil {
			if m, ok := dropSetID(st); ok {
				if _, err := h.s.fs.SetattrIno(opCtx(ctx), h.f.Ino(), vfs.Setattr{Mode: &m}); err != nil {
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
