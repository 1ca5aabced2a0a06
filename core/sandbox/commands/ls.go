package commands

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("ls", "ls [-laA1RdhtSrFpi] [FILE]...", runLs)
}

type lsOpts struct {
	long, all, almost, recursive, dirOnly, human, byTime, bySize, reverse, classify, slash, inode, noSort, numeric bool
}

type lsEntry struct {
	name   string // as shown
	path   string // absolute
	st     vfs.Stat
	target string // symlink target
}

func runLs(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "laA1RdhtSrFpiCUnogx", long: map[string]string{
		"all": "a", "almost-all": "A", "recursive": "R", "directory": "d", "human-readable": "h", "reverse": "r",
		"classify": "F", "inode": "i", "color=": "c", "color": "c", "numeric-uid-gid": "n",
	}}, 2)
	if !ok {
		return code
	}
	opt := lsOpts{
		long: o.has("l") || o.has("n") || o.has("o") || o.has("g"), all: o.has("a"), almost: o.has("A"), recursive: o.has("R"),
		dirOnly: o.has("d"), human: o.has("h"), byTime: o.has("t"), bySize: o.has("S"), reverse: o.has("r"),
		classify: o.has("F"), slash: o.has("p"), inode: o.has("i"), noSort: o.has("U"), numeric: o.has("n"),
	}
	w := bufio.NewWriter(c.Stdout)
	status := 0
	if len(args) == 0 {
		args = []string{"."}
	}
	var files []lsEntry
	var dirs []lsEntry
	for _, a := range args {
		p := c.Abs(a)
		st, err := c.Lstat(strings.TrimSuffix(p, "/"))
		if p == "/" {
			st, err = c.Lstat("/")
		}
		if err == nil && st.IsSymlink() && (!opt.long || strings.HasSuffix(a, "/")) && !opt.dirOnly && !opt.classify {
			if tst, terr := c.Stat(p); terr == nil {
				st = tst
			}
		} else if err == nil && st.IsSymlink() && strings.HasSuffix(a, "/") {
			if tst, terr := c.Stat(p); terr == nil {
				st = tst
			}
		}
		if err != nil {
			c.Errorf("cannot access %s: %s", q(a), ErrText(err))
			status = 2
			continue
		}
		e := lsEntry{name: a, path: p, st: st}
		if st.IsSymlink() {
			e.target, _ = c.FS.Readlink(strings.TrimSuffix(p, "/"))
		}
		if st.IsDir() && !opt.dirOnly {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	lsSort(files, opt)
	lsSort(dirs, opt)
	if len(files) > 0 {
		c.lsPrint(w, files, opt, false)
	}
	header := len(args) > 1 || opt.recursive
	for i, d := range dirs {
		if i > 0 || len(files) > 0 {
			w.WriteString("\n")
		}
		if s := c.lsDir(w, d.name, d.path, opt, header); s > status {
			status = s
		}
		if c.Cancelled() {
			break
		}
	}
	return exitWrite(c, w.Flush(), status)
}

func (c *Cmd) lsDir(w *bufio.Writer, name, p string, opt lsOpts, header bool) int {
	if header {
		fmt.Fprintf(w, "%s:\n", name)
	}
	entries, err := c.FS.ReaddirPlus(p)
	if err != nil {
		c.Errorf("cannot open directory %s: %s", q(name), ErrText(err))
		return 2
	}
	var list []lsEntry
	if opt.all {
		for _, dot := range []string{".", ".."} {
			st, err := c.FS.Stat(joinPath(p, dot))
			if err == nil {
				list = append(list, lsEntry{name: dot, path: joinPath(p, dot), st: st})
			}
		}
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") && !opt.all && !opt.almost {
			continue
		}
		le := lsEntry{name: e.Name, path: joinPath(p, e.Name), st: e.Stat}
		if e.Stat.IsSymlink() {
			le.target, _ = c.FS.Readlink(le.path)
		}
		list = append(list, le)
	}
	lsSort(list, opt)
	if opt.long {
		var blocks int64
		for _, e := range list {
			blocks += allocBlocks(e.st)
		}
		fmt.Fprintf(w, "total %s\n", lsSize(blocks*512/1024, opt.human && false))
	}
	c.lsPrint(w, list, opt, true)
	status := 0
	if opt.recursive {
		for _, e := range list {
			if !e.st.IsDir() || e.name == "." || e.name == ".." {
				continue
			}
			w.WriteString("\n")
			if s := c.lsDir(w, joinPath(name, e.name), e.path, opt, true); s > status {
				status = s
			}
		}
	}
	return status
}

// dispSize is the size shown for a file: the engine keeps directories at
// size 0, shown as the 4096 of a usual Linux filesystem.
func dispSize(st vfs.Stat) int64 {
	if st.IsDir() && st.Size == 0 {
		return 4096
	}
	return st.Size
}

// allocBlocks is st_blocks, as every way in reports it (vfs.Stat.Blocks).
func allocBlocks(st vfs.Stat) int64 { return st.Blocks() }

func lsSort(list []lsEntry, opt lsOpts) {
	if opt.noSort {
		return
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		var less bool
		switch {
		case opt.bySize && a.st.Size != b.st.Size:
			less = a.st.Size > b.st.Size
		case opt.byTime && !a.st.Mtime.Equal(b.st.Mtime):
			less = a.st.Mtime.After(b.st.Mtime)
		default:
			less = a.name < b.name
		}
		if opt.reverse {
			return !less
		}
		return less
	})
}

func lsSize(n int64, human bool) string {
	if !human {
		return strconv.FormatInt(n, 10)
	}
	return humanSize(n)
}

// humanSize formats as ls -h and du -h do: 1023, 1.0K, 12K, 1.5M.
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	units := "KMGTPE"
	f := float64(n)
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f < 10 {
		// GNU rounds up.
		v := float64(int64(f*10+0.9999999)) / 10
		if v >= 10 {
			return fmt.Sprintf("%d%c", int64(v), units[i])
		}
		return fmt.Sprintf("%.1f%c", v, units[i])
	}
	return fmt.Sprintf("%d%c", int64(f+0.9999999), units[i])
}

func (c *Cmd) userName(uid uint32, numeric bool) string {
	if !numeric {
		if uid == 0 {
			return "root"
		}
		if uid == c.ID.UID && c.ID.User != "" {
			return c.ID.User
		}
	}
	return strconv.FormatUint(uint64(uid), 10)
}

func (c *Cmd) groupName(gid uint32, numeric bool) string {
	if !numeric {
		if gid == 0 {
			return "root"
		}
		if gid == c.ID.GID && c.ID.User != "" {
			return c.ID.User
		}
	}
	return strconv.FormatUint(uint64(gid), 10)
}

func lsTime(t, now time.Time) string {
	t = t.Local()
	six := 182 * 24 * time.Hour
	if t.After(now.Add(-six)) && !t.After(now.Add(time.Hour)) {
		return t.Format("Jan _2 15:04")
	}
	return t.Format("Jan _2  2006")
}

func (c *Cmd) suffix(e lsEntry, opt lsOpts) string {
	switch {
	case opt.classify:
		switch {
		case e.st.IsDir():
			return "/"
		case e.st.IsSymlink():
			if opt.long {
				return ""
			}
			return "@"
		case e.st.Type() == 0o010000:
			return "|"
		case e.st.IsRegular() && e.st.Mode&0o111 != 0:
			return "*"
		}
	case opt.slash && e.st.IsDir():
		return "/"
	}
	return ""
}

func (c *Cmd) lsPrint(w *bufio.Writer, list []lsEntry, opt lsOpts, _ bool) {
	if !opt.long {
		for _, e := range list {
			if opt.inode {
				fmt.Fprintf(w, "%d ", e.st.Ino)
			}
			w.WriteString(e.name + c.suffix(e, opt) + "\n")
		}
		return
	}
	now := c.Now()
	type row struct{ ino, mode, nlink, user, group, size, date, name string }
	rows := make([]row, len(list))
	var wi, wl, wu, wg, ws int
	for i, e := range list {
		r := row{
			ino:   strconv.FormatInt(e.st.Ino, 10),
			mode:  e.st.ModeString(),
			nlink: strconv.FormatUint(uint64(e.st.Nlink), 10),
			user:  c.userName(e.st.UID, opt.numeric),
			group: c.groupName(e.st.GID, opt.numeric),
			size:  lsSize(dispSize(e.st), opt.human),
			date:  lsTime(e.st.Mtime, now),
			name:  e.name + c.suffix(e, opt),
		}
		if e.st.IsSymlink() {
			r.name += " -> " + e.target
		}
		rows[i] = r
		wi, wl, wu, wg, ws = max(wi, len(r.ino)), max(wl, len(r.nlink)), max(wu, len(r.user)), max(wg, len(r.group)), max(ws, len(r.size))
	}
	for _, r := range rows {
		if opt.inode {
			fmt.Fprintf(w, "%*s ", wi, r.ino)
		}
		fmt.Fprintf(w, "%s %*s %-*s %-*s %*s %s %s\n", r.mode, wl, r.nlink, wu, r.user, wg, r.group, ws, r.size, r.date, r.name)
	}
}
