package vfs

import (
	"context"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// Extended attribute limits, as on Linux.
const (
	XattrNameMax  = 255
	XattrValueMax = 64 << 10
)

// Setxattr flags.
const (
	XattrCreate  = 1 // fail with EEXIST if the attribute exists
	XattrReplace = 2 // fail with ENODATA if it does not
)

// Setxattr sets an extended attribute of path (following symlinks when
// follow is true).
func (f *FS) Setxattr(ctx context.Context, path, name string, value []byte, flags int, follow bool) error {
	if err := checkXattr(path, name, value); err != nil {
		return err
	}
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "setxattr", path, follow)
		if err != nil {
			return err
		}
		return f.setxattr(c, path, l.ino, name, value, flags)
	})
}

func checkXattr(path, name string, value []byte) error {
	if name == "" || len(name) > XattrNameMax {
		return pathErr("setxattr", path, syscall.ERANGE)
	}
	if len(value) > XattrValueMax {
		return pathErr("setxattr", path, syscall.E2BIG)
	}
	if name == stagingXattr {
		// Reserved: it makes a nameless inode a staging one (atomic.go).
		return pathErr("setxattr", path, syscall.EPERM)
	}
	return nil
}

// setxattr sets an attribute of the existing inode ino; both APIs end
// here.
func (f *FS) setxattr(c *store.Conn, path string, ino int64, name string, value []byte, flags int) error {
	if value == nil {
		value = []byte{}
	}
	exists, err := f.hasXattr(c, ino, name)
	if err != nil {
		return err
	}
	if flags&XattrCreate != 0 && exists {
		return pathErr("setxattr", path, syscall.EEXIST)
	}
	if flags&XattrReplace != 0 && !exists {
		return pathErr("setxattr", path, syscall.ENODATA)
	}
	if _, err := c.Exec("INSERT OR REPLACE INTO fs_xattr (ino, name, value) VALUES (?, CAST(? AS TEXT), ?)", ino, []byte(name), value); err != nil {
		return err
	}
	return f.setCtime(c, ino, time.Now())
}

func (f *FS) hasXattr(c *store.Conn, ino int64, name string) (bool, error) {
	var one int
	err := c.QueryRow("SELECT 1 FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", ino, []byte(name)).Scan(&one)
	if isNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

// Getxattr returns the value of an extended attribute, or ENODATA.
func (f *FS) Getxattr(ctx context.Context, path, name string, follow bool) ([]byte, error) {
	var v []byte
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "getxattr", path, follow)
		if err != nil {
			return err
		}
		v, err = f.getxattr(c, path, l.ino, name)
		return err
	})
	return v, err
}

func (f *FS) getxattr(c *store.Conn, path string, ino int64, name string) ([]byte, error) {
	var v []byte
	err := c.QueryRow("SELECT value FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", ino, []byte(name)).Scan(&v)
	if isNoRows(err) {
		return nil, pathErr("getxattr", path, syscall.ENODATA)
	}
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err
}

// Listxattr returns the names of the extended attributes of path.
func (f *FS) Listxattr(ctx context.Context, path string, follow bool) ([]string, error) {
	var names []string
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "listxattr", path, follow)
		if err != nil {
			return err
		}
		names, err = f.listxattr(c, l.ino)
		return err
	})
	return names, err
}

func (f *FS) listxattr(c *store.Conn, ino int64) ([]string, error) {
	return c.Strings("SELECT CAST(name AS BLOB) FROM fs_xattr WHERE ino = ? ORDER BY name", ino)
}

// Removexattr deletes an extended attribute, or fails with ENODATA.
func (f *FS) Removexattr(ctx context.Context, path, name string, follow bool) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "removexattr", path, follow)
		if err != nil {
			return err
		}
		return f.removexattr(c, path, l.ino, name)
	})
}

func (f *FS) removexattr(c *store.Conn, path string, ino int64, name string) error {
	r, err := c.Exec("DELETE FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", ino, []byte(name))
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return pathErr("removexattr", path, syscall.ENODATA)
	}
	f.dirty()
	return f.setCtime(c, ino, time.Now())
}
