package commands

import (
	"bytes"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// rg is a ripgrep subset: recursive by default, Go (RE2) regex syntax as
// ripgrep's Rust syntax, hidden files and .gitignore'd paths skipped,
// binary files skipped. Output is sorted by path (ripgrep's --sort path)
// and has no headings, as ripgrep prints when not on a terminal.

func init() {
	register("rg", "rg [-inNlcwFvoSuH] [-e PAT] [-g GLOB] [-A N] [-B N] [-C N] [--hidden] [--no-ignore] PATTERN [PATH]...", runRg)
}

type ignoreRules struct {
	dir      string // display path of the directory holding .gitignore
	patterns []string
}

func runRg(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "inNlcwFvoSuHhe:g:A:B:C:m:.", long: map[string]string{
		"ignore-case": "i", "line-number": "n", "no-line-number": "N", "files-with-matches": "l", "count": "c",
		"word-regexp": "w", "fixed-strings": "F", "invert-match": "v", "only-matching": "o", "smart-case": "S",
		"unrestricted": "u", "with-filename": "H", "no-filename": "h", "regexp=": "e", "glob=": "g", "after-context=": "A",
		"before-context=": "B", "context=": "C", "hidden": ".", "no-ignore": "I", "max-count=": "m", "sort=": "s",
		"no-heading": "nh", "heading": "hd", "color=": "K", "files": "f",
	}}, 2)
	if !ok {
		return code
	}
	g := &grepper{c: c, invert: o.has("v"), count: o.has("c"), list: o.has("l"), only: o.has("o"), word: o.has("w"),
		lineNum: o.has("n") && !o.has("N"), maxCount: -1, recursive: true, w: &bytes.Buffer{}, countSkipZero: true}
	patterns := o.vals("e")
	if len(patterns) == 0 && !o.has("f") {
		if len(args) == 0 {
			c.Errorf("no pattern given")
			return 2
		}
		patterns, args = []string{args[0]}, args[1:]
	}
	var alts []string
	fold := o.has("i")
	for _, p := range patterns {
		if o.has("F") {
			p = regexp.QuoteMeta(p)
		}
		if o.has("S") && !fold && p == strings.ToLower(p) {
			fold = true
		}
		alts = append(alts, "(?:"+p+")")
	}
	expr := strings.Join(alts, "|")
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		c.Errorf("regex parse error: %v", err)
		return 2
	}
	g.re = re
	for k, v := range map[string]*int{"A": &g.after, "B": &g.before} {
		if s, ok := o.val(k); ok {
			*v, _ = strconv.Atoi(s)
		}
	}
	if s, ok := o.val("C"); ok {
		n, _ := strconv.Atoi(s)
		g.before, g.after = n, n
	}
	if s, ok := o.val("m"); ok {
		g.maxCount, _ = strconv.Atoi(s)
	}
	hidden := o.has(".") || o.count("u") >= 2
	noIgnore := o.has("I") || o.has("u")
	var globs, notGlobs []string
	for _, gl := range o.vals("g") {
		if strings.HasPrefix(gl, "!") {
			notGlobs = append(notGlobs, gl[1:])
		} else {
			globs = append(globs, gl)
		}
	}
	implicit := len(args) == 0
	if implicit {
		args = []string{"."}
	}
	// A single file operand is searched without its name, as ripgrep.
	single := len(args) == 1
	if single {
		if st, err := c.Stat(args[0]); err == nil && st.IsDir() {
			single = false
		}
	}
	g.withName = !single
	if h := o.last("H", "h"); h != "" {
		g.withName = h == "H"
	}
	var files []string
	status := 0
	var walk func(p, shown string, rules []ignoreRules, top bool)
	walk = func(p, shown string, rules []ignoreRules, top bool) {
		st, err := c.Stat(p)
		if err != nil {
			c.Errorf("%s: %s", p, ErrText(err))
			status = 2
			return
		}
		if !st.IsDir() {
			files = append(files, shown)
			return
		}
		if !noIgnore {
			if data, err := c.ReadAll(joinPath(p, ".gitignore")); err == nil {
				var pats []string
				for _, l := range SplitLines(data) {
					l = strings.TrimSpace(l)
					if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "!") {
						pats = append(pats, l)
					}
				}
				rules = append(rules, ignoreRules{dir: shown, patterns: pats})
			}
		}
		entries, err := c.FS.ReaddirPlus(c.Abs(p))
		if err != nil {
			c.Errorf("%s: %s", p, ErrText(err))
			status = 2
			return
		}
		for _, e := range entries {
			if !hidden && strings.HasPrefix(e.Name, ".") {
				continue
			}
			if e.Name == ".git" || e.Stat.IsSymlink() {
				continue
			}
			child := joinPath(p, e.Name)
			childShown := joinPath(shown, e.Name)
			if implicit && shown == "." {
				childShown = e.Name
			}
			if ignored(rules, childShown, e.Name, e.Stat.IsDir()) {
				continue
			}
			if !e.Stat.IsDir() {
				if len(globs) > 0 && !anyGlob(globs, e.Name, childShown) {
					continue
				}
				if anyGlob(notGlobs, e.Name, childShown) {
					continue
				}
			}
			walk(child, childShown, rules, false)
		}
	}
	for _, a := range args {
		walk(a, a, nil, true)
	}
	for _, f := range files {
		if c.Cancelled() {
			break
		}
		data, err := c.ReadAll(f)
		if err != nil {
			c.PathError(f, err)
			status = 2
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 {
			c.Release(int64(len(data)))
			continue // binary
		}
		g.scan(f, data)
		c.Release(int64(len(data)))
		if g.w.Len() > 32<<10 {
			if _, err := c.Stdout.Write(g.w.Bytes()); err != nil {
				return exitWrite(c, err, 2)
			}
			g.w.Reset()
		}
	}
	if g.w.Len() > 0 {
		if _, err := c.Stdout.Write(g.w.Bytes()); err != nil {
			return exitWrite(c, err, 2)
		}
	}
	if status != 0 {
		return status
	}
	if g.matched {
		return 0
	}
	return 1
}

func anyGlob(globs []string, name, full string) bool {
	for _, gl := range globs {
		if strings.Contains(gl, "/") {
			if pathGlob(strings.TrimPrefix(gl, "/"), strings.TrimPrefix(full, "./")) || pathGlob("*/"+gl, full) {
				return true
			}
		} else if globMatch(gl, name) {
			return true
		}
	}
	return false
}

// ignored applies the .gitignore patterns met on the way down.
func ignored(rules []ignoreRules, shown, name string, dir bool) bool {
	for _, r := range rules {
		rel := strings.TrimPrefix(strings.TrimPrefix(shown, r.dir), "/")
		for _, p := range r.patterns {
			dirOnly := strings.HasSuffix(p, "/")
			p = strings.TrimSuffix(p, "/")
			if dirOnly && !dir {
				continue
			}
			if strings.Contains(p, "/") {
				if ok, _ := path.Match(strings.TrimPrefix(p, "/"), rel); ok {
					return true
				}
				continue
			}
			if globMatch(p, name) {
				return true
			}
		}
	}
	return false
}
