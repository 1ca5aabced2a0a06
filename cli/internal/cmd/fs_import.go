package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// ---- import ----

func newFSImportCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "import HOSTDIR [PATH]",
		Short: "Copy a host directory tree into the agent filesystem",
		Long: `Copy the contents of the host directory HOSTDIR into PATH (default /),
creating PATH if needed, as "cp -a HOSTDIR/. PATH" would: permission bits,
symbolic links (stored as they are, not followed) and access and
modification times, with nanoseconds, are kept. Existing files are
replaced, each at once (old content or new, never a mix); directories
are merged. A new PATH is built in a hidden directory next to it and
renamed into place at the end: a failed import leaves nothing, and one
killed midway leaves a hidden .agentfs-tmp-* directory that the next
import or cp -r into the same directory removes. Large files are
streamed, not held in memory.
Special files (FIFOs, devices, sockets) and the agent's own database are
skipped with a warning. HOSTDIR may also be a single file.`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dst := "/"
			if len(args) == 2 {
				dst = agentPath(args[1])
			}
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				im := &importer{fs: a.FS, warn: cmd.ErrOrStderr(), db: newDBFiles(a.Path()), buf: make([]byte, pieceSize(a.FS))}
				im.prog = newProgress(cmd.ErrOrStderr(), "importing", &im.stats)
				err := im.run(args[0], dst)
				im.prog.clear()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "imported %s\n", im.stats)
				return err
			})
		},
	}
}

// copyStats counts what an import or export copied.
type copyStats struct{ files, dirs, symlinks, bytes int64 }

func (s copyStats) String() string {
	return fmt.Sprintf("%d files, %d dirs, %d symlinks, %d bytes", s.files, s.dirs, s.symlinks, s.bytes)
}

// progress keeps a one-line status on a terminal, and is silent
// otherwise.
type progress struct {
	w     io.Writer
	verb  string
	stats *copyStats
	on    bool
	shown bool
	last  time.Time
}

func newProgress(w io.Writer, verb string, stats *copyStats) *progress {
	return &progress{w: w, verb: verb, stats: stats, on: isTerminal(w)}
}

func (p *progress) tick() {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	s := p.stats
	fmt.Fprintf(p.w, "\r%s: %d files, %d dirs, %d symlinks, %s\x1b[K", p.verb, s.files, s.dirs, s.symlinks, humanBytes(s.bytes))
	p.shown = true
}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
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

// posixPerm converts the permission bits of a host file to a POSIX mode.
func posixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// hostMode converts the permission bits of an agent file to a host mode.
func hostMode(st vfs.Stat) fs.FileMode {
	return st.FileMode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

type times struct {
	path         string
	atime, mtime time.Time
}

type importer struct {
	fs    *vfs.FS
	warn  io.Writer
	prog  *progress
	stats copyStats
	db    dbFiles
	buf   []byte
	dirs  []times // directories whose times are set once their contents are in
}

func (im *importer) run(host, dst string) error {
	info, err := os.Stat(host)
	if err != nil {
		return hostErr(err)
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return userError{msg: fmt.Sprintf("host: %s is not a directory or a regular file", host)}
		}
		target, err := intoDir(im.fs, filepath.ToSlash(host), dst)
		if err != nil {
			return err
		}
		return im.file(host, target, info)
	}
	// Walk the directory itself when HOSTDIR is a symlink to one.
	root, err := filepath.EvalSymlinks(host)
	if err != nil {
		return hostErr(err)
	}
	return stagedTree(im.fs, dst, func(dst string) error { return im.tree(root, dst, info) },
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
		defer im.prog.tick()
		switch {
		case fi.IsDir():
			if err := ensureDir(im.fs, target, posixPerm(fi.Mode())); err != nil {
				return err
			}
			im.dirs = append(im.dirs, times{target, hostAtime(fi), fi.ModTime()})
			im.stats.dirs++
			return nil
		case fi.Mode().IsRegular():
			return im.file(p, target, fi)
		case fi.Mode()&fs.ModeSymlink != 0:
			return im.symlink(p, target, fi)
		default:
			fmt.Fprintf(im.warn, "agentfs: skipping %s: not a regular file, directory or symlink\n", p)
			return nil
		}
	})
	if err != nil {
		return err
	}
	// Adding entries changed the directories' times: set them last.
	for i := len(im.dirs) - 1; i >= 0; i-- {
		d := im.dirs[i]
		if err := im.fs.Utimens(d.path, &d.atime, &d.mtime, false); err != nil {
			return err
		}
	}
	return nil
}

// rootDir makes dst (which may be a symlink to a directory) a directory
// with the mode of the host directory.
func (im *importer) rootDir(dst string, fi os.FileInfo) error {
	perm := posixPerm(fi.Mode())
	st, err := im.fs.Stat(dst)
	switch {
	case isErrno(err, syscall.ENOENT):
		if err := im.fs.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		err = im.fs.Chmod(dst, perm)
		if err != nil {
			return err
		}
	case err != nil:
		return err
	case !st.IsDir():
		return pathError("import", dst, syscall.ENOTDIR)
	case st.Perm() != perm:
		if err := im.fs.Chmod(dst, perm); err != nil {
			return err
		}
	}
	im.dirs = append(im.dirs, times{dst, hostAtime(fi), fi.ModTime()})
	return nil
}

// file copies the host file p to target, with its mode and times, as one
// atomic replacement: small files read whole and written in one
// transaction, large ones streamed through a vfs.AtomicFile.
func (im *importer) file(p, target string, fi os.FileInfo) error {
	if im.db.is(p, fi) {
		fmt.Fprintf(im.warn, "agentfs: skipping %s: it is the agent database\n", p)
		return nil
	}
	perm := posixPerm(fi.Mode())
	st, err := im.fs.Lstat(target)
	switch {
	case isErrno(err, syscall.ENOENT):
	case err != nil:
		return err
	case st.IsDir():
		return pathError("import", target, syscall.EISDIR)
	case st.IsRegular():
	default:
		if err := im.fs.Unlink(target); err != nil {
			return err
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return hostErr(err)
	}
	defer f.Close()
	tick := func(n int) { im.stats.bytes += int64(n); im.prog.tick() }
	at, mt := hostAtime(fi), fi.ModTime()
	if fi.Size() <= smallFile {
		data, err := io.ReadAll(f)
		if err != nil {
			return hostErr(err)
		}
		// Data, mode and times in one transaction.
		if err := im.fs.WriteFile(target, data, vfs.WriteOptions{Perm: perm, SetPerm: true, Atime: at, Mtime: mt}); err != nil {
			return err
		}
		tick(len(data))
		im.stats.files++
		return nil
	}
	// Streamed into a staging inode and made the content at once, with
	// mode and times, in the last transaction: a failure or a kill leaves
	// the old content (vfs.AtomicFile).
	w, err := im.fs.CreateAtomic(target, vfs.WriteOptions{Perm: perm, SetPerm: true, Atime: at, Mtime: mt})
	if err != nil {
		return err
	}
	if _, err := copyPieces(w, hostReader{f}, im.buf, tick); err != nil {
		w.Abort()
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	im.stats.files++
	return nil
}

func (im *importer) symlink(p, target string, fi os.FileInfo) error {
	link, err := os.Readlink(p)
	if err != nil {
		return hostErr(err)
	}
	if err := removeNonDir(im.fs, target); err != nil {
		return err
	}
	if err := im.fs.Symlink(link, target); err != nil {
		return err
	}
	at, mt := hostAtime(fi), fi.ModTime()
	if err := im.fs.Utimens(target, &at, &mt, false); err != nil {
		return err
	}
	im.stats.symlinks++
	return nil
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

type hostWriter struct{ w io.Writer }

func (h hostWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	return n, hostErr(err)
}

// ---- export ----

func newFSExportCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "export PATH HOSTDIR",
		Short: "Copy a tree of the agent filesystem to a host directory",
		Long: `Copy the contents of PATH into the host directory HOSTDIR, creating it if
needed: permission bits, symbolic links and access and modification
times, with nanoseconds, are kept. Existing host files and symlinks in
the way are replaced (never written through); directories are merged.
Special files are skipped with a warning. PATH may also be a single file.`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				ex := &exporter{fs: a.FS, warn: cmd.ErrOrStderr(), db: newDBFiles(a.Path()), buf: make([]byte, pieceSize(a.FS))}
				ex.prog = newProgress(cmd.ErrOrStderr(), "exporting", &ex.stats)
				err := ex.run(agentPath(args[0]), args[1])
				ex.prog.clear()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "exported %s\n", ex.stats)
				return err
			})
		},
	}
}

type hostDir struct {
	times
	mode fs.FileMode
}

type exporter struct {
	fs    *vfs.FS
	warn  io.Writer
	prog  *progress
	stats copyStats
	db    dbFiles
	buf   []byte
	dirs  []hostDir // modes and times are set once their contents are in
}

func (ex *exporter) run(src, host string) error {
	st, err := ex.fs.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if !st.IsRegular() {
			return userError{msg: fmt.Sprintf("%s is not a directory or a regular file", src)}
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
		return hostErr(pathError(op, h, notDir))
	case fi.Mode().Perm()&0o700 != 0o700:
		if err := os.Chmod(h, fi.Mode().Perm()|0o700); err != nil {
			return hostErr(err)
		}
	}
	return nil
}

func (ex *exporter) walk(dir, hdir string) error {
	entries, err := ex.fs.ReaddirPlus(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		// A database written by another tool could hold names that
		// would lead outside HOSTDIR.
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
			return userError{msg: fmt.Sprintf("refusing to export the entry %q of %s: not a valid file name", e.Name, dir)}
		}
		src, h := path.Join(dir, e.Name), filepath.Join(hdir, e.Name)
		switch {
		case e.Stat.IsDir():
			if err := prepareHostDir(h, false); err != nil {
				return err
			}
			ex.dirs = append(ex.dirs, hostDir{times{h, e.Stat.Atime, e.Stat.Mtime}, hostMode(e.Stat)})
			ex.stats.dirs++
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
			fmt.Fprintf(ex.warn, "agentfs: skipping %s: not a regular file, directory or symlink\n", src)
		}
		ex.prog.tick()
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
		return userError{msg: fmt.Sprintf("refusing to overwrite %s: it is the agent database", h)}
	}
	if fi.IsDir() {
		return hostErr(pathError("export", h, syscall.EISDIR))
	}
	return hostErr(os.Remove(h))
}

func (ex *exporter) file(src, h string, st vfs.Stat) error {
	if err := ex.clearHost(h); err != nil {
		return err
	}
	in, err := ex.fs.Open(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(h, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return hostErr(err)
	}
	_, err = copyPieces(hostWriter{out}, in, ex.buf, func(n int) { ex.stats.bytes += int64(n); ex.prog.tick() })
	if cerr := out.Close(); err == nil {
		err = hostErr(cerr)
	}
	if err != nil {
		return err
	}
	if err := os.Chmod(h, hostMode(st)); err != nil {
		return hostErr(err)
	}
	if err := os.Chtimes(h, st.Atime, st.Mtime); err != nil {
		return hostErr(err)
	}
	ex.stats.files++
	return nil
}

func (ex *exporter) symlink(src, h string, st vfs.Stat) error {
	target, err := ex.fs.Readlink(src)
	if err != nil {
		return err
	}
	if err := ex.clearHost(h); err != nil {
		return err
	}
	if err := os.Symlink(target, h); err != nil {
		return hostErr(err)
	}
	if err := lchtimes(h, st.Atime, st.Mtime); err != nil {
		return hostErr(err)
	}
	ex.stats.symlinks++
	return nil
}
