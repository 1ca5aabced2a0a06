package vfs

import (
	"context"
	"fmt"
	"path"
	"strings"
	"syscall"
	"time"
)

// TreeFS is what CopyTree needs of a filesystem: an *FS bound to a
// context (Bind) has it, and so does the sandbox's policy-checking view of
// one, so a copy in the sandbox is checked path by path like any other
// command.
type TreeFS interface {
	Stat(p string) (Stat, error)
	Lstat(p string) (Stat, error)
	ReaddirPlus(p string) ([]DirEntry, error)
	Mkdir(p string, perm uint32) error
	Readlink(p string) (string, error)
	Symlink(target, linkp string) error
	Unlink(p string) error
	CopyFile(src, dst string) error
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte, opts WriteOptions) error
	Chmod(p string, perm uint32) error
	Utimens(p string, atime, mtime *time.Time, follow bool) error
}

// Bind returns f as a TreeFS whose operations all run under ctx: a
// cancelled copy stops at its next file.
func (f *FS) Bind(ctx context.Context) TreeFS { return boundFS{ctx, f} }

type boundFS struct {
	ctx context.Context
	f   *FS
}

func (b boundFS) Stat(p string) (Stat, error)  { return b.f.Stat(b.ctx, p) }
func (b boundFS) Lstat(p string) (Stat, error) { return b.f.Lstat(b.ctx, p) }
func (b boundFS) ReaddirPlus(p string) ([]DirEntry, error) {
	return b.f.ReaddirPlus(b.ctx, p)
}
func (b boundFS) Mkdir(p string, perm uint32) error  { return b.f.Mkdir(b.ctx, p, perm) }
func (b boundFS) Readlink(p string) (string, error)  { return b.f.Readlink(b.ctx, p) }
func (b boundFS) Symlink(target, linkp string) error { return b.f.Symlink(b.ctx, target, linkp) }
func (b boundFS) Unlink(p string) error              { return b.f.Unlink(b.ctx, p) }
func (b boundFS) CopyFile(src, dst string) error     { return b.f.CopyFile(b.ctx, src, dst) }
func (b boundFS) ReadFile(p string) ([]byte, error)  { return b.f.ReadFile(b.ctx, p) }
func (b boundFS) Chmod(p string, perm uint32) error  { return b.f.Chmod(b.ctx, p, perm) }
func (b boundFS) WriteFile(p string, data []byte, opts WriteOptions) error {
	return b.f.WriteFile(b.ctx, p, data, opts)
}
func (b boundFS) Mknod(p string, mode uint32, rdev uint64) error {
	return b.f.Mknod(b.ctx, p, mode, rdev)
}
func (b boundFS) Utimens(p string, atime, mtime *time.Time, follow bool) error {
	return b.f.Utimens(b.ctx, p, atime, mtime, follow)
}

// CopyOptions says how CopyTree copies.
type CopyOptions struct {
	// FollowTop follows src when it is a symbolic link (cp without -R,
	// or with -L or -H).
	FollowTop bool
	// Deref copies what symbolic links inside the tree point to instead
	// of the links (cp -L).
	Deref bool
	// Preserve gives every copy the source's permission bits and times
	// (cp -p); otherwise new files and directories take the source's
	// permission bits and existing directories keep theirs, as GNU cp.
	Preserve bool
	// NoClobber leaves existing destination files and links alone (cp -n).
	NoClobber bool
	// Done, when set, is called after each entry is copied (cp -v,
	// progress); rel is the entry's path below the copy's top ("" for
	// the top), created says whether the destination is new.
	Done func(rel string, st Stat, created bool)
	// Failed, when set, is called when an entry cannot be copied:
	// returning nil skips the entry and goes on (what cp does, reporting
	// each), returning an error stops the copy with it. When nil, the
	// first failure stops the copy.
	Failed func(err *CopyError) error
	// Stop, when set, is asked before each entry; true ends the copy with
	// ErrCopyStopped (the sandbox's cancellation).
	Stop func() bool
}

// ErrCopyStopped is returned when CopyOptions.Stop ended a copy.
var ErrCopyStopped = fmt.Errorf("copy stopped: %w", syscall.ECANCELED)

// CopyError is the failure of one entry of a tree copy. Message phrases
// it as GNU cp does, with the names the user gave.
type CopyError struct {
	// Op is what failed, in cp's words: "create directory", "access",
	// "stat", "read symbolic link", "create symbolic link", "create
	// regular file", "overwrite" (a directory with a non-directory or the
	// other way round), "same file", "copy into itself".
	Op string
	// Rel is the entry's path below the copy's top ("" for the top).
	Rel string
	// Src and Dst are the absolute paths of the entry and its copy.
	Src, Dst string
	Err      error
}

func (e *CopyError) Error() string { return e.Message(e.Src, e.Dst) }
func (e *CopyError) Unwrap() error { return e.Err }

// Message is the error as GNU cp prints it, naming the source and the
// destination as src and dst (the caller's spelling of the paths).
func (e *CopyError) Message(src, dst string) string {
	switch e.Op {
	case "overwrite":
		if Errno(e.Err) == syscall.EISDIR {
			return fmt.Sprintf("cannot overwrite directory %s with non-directory", dst)
		}
		return fmt.Sprintf("cannot overwrite non-directory %s with directory %s", dst, src)
	case "same file":
		return fmt.Sprintf("%s and %s are the same file", src, dst)
	case "copy into itself":
		return fmt.Sprintf("cannot copy a directory, %s, into itself, %s", src, dst)
	case "access", "stat", "read symbolic link":
		return fmt.Sprintf("cannot %s %s: %s", e.Op, src, errText(e.Err))
	}
	return fmt.Sprintf("cannot %s %s: %s", e.Op, dst, errText(e.Err))
}

// errText is an error's text without the operation and path that a
// PathError repeats.
func errText(err error) string {
	if e := Errno(err); e != 0 {
		return e.Error()
	}
	return err.Error()
}

// CopyTree copies src to dst: a directory with everything below it
// (merged into dst when dst is a directory already: files and links in
// the way are replaced, directories kept), a file, a symbolic link, or a
// special file (recreated with Mknod when fsys has it, else copied as
// its content). Regular files are copied inside the database (CopyFile:
// chunks are shared, no bytes pass through the caller). Copying a
// directory into itself is refused with EINVAL.
func CopyTree(fsys TreeFS, src, dst string, opts CopyOptions) error {
	src, dst = path.Clean(src), path.Clean(dst)
	var st Stat
	var err error
	if opts.FollowTop {
		st, err = fsys.Stat(src)
	} else {
		st, err = fsys.Lstat(src)
	}
	t := &treeCopy{fsys: fsys, opts: opts, src: src, dst: dst}
	if err != nil {
		return t.fail(&CopyError{Op: "stat", Src: src, Dst: dst, Err: err})
	}
	if st.IsDir() && (dst == src || strings.HasPrefix(dst, strings.TrimSuffix(src, "/")+"/")) {
		return t.fail(&CopyError{Op: "copy into itself", Src: src, Dst: dst, Err: pathErr("copy", dst, syscall.EINVAL)})
	}
	return t.entry("", st)
}

type treeCopy struct {
	fsys     TreeFS
	opts     CopyOptions
	src, dst string
}

// fail reports one entry's failure: Failed decides whether the copy goes
// on (nil) or stops.
func (t *treeCopy) fail(e *CopyError) error {
	if t.opts.Failed == nil {
		return e
	}
	return t.opts.Failed(e)
}

func (t *treeCopy) entry(rel string, st Stat) error {
	if t.opts.Stop != nil && t.opts.Stop() {
		return ErrCopyStopped
	}
	sp, dp := path.Join(t.src, rel), path.Join(t.dst, rel)
	failed := func(op string, err error) error {
		return t.fail(&CopyError{Op: op, Rel: rel, Src: sp, Dst: dp, Err: err})
	}
	dst, derr := t.fsys.Lstat(dp)
	exists := derr == nil
	switch {
	case st.IsDir():
		if exists && !dst.IsDir() {
			return failed("overwrite", pathErr("copy", dp, syscall.ENOTDIR))
		}
		if !exists {
			if err := t.fsys.Mkdir(dp, st.Perm()); err != nil {
				return failed("create directory", err)
			}
			t.done(rel, st, true)
		}
		entries, err := t.fsys.ReaddirPlus(sp)
		if err != nil {
			return failed("access", err)
		}
		for _, e := range entries {
			est := e.Stat
			if t.opts.Deref && est.IsSymlink() {
				if est, err = t.fsys.Stat(path.Join(sp, e.Name)); err != nil {
					if err := t.fail(&CopyError{Op: "stat", Rel: path.Join(rel, e.Name), Src: path.Join(sp, e.Name), Dst: path.Join(dp, e.Name), Err: err}); err != nil {
						return err
					}
					continue
				}
			}
			if err := t.entry(path.Join(rel, e.Name), est); err != nil {
				return err
			}
		}
		if t.opts.Preserve {
			t.preserve(dp, st, true)
		}
		return nil
	case st.IsSymlink():
		target, err := t.fsys.Readlink(sp)
		if err != nil {
			return failed("read symbolic link", err)
		}
		if exists {
			if t.opts.NoClobber {
				return nil
			}
			if dst.IsDir() {
				return failed("overwrite", pathErr("copy", dp, syscall.EISDIR))
			}
			if err := t.fsys.Unlink(dp); err != nil {
				return failed("create symbolic link", err)
			}
		}
		if err := t.fsys.Symlink(target, dp); err != nil {
			return failed("create symbolic link", err)
		}
		t.done(rel, st, !exists)
		return nil
	}
	if exists {
		if t.opts.NoClobber {
			return nil
		}
		if dst.IsDir() {
			return failed("overwrite", pathErr("copy", dp, syscall.EISDIR))
		}
		if dst.Ino == st.Ino {
			return failed("same file", pathErr("copy", dp, syscall.EINVAL))
		}
		if dst.IsSymlink() {
			// cp writes through a symlink destination, as open(2) does.
			if tst, err := t.fsys.Stat(dp); err == nil && tst.Ino == st.Ino {
				return failed("same file", pathErr("copy", dp, syscall.EINVAL))
			}
		}
	}
	var err error
	switch {
	case st.IsRegular():
		err = t.fsys.CopyFile(sp, dp)
	default:
		if mk, ok := t.fsys.(interface {
			Mknod(p string, mode uint32, rdev uint64) error
		}); ok {
			if exists {
				if err = t.fsys.Unlink(dp); err != nil {
					return failed("create regular file", err)
				}
			}
			err = mk.Mknod(dp, st.Mode, st.Rdev)
		} else {
			var data []byte
			if data, err = t.fsys.ReadFile(sp); err == nil {
				err = t.fsys.WriteFile(dp, data, WriteOptions{})
			}
		}
	}
	if err != nil {
		return failed("create regular file", err)
	}
	if t.opts.Preserve {
		t.preserve(dp, st, false)
	}
	t.done(rel, st, !exists)
	return nil
}

func (t *treeCopy) done(rel string, st Stat, created bool) {
	if t.opts.Done != nil {
		t.opts.Done(rel, st, created)
	}
}

// preserve gives dp the permission bits and times of st; as cp -p, a
// failure here does not fail the copy.
func (t *treeCopy) preserve(dp string, st Stat, dir bool) {
	t.fsys.Chmod(dp, st.Perm())
	t.fsys.Utimens(dp, &st.Atime, &st.Mtime, dir)
}
