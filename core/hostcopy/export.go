package hostcopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// Export copies the agent tree src into the host directory host, creating
// it if needed. Existing host files and symlinks in the way are replaced
// (never written through); directories are merged; directory modes and
// times are set once their contents are in. src may also be a single
// regular file, copied to host (into it when host is a directory).
func Export(ctx context.Context, f *vfs.FS, src, host string, opts Options) (Stats, error) {
	ex := &exporter{copier: newCopier(ctx, f, opts)}
	err := ex.run(src, host)
	return ex.stats, err
}

type hostDir struct {
	times
	mode fs.FileMode
}

type exporter struct {
	*copier
	dirs []hostDir // modes and times are set once their contents are in
}

func (ex *exporter) run(src, host string) error {
	st, err := ex.fs.Stat(ex.ctx, src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if !st.IsRegular() {
			return fmt.Errorf("%s is not a directory or a regular file", src)
		}
		target := host
		if fi, err := os.Stat(host); err == nil && fi.IsDir() {
			target = filepath.Join(host, path.Base(src))
		}
		return ex.file(src, target, st)
	}
	if err := prepareHostDir(host, true); err != nil {
		return err
	}
	ex.dirs = append(ex.dirs, hostDir{times{host, st.Atime, st.Mtime}, hostMode(st)})
	if err := ex.walk(src, host); err != nil {
		return err
	}
	for i := len(ex.dirs) - 1; i >= 0; i-- {
		d := ex.dirs[i]
		if err := os.Chmod(d.path, d.mode); err != nil {
			return hostErr(err)
		}
		if err := os.Chtimes(d.path, d.atime, d.mtime); err != nil {
			return hostErr(err)
		}
	}
	return nil
}

// prepareHostDir makes sure h is a host directory the export can write
// into: created when missing (the top one with its parents, followed if
// it is a symlink; the ones below never through a symlink) and owner-rwx
// until the final modes are set at the end.
func prepareHostDir(h string, top bool) error {
	stat, notDir := os.Lstat, syscall.EEXIST
	if top {
		stat, notDir = os.Stat, syscall.ENOTDIR
	}
	fi, err := stat(h)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		mk := func() error { return os.Mkdir(h, 0o700) }
		if top {
			mk = func() error { return os.MkdirAll(h, 0o755) }
		}
		if err := mk(); err != nil {
			return hostErr(err)
		}
	case err != nil:
		return hostErr(err)
	case !fi.IsDir():
		op := "mkdir"
		if top {
			op = "export"
		}
		return hostErr(&fs.PathError{Op: op, Path: h, Err: notDir})
	case fi.Mode().Perm()&0o700 != 0o700:
		if err := os.Chmod(h, fi.Mode().Perm()|0o700); err != nil {
			return hostErr(err)
		}
	}
	return nil
}

func (ex *exporter) walk(dir, hdir string) error {
	entries, err := ex.fs.ReaddirPlus(ex.ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		// A database written by another tool could hold names that
		// would lead outside the host directory.
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
			return fmt.Errorf("refusing to export the entry %q of %s: not a valid file name", e.Name, dir)
		}
		src, h := path.Join(dir, e.Name), filepath.Join(hdir, e.Name)
		switch {
		case e.Stat.IsDir():
			if err := prepareHostDir(h, false); err != nil {
				return err
			}
			ex.dirs = append(ex.dirs, hostDir{times{h, e.Stat.Atime, e.Stat.Mtime}, hostMode(e.Stat)})
			ex.stats.Dirs++
			if err := ex.walk(src, h); err != nil {
				return err
			}
		case e.Stat.IsRegular():
			if err := ex.file(src, h, e.Stat); err != nil {
				return err
			}
		case e.Stat.IsSymlink():
			if err := ex.symlink(src, h, e.Stat); err != nil {
				return err
			}
		default:
			ex.warn("skipping %s: not a regular file, directory or symlink", src)
		}
		ex.tick()
	}
	return nil
}

// clearHost removes a non-directory at host path h so that it is
// replaced rather than written through (it may be a symlink).
func (ex *exporter) clearHost(h string) error {
	fi, err := os.Lstat(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return hostErr(err)
	}
	if ex.db.is(h, fi) {
		return fmt.Errorf("refusing to overwrite %s: it is the agent database", h)
	}
	if fi.IsDir() {
		return hostErr(&fs.PathError{Op: "export", Path: h, Err: syscall.EISDIR})
	}
	return hostErr(os.Remove(h))
}

func (ex *exporter) file(src, h string, st vfs.Stat) error {
	if err := ex.clearHost(h); err != nil {
		return err
	}
	in, err := ex.fs.Open(ex.ctx, src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	r := &agentReader{r: in, progress: func(n int) { ex.stats.Bytes += int64(n); ex.tick() }}
	if _, err := WriteEntry(h, st, r, "", ex.buf, EntryOptions{Atime: true}); err != nil {
		var ae agentError
		if errors.As(err, &ae) {
			return ae.err
		}
		return hostErr(err)
	}
	ex.stats.Files++
	return nil
}

func (ex *exporter) symlink(src, h string, st vfs.Stat) error {
	target, err := ex.fs.Readlink(ex.ctx, src)
	if err != nil {
		return err
	}
	if err := ex.clearHost(h); err != nil {
		return err
	}
	if _, err := WriteEntry(h, st, nil, target, nil, EntryOptions{Atime: true}); err != nil {
		return hostErr(err)
	}
	ex.stats.Symlinks++
	return nil
}

// agentReader reads an agent file for WriteEntry, marking its failures so
// that they are not reported as the host's.
type agentReader struct {
	r        io.Reader
	progress func(n int)
}

type agentError struct{ err error }

func (e agentError) Error() string { return e.err.Error() }

func (a *agentReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.progress(n)
	}
	if err != nil && err != io.EOF {
		err = agentError{err}
	}
	return n, err
}
