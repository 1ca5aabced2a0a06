package hostcopy

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// smallFile is the size up to which Import reads a host file whole and
// writes it with WriteFile; larger files are streamed. Both are one
// atomic replacement.
const smallFile = 4 << 20

// Import copies the host directory host into the agent path dst, creating
// dst if needed, as `cp -a HOST/. DST` would. Existing files are
// replaced, each at once (old content or new, never a mix); directories
// are merged. A new dst is built with vfs.FS.StageTree: a failed import
// leaves nothing. host may also be a single regular file, copied to dst
// (into it when dst is a directory).
func Import(ctx context.Context, f *vfs.FS, host, dst string, opts Options) (Stats, error) {
	im := &importer{copier: newCopier(ctx, f, opts)}
	err := im.run(host, dst)
	return im.stats, err
}

type times struct {
	path         string
	atime, mtime time.Time
}

type importer struct {
	*copier
	dirs []times // directories whose times are set once their contents are in
}

func (im *importer) run(host, dst string) error {
	info, err := os.Stat(host)
	if err != nil {
		return hostErr(err)
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return hostErr(fmt.Errorf("%s is not a directory or a regular file", host))
		}
		target := dst
		if st, err := im.fs.Stat(im.ctx, dst); err == nil && st.IsDir() {
			if base := path.Base(filepath.ToSlash(host)); base != "/" && base != "." && base != ".." {
				target = path.Join(dst, base)
			}
		}
		return im.file(host, target, info)
	}
	// Walk the directory itself when host is a symlink to one.
	root, err := filepath.EvalSymlinks(host)
	if err != nil {
		return hostErr(err)
	}
	return im.fs.StageTree(im.ctx, dst, func(dst string) error { return im.tree(root, dst, info) },
		func() string { return im.stats.String() })
}

// tree copies the host directory root into dst.
func (im *importer) tree(root, dst string, info os.FileInfo) error {
	if err := im.rootDir(dst, info); err != nil {
		return err
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return hostErr(err)
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return hostErr(err)
		}
		target := path.Join(dst, filepath.ToSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return hostErr(err)
		}
		defer im.tick()
		switch {
		case fi.IsDir():
			if err := ensureDir(im.ctx, im.fs, target, vfs.PosixPerm(fi.Mode())); err != nil {
				return err
			}
			im.dirs = append(im.dirs, times{target, hostAtime(fi), fi.ModTime()})
			im.stats.Dirs++
			return nil
		case fi.Mode().IsRegular():
			return im.file(p, target, fi)
		case fi.Mode()&fs.ModeSymlink != 0:
			return im.symlink(p, target, fi)
		default:
			im.warn("skipping %s: not a regular file, directory or symlink", p)
			return nil
		}
	})
	if err != nil {
		return err
	}
	// Adding entries changed the directories' times: set them last.
	for i := len(im.dirs) - 1; i >= 0; i-- {
		d := im.dirs[i]
		if err := im.fs.Utimens(im.ctx, d.path, &d.atime, &d.mtime, false); err != nil {
			return err
		}
	}
	return nil
}

// rootDir makes dst (which may be a symlink to a directory) a directory
// with the mode of the host directory.
func (im *importer) rootDir(dst string, fi os.FileInfo) error {
	perm := vfs.PosixPerm(fi.Mode())
	st, err := im.fs.Stat(im.ctx, dst)
	switch {
	case vfs.Errno(err) == syscall.ENOENT:
		if err := im.fs.MkdirAll(im.ctx, dst, 0o755); err != nil {
			return err
		}
		if err := im.fs.Chmod(im.ctx, dst, perm); err != nil {
			return err
		}
	case err != nil:
		return err
	case !st.IsDir():
		return &fs.PathError{Op: "import", Path: dst, Err: syscall.ENOTDIR}
	case st.Perm() != perm:
		if err := im.fs.Chmod(im.ctx, dst, perm); err != nil {
			return err
		}
	}
	im.dirs = append(im.dirs, times{dst, hostAtime(fi), fi.ModTime()})
	return nil
}

// ensureDir makes p a directory with permission bits perm, creating it if
// missing (an import keeps the host's modes on existing directories too).
func ensureDir(ctx context.Context, f *vfs.FS, p string, perm uint32) error {
	st, err := f.Lstat(ctx, p)
	switch {
	case vfs.Errno(err) == syscall.ENOENT:
		if err := f.Mkdir(ctx, p, perm); err != nil {
			return err
		}
		if st, err = f.Lstat(ctx, p); err != nil {
			return err
		}
	case err != nil:
		return err
	case !st.IsDir():
		return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.EEXIST}
	}
	if st.Perm() != perm {
		return f.Chmod(ctx, p, perm)
	}
	return nil
}

// file copies the host file p to target, with its mode and times, as one
// atomic replacement: small files read whole and written in one
// transaction, large ones streamed through a vfs.AtomicFile.
func (im *importer) file(p, target string, fi os.FileInfo) error {
	if im.db.is(p, fi) {
		im.warn("skipping %s: it is the agent database", p)
		return nil
	}
	perm := vfs.PosixPerm(fi.Mode())
	st, err := im.fs.Lstat(im.ctx, target)
	switch {
	case vfs.Errno(err) == syscall.ENOENT:
	case err != nil:
		return err
	case st.IsDir():
		return &fs.PathError{Op: "import", Path: target, Err: syscall.EISDIR}
	case st.IsRegular():
	default:
		if err := im.fs.Unlink(im.ctx, target); err != nil {
			return err
		}
	}
	h, err := os.Open(p)
	if err != nil {
		return hostErr(err)
	}
	defer h.Close()
	progress := func(n int) { im.stats.Bytes += int64(n); im.tick() }
	at, mt := hostAtime(fi), fi.ModTime()
	if fi.Size() <= smallFile {
		data, err := io.ReadAll(h)
		if err != nil {
			return hostErr(err)
		}
		// Data, mode and times in one transaction.
		if err := im.fs.WriteFile(im.ctx, target, data, vfs.WriteOptions{Perm: perm, SetPerm: true, Atime: at, Mtime: mt}); err != nil {
			return err
		}
		progress(len(data))
		im.stats.Files++
		return nil
	}
	// Streamed into a staging inode and made the content at once, with
	// mode and times, in the last transaction: a failure or a kill leaves
	// the old content (vfs.AtomicFile).
	w, err := im.fs.CreateAtomic(im.ctx, target, vfs.WriteOptions{Perm: perm, SetPerm: true, Atime: at, Mtime: mt})
	if err != nil {
		return err
	}
	if _, err := CopyPieces(w, hostReader{h}, im.buf, progress); err != nil {
		w.Abort()
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	im.stats.Files++
	return nil
}

func (im *importer) symlink(p, target string, fi os.FileInfo) error {
	link, err := os.Readlink(p)
	if err != nil {
		return hostErr(err)
	}
	if st, err := im.fs.Lstat(im.ctx, target); err == nil {
		if st.IsDir() {
			return &fs.PathError{Op: "replace", Path: target, Err: syscall.EISDIR}
		}
		if err := im.fs.Unlink(im.ctx, target); err != nil {
			return err
		}
	} else if vfs.Errno(err) != syscall.ENOENT {
		return err
	}
	if err := im.fs.Symlink(im.ctx, link, target); err != nil {
		return err
	}
	at, mt := hostAtime(fi), fi.ModTime()
	if err := im.fs.Utimens(im.ctx, target, &at, &mt, false); err != nil {
		return err
	}
	im.stats.Symlinks++
	return nil
}
