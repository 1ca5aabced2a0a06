package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Overlay: the filesystem as the delta layer above a host directory (the
// base). See spec/SPEC.md, "Overlay".
//
// A base entry becomes a delta inode the first time it is looked up
// (metadata copy-up): an fs_inode row with the base entry's attributes,
// its fs_dentry, fs_origin(delta_ino, base_ino), and a row of
// OverlayTable recording the base path and what the base file looked like
// then. From there on every operation of this package works on it as on
// any inode, so every way in (FUSE, NFS, the shell, the SDK) sees the same
// overlay and its inode number never changes. The data is not copied:
// bytes [0, extent) of a file that have no fs_data chunk are read from the
// base file at the same offset, and a write stores only the chunks it
// touches (per-chunk copy-up).
//
// A directory lists the base directory's entries once (readdir, or before
// a name is removed from it): then all of them are delta entries and it
// is marked complete; lookups in it no longer look at the base.
// Removing a name whose base entry exists records a whiteout
// (fs_whiteout, AgentFS 0.4) so that the removal is visible to diff and
// to other tools reading the delta.
//
// Reads never write, except to copy metadata up: a read that meets a base
// entry not yet in the delta runs again inside a write transaction.

// OverlayTable is this project's extension table of overlay inodes.
const OverlayTable = "agentfs_overlay_inode"

// WhiteoutTable records the base entry each whiteout hides, as it was
// when removed.
const WhiteoutTable = "agentfs_overlay_whiteout"

// errNeedWrite stops a read that must copy a base entry up; f.read runs
// it again in a write transaction.
var errNeedWrite = errors.New("overlay: copy-up needs a write transaction")

// overlay is the state of an overlay filesystem.
type overlay struct {
	root  string            // the base directory, absolute
	dev   uint64            // st_dev of root + 1 (0: not known yet)
	nodes map[int64]*ovNode // cached OverlayTable rows; nil: no row
}

// ovNode is a row of OverlayTable.
type ovNode struct {
	path     string // base path, "/"-rooted, relative to root
	baseIno  int64
	size     int64 // base size at copy-up
	mtimeNs  int64 // base mtime at copy-up
	extent   int64 // bytes [0, extent) without a chunk come from the base
	complete bool  // directories: every base entry is in the delta
}

// Base returns the base directory of an overlay filesystem, or "".
func (f *FS) Base() string {
	if f.ov == nil {
		return ""
	}
	return f.ov.root
}

func (f *FS) resetOverlayCache() {
	if f.ov != nil {
		f.ov.nodes = make(map[int64]*ovNode)
	}
}

// ovNode returns the overlay row of ino, or nil.
func (f *FS) ovNode(c *store.Conn, ino int64) (*ovNode, error) {
	if n, ok := f.ov.nodes[ino]; ok {
		return n, nil
	}
	var n ovNode
	var p []byte
	var complete int64
	err := c.QueryRow("SELECT CAST(path AS BLOB), base_ino, base_size, base_mtime_ns, extent, complete FROM "+OverlayTable+" WHERE ino = ?", ino).
		Scan(&p, &n.baseIno, &n.size, &n.mtimeNs, &n.extent, &complete)
	if isNoRows(err) {
		f.ov.nodes[ino] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n.path, n.complete = string(p), complete != 0
	f.ov.nodes[ino] = &n
	return &n, nil
}

func joinBase(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func (o *overlay) host(p string) string { return filepath.Join(o.root, filepath.FromSlash(p)) }

// ovLookup finds name in the base directory behind parent when the delta
// has no entry for it. It returns 0 when there is none (or a whiteout
// hides it), and copies the entry up when there is one.
func (f *FS) ovLookup(c *store.Conn, parent int64, name string) (int64, error) {
	n, err := f.ovNode(c, parent)
	if err != nil || n == nil || n.complete || name == "." || name == ".." {
		return 0, err
	}
	bp := joinBase(n.path, name)
	var st hostfs.StatBuf
	if err := hostfs.Lstat(f.ov.host(bp), &st); err != nil {
		if err == syscall.ENOENT || err == syscall.ENOTDIR || err == syscall.ENAMETOOLONG {
			return 0, nil
		}
		return 0, pathErr("lookup", bp, hostErrno(err))
	}
	var one int
	err = c.QueryRow("SELECT 1 FROM fs_whiteout WHERE path = CAST(? AS TEXT)", []byte(bp)).Scan(&one)
	if err == nil {
		return 0, nil
	}
	if !isNoRows(err) {
		return 0, err
	}
	if !f.inWrite {
		return 0, errNeedWrite
	}
	if smallDir(f.ov.host(n.path)) {
		// Whoever looks up one name of a directory tends to look up its
		// neighbours (git status, make, ls -l): bring a small directory
		// up whole, in one transaction instead of one per name.
		if err := f.ovPopulate(c, parent); err != nil {
			return 0, err
		}
		if ino, ok := f.dentries[dentryKey{parent, name}]; ok && ino != 0 {
			return ino, nil
		}
	}
	inos, err := f.copyUp(c, parent, []baseEntry{{name: name, path: bp, st: st}})
	if err != nil {
		return 0, err
	}
	return inos[0], nil
}

func hostErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// baseEntry is a base entry about to be copied up.
type baseEntry struct {
	name, path string
	st         hostfs.StatBuf
	target     string // symlinks
	xattrs     []hostfs.Xattr
}

// DeltaInoBase is where the numbers of inodes created in an overlay's
// delta begin (sqlite_sequence of fs_inode is raised to it). Below it, a
// copied-up base entry takes its base inode number as its delta inode
// number, so stat in the overlay reports the host's st_ino (git and other
// tools that cache stat data see the same files), with no translation
// between numbers anywhere.
const DeltaInoBase = int64(1) << 40

// copyUp inserts delta inodes for base entries of directory parent, with
// a handful of multi-row statements whatever their number, and returns
// their inode numbers. Each takes its base inode number when it can (see
// DeltaInoBase); a base entry whose inode is already in the delta (a
// hard link in the base) becomes one more name of it.
func (f *FS) copyUp(c *store.Conn, parent int64, entries []baseEntry) ([]int64, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	f.dirty()
	if f.ov.dev == 0 {
		var st hostfs.StatBuf
		if err := hostfs.Stat(f.ov.root, &st); err != nil {
			return nil, pathErr("lookup", "/", hostErrno(err))
		}
		f.ov.dev = uint64(st.Dev) + 1 // +1: 0 means unknown
	}
	for i := range entries {
		e := &entries[i]
		if e.st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			t, err := os.Readlink(f.ov.host(e.path))
			if err != nil {
				return nil, pathErr("lookup", e.path, hostErrno(err))
			}
			e.target = t
		}
		xs, err := hostfs.Xattrs(f.ov.host(e.path))
		if err != nil {
			return nil, pathErr("lookup", e.path, hostErrno(err))
		}
		e.xattrs = xs
	}
	// The base inode number is usable when it belongs to the base's own
	// filesystem (another mounted below it may reuse numbers) and lies
	// below DeltaInoBase and above the root's 1.
	claim := func(e *baseEntry) int64 {
		if uint64(e.st.Dev)+1 != f.ov.dev || e.st.Ino <= 1 || int64(e.st.Ino) >= DeltaInoBase {
			return 0
		}
		return int64(e.st.Ino)
	}
	var wanted []int64
	for i := range entries {
		if b := claim(&entries[i]); b != 0 {
			wanted = append(wanted, b)
		}
	}
	// Numbers already in the delta: the same base inode (link to it) or,
	// in a delta made by another tool, an unrelated inode (take another).
	taken := map[int64]int64{} // ino -> its base_ino (-1: none)
	for len(wanted) > 0 {
		n := min(len(wanted), 500)
		rows, err := c.Query(`SELECT i.ino, COALESCE(o.base_ino, -1) FROM fs_inode i LEFT JOIN fs_origin o ON o.delta_ino = i.ino
			WHERE i.ino IN (SELECT value FROM json_each(?))`, "["+joinInts(wanted[:n])+"]")
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var ino, b int64
			if err := rows.Scan(&ino, &b); err != nil {
				rows.Close()
				return nil, err
			}
			taken[ino] = b
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		wanted = wanted[n:]
	}
	var next int64 // for the entries that cannot take their base number
	if err := c.QueryRow(`SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'fs_inode'), 0),
		COALESCE((SELECT max(ino) FROM fs_inode WHERE ino >= ?), 0), ?) + 1`, DeltaInoBase, DeltaInoBase).Scan(&next); err != nil {
		return nil, err
	}
	inos := make([]int64, len(entries))
	link := make([]bool, len(entries)) // a new name of an inode already in the delta
	for i := range entries {
		e := &entries[i]
		b := claim(e)
		if b != 0 && e.st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			if ob, ok := taken[b]; ok && ob == b {
				inos[i], link[i] = b, true
				continue
			}
		}
		if _, ok := taken[b]; b == 0 || ok {
			inos[i] = next
			next++
			continue
		}
		inos[i] = b
		taken[b] = b
	}
	const batch = 64
	for lo := 0; lo < len(entries); lo += batch {
		hi := min(lo+batch, len(entries))
		var qi, qd, qo, qn, qs strings.Builder
		qi.WriteString(`INSERT INTO fs_inode (ino, mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec, mtime_nsec, ctime_nsec) VALUES `)
		qd.WriteString("INSERT INTO fs_dentry (name, parent_ino, ino) VALUES ")
		qo.WriteString("INSERT OR REPLACE INTO fs_origin (delta_ino, base_ino) VALUES ")
		qn.WriteString("INSERT OR REPLACE INTO " + OverlayTable + " (ino, path, base_ino, base_size, base_mtime_ns, extent, complete) VALUES ")
		qs.WriteString("INSERT INTO fs_symlink (ino, target) VALUES ")
		var ai, ad, ao, an, as []any
		var linked []int64
		for i := lo; i < hi; i++ {
			e, ino := &entries[i], inos[i]
			if len(ad) > 0 {
				qd.WriteString(",")
			}
			qd.WriteString("(CAST(? AS TEXT),?,?)")
			ad = append(ad, []byte(e.name), parent, ino)
			if link[i] {
				linked = append(linked, ino)
				continue
			}
			sep := ","
			if len(ai) == 0 {
				sep = ""
			}
			mode := e.st.Mode
			size := e.st.Size
			extent := int64(0)
			switch mode & syscall.S_IFMT {
			case syscall.S_IFDIR:
				size = 0
			case syscall.S_IFREG:
				extent = size
			case syscall.S_IFLNK:
				size = int64(len(e.target))
				if len(as) > 0 {
					qs.WriteString(",")
				}
				qs.WriteString("(?, CAST(? AS TEXT))")
				as = append(as, ino, []byte(e.target))
			default:
				size = 0
			}
			at, mt, ct := hostfs.Atime(&e.st), hostfs.Mtime(&e.st), hostfs.Ctime(&e.st)
			qi.WriteString(sep + "(?,?,1,?,?,?,?,?,?,?,?,?,?)")
			ai = append(ai, ino, int64(mode), int64(e.st.Uid), int64(e.st.Gid), size,
				at.Unix(), mt.Unix(), ct.Unix(), int64(e.st.Rdev), int64(at.Nanosecond()), int64(mt.Nanosecond()), int64(ct.Nanosecond()))
			qo.WriteString(sep + "(?,?)")
			ao = append(ao, ino, int64(e.st.Ino))
			qn.WriteString(sep + "(?,CAST(? AS TEXT),?,?,?,?,0)")
			an = append(an, ino, []byte(e.path), int64(e.st.Ino), e.st.Size, mt.UnixNano(), extent)
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{{qi.String(), ai}, {qd.String(), ad}, {qo.String(), ao}, {qn.String(), an}, {qs.String(), as}} {
			if len(q.args) == 0 {
				continue
			}
			if _, err := c.Exec(q.sql, q.args...); err != nil {
				return nil, fmt.Errorf("overlay copy-up: %w", err)
			}
		}
		for i := lo; i < hi; i++ {
			if !link[i] {
				if err := insertXattrs(c, inos[i], entries[i].xattrs); err != nil {
					return nil, fmt.Errorf("overlay copy-up: %w", err)
				}
			}
		}
		for _, ino := range linked {
			delete(f.inodes, ino)
			if _, err := c.Exec("UPDATE fs_inode SET nlink = nlink + 1 WHERE ino = ?", ino); err != nil {
				return nil, err
			}
		}
	}
	for i := range entries {
		e := &entries[i]
		f.dentries[dentryKey{parent, e.name}] = inos[i]
		if link[i] {
			continue
		}
		n := &ovNode{path: e.path, baseIno: int64(e.st.Ino), size: e.st.Size, mtimeNs: hostfs.Mtime(&e.st).UnixNano()}
		if e.st.Mode&syscall.S_IFMT == syscall.S_IFREG {
			n.extent = e.st.Size
		}
		f.ov.nodes[inos[i]] = n
	}
	return inos, nil
}

// insertXattrs stores the extended attributes of a new inode, a few
// hundred rows per statement (SQLite binds at most 32,766 values).
func insertXattrs(c *store.Conn, ino int64, xs []hostfs.Xattr) error {
	for len(xs) > 0 {
		n := min(len(xs), 300)
		var q strings.Builder
		q.WriteString("INSERT INTO fs_xattr (ino, name, value) VALUES ")
		args := make([]any, 0, 3*n)
		for i, x := range xs[:n] {
			if i > 0 {
				q.WriteString(",")
			}
			q.WriteString("(?, CAST(? AS TEXT), ?)")
			args = append(args, ino, []byte(x.Name), x.Value)
		}
		if _, err := c.Exec(q.String(), args...); err != nil {
			return err
		}
		xs = xs[n:]
	}
	return nil
}

// ovPopulate brings every base entry of directory dir into the delta
// (once), so that the delta alone answers for it.
func (f *FS) ovPopulate(c *store.Conn, dir int64) error {
	if f.ov == nil {
		return nil
	}
	n, err := f.ovNode(c, dir)
	if err != nil || n == nil || n.complete {
		return err
	}
	if !f.inWrite {
		return errNeedWrite
	}
	names, err := readDirNames(f.ov.host(n.path))
	if err != nil {
		return pathErr("readdir", n.path, hostErrno(err))
	}
	if len(names) > 0 {
		have := map[string]bool{}
		list, err := c.Strings("SELECT CAST(name AS BLOB) FROM fs_dentry WHERE parent_ino = ?", dir)
		if err != nil {
			return err
		}
		for _, s := range list {
			have[s] = true
		}
		list, err = c.Strings("SELECT CAST(path AS BLOB) FROM fs_whiteout WHERE parent_path = CAST(? AS TEXT)", []byte(n.path))
		if err != nil {
			return err
		}
		for _, s := range list {
			have[s[strings.LastIndexByte(s, '/')+1:]] = true
		}
		var entries []baseEntry
		for _, name := range names {
			if have[name] {
				continue
			}
			bp := joinBase(n.path, name)
			var st hostfs.StatBuf
			if err := hostfs.Lstat(f.ov.host(bp), &st); err != nil {
				if err == syscall.ENOENT {
					continue // removed from the base meanwhile
				}
				return pathErr("readdir", bp, hostErrno(err))
			}
			entries = append(entries, baseEntry{name: name, path: bp, st: st})
		}
		if _, err := f.copyUp(c, dir, entries); err != nil {
			return err
		}
	}
	f.dirty()
	if _, err := c.Exec("UPDATE "+OverlayTable+" SET complete = 1 WHERE ino = ?", dir); err != nil {
		return err
	}
	n.complete = true
	return nil
}

// smallDirEntries is the size up to which a lookup copies a whole base
// directory up (a variable for the tests of the other path).
var smallDirEntries = 1024

// smallDir reports whether the host directory has at most
// smallDirEntries entries.
func smallDir(dir string) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(smallDirEntries + 1)
	return (err == nil || err == io.EOF) && len(names) <= smallDirEntries
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil // gone from the base: nothing to bring
		}
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// ovRemoving runs before name leaves directory parent (unlink, rmdir,
// rename away, replace): the directory is populated first, since a
// removed base entry must not come back on the next lookup, and a
// whiteout records the removal when the base has that entry.
func (f *FS) ovRemoving(c *store.Conn, parent int64, name string) error {
	if f.ov == nil {
		return nil
	}
	n, err := f.ovNode(c, parent)
	if err != nil || n == nil {
		return err
	}
	if err := f.ovPopulate(c, parent); err != nil {
		return err
	}
	bp := joinBase(n.path, name)
	var st hostfs.StatBuf
	if hostfs.Lstat(f.ov.host(bp), &st) != nil {
		return nil
	}
	f.dirty()
	if _, err := c.Exec("INSERT OR IGNORE INTO fs_whiteout (path, parent_path, created_at) VALUES (CAST(? AS TEXT), CAST(? AS TEXT), ?)",
		[]byte(bp), []byte(n.path), time.Now().Unix()); err != nil {
		return err
	}
	if _, err := c.Exec("INSERT OR IGNORE INTO "+WhiteoutTable+" (path, base_ino, base_size, base_mtime_ns) VALUES (CAST(? AS TEXT), ?, ?, ?)",
		[]byte(bp), int64(st.Ino), st.Size, hostfs.Mtime(&st).UnixNano()); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		// The whiteout of a directory hides everything below it: the
		// whiteouts of its entries (an rm -rf leaves one per file) are
		// redundant now. '0' follows '/' in byte order. What the removed
		// entries were stays in WhiteoutTable for commit's checks.
		_, err := c.Exec("DELETE FROM fs_whiteout WHERE path > CAST(? AS TEXT) AND path < CAST(? AS TEXT)", []byte(bp+"/"), []byte(bp+"0"))
		return err
	}
	return nil
}

// ovPurge drops the overlay rows of a deleted inode.
func (f *FS) ovPurge(c *store.Conn, ino int64) error {
	if f.ov == nil {
		return nil
	}
	delete(f.ov.nodes, ino)
	if _, err := c.Exec("DELETE FROM "+OverlayTable+" WHERE ino = ?", ino); err != nil {
		return err
	}
	_, err := c.Exec("DELETE FROM fs_origin WHERE delta_ino = ?", ino)
	return err
}

// ovTruncated lowers the base extent of ino after its size became size:
// bytes past it must read as zeros even if the file grows again.
func (f *FS) ovTruncated(c *store.Conn, ino, size int64) error {
	if f.ov == nil {
		return nil
	}
	n, err := f.ovNode(c, ino)
	if err != nil || n == nil || n.extent <= size {
		return err
	}
	f.dirty()
	if _, err := c.Exec("UPDATE "+OverlayTable+" SET extent = ? WHERE ino = ?", size, ino); err != nil {
		return err
	}
	n.extent = size
	return nil
}

// baseData says where the bytes of a file missing from fs_data come from.
type baseData struct {
	path    string
	ino     int64
	size    int64
	mtimeNs int64
	extent  int64
	anyBase bool // accept a base file that changed since the copy-up
}

// overlayJoin extends the one-statement reads of readAt/readWhole with the
// file's base extent.
const overlayJoin = ` LEFT JOIN ` + OverlayTable + ` o ON o.ino = i.ino`
const overlayCols = `, COALESCE(o.extent, 0), CAST(COALESCE(o.path, '') AS BLOB), COALESCE(o.base_ino, 0), COALESCE(o.base_size, 0), COALESCE(o.base_mtime_ns, 0)`

// readBase copies the base bytes [off, off+len(p)) of a file into p,
// limited to the extent, for the chunks not in have (chunk index set).
// The base file must still be the one copied up: if it changed, ESTALE.
func (f *FS) readBase(b *baseData, p []byte, off int64, have map[int64]bool) error {
	end := min(off+int64(len(p)), b.extent)
	if b.extent <= 0 || off >= end {
		return nil
	}
	cs := int64(f.chunkSize)
	var file *os.File
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	for idx := off / cs; idx*cs < end; idx++ {
		if have[idx] {
			continue
		}
		if file == nil {
			var err error
			if file, err = f.openBase(b); err == errNoBase {
				return nil // forced, and the base file is gone: zeros
			} else if err != nil {
				return err
			}
		}
		lo, hi := max(idx*cs, off), min((idx+1)*cs, end)
		if _, err := file.ReadAt(p[lo-off:hi-off], lo); err != nil && err != io.EOF {
			return syscall.EIO
		}
	}
	return nil
}

var errNoBase = errors.New("base file gone")

// openBase opens the base file of b and checks that it is unchanged.
func (f *FS) openBase(b *baseData) (*os.File, error) {
	file, err := os.Open(f.ov.host(b.path))
	if err != nil {
		if b.anyBase && errors.Is(err, os.ErrNotExist) {
			return nil, errNoBase
		}
		return nil, syscall.ESTALE
	}
	var st hostfs.StatBuf
	if b.anyBase {
		return file, nil
	}
	if err := hostfs.Fstat(file.Fd(), &st); err != nil || int64(st.Ino) != b.ino || st.Size != b.size || hostfs.Mtime(&st).UnixNano() != b.mtimeNs {
		file.Close()
		return nil, syscall.ESTALE
	}
	return file, nil
}

// baseChunk returns the base bytes of chunk idx of ino (up to the extent),
// for a write that merges a partial chunk that fs_data does not hold.
func (f *FS) baseChunk(c *store.Conn, ino, idx int64) ([]byte, error) {
	if f.ov == nil {
		return nil, nil
	}
	n, err := f.ovNode(c, ino)
	if err != nil || n == nil {
		return nil, err
	}
	cs := int64(f.chunkSize)
	start := idx * cs
	if start >= n.extent {
		return nil, nil
	}
	buf := make([]byte, min(cs, n.extent-start))
	b := &baseData{path: n.path, ino: n.baseIno, size: n.size, mtimeNs: n.mtimeNs, extent: n.extent}
	if err := f.readBase(b, buf, start, nil); err != nil {
		return nil, err
	}
	return buf, nil
}

// OverlayFile describes the base side of a delta inode (see OverlayInfo).
type OverlayFile struct {
	Path     string // base path at copy-up, "/"-rooted
	BaseIno  int64
	BaseSize int64
	// BaseMtime is the base file's modification time at copy-up.
	BaseMtime time.Time
	// Extent: bytes [0, Extent) that have no chunk come from the base.
	Extent   int64
	Complete bool
}

// OverlayInfo returns the overlay record of inode ino (ok false for an
// inode created in the delta, or when the filesystem is no overlay).
func (f *FS) OverlayInfo(ctx context.Context, ino int64) (info OverlayFile, ok bool, err error) {
	if f.ov == nil {
		return info, false, nil
	}
	err = f.read(ctx, func(c *store.Conn) error {
		n, err := f.ovNode(c, ino)
		if err != nil || n == nil {
			return err
		}
		ok = true
		info = OverlayFile{Path: n.path, BaseIno: n.baseIno, BaseSize: n.size, BaseMtime: time.Unix(0, n.mtimeNs),
			Extent: n.extent, Complete: n.complete}
		return nil
	})
	return info, ok, err
}

// ChunkCount returns the number of fs_data chunks stored for inode ino.
func (f *FS) ChunkCount(ctx context.Context, ino int64) (n int64, err error) {
	err = f.read(ctx, func(c *store.Conn) error {
		return c.QueryRow("SELECT COUNT(*) FROM fs_data WHERE ino = ?", ino).Scan(&n)
	})
	return n, err
}

// InitOverlay makes the (new, empty) filesystem of c the delta layer of
// an overlay over the host directory base (absolute): the configuration
// key, the extension table and the root's record. Run it in the
// transaction that created the schema.
func InitOverlay(c *store.Conn, base string) error {
	var st hostfs.StatBuf
	if err := hostfs.Stat(base, &st); err != nil {
		return &os.PathError{Op: "overlay base", Path: base, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return &os.PathError{Op: "overlay base", Path: base, Err: syscall.ENOTDIR}
	}
	if _, err := c.Exec("INSERT OR REPLACE INTO fs_overlay_config (key, value) VALUES ('base_path', CAST(? AS TEXT))", []byte(base)); err != nil {
		return err
	}
	at, mt, ct := hostfs.Atime(&st), hostfs.Mtime(&st), hostfs.Ctime(&st)
	if _, err := c.Exec(`UPDATE fs_inode SET mode = ?, uid = ?, gid = ?, atime = ?, mtime = ?, ctime = ?, atime_nsec = ?, mtime_nsec = ?, ctime_nsec = ? WHERE ino = ?`,
		int64(st.Mode), int64(st.Uid), int64(st.Gid), at.Unix(), mt.Unix(), ct.Unix(), at.Nanosecond(), mt.Nanosecond(), ct.Nanosecond(), schema.RootIno); err != nil {
		return err
	}
	return EnsureOverlayRoot(c, base)
}

// EnsureOverlayRoot creates the root's record of an overlay database that
// lacks it (one made by another tool).
func EnsureOverlayRoot(c *store.Conn, base string) error {
	var st hostfs.StatBuf
	if err := hostfs.Stat(base, &st); err != nil {
		return &os.PathError{Op: "overlay base", Path: base, Err: err}
	}
	if _, err := c.Exec("INSERT OR IGNORE INTO fs_origin (delta_ino, base_ino) VALUES (?, ?)", schema.RootIno, int64(st.Ino)); err != nil {
		return err
	}
	if _, err := c.Exec("INSERT OR IGNORE INTO "+OverlayTable+" (ino, path, base_ino, base_size, base_mtime_ns, extent, complete) VALUES (?, '/', ?, 0, ?, 0, 0)",
		schema.RootIno, int64(st.Ino), hostfs.Mtime(&st).UnixNano()); err != nil {
		return err
	}
	// Inodes created in the delta are numbered from DeltaInoBase up.
	r, err := c.Exec("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'fs_inode'", DeltaInoBase)
	if err != nil {
		return err
	}
	if n, err := r.RowsAffected(); err != nil || n > 0 {
		return err
	}
	_, err = c.Exec("INSERT INTO sqlite_sequence (name, seq) VALUES ('fs_inode', ?)", DeltaInoBase)
	return err
}

// HasOverlayRoot reports whether the root has its overlay record.
func HasOverlayRoot(c *store.Conn) (bool, error) {
	var n int
	err := c.QueryRow("SELECT COUNT(*) FROM "+OverlayTable+" WHERE ino = ?", schema.RootIno).Scan(&n)
	return n > 0, err
}

// ovCopied gives dst, whose chunks were just copied from src, the base
// extent of src: its bytes without a chunk come from the same base file.
func (f *FS) ovCopied(c *store.Conn, src, dst int64) error {
	if f.ov == nil {
		return nil
	}
	n, err := f.ovNode(c, src)
	if err != nil || n == nil || n.extent == 0 {
		if err == nil {
			err = f.ovTruncated(c, dst, 0)
		}
		return err
	}
	f.dirty()
	delete(f.ov.nodes, dst)
	_, err = c.Exec("INSERT OR REPLACE INTO "+OverlayTable+` (ino, path, base_ino, base_size, base_mtime_ns, extent, complete)
		SELECT ?, path, base_ino, base_size, base_mtime_ns, extent, 0 FROM `+OverlayTable+" WHERE ino = ?", dst, src)
	return err
}

// ReadInoAt reads inode ino at off like a read through an open file. With
// anyBase, bytes an overlay file still takes from its base file are read
// even if that file changed since the copy-up (they are zeros if it is
// gone) instead of failing with ESTALE: commit --force uses it.
func (f *FS) ReadInoAt(ctx context.Context, ino int64, p []byte, off int64, anyBase bool) (int, error) {
	n, err := f.readAtBase(ctx, ino, p, off, anyBase)
	if e := errnoOf(err); e != 0 {
		err = pathErr("read", inoPath(ino), e)
	}
	return n, err
}
