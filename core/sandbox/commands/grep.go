package commands

import (
	"bytes"
	"fmt"
	"github.com/agentfs-go/agentfs/core/vfs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

func init() {
	for _, name := range []string{"grep", "egrep", "fgrep"} {
		register(name, "grep [-rRnivlLcoqsHhEFGwxz] [-m N] [-A N] [-B N] [-C N] [-e PAT]... [-f FILE] [--include GLOB] [--exclude GLOB] [--exclude-dir GLOB] PATTERN [FILE]...", runGrep)
	}
}

type grepper struct {
	c                                    *Cmd
	re                                   *regexp.Regexp
	invert, count, list, listNot, only   bool
	quiet, noMsg, lineNum, word, byteOff bool
	withName                             bool
	maxCount                             int
	before, after                        int
	includes, excludes, excludeDirs      []string
	recursive, deref                     bool
	nul                                  bool
	w                                    *bytes.Buffer
	matched, errored                     bool
	label                                string
	stripDot, listed                     bool
	countSkipZero                        bool // rg -c lists only the files that match
}

func runGrep(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "rRnivlLcoqsHhEFGPwxe:f:m:A:B:C:abZzU0123456789", long: map[string]string{
		"recursive": "r", "dereference-recursive": "R", "line-number": "n", "ignore-case": "i", "invert-match": "v",
		"files-with-matches": "l", "files-without-match": "L", "count": "c", "only-matching": "o", "quiet": "q", "silent": "q",
		"no-messages": "s", "with-filename": "H", "no-filename": "h", "extended-regexp": "E", "fixed-strings": "F",
		"basic-regexp": "G", "perl-regexp": "P", "word-regexp": "w", "line-regexp": "x", "regexp=": "e", "file=": "f",
		"max-count=": "m", "after-context=": "A", "before-context=": "B", "context=": "C", "include=": "I", "exclude=": "X",
		"exclude-dir=": "D", "color": "K", "colour": "K", "color=": "K", "colour=": "K", "text": "a", "byte-offset": "b",
		"null": "Z", "label=": "l2", "binary-files=": "bf", "no-ignore-case": "ni",
	}}, 2)
	if !ok {
		return code
	}
	g := &grepper{c: c, invert: o.has("v"), count: o.has("c"), list: o.has("l"), listNot: o.has("L"), only: o.has("o"),
		quiet: o.has("q"), noMsg: o.has("s"), lineNum: o.has("n"), word: o.has("w"), maxCount: -1,
		recursive: o.has("r") || o.has("R"), deref: o.has("R"), nul: o.has("Z"), byteOff: o.has("b"),
		includes: o.vals("I"), excludes: o.vals("X"), excludeDirs: o.vals("D"), w: &bytes.Buffer{}}
	g.label, _ = o.val("l2")
	// -NUM is -C NUM.
	ctxDigits := ""
	for _, x := range o.list {
		if len(x.key) == 1 && x.key[0] >= '0' && x.key[0] <= '9' {
			ctxDigits += x.key
		}
	}
	if ctxDigits != "" {
		n, _ := strconv.Atoi(ctxDigits)
		g.before, g.after = n, n
	}
	num := func(k string) (int, bool) {
		v, ok := o.val(k)
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.Errorf("invalid context length argument")
			return -1, true
		}
		return n, true
	}
	if n, ok := num("C"); ok {
		if n < 0 {
			return 2
		}
		g.before, g.after = n, n
	}
	if n, ok := num("A"); ok {
		if n < 0 {
			return 2
		}
		g.after = n
	}
	if n, ok := num("B"); ok {
		if n < 0 {
			return 2
		}
		g.before = n
	}
	if v, ok := o.val("m"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c.Usage(2, "invalid max count")
		}
		g.maxCount = n
	}
	patterns := o.vals("e")
	for _, f := range o.vals("f") {
		data, err := c.ReadAll(f)
		if err != nil {
			c.PathError(f, err)
			return 2
		}
		patterns = append(patterns, SplitLines(data)...)
	}
	if !o.has("e") && !o.has("f") {
		if len(args) == 0 {
			return c.Usage(2, "no pattern given")
		}
		patterns, args = []string{args[0]}, args[1:]
	}
	var split []string
	for _, p := range patterns {
		split = append(split, strings.Split(p, "\n")...)
	}
	mode := o.last("E", "F", "G", "P")
	switch c.Name() {
	case "egrep":
		if mode == "" {
			mode = "E"
		}
	case "fgrep":
		if mode == "" {
			mode = "F"
		}
	}
	var alts []string
	for _, p := range split {
		var goRe string
		switch mode {
		case "F":
			goRe = regexp.QuoteMeta(p)
		case "P":
			goRe = p
		default:
			var err error
			if goRe, err = posixToGo(p, mode == "E"); err != nil {
				c.Errorf("%v", err)
				return 2
			}
		}
		if o.has("x") {
			goRe = "^(?:" + goRe + ")$"
		}
		alts = append(alts, "(?:"+goRe+")")
	}
	expr := strings.Join(alts, "|")
	if o.last("i", "y", "ni") == "i" {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		c.Errorf("invalid regular expression: %v", err)
		return 2
	}
	g.re = re
	if len(args) == 0 {
		if g.recursive {
			args = []string{"."}
			g.withName = true
			g.label = ""
		} else {
			args = []string{"-"}
		}
		if g.recursive {
			g.stripDot = true
		}
	}
	g.withName = g.withName || len(args) > 1 || g.recursive
	if h := o.last("H", "h"); h != "" {
		g.withName = h == "H"
	}
	for _, a := range args {
		if g.quiet && g.matched {
			break
		}
		if c.Cancelled() {
			break
		}
		g.file(a, true, nil)
		if g.w.Len() > 0 {
			if _, err := c.Stdout.Write(g.w.Bytes()); err != nil {
				return exitWrite(c, err, 2)
			}
			g.w.Reset()
		}
	}
	if g.w.Len() > 0 {
		c.Stdout.Write(g.w.Bytes())
	}
	if g.listNot {
		// -L succeeds when it listed a file (GNU 3.5 and later).
		g.matched = g.listed
	}
	switch {
	case g.errored && !(g.quiet && g.matched):
		return 2
	case g.matched:
		return 0
	}
	return 1
}

func globMatch(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

func (g *grepper) file(name string, top bool, known *vfs.Stat) {
	c := g.c
	if name == "-" {
		data, err := c.ReadAllFrom(c.Stdin, 0)
		if err != nil {
			g.errored = true
			return
		}
		shown := "(standard input)"
		if g.label != "" {
			shown = g.label
		}
		g.scan(shown, data)
		c.Release(int64(len(data)))
		return
	}
	display := name
	if g.stripDot {
		display = strings.TrimPrefix(name, "./")
	}
	var st vfs.Stat
	if known != nil && !known.IsSymlink() {
		st = *known
	} else {
		var err error
		if st, err = c.Stat(name); err != nil {
			if !g.noMsg {
				c.PathError(name, err)
			}
			g.errored = true
			return
		}
	}
	if st.IsDir() {
		if !g.recursive {
			if !g.noMsg {
				c.Errorf("%s: Is a directory", name)
			}
			return
		}
		if !top {
			for _, ex := range g.excludeDirs {
				if globMatch(ex, baseName(name, "")) {
					return
				}
			}
		}
		entries, err := c.FS.ReaddirPlus(c.Abs(name))
		if err != nil {
			if !g.noMsg {
				c.PathError(name, err)
			}
			g.errored = true
			return
		}
		for _, e := range entries {
			if c.Cancelled() || g.quiet && g.matched {
				return
			}
			child := joinPath(name, e.Name)
			if e.Stat.IsSymlink() && !g.deref {
				continue
			}
			g.file(child, false, &e.Stat) // the listing has its type already
			if g.w.Len() > 32<<10 {
				if _, err := c.Stdout.Write(g.w.Bytes()); err != nil {
					return
				}
				g.w.Reset()
			}
		}
		return
	}
	base := baseName(name, "")
	if len(g.includes) > 0 && (!top || g.recursive) {
		ok := false
		for _, in := range g.includes {
			if globMatch(in, base) {
				ok = true
			}
		}
		if !ok {
			return
		}
	}
	for _, ex := range g.excludes {
		if globMatch(ex, base) && (!top || g.recursive) {
			return
		}
	}
	data, err := c.ReadAll(name)
	if err != nil {
		if !g.noMsg {
			c.PathError(name, err)
		}
		g.errored = true
		return
	}
	g.scan(display, data)
	// One file at a time: its bytes leave the budget with it.
	c.Release(int64(len(data)))
}

func (g *grepper) isWordAt(line string, loc []int) bool {
	wordc := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
	}
	if loc[0] > 0 && wordc(line[loc[0]-1]) {
		return false
	}
	if loc[1] < len(line) && wordc(line[loc[1]]) {
		return false
	}
	return true
}

// matches returns the match spans of line that count (with -w, only those
// standing as whole words).
func (g *grepper) matches(line string) [][]int {
	all := g.re.FindAllStringIndex(line, -1)
	if !g.word {
		return all
	}
	var out [][]int
	for _, m := range all {
		if g.isWordAt(line, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 && len(all) > 0 {
		// GNU retries shorter and later matches; try each start.
		for start := 0; start < len(line); start++ {
			loc := g.re.FindStringIndex(line[start:])
			if loc == nil {
				break
			}
			loc[0] += start
			loc[1] += start
			if g.isWordAt(line, loc) {
				out = append(out, loc)
				start = loc[1] - 1
				if loc[1] == loc[0] {
					start = loc[1]
				}
			} else {
				start = loc[0]
			}
		}
	}
	return out
}

func (g *grepper) scan(name string, data []byte) {
	binary := bytes.IndexByte(data, 0) >= 0
	text := string(data)
	noEOL := !strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	w := g.w
	prefix := func(n int, sep byte, off int) {
		if g.withName {
			w.WriteString(name)
			if g.nul {
				w.WriteByte(0)
			} else {
				w.WriteByte(sep)
			}
		}
		if g.lineNum {
			w.WriteString(strconv.Itoa(n + 1))
			w.WriteByte(sep)
		}
		if g.byteOff {
			w.WriteString(strconv.Itoa(off))
			w.WriteByte(sep)
		}
	}
	count := 0
	lastPrinted := -1
	pendingAfter := 0
	offsets := make([]int, len(lines))
	off := 0
	for i, l := range lines {
		offsets[i] = off
		off += len(l) + 1
	}
	_ = noEOL
	anyOut := false
	for i, line := range lines {
		if g.maxCount >= 0 && count >= g.maxCount {
			// Trailing context after the last match still prints.
			if pendingAfter > 0 && !g.invert {
				if g.re.MatchString(line) {
					break
				}
			}
			if pendingAfter > 0 {
				prefix(i, '-', offsets[i])
				w.WriteString(line + "\n")
				lastPrinted = i
				pendingAfter--
				continue
			}
			break
		}
		ms := g.matches(line)
		selected := (len(ms) > 0) != g.invert
		if !selected {
			if pendingAfter > 0 && !g.count && !g.list && !g.listNot && !g.quiet && !binary {
				prefix(i, '-', offsets[i])
				w.WriteString(line + "\n")
				lastPrinted = i
				pendingAfter--
			}
			continue
		}
		count++
		g.matched = true
		if g.quiet {
			return
		}
		if g.count || g.list || g.listNot {
			if g.list {
				break
			}
			continue
		}
		if binary {
			continue
		}
		if (g.before > 0 || g.after > 0) && anyOut && lastPrinted < i-g.before-1 {
			w.WriteString("--\n")
		}
		for j := max(lastPrinted+1, i-g.before); j < i; j++ {
			prefix(j, '-', offsets[j])
			w.WriteString(lines[j] + "\n")
		}
		anyOut = true
		if g.only {
			if !g.invert {
				for _, m := range ms {
					if m[1] > m[0] {
						prefix(i, ':', offsets[i]+m[0])
						w.WriteString(line[m[0]:m[1]] + "\n")
					}
				}
			}
		} else {
			prefix(i, ':', offsets[i])
			w.WriteString(line + "\n")
		}
		lastPrinted = i
		pendingAfter = g.after
	}
	switch {
	case g.count && count == 0 && g.countSkipZero:
	case g.count:
		if g.withName {
			w.WriteString(name + ":")
		}
		w.WriteString(strconv.Itoa(count) + "\n")
	case g.list && count > 0:
		w.WriteString(name)
		w.WriteByte(map[bool]byte{true: 0, false: '\n'}[g.nul])
	case g.listNot && count == 0:
		w.WriteString(name)
		w.WriteByte(map[bool]byte{true: 0, false: '\n'}[g.nul])
	case binary && count > 0 && !g.quiet:
		fmt.Fprintf(g.c.Stderr, "%s: %s: binary file matches\n", g.c.Name(), name)
	}
	if g.listNot && count == 0 {
		g.listed = true
	}
}
