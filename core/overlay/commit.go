package overlay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/hostcopy"
	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func unixNano(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }

// CommitOptions tune Commit.
type CommitOptions struct {
	// DryRun reports what would be done (and the conflicts) and changes
	// nothing.
	DryRun bool
	// Force applies files whose base changed since they were copied up,
	// overwriting the host's change (their unchanged bytes are read from
	// the base as it is now).
	Force bool
}

// CommitResult says what Commit did (or, with DryRun, would do).
type CommitResult struct {
	Changes []Change `json:"changes"`
	// Conflicts are the paths whose base changed since the copy-up
	// (applied anyway with Force).
	Conflicts []string `json:"conflicts,omitempty"`
	// Applied is false for a dry run.
	Applied bool `json:"applied"`
}

// ConflictError lists the paths whose base changed since they were
// copied up; Commit refuses them unless forced.
type ConflictError struct{ Paths []string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the host changed %d path(s) since the overlay copied them up: %s", len(e.Paths), strings.Join(e.Paths, ", "))
}

// Unwrap makes the error match syscall.ESTALE.
func (e *ConflictError) Unwrap() error { return syscall.ESTALE }

// Commit applies the overlay's changes to its base directory: new and
// changed files, directories, symlinks and special files with their modes,
// owners (when permitted) and modification times; deletions; renames (a
// deletion plus an addition). Each file is written to a staging directory
// inside the base first and renamed into place, so that a reader of the
// host never sees a half-written file and a file can take the content of
// another that the same commit replaces. The changes go in as a unit: if
// one fails, those before it are undone (see apply) and the error says so.
// Then the delta is emptied: the overlay shows the host directory, which
// now has the changes.
//
// Paths whose base changed since their copy-up, or since the overlay
// removed them, are refused with a *ConflictError unless opts.Force.
func Commit(ctx context.Context, a *core.Agent, opts CommitOptions) (CommitResult, error) {
	var res CommitResult
	changes, err := Diff(ctx, a)
	if err != nil {
		return res, err
	}
	res.Changes = changes
	base := a.FS.Base()
	removed, err := removedBase(ctx, a)
	if err != nil {
		return res, err
	}
	for _, c := range changes {
		if c.Op == Deleted {
			// The entry and what was removed below it (a removed tree
			// keeps one record per entry).
			i := sort.Search(len(removed), func(i int) bool { return removed[i].path >= c.Path })
			for ; i < len(removed) && (removed[i].path == c.Path || strings.HasPrefix(removed[i].path, c.Path+"/")); i++ {
				if removed[i].changed(filepath.Join(base, filepath.FromSlash(removed[i].path))) {
					res.Conflicts = append(res.Conflicts, c.Path)
					break
				}
			}
			continue
		}
		if c.ino == 0 {
			continue
		}
		info, ok, err := a.FS.OverlayInfo(ctx, c.ino)
		if err != nil {
			return res, err
		}
		if !ok || (c.Op == Modified && !c.content && c.Type == "dir") {
			continue
		}
		if baseChanged(filepath.Join(base, filepath.FromSlash(info.Path)), info) {
			res.Conflicts = append(res.Conflicts, c.Path)
		}
	}
	if len(res.Conflicts) > 0 && !opts.Force {
		return res, &ConflictError{Paths: res.Conflicts}
	}
	if opts.DryRun || len(changes) == 0 {
		return res, nil
	}
	if err := apply(ctx, a, base, changes, opts.Force); err != nil {
		return res, err
	}
	res.Applied = true
	return res, reset(ctx, a, base)
}

// removedEntry is what a base entry was when the overlay removed it.
type removedEntry struct {
	path               string
	ino, size, mtimeNs int64
}

// changed reports whether the host entry at p is no longer the one
// removed (for a directory: its entries changed, or it was replaced).
func (r removedEntry) changed(p string) bool {
	var st hostfs.StatBuf
	if err := hostfs.Lstat(p, &st); err != nil {
		return false // gone already: nothing to lose
	}
	return int64(st.Ino) != r.ino || hostfs.Mtime(&st).UnixNano() != r.mtimeNs || (st.Mode&syscall.S_IFMT != syscall.S_IFDIR && st.Size != r.size)
}

// removedBase lists the records of removed base entries, sorted by path.
func removedBase(ctx context.Context, a *core.Agent) ([]removedEntry, error) {
	var out []removedEntry
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		rows, err := c.Query("SELECT CAST(path AS BLOB), base_ino, base_size, base_mtime_ns FROM " + vfs.WhiteoutTable + " ORDER BY path")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p []byte
			var r removedEntry
			if err := rows.Scan(&p, &r.ino, &r.size, &r.mtimeNs); err != nil {
				return err
			}
			r.path = string(p)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// baseChanged reports whether the base file recorded in info is no longer
// the one copied up.
func baseChanged(p string, info vfs.OverlayFile) bool {
	var st hostfs.StatBuf
	if err := hostfs.Lstat(p, &st); err != nil {
		return true
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return int64(st.Ino) != info.BaseIno
	}
	return int64(st.Ino) != info.BaseIno || st.Size != info.BaseSize || hostfs.Mtime(&st).UnixNano() != info.BaseMtime.UnixNano()
}

// hostChange is a hook for tests: it runs before each change apply makes
// to the host outside the staging directory, and its error fails the
// commit there.
var hostChange = func(path string) error { return nil }

// journal records how to undo each change apply has made to the host, so
// that a commit failing halfway puts the host directory back as it was:
// a replaced or deleted entry is moved aside into the staging directory
// (same filesystem: a rename) rather than removed, and only removed when
// the whole commit has succeeded.
type journal struct {
	stage string
	n     int
	undo  []func() error
	dirs  map[string]hostfs.StatBuf // directories whose entries changed, as they were
}

// noteDir records the times of directory d before its first entry changes.
func (j *journal) noteDir(d string) {
	if _, ok := j.dirs[d]; ok {
		return
	}
	var st hostfs.StatBuf
	if hostfs.Lstat(d, &st) == nil {
		j.dirs[d] = st
	}
}

// restoreDirTimes gives the noted directories back their times, which the
// entries moved in and out of them changed.
func (j *journal) restoreDirTimes() {
	for d, st := range j.dirs {
		os.Chtimes(d, hostfs.Atime(&st), hostfs.Mtime(&st))
	}
}

// aside moves the host entry p into the staging directory and records how
// to move it back.
func (j *journal) aside(p string) error {
	if err := hostChange(p); err != nil {
		return err
	}
	j.noteDir(filepath.Dir(p))
	j.n++
	keep := filepath.Join(j.stage, fmt.Sprintf("old-%d", j.n))
	if err := os.Rename(p, keep); errors.Is(err, syscall.EXDEV) {
		// Another filesystem mounted inside the base: it cannot be moved
		// aside, only removed (this step alone cannot be undone).
		return os.RemoveAll(p)
	} else if err != nil {
		return err
	}
	j.undo = append(j.undo, func() error { return os.Rename(keep, p) })
	return nil
}

// place renames the staged entry tmp to p, which must not exist, and
// records how to take it away again.
func (j *journal) place(tmp, p string) error {
	if err := hostChange(p); err != nil {
		return err
	}
	j.noteDir(filepath.Dir(p))
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	j.undo = append(j.undo, func() error { return os.RemoveAll(p) })
	return nil
}

// mkdir makes the directory p and records how to remove it.
func (j *journal) mkdir(p string) error {
	if err := hostChange(p); err != nil {
		return err
	}
	j.noteDir(filepath.Dir(p))
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	j.undo = append(j.undo, func() error { return os.Remove(p) })
	return nil
}

// attrs gives the existing host entry p the attributes of st and records
// how to give back its old mode, owner and times.
func (j *journal) attrs(p string, st vfs.Stat) error {
	if err := hostChange(p); err != nil {
		return err
	}
	var old hostfs.StatBuf
	if err := hostfs.Lstat(p, &old); err != nil {
		return err
	}
	if err := hostcopy.SetAttrs(p, st, hostcopy.EntryOptions{Owner: true}); err != nil {
		return err
	}
	j.undo = append(j.undo, func() error { return restoreAttrs(p, &old) })
	return nil
}

// rollback undoes every recorded change, newest first. The times of the
// directories whose entries changed are given back by restoreDirTimes,
// once nothing moves any more.
func (j *journal) rollback() error {
	var errs []error
	for i := len(j.undo) - 1; i >= 0; i-- {
		if err := j.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	j.undo = nil
	return errors.Join(errs...)
}

// restoreAttrs gives p back the mode, owner and times of old.
func restoreAttrs(p string, old *hostfs.StatBuf) error {
	if os.Geteuid() == 0 {
		if err := os.Lchown(p, int(old.Uid), int(old.Gid)); err != nil {
			return err
		}
	}
	if old.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return nil
	}
	if err := syscall.Chmod(p, uint32(old.Mode)&0o7777); err != nil { // uint16 on macOS
		return err
	}
	return os.Chtimes(p, hostfs.Atime(old), hostfs.Mtime(old))
}

// apply makes changes on the host as one unit: everything is staged
// first; then entries are moved aside, placed and given attributes under
// a journal; if any step fails, the journal puts the host back and the
// error says so.
func apply(ctx context.Context, a *core.Agent, base string, changes []Change, force bool) (err error) {
	host := func(p string) string { return filepath.Join(base, filepath.FromSlash(p)) }
	var rnd [6]byte
	rand.Read(rnd[:])
	stage := filepath.Join(base, ".agentfs-commit-"+hex.EncodeToString(rnd[:]))
	j := &journal{stage: stage, dirs: map[string]hostfs.StatBuf{}}
	j.noteDir(base) // the staging directory comes and goes in it
	if err := os.Mkdir(stage, 0o700); err != nil {
		return fmt.Errorf("commit: staging directory: %w", err)
	}
	defer func() {
		if err != nil {
			if rerr := j.rollback(); rerr != nil {
				// Keep the staging directory: it holds what could not
				// be moved back.
				err = fmt.Errorf("%w; the host could not be fully restored (%v): the moved-aside originals are in %s", err, rerr, stage)
				return
			}
			os.RemoveAll(stage)
			j.restoreDirTimes()
			err = fmt.Errorf("%w (nothing was changed on the host: what had been applied was undone)", err)
			return
		}
		os.RemoveAll(stage)
	}()
	// 1. Stage every file's new content while all base files are intact.
	// A delta inode with several new names (hard links) is staged once;
	// its other names become hard links of the first on the host.
	staged := map[int]string{}
	firstName := map[int64]string{} // delta inode -> first path written
	linkTo := map[int]string{}
	for i, c := range changes {
		if !c.content {
			continue
		}
		if c.ino != 0 && c.st.Nlink > 1 && c.Type != "dir" {
			if p, ok := firstName[c.ino]; ok {
				linkTo[i] = p
				continue
			}
			firstName[c.ino] = c.Path
		}
		tmp := filepath.Join(stage, fmt.Sprint(i))
		if err := stageEntry(ctx, a, base, c, tmp, force); err != nil {
			return fmt.Errorf("commit %s: %w", c.Path, err)
		}
		staged[i] = tmp
	}
	// 2. Deletions (top paths only): moved aside.
	for _, c := range changes {
		if c.Op == Deleted {
			if err := j.aside(host(c.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("commit: delete %s: %w", c.Path, err)
			}
		}
	}
	// 3. Additions and modifications, parents first (sorted by path).
	var dirs []Change
	for i, c := range changes {
		if c.Op == Deleted {
			continue
		}
		p := host(c.Path)
		var st hostfs.StatBuf
		exists := hostfs.Lstat(p, &st) == nil
		if c.Type == "dir" {
			if exists && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
				if err := j.aside(p); err != nil {
					return fmt.Errorf("commit %s: %w", c.Path, err)
				}
				exists = false
			}
			if !exists {
				if err := j.mkdir(p); err != nil {
					return fmt.Errorf("commit %s: %w", c.Path, err)
				}
			}
			if err := j.attrs(p, c.st); err != nil {
				return fmt.Errorf("commit %s: %w", c.Path, err)
			}
			dirs = append(dirs, c)
			continue
		}
		if first, ok := linkTo[i]; ok {
			tmp := filepath.Join(stage, fmt.Sprint(i))
			if err := os.Link(host(first), tmp); err != nil {
				return fmt.Errorf("commit %s: %w", c.Path, err)
			}
			staged[i] = tmp
		}
		if tmp, ok := staged[i]; ok {
			if exists {
				if err := j.aside(p); err != nil {
					return fmt.Errorf("commit %s: %w", c.Path, err)
				}
			}
			if err := j.place(tmp, p); err != nil {
				return fmt.Errorf("commit %s: %w", c.Path, err)
			}
			continue
		}
		// Attributes only.
		if err := j.attrs(p, c.st); err != nil {
			return fmt.Errorf("commit %s: %w", c.Path, err)
		}
	}
	// 4. Directory times last, deepest first: entries made in a directory
	// change its mtime. (Their old times are restored by the journal's
	// attrs entries if a later step fails.)
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].Path > dirs[j].Path })
	for _, c := range dirs {
		t := c.st.Mtime
		if err := hostChange(host(c.Path)); err != nil {
			return fmt.Errorf("commit %s: %w", c.Path, err)
		}
		if err := os.Chtimes(host(c.Path), t, t); err != nil {
			return fmt.Errorf("commit %s: %w", c.Path, err)
		}
	}
	return nil
}

// stageEntry writes the new version of a non-directory at tmp, through
// hostcopy.WriteEntry (the one way an agent entry reaches the host),
// flushed to the disk before the journal renames it into place.
func stageEntry(ctx context.Context, a *core.Agent, base string, c Change, tmp string, force bool) error {
	opts := hostcopy.EntryOptions{Owner: true, Sync: true}
	if c.ino == 0 {
		// Inside a moved directory never listed: the base entry as is.
		return copyHost(filepath.Join(base, filepath.FromSlash(c.source)), tmp, c.st, opts)
	}
	var content io.Reader
	if c.st.IsRegular() {
		content = io.NewSectionReader(inoReader{ctx, a.FS, c.ino, force}, 0, c.st.Size)
	}
	_, err := hostcopy.WriteEntry(tmp, c.st, content, c.target, make([]byte, 1<<20), opts)
	return err
}

// inoReader reads an agent inode (the overlay's copy, or the base file
// when anyBase) as an io.ReaderAt.
type inoReader struct {
	ctx     context.Context
	fs      *vfs.FS
	ino     int64
	anyBase bool
}

func (r inoReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.fs.ReadInoAt(r.ctx, r.ino, p, off, r.anyBase)
	if err == nil && n < len(p) {
		err = io.EOF // the file shrank meanwhile: WriteEntry extends it to its size
	}
	return n, err
}

// copyHost copies a host file (or symlink) of the base to tmp.
func copyHost(src, tmp string, st vfs.Stat, opts hostcopy.EntryOptions) error {
	var content io.Reader
	var target string
	switch {
	case st.IsSymlink():
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		target = t
	case st.IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		content = in
	}
	_, err := hostcopy.WriteEntry(tmp, st, content, target, make([]byte, 1<<20), opts)
	return err
}

// reset empties the delta after a commit: the base now has every change.
func reset(ctx context.Context, a *core.Agent, base string) error {
	err := a.DB.Write(ctx, func(c *store.Conn) error {
		for _, q := range []string{
			"DELETE FROM fs_dentry",
			"DELETE FROM fs_data",
			"DELETE FROM fs_symlink",
			"DELETE FROM fs_xattr",
			"DELETE FROM fs_whiteout",
			"DELETE FROM " + vfs.WhiteoutTable,
			"DELETE FROM fs_origin",
			"DELETE FROM " + vfs.OverlayTable,
			"DELETE FROM fs_inode WHERE ino <> 1",
		} {
			if _, err := c.Exec(q); err != nil {
				return err
			}
		}
		return vfs.EnsureOverlayRoot(c, base)
	})
	a.FS.Invalidate()
	if err != nil {
		return fmt.Errorf("commit applied, but emptying the delta failed: %w", err)
	}
	return nil
}
