// Package nsrun builds the mount table of "agentfs run"'s sandbox. It runs
// in a process that is already in its own mount namespace (and usually a
// user namespace in which it is root) and that will exec the sandboxed
// command next:
//
//   - every mount becomes read-only (a bind remount per mount point: the
//     flag belongs to the mount, never to the filesystem, so the host's
//     view does not change);
//   - /tmp and /dev/shm get private tmpfs mounts;
//   - the working directory is replaced by a bind of the session's FUSE
//     mount;
//   - the allowed paths are bound back writable, at their own place.
//
// Sources are passed as descriptors opened before anything was mounted
// over them (a working directory or allowed path under /tmp is hidden by
// the private /tmp): mount(2) accepts /proc/self/fd/N as the source of a
// bind.
package nsrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentfs-go/agentfs/core/mount"
)

// Layout is what Setup mounts.
type Layout struct {
	// Workdir is replaced by a bind of Overlay (a directory, usually the
	// root of a FUSE mount).
	Workdir, Overlay string
	// Allow are paths (absolute, symlinks resolved) that stay writable.
	Allow []string
	// Host are paths under Workdir that show the host's file, read-only,
	// instead of the overlay's (when they exist): the session databases
	// in .agentfs/, which the sandbox must not change or delete.
	Host []string
	// PrivateDirs get an empty tmpfs each (when they exist): /tmp and
	// /dev/shm.
	PrivateDirs []string
}

// Setup builds the layout in the current mount namespace. The caller must
// be single-purpose: it changes the whole namespace's mounts.
func Setup(l Layout) error {
	// Nothing mounted here may travel back to the host.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	overlay, err := openPath(l.Overlay)
	if err != nil {
		return err
	}
	defer overlay.Close()
	allow := append([]string(nil), l.Allow...)
	// Parents before children, so that a child is bound over its parent.
	sort.Strings(allow)
	srcs := make([]*os.File, len(allow))
	for i, p := range allow {
		f, err := openPath(p)
		if err != nil {
			return err
		}
		defer f.Close()
		srcs[i] = f
	}
	var host []string
	var hostSrcs []*os.File
	for _, p := range l.Host {
		f, err := openPath(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		defer f.Close()
		host, hostSrcs = append(host, p), append(hostSrcs, f)
	}
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.dir == l.Overlay {
			// Bound below: read-only here would make the bind read-only.
			continue
		}
		if err := remount(m.dir, m.flags|syscall.MS_RDONLY); err != nil {
			// A mount point that vanished or that this user cannot
			// reach cannot be written through either.
			// (a dead FUSE mount: ENOTCONN).
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENOTCONN) {
				continue
			}
			return fmt.Errorf("make %s read-only: %w", m.dir, err)
		}
	}
	for _, d := range l.PrivateDirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("mount a private tmpfs on %s: %w", d, err)
		}
	}
	if err := bind(overlay, l.Workdir, true); err != nil {
		return err
	}
	for i, p := range host {
		st, err := hostSrcs[i].Stat()
		if err != nil {
			return err
		}
		if err := bind(hostSrcs[i], p, st.IsDir()); err != nil {
			return err
		}
		flags, err := flagsOf(p)
		if err != nil {
			return err
		}
		if err := remount(p, flags|syscall.MS_RDONLY); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	for i, p := range allow {
		st, err := srcs[i].Stat()
		if err != nil {
			return err
		}
		if err := bind(srcs[i], p, st.IsDir()); err != nil {
			return err
		}
		flags, err := flagsOf(p)
		if err != nil {
			return err
		}
		if err := remount(p, flags&^syscall.MS_RDONLY); err != nil {
			return fmt.Errorf("make %s writable: %w (is it read-only on the host?)", p, err)
		}
		// Mounts below an allowed path came along (MS_REC) read-only:
		// those writable on the host are writable again.
		for _, m := range mounts {
			if !m.ro && strings.HasPrefix(m.dir, strings.TrimSuffix(p, "/")+"/") {
				if err := remount(m.dir, m.flags); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EACCES) {
					return fmt.Errorf("make %s writable: %w", m.dir, err)
				}
			}
		}
	}
	return nil
}

// openPath opens p as a mount source (O_PATH: no read permission needed,
// no FUSE open request).
func openPath(p string) (*os.File, error) {
	fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// bind mounts the file or directory src refers to on target, creating
// target when it is missing (possible only in a private tmpfs: the rest
// is read-only by now).
func bind(src *os.File, target string, dir bool) error {
	if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if dir {
			err = os.Mkdir(target, 0o755)
		} else {
			err = os.WriteFile(target, nil, 0o644)
		}
		if err != nil {
			return err
		}
	}
	source := "/proc/self/fd/" + strconv.Itoa(int(src.Fd()))
	if err := syscall.Mount(source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", src.Name(), target, err)
	}
	return nil
}

// remount sets the flags of the mount at dir. In a user namespace the
// kernel refuses to clear nosuid, nodev, noexec or the atime flags of a
// mount inherited from the host ("locked"), so flags must carry them.
func remount(dir string, flags uintptr) error {
	return syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|flags, "")
}

// flagsOf returns the per-mount flags of the mount holding p.
func flagsOf(p string) (uintptr, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: p, Err: err}
	}
	var f uintptr
	for _, m := range []struct{ st, ms uintptr }{
		{stRdonly, syscall.MS_RDONLY}, {stNosuid, syscall.MS_NOSUID}, {stNodev, syscall.MS_NODEV},
		{stNoexec, syscall.MS_NOEXEC}, {stNoatime, syscall.MS_NOATIME},
		{stNodiratime, syscall.MS_NODIRATIME}, {stRelatime, syscall.MS_RELATIME},
	} {
		if uintptr(st.Flags)&m.st != 0 {
			f |= m.ms
		}
	}
	if f&(syscall.MS_NOATIME|syscall.MS_RELATIME) == 0 {
		f |= syscall.MS_STRICTATIME
	}
	return f, nil
}

// statvfs flags (ST_*), as the kernel reports them in f_flags.
const (
	stRdonly     = 0x1
	stNosuid     = 0x2
	stNodev      = 0x4
	stNoexec     = 0x8
	stNoatime    = 0x400
	stNodiratime = 0x800
	stRelatime   = 0x1000
)

const (
	msNosymfollow = 0x100    // MS_NOSYMFOLLOW (Linux 5.10)
	oPath         = 0x200000 // O_PATH (the syscall package lacks it)
)

type mountPoint struct {
	dir   string
	flags uintptr // per-mount flags to keep (nosuid, nodev, noexec, atime)
	ro    bool    // read-only already
}

// mountPoints lists the mount points of this namespace from
// /proc/self/mountinfo, each once. Their order does not matter: the
// read-only flag of one mount does not change another's.
func mountPoints() ([]mountPoint, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountPoints(f)
}

func parseMountPoints(r io.Reader) ([]mountPoint, error) {
	var out []mountPoint
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		m := mountPoint{dir: mount.UnescapeField(fields[4])}
		for _, o := range strings.Split(fields[5], ",") {
			switch o {
			case "ro":
				m.ro = true
			case "nosuid":
				m.flags |= syscall.MS_NOSUID
			case "nodev":
				m.flags |= syscall.MS_NODEV
			case "noexec":
				m.flags |= syscall.MS_NOEXEC
			case "noatime":
				m.flags |= syscall.MS_NOATIME
			case "nodiratime":
				m.flags |= syscall.MS_NODIRATIME
			case "relatime":
				m.flags |= syscall.MS_RELATIME
			case "nosymfollow":
				m.flags |= msNosymfollow
			}
		}
		// Neither noatime nor relatime: strictatime, which a remount
		// must name (the atime mode of an inherited mount is locked).
		if m.flags&(syscall.MS_NOATIME|syscall.MS_RELATIME) == 0 {
			m.flags |= syscall.MS_STRICTATIME
		}
		// A later mount on the same point is the one a path reaches.
		if i, ok := seen[m.dir]; ok {
			out[i] = m
			continue
		}
		seen[m.dir] = len(out)
		out = append(out, m)
	}
	return out, sc.Err()
}
