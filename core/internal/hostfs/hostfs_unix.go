//go:build unix

package hostfs

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ONoFollow is O_NOFOLLOW in the os.O_* flags the engine takes.
const ONoFollow = syscall.O_NOFOLLOW

// ErrnoName is the symbolic name of an error number ("ENOENT"), "" if
// it has none.
func ErrnoName(e syscall.Errno) string { return unix.ErrnoName(e) }

// Mknod makes a device node, FIFO or socket at path.
func Mknod(path string, mode uint32, dev int) error { return syscall.Mknod(path, mode, dev) }

// FreeBytes is the space available to us on the filesystem holding
// path, 0 if unknown.
func FreeBytes(path string) int64 {
	var hs syscall.Statfs_t
	if err := syscall.Statfs(path, &hs); err != nil {
		return 0
	}
	return int64(hs.Bavail) * int64(hs.Bsize)
}

// Xattrs reads the extended attributes of a host entry (not following
// a symlink) that belong to the file: the names hostPolicy picks out
// describe the host's policy (labels, ACLs, capabilities, quarantine) and
// stay behind. A filesystem without xattrs has none. Most entries have
// none, which costs one listxattr(2) and no allocation.
func Xattrs(path string) ([]Xattr, error) {
	list, err := readSized(func(b []byte) (int, error) { return unix.Llistxattr(path, b) })
	if err == unix.ENOTSUP || err == errNoAttr {
		return nil, nil
	}
	if err != nil || len(list) == 0 {
		return nil, err
	}
	var out []Xattr
	for _, name := range strings.Split(string(list), "\x00") {
		if name == "" || hostPolicy(name) {
			continue
		}
		v, err := readSized(func(b []byte) (int, error) { return unix.Lgetxattr(path, name, b) })
		if err == errNoAttr { // removed in between
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Xattr{Name: name, Value: v})
	}
	return out, nil
}

// readSized runs an xattr call that answers its size when given no
// buffer, then again with a buffer of that size, again if the value grew
// in between (ERANGE).
func readSized(call func(b []byte) (int, error)) ([]byte, error) {
	for {
		n, err := call(nil)
		if err != nil || n == 0 {
			return []byte{}, err
		}
		b := make([]byte, n)
		n, err = call(b)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		return b[:n], nil
	}
}
