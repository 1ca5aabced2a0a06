// Package hostcopy copies trees between the host's filesystem and an
// agent's: Import (a host directory or file into the agent, as
// `cp -a HOSTDIR/. PATH`) and Export (an agent tree out to the host).
// The CLI's `fs import`/`fs export` are flag parsing over it.
//
// Both keep permission bits, symbolic links (as links) and access and
// modification times with nanoseconds. Special files and the agent's own
// database files are skipped with a warning. Large files are streamed in
// pieces of about 1 MiB, never held whole in memory.
package hostcopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// Stats counts what a copy copied.
type Stats struct{ Files, Dirs, Symlinks, Bytes int64 }

func (s Stats) String() string {
	return fmt.Sprintf("%d files, %d dirs, %d symlinks, %d bytes", s.Files, s.Dirs, s.Symlinks, s.Bytes)
}

// Options tune a copy.
type Options struct {
	// DBPath is the agent's database file: it and its -wal, -shm and
	// -journal files are never read by Import (they change while it
	// runs) nor overwritten by Export.
	DBPath string
	// Warn, when set, receives one line per skipped entry.
	Warn func(msg string)
	// Progress, when set, is called as entries and bytes are copied.
	Progress func(Stats)
}

// HostError is a failure on the host's side of a copy. Its text starts
// with "host: " so it does not read as a path inside the agent.
type HostError struct{ Err error }

func (e *HostError) Error() string {
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		if errno, ok := pe.Err.(syscall.Errno); ok {
			return fmt.Sprintf("host: %s %s: %s (%s)", pe.Op, pe.Path, errno.Error(), vfs.ErrnoName(errno))
		}
	}
	return "host: " + e.Err.Error()
}

func hostErr(err error) error {
	if err == nil {
		return nil
	}
	return &HostError{err}
}

// copier is the state both directions share.
type copier struct {
	ctx   context.Context // the caller's: a cancelled copy stops at its next entry
	fs    *vfs.FS
	opts  Options
	stats Stats
	db    dbFiles
	buf   []byte
}

func newCopier(ctx context.Context, f *vfs.FS, opts Options) *copier {
	return &copier{ctx: ctx, fs: f, opts: opts, db: newDBFiles(opts.DBPath), buf: make([]byte, PieceSize(f))}
}

func (c *copier) warn(format string, a ...any) {
	if c.opts.Warn != nil {
		c.opts.Warn(fmt.Sprintf(format, a...))
	}
}

func (c *copier) tick() {
	if c.opts.Progress != nil {
		c.opts.Progress(c.stats)
	}
}

// PieceSize is the amount of file data moved per transaction when a file
// is streamed in or out, rounded down to whole chunks.
func PieceSize(f *vfs.FS) int {
	const target = 1 << 20
	cs := f.ChunkSize()
	if cs <= 0 || cs >= target {
		return max(cs, 4096)
	}
	return target / cs * cs
}

// CopyPieces copies src to dst in writes of len(buf) bytes (the last may
// be shorter), so that each write to an engine file is one transaction of
// bounded size. progress, if not nil, is called after each piece.
func CopyPieces(dst io.Writer, src io.Reader, buf []byte, progress func(n int)) (int64, error) {
	var total int64
	for {
		n, err := io.ReadFull(src, buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
			if progress != nil {
				progress(n)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// dbFiles identifies the agent's own database files on the host, so that
// an import of a directory holding them does not read a file while it
// grows, and an export never overwrites them.
type dbFiles struct {
	infos []os.FileInfo
	names map[string]bool
}

func newDBFiles(dbPath string) dbFiles {
	d := dbFiles{names: map[string]bool{}}
	if dbPath == "" {
		return d
	}
	if abs, err := filepath.Abs(dbPath); err == nil {
		dbPath = abs
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		p := dbPath + suffix
		d.names[p] = true
		if fi, err := os.Stat(p); err == nil {
			d.infos = append(d.infos, fi)
		}
	}
	return d
}

// is reports whether the host file p (with attributes fi, may be nil) is
// one of the database files.
func (d dbFiles) is(p string, fi os.FileInfo) bool {
	if abs, err := filepath.Abs(p); err == nil && d.names[abs] {
		return true
	}
	if fi == nil {
		return false
	}
	for _, db := range d.infos {
		if os.SameFile(fi, db) {
			return true
		}
	}
	return false
}

// hostMode converts the permission bits of an agent file to a host mode.
func hostMode(st vfs.Stat) fs.FileMode {
	return st.FileMode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// hostReader and hostWriter mark failures of host files as host errors.
type hostReader struct{ r io.Reader }

func (h hostReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if err != nil && err != io.EOF {
		err = hostErr(err)
	}
	return n, err
}
