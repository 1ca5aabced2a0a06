//go:build linux

package mount

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// List returns the agentfs mounts of this process's mount namespace.
func List() ([]Info, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Info
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if info, ok := parseMountinfo(sc.Text()); ok {
			out = append(out, info)
		}
	}
	return out, sc.Err()
}

// parseMountinfo reads one line of /proc/self/mountinfo:
//
//	36 35 98:0 /root /mnt rw,noatime master:1 - fuse.agentfs /a.db rw,user_id=0
func parseMountinfo(line string) (Info, bool) {
	fields := strings.Fields(line)
	sep := -1
	for i, f := range fields {
		if f == "-" && i >= 6 {
			sep = i
			break
		}
	}
	if sep < 0 || len(fields) < sep+3 || fields[sep+1] != FSType {
		return Info{}, false
	}
	id, err := strconv.Atoi(fields[0])
	if err != nil {
		return Info{}, false
	}
	info := Info{ID: id, Dir: UnescapeField(fields[4]), Source: UnescapeField(fields[sep+2])}
	if len(fields) > sep+3 {
		info.Options = fields[sep+3]
	}
	return info, true
}

// Find returns the agentfs mount at dir, if any (the last one mounted
// there when several are stacked).
func Find(dir string) (Info, bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Info{}, false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	list, err := List()
	if err != nil {
		return Info{}, false, err
	}
	var found Info
	ok := false
	for _, m := range list {
		if m.Dir == abs {
			found, ok = m, true
		}
	}
	return found, ok, nil
}

// Unmount unmounts the agentfs mount at dir: with umount2(2) as root,
// else with fusermount3 -u. Lazy detaches it even while in use (the
// server exits when the last user is gone). A busy mount fails with an
// error wrapping syscall.EBUSY.
func Unmount(dir string, lazy bool) error {
	m, ok, err := Find(dir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", dir, ErrNotMounted)
	}
	return unmountDir(m.Dir, lazy)
}

func unmountDir(dir string, lazy bool) error {
	flags := 0
	if lazy {
		flags = syscall.MNT_DETACH
	}
	err := syscall.Unmount(dir, flags)
	if err == nil || errors.Is(err, syscall.EBUSY) || os.Geteuid() == 0 {
		if err != nil {
			return &os.PathError{Op: "unmount", Path: dir, Err: err}
		}
		return nil
	}
	bin, lerr := exec.LookPath("fusermount3")
	if lerr != nil {
		if bin, lerr = exec.LookPath("fusermount"); lerr != nil {
			return fmt.Errorf("unmount %s: %w (and fusermount3 is not installed)", dir, err)
		}
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command(bin, append(args, dir)...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "busy") {
			return &os.PathError{Op: "unmount", Path: dir, Err: syscall.EBUSY}
		}
		return fmt.Errorf("unmount %s: %s: %w", dir, msg, err)
	}
	return nil
}
