package hostcopy

import (
	"io"
	"os"
	"syscall"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// EntryOptions say what WriteEntry keeps besides the content and mode.
type EntryOptions struct {
	// Owner gives the entry st's owner and group when the process runs
	// as root (elsewhere chown would fail; the entry stays the caller's).
	Owner bool
	// Atime sets the access time from st; without it the access time is
	// the modification time.
	Atime bool
	// Sync flushes a regular file's content to the disk before its
	// attributes are set (the overlay commit, which renames it into
	// place next).
	Sync bool
}

// WriteEntry creates the host path p, which must not exist, as the agent
// entry st describes: a regular file with content's bytes (extended to
// st.Size when content ends early), a symbolic link to target, or a
// special file (Mknod); then gives it st's mode, times and, as opts say,
// owner. A symbolic link gets its times where the host can set them and
// never a mode. It is the one way an agent's entry reaches the host:
// `fs export` and the overlay commit (`agentfs commit`, `run`'s
// changes) both write through it.
func WriteEntry(p string, st vfs.Stat, content io.Reader, target string, buf []byte, opts EntryOptions) (written int64, err error) {
	switch st.Type() {
	case schema.ModeSymlink:
		if err := os.Symlink(target, p); err != nil {
			return 0, err
		}
	case schema.ModeRegular:
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, err
		}
		if written, err = CopyPieces(f, content, buf, nil); err == nil && written < st.Size {
			err = f.Truncate(st.Size)
		}
		if err == nil && opts.Sync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return written, err
		}
	default:
		if err := hostfs.Mknod(p, st.Mode, int(st.Rdev)); err != nil {
			return 0, err
		}
	}
	return written, SetAttrs(p, st, opts)
}

// SetAttrs gives the host path p st's mode, times and, as opts say,
// owner. For a symbolic link only the owner and, where the host can, the
// times.
func SetAttrs(p string, st vfs.Stat, opts EntryOptions) error {
	if opts.Owner && os.Geteuid() == 0 {
		if err := os.Lchown(p, int(st.UID), int(st.GID)); err != nil {
			return err
		}
	}
	atime := st.Mtime
	if opts.Atime {
		atime = st.Atime
	}
	if st.IsSymlink() {
		if !opts.Atime {
			return nil
		}
		return Lchtimes(p, atime, st.Mtime)
	}
	if err := chmod(p, st.Mode&0o7777); err != nil {
		return err
	}
	return os.Chtimes(p, atime, st.Mtime)
}

// chmod sets every permission bit, setuid, setgid and sticky included
// (os.Chmod drops those on some systems).
func chmod(p string, perm uint32) error {
	if err := syscall.Chmod(p, perm); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}
