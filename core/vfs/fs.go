// Package vfs implements the filesystem semantics over the AgentFS tables:
// path resolution, inodes, directory entries, chunked data, links,
// attributes and open files. Every way into the filesystem (CLI, SDKs,
// FUSE, NFS, MCP, the in-process shell) goes through this package, so
// behaviour and errors are the same everywhere.
package vfs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Limits of names and paths, as on Linux.
const (
	NameMax    = 255
	PathMax    = 4096
	SymlinkMax = 40 // symlinks followed in one resolution before ELOOP
)

// Options configure a filesystem.
type Options struct {
	// UID and GID own new files unless an operation says otherwise.
	UID, GID uint32
	// Umask is applied to the permission bits of new files and directories.
	Umask uint32
	// Base, when set, makes the filesystem the delta layer of an overlay
	// over this host directory (absolute); core.Open sets it from the
	// database's fs_overlay_config. See overlay.go.
	Base string
}

// FS is the filesystem of one database.
type FS struct {
	db        *store.DB
	chunkSize int
	opts      Options

	// Caches are only touched with the store's primary connection held,
	// i.e. inside db.Do / db.Write callbacks, which serialise them.
	dentries map[dentryKey]int64 // 0 records a known-absent name
	// complete marks directories all of whose entries are in dentries (a
	// directory created here, or listed in full): a name missing from the
	// cache is then absent without asking the database. Every mutation of
	// entries updates dentries, and resetCache drops both together.
	complete map[int64]bool
	inodes   map[int64]Stat
	links    map[int64]string
	// subdirs counts the subdirectories of directories, for the link
	// count reported to the outside (nlink.go); every mkdir, rmdir and
	// rename of a directory keeps the counts it holds exact.
	subdirs  map[int64]int64
	txnDirty bool // the current write transaction changed cached state
	inWrite  bool // inside write: an overlay copy-up may run inline

	ov *overlay // nil unless the filesystem is an overlay's delta layer

	// dataVersion is PRAGMA data_version of the primary connection when
	// the caches were last known coherent (see refresh).
	dataVersion int64
	dvKnown     bool
	// foreign counts the commits of other connections seen by refresh
	// (one per batch seen); Changes reports it so that a cache outside
	// the engine (the kernel's, under a FUSE mount) can be invalidated.
	foreign uint64

	openMu sync.Mutex
	open   map[int64]int // open handles per inode (unlinked-but-open files)
	// orphans are open inodes that an operation may have left without a
	// name; the last Close of one of them checks and purges it. Other
	// closes need no transaction.
	orphans map[int64]struct{}
	// staging are the staging inodes of this process's AtomicFiles in
	// progress (atomic.go); openMu guards it.
	staging map[int64]struct{}
}

type dentryKey struct {
	parent int64
	name   string
}

const cacheLimit = 200_000

// New returns the filesystem of db. The schema must exist.
func New(db *store.DB, chunkSize int, opts Options) *FS {
	if chunkSize <= 0 {
		chunkSize = schema.DefaultChunkSize
	}
	f := &FS{db: db, chunkSize: chunkSize, opts: opts, open: map[int64]int{}, orphans: map[int64]struct{}{}, staging: map[int64]struct{}{}}
	if opts.Base != "" {
		f.ov = &overlay{root: opts.Base}
	}
	f.resetCache()
	return f
}

// ChunkSize is the size of the data chunks of this filesystem.
func (f *FS) ChunkSize() int { return f.chunkSize }

func (f *FS) resetCache() {
	f.dentries = make(map[dentryKey]int64, 1024)
	f.complete = make(map[int64]bool)
	f.inodes = make(map[int64]Stat, 1024)
	f.links = make(map[int64]string)
	f.subdirs = make(map[int64]int64)
	f.resetOverlayCache()
}

// refresh drops the caches when another connection (another process, or
// another Agent on the same file) committed since they were filled. The
// filesystem keeps its own last-seen data version: the store's connection
// is shared with the kv store and the tool log, whose operations must not
// hide a foreign commit from the filesystem.
func (f *FS) refresh(c *store.Conn) {
	v := c.DataVersion()
	if f.dvKnown && v != f.dataVersion {
		f.foreign++
	}
	if !f.dvKnown || v != f.dataVersion || len(f.dentries)+len(f.inodes) > cacheLimit {
		f.resetCache()
	}
	f.dataVersion, f.dvKnown = v, true
}

// read runs fn on the primary connection with coherent caches. In an
// overlay, a read that meets a base entry not yet copied up runs again in
// a write transaction, which copies it up (see overlay.go).
func (f *FS) read(ctx context.Context, c func(c *store.Conn) error) error {
	err := f.db.Do(ctx, func(conn *store.Conn) error {
		f.refresh(conn)
		return c(conn)
	})
	if errors.Is(err, errNeedWrite) {
		return f.write(ctx, c)
	}
	return err
}

// write runs fn in one write transaction with coherent caches. When the
// transaction fails after changing cached state, the caches are dropped
// because the rollback undid what they learnt.
func (f *FS) write(ctx context.Context, fn func(c *store.Conn) error) error {
	err := f.db.Write(ctx, func(conn *store.Conn) error {
		f.refresh(conn)
		f.txnDirty = false
		f.inWrite = true
		err := fn(conn)
		f.inWrite = false
		if err != nil && f.txnDirty {
			f.resetCache()
		}
		return err
	})
	if err != nil && errnoOf(err) == 0 {
		// The commit itself failed (disk full, I/O): nothing we cached
		// during the transaction can be trusted.
		f.db.Locked(f.resetCache)
	}
	return err
}

// dirty marks that the running transaction has changed the database.
func (f *FS) dirty() { f.txnDirty = true }

// lookup finds name in directory parent. It returns 0 when absent.
func (f *FS) lookup(c *store.Conn, parent int64, name string) (int64, error) {
	k := dentryKey{parent, name}
	if ino, ok := f.dentries[k]; ok {
		return ino, nil
	}
	if f.complete[parent] {
		return 0, nil
	}
	var ino int64
	err := c.QueryRow("SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = CAST(? AS TEXT)", parent, []byte(name)).Scan(&ino)
	if errors.Is(err, sql.ErrNoRows) {
		ino, err = 0, nil
		if f.ov != nil {
			ino, err = f.ovLookup(c, parent, name)
		}
	}
	if err != nil {
		return 0, err
	}
	f.dentries[k] = ino
	return ino, nil
}

// inodeCols selects the attributes of an inode as ONE column of packed
// decimal integers. The driver pays two cgo calls per column and row, so
// one packed column instead of thirteen halves the cost of a stat and of
// every row of a readdir-plus. It is read as a BLOB so the driver does not
// try to parse it as a date. Use it with a table alias "i".
const inodeCols = `CAST(printf('%d %d %d %d %d %d %d %d %d %d %d %d %d', i.ino, i.mode, i.nlink, i.uid, i.gid, i.size,
	i.atime, i.mtime, i.ctime, i.rdev, i.atime_nsec, i.mtime_nsec, i.ctime_nsec) AS BLOB)`

// parseStat decodes a value of inodeCols.
func parseStat(b []byte, st *Stat) error {
	var v [13]int64
	n := 0
	for i := 0; i < len(b) && n < len(v); {
		neg := b[i] == '-'
		if neg {
			i++
		}
		var x int64
		start := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			x = x*10 + int64(b[i]-'0')
		}
		if i == start {
			return fmt.Errorf("bad inode attributes %q", b)
		}
		if neg {
			x = -x
		}
		v[n] = x
		n++
		if i < len(b) && b[i] == ' ' {
			i++
		}
	}
	if n != len(v) {
		return fmt.Errorf("bad inode attributes %q", b)
	}
	st.Ino, st.Mode, st.Nlink, st.UID, st.GID, st.Size = v[0], uint32(v[1]), uint32(v[2]), uint32(v[3]), uint32(v[4]), v[5]
	st.Atime, st.Mtime, st.Ctime = time.Unix(v[6], v[10]), time.Unix(v[7], v[11]), time.Unix(v[8], v[12])
	st.Rdev = uint64(v[9])
	return nil
}

func scanStat(r interface{ Scan(dest ...any) error }, st *Stat) error {
	var b []byte // sql.Row refuses RawBytes
	if err := r.Scan(&b); err != nil {
		return err
	}
	return parseStat(b, st)
}

// inode reads the attributes of ino. ok is false when it does not exist.
func (f *FS) inode(c *store.Conn, ino int64) (Stat, bool, error) {
	if st, ok := f.inodes[ino]; ok {
		return st, true, nil
	}
	var st Stat
	err := scanStat(c.QueryRow("SELECT "+inodeCols+" FROM fs_inode i WHERE i.ino = ?", ino), &st)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	st.Blksize = int64(f.chunkSize)
	f.inodes[ino] = st
	return st, true, nil
}

// mustInode is inode for an inode that a directory entry points to; a
// missing row means the database is damaged.
func (f *FS) mustInode(c *store.Conn, ino int64, op, path string) (Stat, error) {
	st, ok, err := f.inode(c, ino)
	if err != nil {
		return st, err
	}
	if !ok {
		return st, fmt.Errorf("%s %s: directory entry points to missing inode %d (run agentfs fsck --repair): %w", op, path, ino, syscall.EIO)
	}
	return st, nil
}

func (f *FS) readlinkIno(c *store.Conn, ino int64) (string, error) {
	if t, ok := f.links[ino]; ok {
		return t, nil
	}
	var t []byte
	err := c.QueryRow("SELECT CAST(target AS BLOB) FROM fs_symlink WHERE ino = ?", ino).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("symlink inode %d has no target (run agentfs fsck --repair): %w", ino, syscall.EIO)
	}
	if err != nil {
		return "", err
	}
	f.links[ino] = string(t)
	return string(t), nil
}

// loc is where a path leads.
type loc struct {
	parent int64  // directory holding the final entry (0 for "/")
	name   string // final name ("" for "/")
	ino    int64  // 0 when the final entry does not exist
	st     Stat   // valid when ino != 0
}

// resolve walks path from the root. With follow, a symlink in the final
// position is followed too; components before it always are. When the
// final component does not exist, loc.ino is 0 and parent/name say where
// it would be created; a missing directory before it is ENOENT.
func (f *FS) resolve(c *store.Conn, op, path string, follow bool) (loc, error) {
	return f.resolvePath(c, op, path, follow, true)
}

// resolvePath is resolve. With slashFollows false, a trailing slash does
// not make a final symlink be followed and a final non-directory is
// returned without the ENOTDIR check: resolveEntry uses that to act on the
// entry named by the path, never on what a symlink points to.
func (f *FS) resolvePath(c *store.Conn, op, path string, follow, slashFollows bool) (loc, error) {
	if err := checkPath(op, path); err != nil {
		return loc{}, err
	}
	mustDir := strings.HasSuffix(path, "/") || strings.HasSuffix(path, "/.") || strings.HasSuffix(path, "/..")
	comps := splitPath(path)
	stack := []int64{schema.RootIno} // ancestors, for ".."
	hops := 0
	cur := loc{ino: schema.RootIno}
	for len(comps) > 0 {
		name := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		dirIno := stack[len(stack)-1]
		switch name {
		case ".":
			cur = loc{ino: dirIno}
			if last {
				cur.parent, cur.name = f.parentOf(stack), "."
			}
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			cur = loc{ino: stack[len(stack)-1]}
			if last {
				cur.parent, cur.name = f.parentOf(stack), ".."
			}
			continue
		}
		if len(name) > NameMax {
			return loc{}, pathErr(op, path, syscall.ENAMETOOLONG)
		}
		ino, err := f.lookup(c, dirIno, name)
		if err != nil {
			return loc{}, err
		}
		if ino == 0 {
			if !last {
				return loc{}, pathErr(op, path, syscall.ENOENT)
			}
			return loc{parent: dirIno, name: name}, nil
		}
		st, err := f.mustInode(c, ino, op, path)
		if err != nil {
			return loc{}, err
		}
		if st.IsSymlink() && (!last || follow || (mustDir && slashFollows)) {
			hops++
			if hops > SymlinkMax {
				return loc{}, pathErr(op, path, syscall.ELOOP)
			}
			target, err := f.readlinkIno(c, ino)
			if err != nil {
				return loc{}, err
			}
			if target == "" {
				return loc{}, pathErr(op, path, syscall.ENOENT)
			}
			if strings.HasPrefix(target, "/") {
				stack = stack[:1]
			}
			comps = append(splitPath(target), comps...)
			if len(comps) == 0 { // target "/" or "/."
				cur = loc{ino: schema.RootIno}
			}
			continue
		}
		if !last {
			if !st.IsDir() {
				return loc{}, pathErr(op, path, syscall.ENOTDIR)
			}
			stack = append(stack, ino)
			continue
		}
		cur = loc{parent: dirIno, name: name, ino: ino, st: st}
		if st.IsDir() {
			stack = append(stack, ino)
		}
	}
	if cur.ino != 0 && cur.st.Ino == 0 {
		st, err := f.mustInode(c, cur.ino, op, path)
		if err != nil {
			return loc{}, err
		}
		cur.st = st
	}
	if mustDir && slashFollows && cur.ino != 0 && !cur.st.IsDir() {
		return loc{}, pathErr(op, path, syscall.ENOTDIR)
	}
	return cur, nil
}

func (f *FS) parentOf(stack []int64) int64 {
	if len(stack) > 1 {
		return stack[len(stack)-2]
	}
	return 0
}

// resolveExisting is resolve that fails with ENOENT when the final entry
// does not exist.
func (f *FS) resolveExisting(c *store.Conn, op, path string, follow bool) (loc, error) {
	l, err := f.resolve(c, op, path, follow)
	if err == nil && l.ino == 0 {
		err = pathErr(op, path, syscall.ENOENT)
	}
	return l, err
}

// resolveEntry resolves a path whose final component names an entry to
// create or remove: "/", "." and ".." are refused with special (for
// rmdir, as rmdir(2): EBUSY for "/", ENOTEMPTY for "..").
//
// The final entry is never followed when it is a symlink, even when the
// path ends with a slash: rmdir("link/"), unlink("link/"),
// rename("link/", x) and RemoveAll("link/") used to act on the directory
// the link points to (removing or moving it); as on Linux they now fail
// with ENOTDIR, and mkdir("dangling-link/") fails with EEXIST instead of
// creating the link's target. An existing non-directory named with a
// trailing slash is ENOTDIR, or EEXIST for the creating operations
// (special == EEXIST).
func (f *FS) resolveEntry(c *store.Conn, op, path string, follow bool, special syscall.Errno) (loc, error) {
	l, err := f.resolvePath(c, op, path, follow, false)
	if err != nil {
		return l, err
	}
	if isDotEntry(l) {
		return l, dotErr(op, path, l, special)
	}
	if l.ino != 0 && !l.st.IsDir() && strings.HasSuffix(path, "/") {
		if special == syscall.EEXIST {
			return l, pathErr(op, path, syscall.EEXIST)
		}
		return l, pathErr(op, path, syscall.ENOTDIR)
	}
	return l, nil
}

// dotErr is the error of an operation that creates or removes an entry
// when the entry is "/", "." or "..": special, or for rmdir and RemoveAll
// (special == EINVAL) EBUSY for "/" and ENOTEMPTY for "..", as rmdir(2).
func dotErr(op, path string, l loc, special syscall.Errno) error {
	errno := special
	if special == syscall.EINVAL {
		switch {
		case l.name == "": // "/" itself
			errno = syscall.EBUSY
		case l.name == ".." && op == "rmdir":
			errno = syscall.ENOTEMPTY
		}
	}
	return pathErr(op, path, errno)
}

func checkPath(op, path string) error {
	if path == "" {
		return pathErr(op, path, syscall.ENOENT)
	}
	if len(path) >= PathMax { // PATH_MAX counts the terminating NUL
		return pathErr(op, path, syscall.ENAMETOOLONG)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return pathErr(op, path, syscall.EINVAL)
	}
	return nil
}

// checkName validates a single name being created.
func checkName(op, path, name string) error {
	if len(name) > NameMax {
		return pathErr(op, path, syscall.ENAMETOOLONG)
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 || strings.IndexByte(name, '/') >= 0 {
		return pathErr(op, path, syscall.EINVAL)
	}
	return nil
}

// splitPath splits on "/" and drops empty components. Relative paths are
// taken from the root: the filesystem has no working directory.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// touchDir sets the mtime and ctime of a directory whose entries changed.
func (f *FS) touchDir(c *store.Conn, ino int64, now time.Time) error {
	f.dirty()
	st, cached := f.inodes[ino]
	delete(f.inodes, ino)
	_, err := c.Exec("UPDATE fs_inode SET mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino)
	if err == nil && cached {
		// Keep the directory cached with its new times: the next
		// operation in it (the next file of an untar, of an rm -rf)
		// needs no query. A rollback drops every cache (see write).
		t := time.Unix(now.Unix(), int64(now.Nanosecond()))
		st.Mtime, st.Ctime = t, t
		f.inodes[ino] = st
	}
	return err
}

// Owner is the user and group that own a new file. The path-based API
// uses Options.UID and GID; the inode-level API (FUSE) passes the
// caller's.
type Owner struct{ UID, GID uint32 }

// DefaultOwner is the owner of files created through the path-based API.
func (f *FS) DefaultOwner() Owner { return Owner{f.opts.UID, f.opts.GID} }

// newInode inserts an inode owned by o and links it as parent/name.
func (f *FS) newInode(c *store.Conn, parent int64, name string, mode uint32, size int64, rdev uint64, o Owner, now time.Time) (int64, error) {
	f.dirty()
	s, ns := now.Unix(), now.Nanosecond()
	// Exec and LastInsertId cost half of INSERT ... RETURNING through the
	// driver, and this is on the path of every file creation.
	r, err := c.Exec(`INSERT INTO fs_inode (mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec, mtime_nsec, ctime_nsec)
		VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		int64(mode), int64(o.UID), int64(o.GID), size, s, s, s, int64(rdev), ns, ns, ns)
	if err != nil {
		return 0, err
	}
	ino, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	if _, err := c.Exec("INSERT INTO fs_dentry (name, parent_ino, ino) VALUES (CAST(? AS TEXT), ?, ?)", []byte(name), parent, ino); err != nil {
		return 0, err
	}
	f.dentries[dentryKey{parent, name}] = ino
	if mode&schema.ModeType == schema.ModeDir {
		f.complete[ino] = true // new and empty: every lookup in it is known
		f.subdirs[ino] = 0
		f.subdirAdded(parent, 1)
	}
	f.inodes[ino] = Stat{Ino: ino, Mode: mode, Nlink: 1, UID: o.UID, GID: o.GID, Size: size, Rdev: rdev,
		Atime: now, Mtime: now, Ctime: now, Blksize: int64(f.chunkSize)}
	return ino, f.touchDir(c, parent, now)
}

func (f *FS) applyUmask(perm uint32) uint32 { return perm &^ f.opts.Umask & 0o7777 }

// dropLink removes one link of ino (its directory entry is already gone).
// The inode and its data go when the last link and the last open handle
// are gone.
func (f *FS) dropLink(c *store.Conn, ino int64, now time.Time) error {
	f.dirty()
	st, cached := f.inodes[ino]
	delete(f.inodes, ino)
	if cached && st.Nlink <= 1 && !f.keepIfOpen(ino) {
		// The last link of an inode nobody holds open: no need to
		// count it down first.
		return f.purgeTyped(c, ino, st.Mode)
	}
	var nlink, mode int64
	err := c.QueryRow("UPDATE fs_inode SET nlink = nlink - 1, ctime = ?, ctime_nsec = ? WHERE ino = ? RETURNING nlink, mode",
		now.Unix(), now.Nanosecond(), ino).Scan(&nlink, &mode)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if nlink > 0 || f.keepIfOpen(ino) {
		return nil
	}
	return f.purgeTyped(c, ino, uint32(mode))
}

// purge deletes an inode and everything hanging off it.
func (f *FS) purge(c *store.Conn, ino int64) error { return f.purgeTyped(c, ino, 0) }

// purgeTyped is purge for an inode of the given mode, which skips the
// tables that cannot hold rows of that type (0: unknown, try them all).
func (f *FS) purgeTyped(c *store.Conn, ino int64, mode uint32) error {
	f.dirty()
	delete(f.inodes, ino)
	delete(f.links, ino)
	typ := mode & schema.ModeType
	for _, q := range []struct {
		sql  string
		skip bool
	}{
		{"DELETE FROM fs_data WHERE ino = ?", typ != 0 && typ != schema.ModeRegular},
		{"DELETE FROM fs_symlink WHERE ino = ?", typ != 0 && typ != schema.ModeSymlink},
		{"DELETE FROM fs_xattr WHERE ino = ?", false},
		{"DELETE FROM fs_inode WHERE ino = ?", false},
	} {
		if q.skip {
			continue
		}
		if _, err := c.Exec(q.sql, ino); err != nil {
			return err
		}
	}
	return f.ovPurge(c, ino)
}

// keepIfOpen reports whether ino has open handles; if so it becomes an
// orphan candidate, in the same critical section as the check so that a
// concurrent last Close either comes first (and the caller purges) or
// sees the mark (and purges after the caller's transaction).
func (f *FS) keepIfOpen(ino int64) bool {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	if f.open[ino] > 0 {
		f.orphans[ino] = struct{}{}
		return true
	}
	return false
}

// keepOpen lists the inodes with open handles and marks them all orphan
// candidates (see keepIfOpen), for operations that remove many names.
func (f *FS) keepOpen() []int64 {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	out := make([]int64, 0, len(f.open))
	for ino, n := range f.open {
		if n > 0 {
			out = append(out, ino)
			f.orphans[ino] = struct{}{}
		}
	}
	return out
}

func (f *FS) openInos() []int64 {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	out := make([]int64, 0, len(f.open))
	for ino, n := range f.open {
		if n > 0 {
			out = append(out, ino)
		}
	}
	return out
}

// Invalidate drops every cached entry and attribute. Call it after
// changing the database behind the filesystem's back on the same
// connection (restore, repair), which PRAGMA data_version cannot see.
func (f *FS) Invalidate() {
	f.db.Locked(f.resetCache)
}

// OpenInodes lists the inodes with open handles in this process.
func (f *FS) OpenInodes() []int64 { return f.openInos() }
