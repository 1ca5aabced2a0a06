// Package nsrun builds the mount table of "agentfs run"'s sandbox. It runs
// in a process that is already in its own mount namespace (and usually a
// user namespace in which it is root) and that will exec the sandboxed
// command next:
//
//   - every mount becomes read-only (a bind remount per mount point: the
//     flag belongs to the mount, never to the filesystem, so the host's
//     view does not change);
//   - /dev becomes a minimal private one (the harmless device nodes of
//     the host bound in, a devpts of its own), no /dev/kmsg, no disks;
//   - /tmp and /dev/shm get private tmpfs mounts, /run (and in the strict
//     profile the home directories) empty ones;
//   - the host's UNIX sockets still in sight get /dev/null over them;
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
	// PrivateDirs get an empty tmpfs each (when they exist), writable
	// by all (mode 1777): /tmp and /dev/shm.
	PrivateDirs []string
	// Hidden get an empty tmpfs each (when they exist), mode 0755: /run,
	// where the host's daemons keep their sockets, and in the strict
	// profile the home directories.
	Hidden []string
	// Keep are host files or directories under Hidden ones bound back
	// read-only at their place (the target of /etc/resolv.conf, often in
	// /run); missing ones are skipped.
	Keep []string
	// Dirs are made (with their parents, mode 0700) after the tmpfs
	// mounts, owned by the caller: $XDG_RUNTIME_DIR, a fresh home.
	Dirs []string
	// Mask are paths of host sockets (from /proc/net/unix) that get
	// /dev/null mounted over them, so that nothing can connect to them:
	// a socket is found by its inode, which a read-only mount does not
	// protect. Those that are no socket in the sandbox's view by then
	// (hidden, gone) and those under Workdir or an Allow path are
	// skipped.
	Mask []string
	// Dev replaces /dev with a minimal one (see devNodes).
	Dev bool
}

// devNodes are the host's device nodes a minimal /dev binds: the
// harmless ones every program may expect. Not there: kmsg (the kernel
// log, writable by root), mem, kmem, port, block devices, fuse, kvm,
// the consoles and every other node of the host.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

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
	var keep []string
	var keepSrcs []*os.File
	for _, p := range l.Keep {
		f, err := openPath(p)
		if err != nil {
			continue
		}
		defer f.Close()
		keep, keepSrcs = append(keep, p), append(keepSrcs, f)
	}
	// /dev/null, the host's, opened before /dev is replaced: the mask
	// of host sockets (and the minimal /dev's own node).
	devSrcs := map[string]*os.File{}
	for _, n := range devNodes {
		f, err := openPath("/dev/" + n)
		if err != nil {
			continue
		}
		defer f.Close()
		devSrcs[n] = f
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
	if l.Dev {
		if err := setupDev(devSrcs); err != nil {
			return err
		}
	}
	for _, d := range l.PrivateDirs {
		if err := privateTmpfs(d, "mode=1777"); err != nil {
			return err
		}
	}
	for _, d := range l.Hidden {
		if err := privateTmpfs(d, "mode=0755"); err != nil {
			return err
		}
	}
	for _, d := range l.Dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("make %s: %w", d, err)
		}
	}
	for i, p := range keep {
		st, err := keepSrcs[i].Stat()
		if err != nil {
			return err
		}
		if err := bind(keepSrcs[i], p, st.IsDir()); err != nil {
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
	if null := devSrcs["null"]; null != nil {
		if err := maskSockets(l, null); err != nil {
			return err
		}
	} else if len(l.Mask) > 0 {
		return errors.New("no /dev/null to hide the host's sockets with")
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

// privateTmpfs mounts an empty tmpfs on d when d is a directory.
func privateTmpfs(d, opts string) error {
	st, err := os.Stat(d)
	if err != nil || !st.IsDir() {
		return nil
	}
	if err := syscall.Mount("tmpfs", d, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount a private tmpfs on %s: %w", d, err)
	}
	return nil
}

// setupDev replaces /dev with a tmpfs holding binds of the nodes in srcs,
// a devpts of the sandbox's own (new instance: the host's terminals are
// not in it), the usual links, and an empty shm directory (PrivateDirs
// mounts its tmpfs). The tmpfs is read-only afterwards.
func setupDev(srcs map[string]*os.File) error {
	if err := syscall.Mount("tmpfs", "/dev", "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC|syscall.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount the sandbox's /dev: %w", err)
	}
	for _, n := range devNodes {
		if f := srcs[n]; f != nil {
			if err := bind(f, "/dev/"+n, false); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod("/dev/shm", 0o1777); err != nil {
		return err
	}
	// ptmxmode=0666: every user of the sandbox may open terminals; no
	// gid= option (the tty group may be unmapped in a user namespace).
	if err := syscall.Mount("devpts", "/dev/pts", "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount the sandbox's /dev/pts: %w", err)
	}
	for link, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, "/dev/"+link); err != nil {
			return err
		}
	}
	flags, err := flagsOf("/dev")
	if err != nil {
		return err
	}
	if err := remount("/dev", flags|syscall.MS_RDONLY); err != nil {
		return fmt.Errorf("make /dev read-only: %w", err)
	}
	return nil
}

// maskSockets mounts null over each socket of l.Mask still visible.
func maskSockets(l Layout, null *os.File) error {
	under := func(p, dir string) bool {
		return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
	}
	source := "/proc/self/fd/" + strconv.Itoa(int(null.Fd()))
next:
	for _, p := range l.Mask {
		if !filepath.IsAbs(p) || under(p, l.Workdir) {
			continue
		}
		for _, a := range l.Allow {
			if under(p, a) {
				continue next
			}
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			continue
		}
		if err := syscall.Mount(source, p, "", syscall.MS_BIND, ""); err != nil {
			// A socket in a directory this user cannot search is out
			// of its reach anyway.
			if errors.Is(err, syscall.EACCES) || errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("hide the host socket %s: %w", p, err)
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
