package vfs

import (
	"context"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// The inode-level API serves callers that hold inode numbers instead of
// paths (the FUSE mount): a directory inode and a name instead of a path.
// Each method finds its entry with entryAt and then runs the same helper
// as the path-based method (mkdirLoc, openLoc, renameLoc...), in one
// transaction, so the two APIs cannot drift apart. Errors are
// *fs.PathError carrying a syscall.Errno; their Path reads "#PARENT/name"
// or "#INO" since no path is known.

// RootIno is the inode number of the root directory.
const RootIno = schema.RootIno

func atPath(parent int64, name string) string { return "#" + itoa(parent) + "/" + name }

func inoPath(ino int64) string { return "#" + itoa(ino) }

// entryAt is the loc of name in directory parent. The parent must be an
// existing directory (ENOENT, ENOTDIR). "." and ".." name the directory
// and its parent, as at the end of a path; with special != 0 they are
// refused as resolveEntry refuses them (see dotErr). A missing name gives
// a loc with ino 0.
func (f *FS) entryAt(c *store.Conn, op string, parent int64, name string, special syscall.Errno) (loc, string, error) {
	path := atPath(parent, name)
	pst, ok, err := f.inode(c, parent)
	if err != nil {
		return loc{}, path, err
	}
	if !ok {
		return loc{}, path, pathErr(op, path, syscall.ENOENT)
	}
	if !pst.IsDir() {
		return loc{}, path, pathErr(op, path, syscall.ENOTDIR)
	}
	switch {
	case name == "":
		return loc{}, path, pathErr(op, path, syscall.ENOENT)
	case len(name) > NameMax:
		return loc{}, path, pathErr(op, path, syscall.ENAMETOOLONG)
	case strings.ContainsAny(name, "/\x00"):
		return loc{}, path, pathErr(op, path, syscall.EINVAL)
	}
	if name == "." || name == ".." {
		ino := parent
		if name == ".." {
			if ino, err = f.parentIno(c, parent); err != nil {
				return loc{}, path, err
			}
		}
		st, err := f.mustInode(c, ino, op, path)
		if err != nil {
			return loc{}, path, err
		}
		l := loc{parent: parent, name: name, ino: ino, st: st}
		if special != 0 {
			return l, path, dotErr(op, path, l, special)
		}
		return l, path, nil
	}
	ino, err := f.lookup(c, parent, name)
	if err != nil || ino == 0 {
		return loc{parent: parent, name: name}, path, err
	}
	st, err := f.mustInode(c, ino, op, path)
	if err != nil {
		return loc{}, path, err
	}
	return loc{parent: parent, name: name, ino: ino, st: st}, path, nil
}

// parentIno is the directory holding dir (the root for the root).
func (f *FS) parentIno(c *store.Conn, dir int64) (int64, error) {
	if dir == schema.RootIno {
		return dir, nil
	}
	var p int64
	err := c.QueryRow("SELECT parent_ino FROM fs_dentry WHERE ino = ? LIMIT 1", dir).Scan(&p)
	if isNoRows(err) {
		return 0, pathErr("lookup", inoPath(dir), syscall.ENOENT)
	}
	return p, err
}

// inodeLoc is the loc of an existing inode, for operations on it.
func (f *FS) inodeLoc(c *store.Conn, op string, ino int64) (loc, string, error) {
	path := inoPath(ino)
	st, ok, err := f.inode(c, ino)
	if err != nil {
		return loc{}, path, err
	}
	if !ok {
		return loc{}, path, pathErr(op, path, syscall.ENOENT)
	}
	return loc{ino: ino, st: st}, path, nil
}

// Lookup returns the attributes of name in directory parent, without
// following a symlink.
func (f *FS) Lookup(ctx context.Context, parent int64, name string) (st Stat, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "lookup", parent, name, 0)
		if err != nil {
			return err
		}
		if l.ino == 0 {
			return pathErr("lookup", path, syscall.ENOENT)
		}
		st = l.st
		return f.dirLinks(c, &st)
	})
	return st, err
}

// StatIno returns the attributes of inode ino. An inode whose last name
// is gone but that is still open in this process can be read.
func (f *FS) StatIno(ctx context.Context, ino int64) (st Stat, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		l, _, err := f.inodeLoc(c, "stat", ino)
		if err != nil {
			return err
		}
		st = l.st
		return f.dirLinks(c, &st)
	})
	return st, err
}

// StatInos returns the attributes of the inodes of inos that exist, in one
// read: a cache outside the engine checks what it holds with it.
func (f *FS) StatInos(ctx context.Context, inos []int64) (map[int64]Stat, error) {
	out := make(map[int64]Stat, len(inos))
	err := f.read(ctx, func(c *store.Conn) error {
		for len(inos) > 0 {
			n := min(len(inos), 500)
			rows, err := c.Query("SELECT "+inodeCols+" FROM fs_inode i WHERE i.ino IN (SELECT value FROM json_each(?))", "["+joinInts(inos[:n])+"]")
			if err != nil {
				return err
			}
			for rows.Next() {
				var st Stat
				if err := scanStat(rows, &st); err != nil {
					rows.Close()
					return err
				}
				st.Blksize = int64(f.chunkSize)
				out[st.Ino] = st
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
			inos = inos[n:]
		}
		var dirs []*Stat
		for ino, st := range out {
			if st.IsDir() {
				dirs = append(dirs, &st)
				defer func() { out[ino] = st }()
			}
		}
		return f.dirLinks(c, dirs...)
	})
	return out, err
}

// Changes returns a counter that grows whenever another connection
// (another process, or another Agent on the same file) has committed since
// the last operation of this filesystem. It runs a cheap query to look.
func (f *FS) Changes(ctx context.Context) (n uint64, err error) {
	err = f.read(ctx, func(*store.Conn) error {
		n = f.foreign
		return nil
	})
	return n, err
}

// ReaddirPlusIno lists directory ino with the attributes of each entry,
// sorted bytewise, without "." and "..".
func (f *FS) ReaddirPlusIno(ctx context.Context, ino int64) (out []DirEntry, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		l, path, err := f.inodeLoc(c, "readdir", ino)
		if err != nil {
			return err
		}
		if !l.st.IsDir() {
			return pathErr("readdir", path, syscall.ENOTDIR)
		}
		out, err = f.readdirPlusIno(c, ino)
		return err
	})
	return out, err
}

// MkdirAt creates directory name in parent, owned by o.
func (f *FS) MkdirAt(ctx context.Context, parent int64, name string, perm uint32, o Owner) (st Stat, err error) {
	err = f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "mkdir", parent, name, syscall.EEXIST)
		if err != nil {
			return err
		}
		ino, err := f.mkdirLoc(c, "mkdir", path, l, perm, o, time.Now())
		if err != nil {
			return err
		}
		if st, err = f.mustInode(c, ino, "mkdir", path); err != nil {
			return err
		}
		return f.dirLinks(c, &st)
	})
	return st, err
}

// CreateAt opens name in parent with os.O_* flags, creating a regular
// file owned by o when it does not exist (O_CREATE is implied); O_EXCL
// fails on an existing entry and O_TRUNC truncates an existing file, as
// open(2). A final symlink is not followed (ELOOP). It returns the
// handle and the attributes after the open.
func (f *FS) CreateAt(ctx context.Context, parent int64, name string, flags int, perm uint32, o Owner) (*File, Stat, error) {
	flags |= os.O_CREATE
	return f.openHandle(ctx, atPath(parent, name), flags, true, func(c *store.Conn, now time.Time) (int64, error) {
		l, path, err := f.entryAt(c, "open", parent, name, 0)
		if err != nil {
			return 0, err
		}
		if isDotEntry(l) { // as resolveCreate
			if flags&os.O_EXCL != 0 {
				return 0, pathErr("open", path, syscall.EEXIST)
			}
			return 0, pathErr("open", path, syscall.EISDIR)
		}
		return f.openLoc(c, path, l, flags, perm, o, now)
	})
}

// OpenIno opens inode ino with os.O_* flags (O_TRUNC truncates,
// O_APPEND makes every write append). The inode stays alive while the
// handle is open, even after its last name is removed.
func (f *FS) OpenIno(ctx context.Context, ino int64, flags int) (*File, error) {
	flags &^= os.O_CREATE | os.O_EXCL
	h, _, err := f.openHandle(ctx, inoPath(ino), flags, false, func(c *store.Conn, now time.Time) (int64, error) {
		l, path, err := f.inodeLoc(c, "open", ino)
		if err != nil {
			return 0, err
		}
		return f.openLoc(c, path, l, flags, 0, Owner{}, now)
	})
	return h, err
}

// UnlinkAt removes the non-directory entry name from parent.
func (f *FS) UnlinkAt(ctx context.Context, parent int64, name string) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "unlink", parent, name, syscall.EISDIR)
		if err != nil {
			return err
		}
		return f.unlinkLoc(c, path, l, time.Now())
	})
}

// RmdirAt removes the empty directory name from parent.
func (f *FS) RmdirAt(ctx context.Context, parent int64, name string) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "rmdir", parent, name, syscall.EINVAL)
		if err != nil {
			return err
		}
		return f.rmdirLoc(c, path, l, time.Now())
	})
}

// RenameAt moves oldName in oldParent to newName in newParent, with
// renameat2 flags (RenameNoReplace, RenameExchange).
func (f *FS) RenameAt(ctx context.Context, oldParent int64, oldName string, newParent int64, newName string, flags int) error {
	if flags&^(RenameNoReplace|RenameExchange) != 0 || flags&RenameNoReplace != 0 && flags&RenameExchange != 0 {
		return pathErr("rename", atPath(oldParent, oldName), syscall.EINVAL)
	}
	return f.write(ctx, func(c *store.Conn) error {
		src, oldpath, err := f.entryAt(c, "rename", oldParent, oldName, 0)
		if err != nil {
			return err
		}
		dst, newpath, err := f.entryAt(c, "rename", newParent, newName, 0)
		if err != nil {
			return err
		}
		return f.renameLoc(c, src, dst, oldpath, newpath, flags)
	})
}

// LinkAt makes newName in newParent a new name of inode ino (a hard
// link) and returns the inode's attributes. An inode without names (open
// after its last unlink) cannot be linked again: ENOENT, as linkat(2).
func (f *FS) LinkAt(ctx context.Context, ino, newParent int64, newName string) (st Stat, err error) {
	err = f.write(ctx, func(c *store.Conn) error {
		src, oldpath, err := f.inodeLoc(c, "link", ino)
		if err != nil {
			return err
		}
		if src.st.Nlink == 0 && !src.st.IsDir() {
			return pathErr("link", oldpath, syscall.ENOENT)
		}
		dst, newpath, err := f.entryAt(c, "link", newParent, newName, syscall.EEXIST)
		if err != nil {
			return err
		}
		if err := f.linkLoc(c, src, dst, oldpath, newpath, time.Now()); err != nil {
			return err
		}
		st, err = f.mustInode(c, ino, "link", newpath)
		return err
	})
	return st, err
}

// SymlinkAt creates name in parent as a symbolic link to target, owned by
// o.
func (f *FS) SymlinkAt(ctx context.Context, parent int64, name, target string, o Owner) (st Stat, err error) {
	if err := checkTarget(atPath(parent, name), target); err != nil {
		return st, err
	}
	err = f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "symlink", parent, name, syscall.EEXIST)
		if err != nil {
			return err
		}
		ino, err := f.symlinkLoc(c, path, l, target, o, time.Now())
		if err != nil {
			return err
		}
		st, err = f.mustInode(c, ino, "symlink", path)
		return err
	})
	return st, err
}

// ReadlinkIno returns the target of symbolic link ino (EINVAL for
// another type).
func (f *FS) ReadlinkIno(ctx context.Context, ino int64) (target string, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		l, path, err := f.inodeLoc(c, "readlink", ino)
		if err != nil {
			return err
		}
		if !l.st.IsSymlink() {
			return pathErr("readlink", path, syscall.EINVAL)
		}
		target, err = f.readlinkIno(c, ino)
		return err
	})
	return target, err
}

// MknodAt creates the special file name in parent (FIFO, device, socket,
// or a regular file when mode has no type bits), owned by o.
func (f *FS) MknodAt(ctx context.Context, parent int64, name string, mode uint32, rdev uint64, o Owner) (st Stat, err error) {
	mode, rdev, err = mknodMode(atPath(parent, name), mode, rdev)
	if err != nil {
		return st, err
	}
	err = f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.entryAt(c, "mknod", parent, name, syscall.EEXIST)
		if err != nil {
			return err
		}
		ino, err := f.mknodLoc(c, path, l, mode, rdev, o, time.Now())
		if err != nil {
			return err
		}
		st, err = f.mustInode(c, ino, "mknod", path)
		return err
	})
	return st, err
}

// SetattrIno changes the attributes of inode ino listed in a, in one
// transaction, and returns the attributes after the change. A size
// change is truncate(2) (EISDIR for a directory, EINVAL for another
// non-regular file); every change sets ctime (to a.Ctime when given).
func (f *FS) SetattrIno(ctx context.Context, ino int64, a Setattr) (st Stat, err error) {
	err = f.write(ctx, func(c *store.Conn) error {
		l, path, err := f.inodeLoc(c, "setattr", ino)
		if err != nil {
			return err
		}
		if err := f.setattrLoc(c, "setattr", path, l, a, time.Now()); err != nil {
			return err
		}
		if st, err = f.mustInode(c, ino, "setattr", path); err != nil {
			return err
		}
		return f.dirLinks(c, &st)
	})
	return st, err
}

// SetxattrIno sets an extended attribute of inode ino (flags:
// XattrCreate, XattrReplace).
func (f *FS) SetxattrIno(ctx context.Context, ino int64, name string, value []byte, flags int) error {
	if err := checkXattr(inoPath(ino), name, value); err != nil {
		return err
	}
	return f.write(ctx, func(c *store.Conn) error {
		_, path, err := f.inodeLoc(c, "setxattr", ino)
		if err != nil {
			return err
		}
		return f.setxattr(c, path, ino, name, value, flags)
	})
}

// GetxattrIno returns an extended attribute of inode ino, or ENODATA.
func (f *FS) GetxattrIno(ctx context.Context, ino int64, name string) (v []byte, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		_, path, err := f.inodeLoc(c, "getxattr", ino)
		if err != nil {
			return err
		}
		v, err = f.getxattr(c, path, ino, name)
		return err
	})
	return v, err
}

// ListxattrIno returns the names of the extended attributes of ino.
func (f *FS) ListxattrIno(ctx context.Context, ino int64) (names []string, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		if _, _, err := f.inodeLoc(c, "listxattr", ino); err != nil {
			return err
		}
		names, err = f.listxattr(c, ino)
		return err
	})
	return names, err
}

// RemovexattrIno deletes an extended attribute of ino, or fails with
// ENODATA.
func (f *FS) RemovexattrIno(ctx context.Context, ino int64, name string) error {
	return f.write(ctx, func(c *store.Conn) error {
		_, path, err := f.inodeLoc(c, "removexattr", ino)
		if err != nil {
			return err
		}
		return f.removexattr(c, path, ino, name)
	})
}
