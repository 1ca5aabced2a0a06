package vfs

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Stat returns the attributes of path, following a final symlink.
func (f *FS) Stat(ctx context.Context, path string) (Stat, error) {
	return f.stat(ctx, "stat", path, true)
}

// Lstat returns the attributes of path without following a final symlink.
func (f *FS) Lstat(ctx context.Context, path string) (Stat, error) {
	return f.stat(ctx, "lstat", path, false)
}

func (f *FS) stat(ctx context.Context, op, path string, follow bool) (st Stat, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, op, path, follow)
		if err != nil {
			return err
		}
		st = l.st
		return f.dirLinks(c, &st)
	})
	return st, err
}

// Exists reports whether path exists (following symlinks).
func (f *FS) Exists(ctx context.Context, path string) (bool, error) {
	_, err := f.Stat(ctx, path)
	if errnoOf(err) == syscall.ENOENT {
		return false, nil
	}
	return err == nil, err
}

// Mkdir creates a directory.
func (f *FS) Mkdir(ctx context.Context, path string, perm uint32) error {
	return f.write(ctx, func(c *store.Conn) error {
		_, err := f.mkdir(c, "mkdir", path, perm, time.Now())
		return err
	})
}

func (f *FS) mkdir(c *store.Conn, op, path string, perm uint32, now time.Time) (int64, error) {
	l, err := f.resolveEntry(c, op, path, false, syscall.EEXIST)
	if err != nil {
		return 0, err
	}
	return f.mkdirLoc(c, op, path, l, perm, f.DefaultOwner(), now)
}

// mkdirLoc creates the directory l, owned by o; both APIs end here.
func (f *FS) mkdirLoc(c *store.Conn, op, path string, l loc, perm uint32, o Owner, now time.Time) (int64, error) {
	if l.ino != 0 {
		return 0, pathErr(op, path, syscall.EEXIST)
	}
	if err := checkName(op, path, l.name); err != nil {
		return 0, err
	}
	if err := f.checkDir(c, op, path, l.parent); err != nil {
		return 0, err
	}
	return f.newInode(c, l.parent, l.name, schema.ModeDir|f.applyUmask(perm), 0, 0, o, now)
}

// checkDir fails with ENOTDIR unless ino is a directory.
func (f *FS) checkDir(c *store.Conn, op, path string, ino int64) error {
	st, err := f.mustInode(c, ino, op, path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return pathErr(op, path, syscall.ENOTDIR)
	}
	return nil
}

// MkdirAll creates a directory and any missing parents, like mkdir -p.
func (f *FS) MkdirAll(ctx context.Context, path string, perm uint32) error {
	return f.write(ctx, func(c *store.Conn) error {
		return f.mkdirAll(c, path, perm, time.Now())
	})
}

func (f *FS) mkdirAll(c *store.Conn, path string, perm uint32, now time.Time) error {
	if err := checkPath("mkdir", path); err != nil {
		return err
	}
	comps := splitPath(path)
	for i := range comps {
		prefix := "/" + strings.Join(comps[:i+1], "/")
		l, err := f.resolve(c, "mkdir", prefix, true)
		if err != nil {
			return err
		}
		if l.ino != 0 {
			if !l.st.IsDir() {
				return pathErr("mkdir", path, syscall.ENOTDIR)
			}
			continue
		}
		if _, err := f.mkdir(c, "mkdir", prefix, perm, now); err != nil {
			return err
		}
	}
	return nil
}

// WriteOptions tune WriteFile.
type WriteOptions struct {
	Perm          uint32 // permission bits of a new file (default 0644)
	CreateParents bool   // create missing parent directories (mkdir -p)
	Append        bool   // append instead of replacing the content
	Exclusive     bool   // fail with EEXIST when the file exists
	// SetPerm applies Perm (taken literally, 0 included) to an existing
	// file too; by default a replaced file keeps its mode, as with open(2).
	SetPerm bool
	// Atime and Mtime, when not zero, are the file's times after the write
	// instead of now: an import keeps the source's times in the same
	// transaction as the data.
	Atime, Mtime time.Time
}

// WriteFile replaces (or creates) the content of a file in one
// transaction, following symlinks as open(2) does.
func (f *FS) WriteFile(ctx context.Context, path string, data []byte, opts WriteOptions) error {
	if opts.Perm == 0 && !opts.SetPerm {
		opts.Perm = 0o644
	}
	return f.write(ctx, func(c *store.Conn) error {
		ino, err := f.writeFile(c, path, data, opts)
		if err != nil || (!opts.SetPerm && opts.Atime.IsZero() && opts.Mtime.IsZero()) {
			return err
		}
		return f.setModeTimes(c, ino, opts)
	})
}

// setModeTimes applies WriteOptions.SetPerm, Atime and Mtime to ino.
func (f *FS) setModeTimes(c *store.Conn, ino int64, opts WriteOptions) error {
	st, ok, err := f.inode(c, ino)
	if err != nil || !ok {
		return err
	}
	mode := st.Mode
	if opts.SetPerm {
		mode = st.Type() | opts.Perm&0o7777
	}
	at, mt := st.Atime, st.Mtime
	if !opts.Atime.IsZero() {
		at = opts.Atime
	}
	if !opts.Mtime.IsZero() {
		mt = opts.Mtime
	}
	f.dirty()
	delete(f.inodes, ino)
	_, err = c.Exec("UPDATE fs_inode SET mode = ?, atime = ?, atime_nsec = ?, mtime = ?, mtime_nsec = ? WHERE ino = ?",
		int64(mode), at.Unix(), at.Nanosecond(), mt.Unix(), mt.Nanosecond(), ino)
	return err
}

func (f *FS) writeFile(c *store.Conn, path string, data []byte, opts WriteOptions) (int64, error) {
	var ino int64
	err := func() error {
		now := time.Now()
		if opts.CreateParents {
			if dir := parentPath(path); dir != "/" {
				if err := f.mkdirAll(c, dir, 0o755, now); err != nil {
					return err
				}
			}
		}
		// Exclusive is O_CREAT|O_EXCL: a final symlink is not followed,
		// so an existing (even dangling) link fails with EEXIST.
		l, err := f.resolveCreate(c, path, opts.Exclusive, true)
		if err != nil {
			return err
		}
		if l.ino == 0 {
			if err := f.creatable(c, "open", path, l); err != nil {
				return err
			}
			ino, err = f.newInode(c, l.parent, l.name, schema.ModeRegular|f.applyUmask(opts.Perm), int64(len(data)), 0, f.DefaultOwner(), now)
			if err != nil {
				return err
			}
			return f.insertChunks(c, ino, 0, data)
		}
		ino = l.ino
		if opts.Exclusive {
			return pathErr("open", path, syscall.EEXIST)
		}
		if l.st.IsDir() {
			return pathErr("open", path, syscall.EISDIR)
		}
		if !l.st.IsRegular() {
			return pathErr("open", path, syscall.EINVAL)
		}
		if opts.Append {
			return f.pwrite(c, l.ino, l.st.Size, data, now)
		}
		return f.replaceData(c, l.ino, l.st, data, now)
	}()
	return ino, err
}

// resolveCreate resolves the path of an open with O_CREAT as open(2)
// does: the final component is looked at before a final symlink is
// followed, so "/", "." and ".." exist (EEXIST with O_EXCL, else EISDIR)
// and "name/" is EISDIR whatever name is; before, a path with a trailing
// slash naming a file was ENOTDIR and one through a symlink loop ELOOP.
// A final symlink is then followed unless excl or !follow.
func (f *FS) resolveCreate(c *store.Conn, path string, excl, follow bool) (loc, error) {
	l, err := f.resolvePath(c, "open", path, false, false)
	if err != nil {
		return l, err
	}
	if isDotEntry(l) {
		if excl {
			return l, pathErr("open", path, syscall.EEXIST)
		}
		return l, pathErr("open", path, syscall.EISDIR)
	}
	if strings.HasSuffix(path, "/") {
		return l, pathErr("open", path, syscall.EISDIR)
	}
	if l.ino != 0 && l.st.IsSymlink() && follow && !excl {
		return f.resolve(c, "open", path, true)
	}
	return l, nil
}

// creatable checks that a missing entry found by resolve can be created.
func (f *FS) creatable(c *store.Conn, op, path string, l loc) error {
	if l.parent == 0 || l.name == "." || l.name == ".." {
		return pathErr(op, path, syscall.EISDIR)
	}
	if strings.HasSuffix(path, "/") {
		// open(O_CREAT) of "name/" is EISDIR; link, symlink and mknod
		// of a missing "name/" are ENOENT, as on Linux.
		if op == "open" || op == "copyfile" {
			return pathErr(op, path, syscall.EISDIR)
		}
		return pathErr(op, path, syscall.ENOENT)
	}
	if err := checkName(op, path, l.name); err != nil {
		return err
	}
	return f.checkDir(c, op, path, l.parent)
}

func parentPath(p string) string {
	comps := splitPath(p)
	if len(comps) <= 1 {
		return "/"
	}
	return "/" + strings.Join(comps[:len(comps)-1], "/")
}

// ReadFile returns the whole content of a file.
func (f *FS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return f.ReadFileInto(ctx, path, nil)
}

// ReadFileInto is ReadFile with the result in zeroed memory from alloc
// (called with the file's size; nil, or a nil result, means make): a
// caller in another runtime
// (the Node addon) has the file read straight into its own buffer.
func (f *FS) ReadFileInto(ctx context.Context, path string, alloc func(n int) []byte) ([]byte, error) {
	// The name is resolved from the caches (one statement when they know
	// it), the content read with one statement on a reader connection, in
	// parallel with other work. If another process replaced the file in
	// between, the old inode is gone: resolve again.
	for attempt := 0; ; attempt++ {
		var ino int64
		err := f.read(ctx, func(c *store.Conn) error {
			l, err := f.resolveExisting(c, "open", path, true)
			if err != nil {
				return err
			}
			if l.st.IsDir() {
				return pathErr("read", path, syscall.EISDIR)
			}
			ino = l.ino
			return nil
		})
		if err != nil {
			return nil, err
		}
		data, err := f.readWhole(ctx, ino, alloc)
		if err == errStale && attempt == 0 {
			continue
		}
		if e := errnoOf(err); e != 0 {
			err = pathErr("read", path, e)
		}
		return data, err
	}
}

// Readdir lists the names in a directory, sorted bytewise, without "."
// and "..".
func (f *FS) Readdir(ctx context.Context, path string) ([]string, error) {
	var names []string
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "readdir", path, true)
		if err != nil {
			return err
		}
		if !l.st.IsDir() {
			return pathErr("readdir", path, syscall.ENOTDIR)
		}
		if err := f.ovPopulate(c, l.ino); err != nil {
			return err
		}
		rows, err := c.Query("SELECT CAST(name AS BLOB), ino FROM fs_dentry WHERE parent_ino = ? ORDER BY name", l.ino)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name []byte
			var ino int64
			if err := rows.Scan(&name, &ino); err != nil {
				return err
			}
			names = append(names, string(name))
			f.dentries[dentryKey{l.ino, string(name)}] = ino
		}
		if err := rows.Err(); err != nil {
			return err
		}
		f.complete[l.ino] = true
		return nil
	})
	return names, err
}

// ReaddirPlus lists a directory with the attributes of each entry (not
// following symlinks), in one query.
func (f *FS) ReaddirPlus(ctx context.Context, path string) ([]DirEntry, error) {
	var out []DirEntry
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "readdir", path, true)
		if err != nil {
			return err
		}
		if !l.st.IsDir() {
			return pathErr("readdir", path, syscall.ENOTDIR)
		}
		out, err = f.readdirPlusIno(c, l.ino)
		return err
	})
	return out, err
}

func (f *FS) readdirPlusIno(c *store.Conn, dir int64) ([]DirEntry, error) {
	if err := f.ovPopulate(c, dir); err != nil {
		return nil, err
	}
	rows, err := c.Query(`SELECT CAST(d.name AS BLOB), `+inodeCols+`
		FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino WHERE d.parent_ino = ? ORDER BY d.name`, dir)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DirEntry
	var subdirs int64
	for rows.Next() {
		var name, attrs sql.RawBytes
		var e DirEntry
		if err := rows.Scan(&name, &attrs); err != nil {
			return nil, err
		}
		if err := parseStat(attrs, &e.Stat); err != nil {
			return nil, err
		}
		e.Name = string(name)
		e.Stat.Blksize = int64(f.chunkSize)
		f.dentries[dentryKey{dir, e.Name}] = e.Stat.Ino
		f.inodes[e.Stat.Ino] = e.Stat
		if e.Stat.IsDir() {
			subdirs++
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	f.subdirs[dir] = subdirs // the listing is every entry of dir
	var dirs []*Stat
	for i := range out {
		if out[i].Stat.IsDir() {
			dirs = append(dirs, &out[i].Stat)
		}
	}
	return out, f.dirLinks(c, dirs...)
}

// Unlink removes a non-directory entry.
func (f *FS) Unlink(ctx context.Context, path string) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "unlink", path, false, syscall.EISDIR)
		if err != nil {
			return err
		}
		return f.unlinkLoc(c, path, l, time.Now())
	})
}

// unlinkLoc removes the non-directory entry l.
func (f *FS) unlinkLoc(c *store.Conn, path string, l loc, now time.Time) error {
	if l.ino == 0 {
		return pathErr("unlink", path, syscall.ENOENT)
	}
	if l.st.IsDir() {
		return pathErr("unlink", path, syscall.EISDIR)
	}
	return f.removeEntry(c, l, now)
}

// removeEntry deletes the entry l and drops one link of its inode.
func (f *FS) removeEntry(c *store.Conn, l loc, now time.Time) error {
	if err := f.ovRemoving(c, l.parent, l.name); err != nil {
		return err
	}
	f.dirty()
	if _, err := c.Exec("DELETE FROM fs_dentry WHERE parent_ino = ? AND name = CAST(? AS TEXT)", l.parent, []byte(l.name)); err != nil {
		return err
	}
	f.dentries[dentryKey{l.parent, l.name}] = 0
	if l.st.IsDir() {
		f.subdirAdded(l.parent, -1)
		delete(f.subdirs, l.ino)
	}
	if err := f.touchDir(c, l.parent, now); err != nil {
		return err
	}
	return f.dropLink(c, l.ino, now)
}

// Rmdir removes an empty directory.
func (f *FS) Rmdir(ctx context.Context, path string) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "rmdir", path, false, syscall.EINVAL)
		if err != nil {
			return err
		}
		return f.rmdirLoc(c, path, l, time.Now())
	})
}

// rmdirLoc removes the empty directory l.
func (f *FS) rmdirLoc(c *store.Conn, path string, l loc, now time.Time) error {
	if l.ino == 0 {
		return pathErr("rmdir", path, syscall.ENOENT)
	}
	if !l.st.IsDir() {
		return pathErr("rmdir", path, syscall.ENOTDIR)
	}
	empty, err := f.isEmptyDir(c, l.ino)
	if err != nil {
		return err
	}
	if !empty {
		return pathErr("rmdir", path, syscall.ENOTEMPTY)
	}
	return f.removeEntry(c, l, now)
}

func (f *FS) isEmptyDir(c *store.Conn, ino int64) (bool, error) {
	if err := f.ovPopulate(c, ino); err != nil {
		return false, err
	}
	var one int
	err := c.QueryRow("SELECT 1 FROM fs_dentry WHERE parent_ino = ? LIMIT 1", ino).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	return false, err
}

// RemoveAll removes path and everything below it, like rm -rf. A missing
// path is not an error. The whole subtree goes in one transaction with a
// handful of set-based statements, whatever its size.
func (f *FS) RemoveAll(ctx context.Context, path string) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "remove", path, false, syscall.EINVAL)
		if err != nil {
			if errnoOf(err) == syscall.ENOENT {
				return nil
			}
			return err
		}
		if l.ino == 0 {
			return nil
		}
		now := time.Now()
		if !l.st.IsDir() {
			return f.removeEntry(c, l, now)
		}
		return f.removeTree(c, l, now)
	})
}

func (f *FS) removeTree(c *store.Conn, l loc, now time.Time) error {
	// In an overlay, the whiteout of the tree's root hides every base
	// entry below it: nothing below needs copying up or a whiteout.
	if err := f.ovRemoving(c, l.parent, l.name); err != nil {
		return err
	}
	f.dirty()
	stmts := []string{
		"CREATE TEMP TABLE IF NOT EXISTS rm_set (id INTEGER PRIMARY KEY, ino INTEGER NOT NULL)",
		"DELETE FROM temp.rm_set",
	}
	for _, q := range stmts {
		if _, err := c.Exec(q); err != nil {
			return err
		}
	}
	if _, err := c.Exec(`INSERT INTO temp.rm_set (id, ino)
		WITH RECURSIVE sub(id, ino) AS (
			SELECT id, ino FROM fs_dentry WHERE parent_ino = ? AND name = CAST(? AS TEXT)
			UNION ALL
			SELECT d.id, d.ino FROM fs_dentry d JOIN sub ON d.parent_ino = sub.ino
		) SELECT id, ino FROM sub`, l.parent, []byte(l.name)); err != nil {
		return err
	}
	open := f.keepOpen()
	openJSON := "[" + joinInts(open) + "]"
	if _, err := c.Exec("DELETE FROM fs_dentry WHERE id IN (SELECT id FROM temp.rm_set)"); err != nil {
		return err
	}
	if _, err := c.Exec(`UPDATE fs_inode SET nlink = nlink - (SELECT COUNT(*) FROM temp.rm_set r WHERE r.ino = fs_inode.ino), ctime = ?, ctime_nsec = ?
			WHERE ino IN (SELECT ino FROM temp.rm_set)`, now.Unix(), now.Nanosecond()); err != nil {
		return err
	}
	gone := `SELECT i.ino FROM fs_inode i WHERE i.ino IN (SELECT ino FROM temp.rm_set) AND i.nlink <= 0
		AND i.ino NOT IN (SELECT value FROM json_each(?))`
	tables := []string{"fs_data", "fs_symlink", "fs_xattr", "fs_inode"}
	if f.ov != nil {
		// Before fs_inode, whose rows the subquery reads.
		tables = []string{"fs_data", "fs_symlink", "fs_xattr", OverlayTable, "fs_origin", "fs_inode"}
	}
	for _, table := range tables {
		col := "ino"
		if table == "fs_origin" {
			col = "delta_ino"
		}
		if _, err := c.Exec("DELETE FROM "+table+" WHERE "+col+" IN ("+gone+")", openJSON); err != nil {
			return err
		}
	}
	if _, err := c.Exec("DELETE FROM temp.rm_set"); err != nil {
		return err
	}
	// Cached names below the tree are gone; forget everything.
	f.resetCache()
	return f.touchDir(c, l.parent, now)
}

func joinInts(v []int64) string {
	var b strings.Builder
	for i, n := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(itoa(n))
	}
	return b.String()
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// Rename flags, as renameat2(2).
const (
	RenameNoReplace = 1 << 0
	RenameExchange  = 1 << 1
)

// Rename moves oldpath to newpath, replacing newpath as rename(2) does.
func (f *FS) Rename(ctx context.Context, oldpath, newpath string) error {
	return f.Rename2(ctx, oldpath, newpath, 0)
}

// Rename2 is Rename with renameat2 flags (RenameNoReplace, RenameExchange).
func (f *FS) Rename2(ctx context.Context, oldpath, newpath string, flags int) error {
	if flags&RenameNoReplace != 0 && flags&RenameExchange != 0 {
		return pathErr("rename", oldpath, syscall.EINVAL)
	}
	return f.write(ctx, func(c *store.Conn) error {
		// The checks run in the order of Linux's renameat2 (fs/namei.c,
		// do_renameat2 then vfs_rename), so that when several errors
		// apply the errno is the kernel's. Neither final component is
		// followed, whatever the slashes.
		src, err := f.resolvePath(c, "rename", oldpath, false, false)
		if err != nil {
			return err
		}
		dst, err := f.resolvePath(c, "rename", newpath, false, false)
		if err != nil {
			return err
		}
		return f.renameLoc(c, src, dst, oldpath, newpath, flags)
	})
}

// renameLoc moves the entry src to dst with renameat2 flags; both APIs
// end here. The trailing-slash rules only apply to paths.
func (f *FS) renameLoc(c *store.Conn, src, dst loc, oldpath, newpath string, flags int) error {
	noReplace, exchange := flags&RenameNoReplace != 0, flags&RenameExchange != 0
	if isDotEntry(src) { // "/", "." or ".."
		return pathErr("rename", oldpath, syscall.EBUSY)
	}
	if isDotEntry(dst) {
		if noReplace {
			return pathErr("rename", newpath, syscall.EEXIST)
		}
		return pathErr("rename", newpath, syscall.EBUSY)
	}
	if src.ino == 0 {
		return pathErr("rename", oldpath, syscall.ENOENT)
	}
	if noReplace && dst.ino != 0 {
		return pathErr("rename", newpath, syscall.EEXIST)
	}
	if exchange {
		if dst.ino == 0 {
			return pathErr("rename", newpath, syscall.ENOENT)
		}
		if !dst.st.IsDir() && strings.HasSuffix(newpath, "/") {
			return pathErr("rename", newpath, syscall.ENOTDIR)
		}
	}
	// Unless the source is a directory, trailing slashes are ENOTDIR.
	if !src.st.IsDir() && (strings.HasSuffix(oldpath, "/") || (!exchange && strings.HasSuffix(newpath, "/"))) {
		return pathErr("rename", oldpath, syscall.ENOTDIR)
	}
	if dst.ino == 0 {
		if err := checkName("rename", newpath, dst.name); err != nil {
			return err
		}
		if err := f.checkDir(c, "rename", newpath, dst.parent); err != nil {
			return err
		}
	}
	if src.parent != dst.parent {
		// The source must not be an ancestor of the target, nor the
		// target an ancestor of the source (then it is not empty).
		if src.st.IsDir() {
			inside, err := f.isAncestor(c, src.ino, dst.parent)
			if err != nil {
				return err
			}
			if inside {
				return pathErr("rename", newpath, syscall.EINVAL)
			}
		}
		if dst.ino != 0 && dst.st.IsDir() {
			inside, err := f.isAncestor(c, dst.ino, src.parent)
			if err != nil {
				return err
			}
			if inside && exchange {
				return pathErr("rename", oldpath, syscall.EINVAL)
			}
			if inside {
				return pathErr("rename", newpath, syscall.ENOTEMPTY)
			}
		}
	}
	if src.ino == dst.ino {
		// The same entry, or two links to one inode: rename(2)
		// does nothing.
		return nil
	}
	now := time.Now()
	if exchange {
		return f.exchange(c, src, dst, now)
	}
	if dst.ino != 0 {
		switch {
		case src.st.IsDir() && !dst.st.IsDir():
			return pathErr("rename", newpath, syscall.ENOTDIR)
		case !src.st.IsDir() && dst.st.IsDir():
			return pathErr("rename", newpath, syscall.EISDIR)
		case dst.st.IsDir():
			empty, err := f.isEmptyDir(c, dst.ino)
			if err != nil {
				return err
			}
			if !empty {
				return pathErr("rename", newpath, syscall.ENOTEMPTY)
			}
		}
		if err := f.removeEntry(c, dst, now); err != nil {
			return err
		}
	}
	if err := f.ovRemoving(c, src.parent, src.name); err != nil {
		return err
	}
	f.dirty()
	if _, err := c.Exec("UPDATE fs_dentry SET parent_ino = ?, name = CAST(? AS TEXT) WHERE parent_ino = ? AND name = CAST(? AS TEXT)",
		dst.parent, []byte(dst.name), src.parent, []byte(src.name)); err != nil {
		return err
	}
	f.dentries[dentryKey{src.parent, src.name}] = 0
	f.dentries[dentryKey{dst.parent, dst.name}] = src.ino
	if src.st.IsDir() && src.parent != dst.parent {
		f.subdirAdded(src.parent, -1)
		f.subdirAdded(dst.parent, 1)
	}
	if err := f.setCtime(c, src.ino, now); err != nil {
		return err
	}
	if err := f.touchDir(c, src.parent, now); err != nil {
		return err
	}
	if dst.parent != src.parent {
		return f.touchDir(c, dst.parent, now)
	}
	return nil
}

// isDotEntry reports whether a resolved path names "/", "." or "..",
// which cannot be created, removed or renamed.
func isDotEntry(l loc) bool { return l.parent == 0 || l.name == "." || l.name == ".." }

func (f *FS) exchange(c *store.Conn, a, b loc, now time.Time) error {
	f.dirty()
	// Swap the inode numbers of the two entries.
	if _, err := c.Exec("UPDATE fs_dentry SET ino = ? WHERE parent_ino = ? AND name = CAST(? AS TEXT)", b.ino, a.parent, []byte(a.name)); err != nil {
		return err
	}
	if _, err := c.Exec("UPDATE fs_dentry SET ino = ? WHERE parent_ino = ? AND name = CAST(? AS TEXT)", a.ino, b.parent, []byte(b.name)); err != nil {
		return err
	}
	f.dentries[dentryKey{a.parent, a.name}] = b.ino
	f.dentries[dentryKey{b.parent, b.name}] = a.ino
	if a.parent != b.parent && a.st.IsDir() != b.st.IsDir() {
		// A directory moved one way, a non-directory the other.
		d := int64(1)
		if a.st.IsDir() {
			d = -1
		}
		f.subdirAdded(a.parent, d)
		f.subdirAdded(b.parent, -d)
	}
	for _, ino := range []int64{a.ino, b.ino} {
		if err := f.setCtime(c, ino, now); err != nil {
			return err
		}
	}
	if err := f.touchDir(c, a.parent, now); err != nil {
		return err
	}
	if a.parent != b.parent {
		return f.touchDir(c, b.parent, now)
	}
	return nil
}

// isAncestor reports whether dir is ino or one of its ancestors.
func (f *FS) isAncestor(c *store.Conn, dir, ino int64) (bool, error) {
	for depth := 0; ino != 0 && depth < PathMax; depth++ {
		if ino == dir {
			return true, nil
		}
		if ino == schema.RootIno {
			return false, nil
		}
		var parent int64
		err := c.QueryRow("SELECT parent_ino FROM fs_dentry WHERE ino = ? LIMIT 1", ino).Scan(&parent)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		ino = parent
	}
	return false, nil
}

func (f *FS) setCtime(c *store.Conn, ino int64, now time.Time) error {
	f.dirty()
	delete(f.inodes, ino)
	_, err := c.Exec("UPDATE fs_inode SET ctime = ?, ctime_nsec = ? WHERE ino = ?", now.Unix(), now.Nanosecond(), ino)
	return err
}

// Link makes newpath a new name for the file at oldpath (a hard link).
func (f *FS) Link(ctx context.Context, oldpath, newpath string) error {
	return f.write(ctx, func(c *store.Conn) error {
		src, err := f.resolveExisting(c, "link", oldpath, false)
		if err != nil {
			return err
		}
		dst, err := f.resolveEntry(c, "link", newpath, false, syscall.EEXIST)
		if err != nil {
			return err
		}
		return f.linkLoc(c, src, dst, oldpath, newpath, time.Now())
	})
}

// linkLoc makes dst a new name of the inode of src; both APIs end here.
func (f *FS) linkLoc(c *store.Conn, src, dst loc, oldpath, newpath string, now time.Time) error {
	if dst.ino != 0 {
		return pathErr("link", newpath, syscall.EEXIST)
	}
	if err := f.creatable(c, "link", newpath, dst); err != nil {
		return err
	}
	// After the checks of the new name, as link(2) does.
	if src.st.IsDir() {
		return pathErr("link", oldpath, syscall.EPERM)
	}
	f.dirty()
	if _, err := c.Exec("INSERT INTO fs_dentry (name, parent_ino, ino) VALUES (CAST(? AS TEXT), ?, ?)", []byte(dst.name), dst.parent, src.ino); err != nil {
		return err
	}
	f.dentries[dentryKey{dst.parent, dst.name}] = src.ino
	delete(f.inodes, src.ino)
	if _, err := c.Exec("UPDATE fs_inode SET nlink = nlink + 1, ctime = ?, ctime_nsec = ? WHERE ino = ?", now.Unix(), now.Nanosecond(), src.ino); err != nil {
		return err
	}
	return f.touchDir(c, dst.parent, now)
}

// Symlink creates linkpath as a symbolic link to target. The target is
// stored as given and not checked.
func (f *FS) Symlink(ctx context.Context, target, linkpath string) error {
	if err := checkTarget(linkpath, target); err != nil {
		return err
	}
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "symlink", linkpath, false, syscall.EEXIST)
		if err != nil {
			return err
		}
		_, err = f.symlinkLoc(c, linkpath, l, target, f.DefaultOwner(), time.Now())
		return err
	})
}

// checkTarget validates the target of a new symbolic link.
func checkTarget(linkpath, target string) error {
	if target == "" {
		return pathErr("symlink", linkpath, syscall.ENOENT)
	}
	if len(target) > PathMax {
		return pathErr("symlink", linkpath, syscall.ENAMETOOLONG)
	}
	if strings.IndexByte(target, 0) >= 0 {
		// A NUL cannot be part of a path: EINVAL, not ENAMETOOLONG.
		return pathErr("symlink", linkpath, syscall.EINVAL)
	}
	return nil
}

// symlinkLoc creates the symbolic link l to target; both APIs end here.
func (f *FS) symlinkLoc(c *store.Conn, linkpath string, l loc, target string, o Owner, now time.Time) (int64, error) {
	if l.ino != 0 {
		return 0, pathErr("symlink", linkpath, syscall.EEXIST)
	}
	if err := f.creatable(c, "symlink", linkpath, l); err != nil {
		return 0, err
	}
	ino, err := f.newInode(c, l.parent, l.name, schema.ModeSymlink|0o777, int64(len(target)), 0, o, now)
	if err != nil {
		return 0, err
	}
	_, err = c.Exec("INSERT INTO fs_symlink (ino, target) VALUES (?, CAST(? AS TEXT))", ino, []byte(target))
	f.links[ino] = target
	return ino, err
}

// Readlink returns the target of a symbolic link.
func (f *FS) Readlink(ctx context.Context, path string) (string, error) {
	var target string
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, "readlink", path, false)
		if err != nil {
			return err
		}
		if !l.st.IsSymlink() {
			return pathErr("readlink", path, syscall.EINVAL)
		}
		target, err = f.readlinkIno(c, l.ino)
		return err
	})
	return target, err
}

// Chmod changes the permission bits (following symlinks).
func (f *FS) Chmod(ctx context.Context, path string, perm uint32) error {
	return f.setattrPath(ctx, "chmod", path, true, Setattr{Mode: &perm})
}

// Chown changes owner and group; -1 leaves one unchanged. With follow
// false it acts on a symlink itself (lchown).
func (f *FS) Chown(ctx context.Context, path string, uid, gid int64, follow bool) error {
	var a Setattr
	if uid >= 0 {
		u := uint32(uid)
		a.UID = &u
	}
	if gid >= 0 {
		g := uint32(gid)
		a.GID = &g
	}
	a.touch = true // chown(-1, -1) still changes ctime
	return f.setattrPath(ctx, "chown", path, follow, a)
}

// Utimens sets access and modification times; a nil time is left
// unchanged. With follow false it acts on a symlink itself.
func (f *FS) Utimens(ctx context.Context, path string, atime, mtime *time.Time, follow bool) error {
	return f.setattrPath(ctx, "utimens", path, follow, Setattr{Atime: atime, Mtime: mtime, touch: true})
}

// Truncate sets the size of a file; growing it reads as zeros.
func (f *FS) Truncate(ctx context.Context, path string, size int64) error {
	if size < 0 {
		return pathErr("truncate", path, syscall.EINVAL)
	}
	return f.setattrPath(ctx, "truncate", path, true, Setattr{Size: &size})
}

func (f *FS) setattrPath(ctx context.Context, op, path string, follow bool, a Setattr) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveExisting(c, op, path, follow)
		if err != nil {
			return err
		}
		return f.setattrLoc(c, op, path, l, a, time.Now())
	})
}

// Setattr lists the attributes SetattrIno changes; nil fields are left
// alone.
type Setattr struct {
	Mode     *uint32 // permission bits, setuid, setgid and sticky (the type stays)
	UID, GID *uint32
	Size     *int64 // truncate or extend (regular files only)
	Atime    *time.Time
	Mtime    *time.Time
	// Ctime, when set, is the new change time instead of now (a kernel
	// with a writeback cache reports the times of its cached writes).
	Ctime *time.Time
	touch bool // set ctime even when no other field is set (utimens)
}

// setsInode reports whether a changes more than the size.
func (a Setattr) setsInode() bool {
	return a.Mode != nil || a.UID != nil || a.GID != nil || a.Atime != nil || a.Mtime != nil || a.Ctime != nil || a.touch
}

// returningCols is inodeCols for a RETURNING clause, which takes no
// table alias.
var returningCols = strings.ReplaceAll(inodeCols, "i.", "")

// setattrLoc applies a to the existing entry l in the running
// transaction; both APIs end here.
func (f *FS) setattrLoc(c *store.Conn, op, path string, l loc, a Setattr, now time.Time) error {
	if a.Size != nil {
		switch {
		case *a.Size < 0:
			return pathErr(op, path, syscall.EINVAL)
		case l.st.IsDir():
			return pathErr(op, path, syscall.EISDIR)
		case !l.st.IsRegular():
			return pathErr(op, path, syscall.EINVAL)
		}
		// Sets size, mtime and ctime (truncate(2) updates both times).
		if err := f.truncate(c, l.ino, l.st.Size, *a.Size, now); err != nil {
			return err
		}
	}
	if !a.setsInode() {
		return nil
	}
	ctime := now
	if a.Ctime != nil {
		ctime = *a.Ctime
	}
	sets := "ctime = ?, ctime_nsec = ?"
	args := []any{ctime.Unix(), ctime.Nanosecond()}
	if a.Mode != nil {
		sets += ", mode = ?"
		args = append(args, int64(l.st.Type()|*a.Mode&0o7777))
	}
	if a.UID != nil {
		sets += ", uid = ?"
		args = append(args, int64(*a.UID))
	}
	if a.GID != nil {
		sets += ", gid = ?"
		args = append(args, int64(*a.GID))
	}
	if a.Atime != nil {
		sets += ", atime = ?, atime_nsec = ?"
		args = append(args, a.Atime.Unix(), a.Atime.Nanosecond())
	}
	if a.Mtime != nil {
		sets += ", mtime = ?, mtime_nsec = ?"
		args = append(args, a.Mtime.Unix(), a.Mtime.Nanosecond())
	}
	f.dirty()
	delete(f.inodes, l.ino)
	// RETURNING refreshes the cache in the same statement: the next
	// operation on the inode (a kernel asks for attributes after every
	// setattr) reads none.
	var st Stat
	if err := scanStat(c.QueryRow("UPDATE fs_inode SET "+sets+" WHERE ino = ? RETURNING "+returningCols, append(args, l.ino)...), &st); err != nil {
		return err
	}
	st.Blksize = int64(f.chunkSize)
	f.inodes[l.ino] = st
	return nil
}

// Mknod creates a special file: FIFO, character or block device, socket,
// or an empty regular file. mode carries the type bits.
func (f *FS) Mknod(ctx context.Context, path string, mode uint32, rdev uint64) error {
	mode, rdev, err := mknodMode(path, mode, rdev)
	if err != nil {
		return err
	}
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "mknod", path, false, syscall.EEXIST)
		if err != nil {
			return err
		}
		_, err = f.mknodLoc(c, path, l, mode, rdev, f.DefaultOwner(), time.Now())
		return err
	})
}

// mknodMode checks the type bits of a mknod (none means a regular file)
// and drops rdev unless the file is a device.
func mknodMode(path string, mode uint32, rdev uint64) (uint32, uint64, error) {
	typ := mode & schema.ModeType
	if typ == 0 {
		typ = schema.ModeRegular
	}
	switch typ {
	case schema.ModeRegular, schema.ModeFIFO, schema.ModeChar, schema.ModeBlock, schema.ModeSocket:
	default:
		return 0, 0, pathErr("mknod", path, syscall.EINVAL)
	}
	if typ != schema.ModeChar && typ != schema.ModeBlock {
		rdev = 0
	}
	return typ | mode&0o7777, rdev, nil
}

// mknodLoc creates the special file l; mode has checked type bits.
func (f *FS) mknodLoc(c *store.Conn, path string, l loc, mode uint32, rdev uint64, o Owner, now time.Time) (int64, error) {
	if l.ino != 0 {
		return 0, pathErr("mknod", path, syscall.EEXIST)
	}
	if err := f.creatable(c, "mknod", path, l); err != nil {
		return 0, err
	}
	return f.newInode(c, l.parent, l.name, mode&schema.ModeType|f.applyUmask(mode), 0, rdev, o, now)
}

// Statfs reports usage of the filesystem.
func (f *FS) Statfs(ctx context.Context) (FSStat, error) {
	var s FSStat
	err := f.read(ctx, func(c *store.Conn) error {
		var pageSize, pages, free int64
		if err := c.QueryRow("SELECT (SELECT page_size FROM pragma_page_size), (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count)").Scan(&pageSize, &pages, &free); err != nil {
			return err
		}
		if err := c.QueryRow("SELECT COUNT(*), COALESCE((SELECT SUM(size) FROM fs_inode WHERE (mode & 61440) = 32768), 0) FROM fs_inode").Scan(&s.Files, &s.DataBytes); err != nil {
			return err
		}
		s.DBFileBytes = pageSize * pages
		s.BlockSize = int64(f.chunkSize)
		// The database grows on demand: report the free space of the
		// host filesystem it lives on as free space here.
		hostFree := hostfs.FreeBytes(f.db.Path())
		used := (s.DBFileBytes - free*pageSize + s.BlockSize - 1) / s.BlockSize
		s.BlocksFree = hostFree / s.BlockSize
		s.Blocks = used + s.BlocksFree
		s.FilesFree = 1 << 40
		s.NameMax = NameMax
		return nil
	})
	return s, err
}

// Access checks that path exists. The engine does not enforce permission
// bits (it acts with the rights of its caller on the whole database); mode
// is accepted for API compatibility.
func (f *FS) Access(ctx context.Context, path string, mode uint32) error {
	_, err := f.stat(ctx, "access", path, true)
	return err
}

// CopyFile copies the content and permission bits of a regular file. The
// data is copied inside the database, without passing through memory.
func (f *FS) CopyFile(ctx context.Context, src, dst string) error {
	return f.write(ctx, func(c *store.Conn) error {
		s, err := f.resolveExisting(c, "copyfile", src, true)
		if err != nil {
			return err
		}
		if s.st.IsDir() {
			return pathErr("copyfile", src, syscall.EISDIR)
		}
		if !s.st.IsRegular() {
			return pathErr("copyfile", src, syscall.EINVAL)
		}
		d, err := f.resolve(c, "copyfile", dst, true)
		if err != nil {
			return err
		}
		now := time.Now()
		var ino int64
		if d.ino == 0 {
			if err := f.creatable(c, "copyfile", dst, d); err != nil {
				return err
			}
			if ino, err = f.newInode(c, d.parent, d.name, schema.ModeRegular|s.st.Perm(), s.st.Size, 0, f.DefaultOwner(), now); err != nil {
				return err
			}
		} else {
			if d.st.IsDir() {
				return pathErr("copyfile", dst, syscall.EISDIR)
			}
			if d.ino == s.ino {
				return nil
			}
			ino = d.ino
			f.dirty()
			delete(f.inodes, ino)
			if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ?", ino); err != nil {
				return err
			}
			if _, err := c.Exec("UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
				s.st.Size, now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino); err != nil {
				return err
			}
		}
		_, err = c.Exec("INSERT INTO fs_data (ino, chunk_index, data) SELECT ?, chunk_index, data FROM fs_data WHERE ino = ?", ino, s.ino)
		if err != nil {
			return err
		}
		return f.ovCopied(c, s.ino, ino)
	})
}

// Walk visits path and everything below it, depth first in name order,
// without following symlinks. fn receives the path and its attributes;
// returning SkipDir from fn for a directory skips its contents.
func (f *FS) Walk(ctx context.Context, root string, fn func(path string, st Stat) error) error {
	st, err := f.Lstat(ctx, root)
	if err != nil {
		return err
	}
	return f.walk(ctx, cleanJoin(root, ""), st, fn)
}

// SkipDir tells Walk to skip the contents of a directory.
//
//lint:ignore ST1012 named as fs.SkipDir, which it plays the part of
var SkipDir = errors.New("skip this directory")

func (f *FS) walk(ctx context.Context, p string, st Stat, fn func(string, Stat) error) error {
	if err := fn(p, st); err != nil {
		if err == SkipDir {
			return nil
		}
		return err
	}
	if !st.IsDir() {
		return nil
	}
	entries, err := f.ReaddirPlus(ctx, p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := f.walk(ctx, cleanJoin(p, e.Name), e.Stat, fn); err != nil {
			return err
		}
	}
	return nil
}

// cleanJoin joins a directory path and a name into an absolute path.
func cleanJoin(dir, name string) string {
	comps := splitPath(dir)
	if name != "" {
		comps = append(comps, name)
	}
	return "/" + strings.Join(comps, "/")
}

// Paths lists every path of the filesystem, sorted; handy for tests and
// diffs of small trees.
func (f *FS) Paths(ctx context.Context) ([]string, error) {
	var out []string
	err := f.Walk(ctx, "/", func(p string, _ Stat) error { out = append(out, p); return nil })
	sort.Strings(out)
	return out, err
}

// Sync makes every committed operation durable on disk.
func (f *FS) Sync(ctx context.Context) error { return f.db.Sync(ctx) }
