package commands

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"
)

func init() {
	register("diff", "diff [-u|-U N] [-q] [-r] [-N] [-s] [--label L] FILE1 FILE2", runDiff)
}

type diffOpts struct {
	unified  bool
	context  int
	brief    bool
	recur    bool
	newFile  bool
	same     bool
	labels   []string
	flagText string
}

func runDiff(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "uU:qrNsaiwBbc", long: map[string]string{
		"unified=": "U", "brief": "q", "recursive": "r", "new-file": "N", "report-identical-files": "s", "label=": "L",
		"text": "a", "unified": "u",
	}}, 2)
	if !ok {
		return code
	}
	opt := diffOpts{brief: o.has("q"), recur: o.has("r"), newFile: o.has("N"), same: o.has("s"), context: 3, labels: o.vals("L")}
	if v, ok := o.val("U"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c.Usage(2, "invalid context length %s", q(v))
		}
		opt.unified, opt.context = true, n
	}
	if o.has("u") {
		opt.unified = true
	}
	if o.has("i") || o.has("w") || o.has("b") || o.has("B") || o.has("c") {
		return c.Usage(2, "options -i -w -b -B -c are not supported in the sandbox; use -u")
	}
	var flags []string
	for _, a := range c.Args[1:] {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		}
	}
	opt.flagText = strings.Join(flags, " ")
	if len(args) != 2 {
		if len(args) < 2 {
			return c.Usage(2, "missing operand after %s", q(strings.Join(c.Args[len(c.Args)-1:], "")))
		}
		return c.Usage(2, "extra operand %s", q(args[2]))
	}
	w := c.bufOut()
	st := c.diffPaths(w, args[0], args[1], opt, true)
	return exitWrite(c, w.Flush(), st)
}

func (c *Cmd) diffPaths(w *bufio.Writer, a, b string, opt diffOpts, top bool) int {
	sa, ea := c.Stat(a)
	sb, eb := c.Stat(b)
	if ea != nil && !(opt.newFile && eb == nil) {
		c.PathError(a, ea)
		return 2
	}
	if eb != nil && !(opt.newFile && ea == nil) {
		c.PathError(b, eb)
		return 2
	}
	if ea == nil && eb == nil && sa.IsDir() && !sb.IsDir() && top {
		return c.diffPaths(w, joinPath(a, baseName(b, "")), b, opt, false)
	}
	if ea == nil && eb == nil && !sa.IsDir() && sb.IsDir() && top {
		return c.diffPaths(w, a, joinPath(b, baseName(a, "")), opt, false)
	}
	if ea == nil && eb == nil && sa.IsDir() && sb.IsDir() {
		return c.diffDirs(w, a, b, opt)
	}
	var da, db []byte
	if ea == nil {
		var err error
		if da, err = c.ReadAll(a); err != nil {
			c.PathError(a, err)
			return 2
		}
	}
	if eb == nil {
		var err error
		if db, err = c.ReadAll(b); err != nil {
			c.PathError(b, err)
			return 2
		}
	}
	if string(da) == string(db) {
		if opt.same {
			fmt.Fprintf(w, "Files %s and %s are identical\n", a, b)
		}
		return 0
	}
	if opt.brief {
		fmt.Fprintf(w, "Files %s and %s differ\n", a, b)
		return 1
	}
	if !top {
		fmt.Fprintf(w, "diff %s %s %s\n", opt.flagText, a, b)
	}
	edits := udiff.Strings(string(da), string(db))
	if opt.unified {
		la, lb := a+"\t"+statTime(sa.Mtime), b+"\t"+statTime(sb.Mtime)
		if ea != nil {
			la = a + "\t" + statTime(time.Unix(0, 0))
		}
		if len(opt.labels) > 0 {
			la = opt.labels[0]
		}
		if len(opt.labels) > 1 {
			lb = opt.labels[1]
		}
		u, err := udiff.ToUnifiedDiff(la, lb, string(da), edits, opt.context)
		if err != nil {
			c.Errorf("%v", err)
			return 2
		}
		fmt.Fprintf(w, "--- %s\n+++ %s\n", la, lb)
		for _, h := range u.Hunks {
			writeHunk(w, h)
		}
		return 1
	}
	u, err := udiff.ToUnifiedDiff(a, b, string(da), edits, 0)
	if err != nil {
		c.Errorf("%v", err)
		return 2
	}
	for _, h := range u.Hunks {
		writeNormal(w, h)
	}
	return 1
}

func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

func writeLine(w *bufio.Writer, prefix, s string) {
	w.WriteString(prefix + s)
	if !strings.HasSuffix(s, "\n") {
		w.WriteString("\n\\ No newline at end of file\n")
	}
}

// groupChanges puts the deletions of each run of changes before its
// insertions, as GNU diff prints them.
func groupChanges(lines []udiff.Line) []udiff.Line {
	out := make([]udiff.Line, 0, len(lines))
	for i := 0; i < len(lines); {
		if lines[i].Kind == udiff.Equal {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].Kind != udiff.Equal {
			j++
		}
		for _, l := range lines[i:j] {
			if l.Kind == udiff.Delete {
				out = append(out, l)
			}
		}
		for _, l := range lines[i:j] {
			if l.Kind == udiff.Insert {
				out = append(out, l)
			}
		}
		i = j
	}
	return out
}

func writeHunk(w *bufio.Writer, h *udiff.Hunk) {
	h.Lines = groupChanges(h.Lines)
	from, to := 0, 0
	for _, l := range h.Lines {
		switch l.Kind {
		case udiff.Delete:
			from++
		case udiff.Insert:
			to++
		default:
			from++
			to++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(h.FromLine, from), hunkRange(h.ToLine, to))
	for _, l := range h.Lines {
		switch l.Kind {
		case udiff.Delete:
			writeLine(w, "-", l.Content)
		case udiff.Insert:
			writeLine(w, "+", l.Content)
		default:
			writeLine(w, " ", l.Content)
		}
	}
}

func normalRange(start, count int) string {
	if count <= 1 {
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, start+count-1)
}

// writeNormal prints a hunk without context in diff's default format.
func writeNormal(w *bufio.Writer, h *udiff.Hunk) {
	var dels, ins []string
	for _, l := range h.Lines {
		switch l.Kind {
		case udiff.Delete:
			dels = append(dels, l.Content)
		case udiff.Insert:
			ins = append(ins, l.Content)
		}
	}
	switch {
	case len(ins) == 0:
		fmt.Fprintf(w, "%sd%d\n", normalRange(h.FromLine, len(dels)), h.ToLine-1)
	case len(dels) == 0:
		fmt.Fprintf(w, "%da%s\n", h.FromLine-1, normalRange(h.ToLine, len(ins)))
	default:
		fmt.Fprintf(w, "%sc%s\n", normalRange(h.FromLine, len(dels)), normalRange(h.ToLine, len(ins)))
	}
	for _, l := range dels {
		writeLine(w, "< ", l)
	}
	if len(dels) > 0 && len(ins) > 0 {
		w.WriteString("---\n")
	}
	for _, l := range ins {
		writeLine(w, "> ", l)
	}
}

func (c *Cmd) diffDirs(w *bufio.Writer, a, b string, opt diffOpts) int {
	ea, err := c.FS.ReaddirPlus(c.Abs(a))
	if err != nil {
		c.PathError(a, err)
		return 2
	}
	eb, err := c.FS.ReaddirPlus(c.Abs(b))
	if err != nil {
		c.PathError(b, err)
		return 2
	}
	names := map[string]int{}
	for _, e := range ea {
		names[e.Name] |= 1
	}
	for _, e := range eb {
		names[e.Name] |= 2
	}
	status := 0
	for _, n := range sortedKeys(names) {
		pa, pb := joinPath(a, n), joinPath(b, n)
		switch names[n] {
		case 1, 2:
			if opt.newFile {
				if s := c.diffPaths(w, pa, pb, opt, false); s > status {
					status = s
				}
				continue
			}
			dir := a
			if names[n] == 2 {
				dir = b
			}
			fmt.Fprintf(w, "Only in %s: %s\n", dir, n)
			status = max(status, 1)
		default:
			sa, _ := c.Stat(pa)
			sb, _ := c.Stat(pb)
			switch {
			case sa.IsDir() && sb.IsDir():
				if !opt.recur {
					fmt.Fprintf(w, "Common subdirectories: %s and %s\n", pa, pb)
					continue
				}
				if s := c.diffDirs(w, pa, pb, opt); s > status {
					status = s
				}
			case sa.IsDir() != sb.IsDir():
				kind := func(d bool) string {
					if d {
						return "directory"
					}
					return "regular file"
				}
				fmt.Fprintf(w, "File %s is a %s while file %s is a %s\n", pa, kind(sa.IsDir()), pb, kind(sb.IsDir()))
				status = max(status, 1)
			default:
				if s := c.diffPaths(w, pa, pb, opt, false); s > status {
					status = s
				}
			}
		}
	}
	return status
}
