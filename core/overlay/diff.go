package overlay

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Op is the kind of a change.
type Op string

// The kinds of change, as in the output of agentfs diff.
const (
	Added    Op = "A" // the base has nothing at the path
	Modified Op = "M" // the base has the path; content, type or attributes differ
	Deleted  Op = "D" // the base has the path, the overlay has not
)

// Change is one path that differs between the overlay and its base.
type Change struct {
	Op   Op     `json:"op"`
	Type string `json:"type"` // file, dir, symlink, fifo, socket, char, block
	Path string `json:"path"` // "/"-rooted, relative to the base directory

	ino     int64  // delta inode (A, M)
	content bool   // A/M of a non-directory: the data must be written
	source  string // base path its unchanged bytes come from ("" if none)
	st      vfs.Stat
	target  string // symlinks
}

// ErrNotOverlay is returned by Diff and Commit for an agent that is not an
// overlay.
var ErrNotOverlay = errors.New("not an overlay database (create one with agentfs init ID --base DIR)")

// Diff lists what the overlay changed relative to its base directory,
// sorted by path (a deletion before an addition at the same path). A
// directory that is added or deleted is listed with everything below it
// only for additions; a deletion lists the top path alone. Diff only
// reads: it copies nothing up.
func Diff(ctx context.Context, a *core.Agent) ([]Change, error) {
	base := a.FS.Base()
	if base == "" {
		return nil, ErrNotOverlay
	}
	d := &differ{base: base}
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		d.c = c
		d.out = d.out[:0]
		if err := d.dir(schema.RootIno, "/", "/", true); err != nil {
			return err
		}
		return d.deletions()
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(d.out, func(i, j int) bool {
		if d.out[i].Path != d.out[j].Path {
			return d.out[i].Path < d.out[j].Path
		}
		return d.out[i].Op == Deleted && d.out[j].Op != Deleted
	})
	return d.out, nil
}

type differ struct {
	base string
	c    *store.Conn
	out  []Change
}

// entry is a delta directory entry with what diff needs of its inode.
type entry struct {
	name     string
	st       vfs.Stat
	chunks   int64
	hasRow   bool
	path     string // base path at copy-up
	baseIno  int64
	baseSize int64
	baseMt   int64
	extent   int64
	complete bool
	target   string
}

func (d *differ) host(p string) string { return filepath.Join(d.base, filepath.FromSlash(p)) }

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// entries lists the delta entries of directory ino.
func (d *differ) entries(ino int64) ([]entry, error) {
	rows, err := d.c.Query(`SELECT CAST(d.name AS BLOB), i.ino, i.mode, i.uid, i.gid, i.size, i.mtime, i.mtime_nsec, i.rdev, i.nlink,
		(SELECT COUNT(*) FROM fs_data x WHERE x.ino = i.ino),
		o.ino IS NOT NULL, CAST(COALESCE(o.path, '') AS BLOB), COALESCE(o.base_ino, 0), COALESCE(o.base_size, 0),
		COALESCE(o.base_mtime_ns, 0), COALESCE(o.extent, 0), COALESCE(o.complete, 0),
		CAST(COALESCE(s.target, '') AS BLOB)
		FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino
		LEFT JOIN `+vfs.OverlayTable+` o ON o.ino = i.ino
		LEFT JOIN fs_symlink s ON s.ino = i.ino
		WHERE d.parent_ino = ? ORDER BY d.name`, ino)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []entry
	for rows.Next() {
		var e entry
		var name, path, target []byte
		var mode, uid, gid, mt, mtns, rdev, nlink, complete int64
		if err := rows.Scan(&name, &e.st.Ino, &mode, &uid, &gid, &e.st.Size, &mt, &mtns, &rdev, &nlink, &e.chunks,
			&e.hasRow, &path, &e.baseIno, &e.baseSize, &e.baseMt, &e.extent, &complete, &target); err != nil {
			return nil, err
		}
		e.name, e.path, e.target, e.complete = string(name), string(path), string(target), complete != 0
		e.st.Mode, e.st.UID, e.st.GID, e.st.Rdev, e.st.Nlink = uint32(mode), uint32(uid), uint32(gid), uint64(rdev), uint32(nlink)
		e.st.Mtime = unixNano(mt, mtns)
		out = append(out, e)
	}
	return out, rows.Err()
}

// dir compares delta directory ino, at overlay path p, whose base
// entries come from base path bp. inPlace says whether the base entries
// not copied up are unchanged (the directory is at its base path) or new
// here (it was moved, or is inside a moved one).
func (d *differ) dir(ino int64, p, bp string, inPlace bool) error {
	list, err := d.entries(ino)
	if err != nil {
		return err
	}
	var row struct {
		complete bool
		has      bool
	}
	if err := d.c.QueryRow("SELECT complete FROM "+vfs.OverlayTable+" WHERE ino = ?", ino).Scan(&row.complete); err == nil {
		row.has = true
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, e := range list {
		if err := d.entry(e, join(p, e.name)); err != nil {
			return err
		}
	}
	if !row.has || row.complete || inPlace {
		return nil
	}
	// A moved directory that was never listed: its base entries not in
	// the delta (and not whited out) are new at the new path.
	have := map[string]bool{}
	for _, e := range list {
		have[e.name] = true
	}
	wh, err := d.c.Strings("SELECT CAST(path AS BLOB) FROM fs_whiteout WHERE parent_path = CAST(? AS TEXT)", []byte(bp))
	if err != nil {
		return err
	}
	for _, w := range wh {
		have[w[strings.LastIndexByte(w, '/')+1:]] = true
	}
	return d.baseTree(bp, p, have)
}

// baseTree adds the base entries of base directory bp as new at overlay
// directory p (except the names in skip), recursively.
func (d *differ) baseTree(bp, p string, skip map[string]bool) error {
	names, err := readNames(d.host(bp))
	if err != nil {
		return err
	}
	for _, name := range names {
		if skip[name] {
			continue
		}
		var st hostfs.StatBuf
		if err := hostfs.Lstat(d.host(join(bp, name)), &st); err != nil {
			continue
		}
		c := Change{Path: join(p, name), Type: vfs.TypeName(uint32(st.Mode)), source: join(bp, name)}
		c.Op = d.opAt(c.Path)
		c.st = vfs.Stat{Mode: uint32(st.Mode), UID: st.Uid, GID: st.Gid, Size: st.Size, Rdev: uint64(st.Rdev), Mtime: hostfs.Mtime(&st)}
		c.content = st.Mode&syscall.S_IFMT != syscall.S_IFDIR
		d.out = append(d.out, c)
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			if err := d.baseTree(join(bp, name), c.Path, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// opAt is A when the base has nothing at path p, else M.
func (d *differ) opAt(p string) Op {
	var st hostfs.StatBuf
	if hostfs.Lstat(d.host(p), &st) == nil {
		return Modified
	}
	return Added
}

func (d *differ) entry(e entry, p string) error {
	isDir := e.st.IsDir()
	c := Change{Path: p, Type: vfs.TypeName(e.st.Mode), ino: e.st.Ino, st: e.st, target: e.target}
	if e.hasRow && e.path == p {
		// The base entry at its own place: changed or not?
		var st hostfs.StatBuf
		baseErr := hostfs.Lstat(d.host(p), &st)
		switch {
		case isDir:
			if baseErr == nil && (e.st.Mode != uint32(st.Mode) || e.st.UID != st.Uid || e.st.GID != st.Gid) {
				c.Op = Modified
			}
		case e.st.IsRegular():
			dataChanged := e.chunks > 0 || e.st.Size != e.baseSize || e.extent < e.baseSize
			if dataChanged || e.st.Mtime.UnixNano() != e.baseMt || baseErr != nil ||
				e.st.Mode != uint32(st.Mode) || e.st.UID != st.Uid || e.st.GID != st.Gid {
				c.Op, c.content = Modified, dataChanged || baseErr != nil
				if e.extent > 0 {
					c.source = e.path
				}
			}
		default:
			if baseErr != nil || e.st.Mode != uint32(st.Mode) || e.st.UID != st.Uid || e.st.GID != st.Gid {
				c.Op, c.content = Modified, true
			}
		}
		if c.Op != "" {
			d.out = append(d.out, c)
		}
		if isDir {
			return d.dir(e.st.Ino, p, e.path, true)
		}
		return nil
	}
	// New here: created in the delta, moved or copied from elsewhere.
	c.Op, c.content = d.opAt(p), !isDir
	if e.hasRow && e.extent > 0 {
		c.source = e.path
	}
	d.out = append(d.out, c)
	if isDir {
		bp := ""
		if e.hasRow {
			bp = e.path
		}
		return d.dir(e.st.Ino, p, bp, false)
	}
	return nil
}

// deletions adds a D for every whiteout whose base entry exists and that
// the overlay has nothing at; a deletion below a deleted directory is
// left out.
func (d *differ) deletions() error {
	wh, err := d.c.Strings("SELECT CAST(path AS BLOB) FROM fs_whiteout ORDER BY path")
	if err != nil {
		return err
	}
	var dels []string
	for _, w := range wh {
		var st hostfs.StatBuf
		if hostfs.Lstat(d.host(w), &st) != nil {
			continue
		}
		present, err := d.inDelta(w)
		if err != nil {
			return err
		}
		if present {
			continue
		}
		if n := len(dels); n > 0 && strings.HasPrefix(w, dels[n-1]+"/") {
			continue
		}
		dels = append(dels, w)
		d.out = append(d.out, Change{Op: Deleted, Type: vfs.TypeName(uint32(st.Mode)), Path: w})
	}
	return nil
}

// inDelta reports whether the overlay has an entry at path p, looking at
// the delta only: whiteouts are only written in directories that the
// delta answers for alone.
func (d *differ) inDelta(p string) (bool, error) {
	ino := int64(schema.RootIno)
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		err := d.c.QueryRow("SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = CAST(? AS TEXT)", ino, []byte(name)).Scan(&ino)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}
