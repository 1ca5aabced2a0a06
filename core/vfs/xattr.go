package vfs

import (
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
func (f *FS) Setxattr(path, name string, value []byte, flags int, follow bool) error {
	if name == "" || len(name) > XattrNameMax {
		return pathErr("setxattr", path, syscall.ERANGE)
	}
	if len(value) > XattrValueMax {
		return pathErr("setxattr", path, syscall.E2BIG)
	}
	if value == nil {
		value = []byte{}
	}
	return f.write(func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "setxattr", path, follow)
		if err != nil {
			return err
		}
		exists, err := f.hasXattr(c, l.ino, name)
		if err != nil {
			return err
		}
		if flags&XattrCreate != 0 && exists {
			return pathErr("setxattr", path, syscall.EEXIST)
		}
		if flags&XattrReplace != 0 && !exists {
			return pathErr("setxattr", path, syscall.ENODATA)
		}
		if _, err := c.Exec("INSERT OR REPLACE INTO fs_xattr (ino, name, value) VALUES (?, CAST(? AS TEXT), ?)", l.ino, []byte(name), value); err != nil {
			return err
		}
		return f.setCtime(c, l.ino, time.Now())
	})
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
func (f *FS) Getxattr(path, name string, follow bool) ([]byte, error) {
	var v []byte
	err := f.read(func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "getxattr", path, follow)
		if err != nil {
			return err
		}
		err = c.QueryRow("SELECT value FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", l.ino, []byte(name)).Scan(&v)
		if isNoRows(err) {
			return pathErr("getxattr", path, syscall.ENODATA)
		}
		return err
	})
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err
}

// Listxattr returns the names of the extended attributes of path.
func (f *FS) Listxattr(path string, follow bool) ([]string, error) {
	var names []string
	err := f.read(func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "listxattr", path, follow)
		if err != nil {
			return err
		}
		rows, err := c.Query("SELECT CAST(name AS BLOB) FROM fs_xattr WHERE ino = ? ORDER BY name", l.ino)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n []byte
			if err := rows.Scan(&n); err != nil {
				return err
			}
			names = append(names, string(n))
		}
		return rows.Err()
	})
	return names, err
}

// Removexattr deletes an extended attribute, or fails with ENODATA.
func (f *FS) Removexattr(path, name string, follow bool) error {
	return f.write(func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "removexattr", path, follow)
		if err != nil {
			return err
		}
		r, err := c.Exec("DELETE FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", l.ino, []byte(name))
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return pathErr("removexattr", path, syscall.ENODATA)
		}
		f.dirty()
		return f.setCtime(c, l.ino, time.Now())
	})
}
