package commands

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("find", "find [-L] [PATH]... [-name|-iname|-path|-ipath|-regex GLOB] [-type f|d|l] [-maxdepth N] [-mindepth N] [-mtime|-mmin [+-]N] [-size [+-]N[ckMG]] [-newer FILE] [-empty] [-perm MODE] [-prune] [! -not -a -o ( )] [-print|-print0|-printf FMT|-delete|-exec CMD {} ;|+|-quit]", runFind)
}

type findEntry struct {
	path  string // as displayed
	abs   string
	st    vfs.Stat
	depth int
	start string
}

type findNode struct {
	eval func(e *findEntry) bool
}

type finder struct {
	c                  *Cmd
	args               []string
	pos                int
	maxDepth, minDepth int
	follow, depthFirst bool
	hasAction          bool
	out                *bytes.Buffer
	status             int
	quit               bool
	prune              bool
	batches            []*findBatch
	now                time.Time
}

type findBatch struct {
	argv  []string
	paths []string
	ok    bool
}

func runFind(c *Cmd) int {
	f := &finder{c: c, maxDepth: -1, out: &bytes.Buffer{}, now: c.Now()}
	args := c.Args[1:]
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-P" || args[0] == "-H") {
		f.follow = args[0] == "-L"
		args = args[1:]
	}
	var starts []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "!" && args[0] != "(" {
		starts = append(starts, args[0])
		args = args[1:]
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	f.args = args
	var expr *findNode
	if len(args) > 0 {
		var err error
		expr, err = f.parseOr()
		if err == nil && f.pos < len(f.args) {
			err = fmt.Errorf("paths must precede expression: %s", q(f.args[f.pos]))
			if f.args[f.pos] == ")" {
				err = fmt.Errorf("invalid expression; you have too many ')'")
			}
		}
		if err != nil {
			c.Errorf("%v", err)
			return 1
		}
	}
	if !f.hasAction {
		inner := expr
		expr = &findNode{eval: func(e *findEntry) bool {
			if inner == nil || inner.eval(e) {
				f.print(e.path, "\n")
			}
			return true
		}}
	}
	for _, s := range starts {
		if f.quit || c.Cancelled() {
			break
		}
		abs := c.Abs(s)
		var st vfs.Stat
		var err error
		if f.follow {
			st, err = c.Stat(s)
		} else {
			st, err = c.Lstat(strings.TrimSuffix(abs, "/"))
			if abs == "/" {
				st, err = c.Lstat("/")
			}
		}
		if err != nil {
			c.Errorf("%s: %s", q(s), ErrText(err))
			f.status = 1
			continue
		}
		f.walk(&findEntry{path: s, abs: abs, st: st, depth: 0, start: s}, expr)
	}
	for _, b := range f.batches {
		f.runBatch(b)
	}
	f.flush()
	return f.status
}

func (f *finder) flush() {
	if f.out.Len() > 0 {
		if _, err := f.c.Stdout.Write(f.out.Bytes()); err != nil {
			f.quit = true
		}
		f.out.Reset()
	}
}

func (f *finder) print(s, end string) {
	f.out.WriteString(s)
	f.out.WriteString(end)
	if f.out.Len() > 32<<10 {
		f.flush()
	}
}

func (f *finder) walk(e *findEntry, expr *findNode) {
	if f.quit || f.c.Cancelled() {
		f.quit = true
		return
	}
	f.prune = false
	if !f.depthFirst && e.depth >= f.minDepth && (f.maxDepth < 0 || e.depth <= f.maxDepth) {
		expr.eval(e)
	}
	prune := f.prune
	if e.st.IsDir() && !prune && (f.maxDepth < 0 || e.depth < f.maxDepth) {
		entries, err := f.c.FS.ReaddirPlus(strings.TrimSuffix(e.abs, "/") + "/")
		if err != nil {
			f.flush()
			f.c.Errorf("%s: %s", q(e.path), ErrText(err))
			f.status = 1
		}
		for _, d := range entries {
			if f.quit {
				return
			}
			st := d.Stat
			child := joinPath(e.abs, d.Name)
			if f.follow && st.IsSymlink() {
				if tst, err := f.c.FS.Stat(child); err == nil {
					st = tst
				}
			}
			f.walk(&findEntry{path: joinPath(e.path, d.Name), abs: child, st: st, depth: e.depth + 1, start: e.start}, expr)
		}
	}
	if f.depthFirst && e.depth >= f.minDepth && (f.maxDepth < 0 || e.depth <= f.maxDepth) {
		expr.eval(e)
	}
}

func (f *finder) peek() string {
	if f.pos < len(f.args) {
		return f.args[f.pos]
	}
	return ""
}

func (f *finder) parseOr() (*findNode, error) {
	left, err := f.parseAnd()
	if err != nil {
		return nil, err
	}
	for f.peek() == "-o" || f.peek() == "-or" || f.peek() == "," {
		op := f.args[f.pos]
		f.pos++
		right, err := f.parseAnd()
		if err != nil {
			return nil, err
		}
		l, r := left, right
		if op == "," {
			left = &findNode{eval: func(e *findEntry) bool { l.eval(e); return r.eval(e) }}
		} else {
			left = &findNode{eval: func(e *findEntry) bool { return l.eval(e) || r.eval(e) }}
		}
	}
	return left, nil
}

func (f *finder) parseAnd() (*findNode, error) {
	left, err := f.parseNot()
	if err != nil {
		return nil, err
	}
	for {
		p := f.peek()
		if p == "" || p == "-o" || p == "-or" || p == ")" || p == "," {
			return left, nil
		}
		if p == "-a" || p == "-and" {
			f.pos++
		}
		right, err := f.parseNot()
		if err != nil {
			return nil, err
		}
		l, r := left, right
		left = &findNode{eval: func(e *findEntry) bool { return l.eval(e) && r.eval(e) }}
	}
}

func (f *finder) parseNot() (*findNode, error) {
	if p := f.peek(); p == "!" || p == "-not" {
		f.pos++
		n, err := f.parseNot()
		if err != nil {
			return nil, err
		}
		return &findNode{eval: func(e *findEntry) bool { return !n.eval(e) }}, nil
	}
	return f.parsePrimary()
}

func (f *finder) arg(name string) (string, error) {
	if f.pos >= len(f.args) {
		return "", fmt.Errorf("missing argument to %s", q(name))
	}
	a := f.args[f.pos]
	f.pos++
	return a, nil
}

// cmpNum parses [+-]N into a comparison.
func cmpNum(s string) (func(v int64) bool, bool) {
	sign := byte(0)
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[0], s[1:]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, false
	}
	switch sign {
	case '+':
		return func(v int64) bool { return v > n }, true
	case '-':
		return func(v int64) bool { return v < n }, true
	}
	return func(v int64) bool { return v == n }, true
}

func (f *finder) parsePrimary() (*findNode, error) {
	if f.pos >= len(f.args) {
		return nil, fmt.Errorf("expected an expression")
	}
	tok := f.args[f.pos]
	f.pos++
	c := f.c
	switch tok {
	case "(":
		n, err := f.parseOr()
		if err != nil {
			return nil, err
		}
		if f.peek() != ")" {
			return nil, fmt.Errorf("invalid expression; I was expecting to find a ')' somewhere but did not see one")
		}
		f.pos++
		return n, nil
	case "-true":
		return &findNode{eval: func(*findEntry) bool { return true }}, nil
	case "-false":
		return &findNode{eval: func(*findEntry) bool { return false }}, nil
	case "-name", "-iname":
		pat, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		fold := tok == "-iname"
		if fold {
			pat = strings.ToLower(pat)
		}
		return &findNode{eval: func(e *findEntry) bool {
			b := baseName(e.path, "")
			if fold {
				b = strings.ToLower(b)
			}
			return globMatch(pat, b)
		}}, nil
	case "-path", "-wholename", "-ipath", "-iwholename":
		pat, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		fold := strings.HasPrefix(tok, "-i")
		if fold {
			pat = strings.ToLower(pat)
		}
		return &findNode{eval: func(e *findEntry) bool {
			p := e.path
			if fold {
				p = strings.ToLower(p)
			}
			return pathGlob(pat, p)
		}}, nil
	case "-regex", "-iregex":
		pat, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		goRe, err := posixToGo(pat, true)
		if err != nil {
			return nil, err
		}
		if tok == "-iregex" {
			goRe = "(?i)" + goRe
		}
		re, err := regexp.Compile("^(?:" + goRe + ")$")
		if err != nil {
			return nil, err
		}
		return &findNode{eval: func(e *findEntry) bool { return re.MatchString(e.path) }}, nil
	case "-type", "-xtype":
		t, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		types := strings.Split(t, ",")
		for _, x := range types {
			if len(x) != 1 || !strings.Contains("fdlpcbs", x) {
				return nil, fmt.Errorf("Unknown argument to -type: %s", x)
			}
		}
		return &findNode{eval: func(e *findEntry) bool {
			for _, x := range types {
				if e.st.TypeLetter() == x {
					return true
				}
			}
			return false
		}}, nil
	case "-maxdepth", "-mindepth":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Expected a positive decimal integer argument to %s, but got %s", tok, q(v))
		}
		if tok == "-maxdepth" {
			f.maxDepth = n
		} else {
			f.minDepth = n
		}
		return &findNode{eval: func(*findEntry) bool { return true }}, nil
	case "-depth":
		f.depthFirst = true
		return &findNode{eval: func(*findEntry) bool { return true }}, nil
	case "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		cmp, ok := cmpNum(v)
		if !ok {
			return nil, fmt.Errorf("invalid argument %s to %s", q(v), q(tok))
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(tok, "min") {
			unit = time.Minute
		}
		return &findNode{eval: func(e *findEntry) bool {
			t := e.st.Mtime
			switch tok[1] {
			case 'a':
				t = e.st.Atime
			case 'c':
				t = e.st.Ctime
			}
			age := f.now.Sub(t)
			n := int64(age / unit)
			if age < 0 {
				n = -1 - int64(-age/unit)
			}
			return cmp(n)
		}}, nil
	case "-size":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		unit := int64(512)
		if v != "" {
			switch v[len(v)-1] {
			case 'c':
				unit = 1
			case 'w':
				unit = 2
			case 'b':
				unit = 512
			case 'k':
				unit = 1024
			case 'M':
				unit = 1 << 20
			case 'G':
				unit = 1 << 30
			}
			if v[len(v)-1] > '9' {
				v = v[:len(v)-1]
			}
		}
		cmp, ok := cmpNum(v)
		if !ok {
			return nil, fmt.Errorf("invalid -size type")
		}
		return &findNode{eval: func(e *findEntry) bool {
			return cmp((e.st.Size + unit - 1) / unit)
		}}, nil
	case "-newer", "-anewer", "-cnewer":
		ref, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		st, err := c.Stat(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", q(ref), ErrText(err))
		}
		return &findNode{eval: func(e *findEntry) bool { return e.st.Mtime.After(st.Mtime) }}, nil
	case "-empty":
		return &findNode{eval: func(e *findEntry) bool {
			if e.st.IsDir() {
				entries, err := c.FS.ReaddirPlus(e.abs)
				return err == nil && len(entries) == 0
			}
			return e.st.IsRegular() && e.st.Size == 0
		}}, nil
	case "-perm":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		mode := v
		kind := byte(0)
		if mode != "" && (mode[0] == '-' || mode[0] == '/') {
			kind, mode = mode[0], mode[1:]
		}
		m, ok := parseMode(mode, 0)
		if !ok {
			return nil, fmt.Errorf("invalid mode %s", q(v))
		}
		return &findNode{eval: func(e *findEntry) bool {
			p := e.st.Perm()
			switch kind {
			case '-':
				return p&m == m
			case '/':
				return m == 0 || p&m != 0
			}
			return p&0o7777 == m
		}}, nil
	case "-user", "-group", "-uid", "-gid":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		return &findNode{eval: func(e *findEntry) bool {
			switch tok {
			case "-user":
				return c.userName(e.st.UID, false) == v || strconv.Itoa(int(e.st.UID)) == v
			case "-group":
				return c.groupName(e.st.GID, false) == v || strconv.Itoa(int(e.st.GID)) == v
			case "-uid":
				return strconv.Itoa(int(e.st.UID)) == v
			}
			return strconv.Itoa(int(e.st.GID)) == v
		}}, nil
	case "-links":
		v, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		cmp, ok := cmpNum(v)
		if !ok {
			return nil, fmt.Errorf("invalid argument %s to -links", q(v))
		}
		return &findNode{eval: func(e *findEntry) bool { return cmp(int64(e.st.Nlink)) }}, nil
	case "-prune":
		return &findNode{eval: func(*findEntry) bool { f.prune = true; return true }}, nil
	case "-quit":
		f.hasAction = true
		// Exit at once: what follows -quit is not evaluated.
		return &findNode{eval: func(*findEntry) bool { f.quit = true; return false }}, nil
	case "-print":
		f.hasAction = true
		return &findNode{eval: func(e *findEntry) bool { f.print(e.path, "\n"); return true }}, nil
	case "-print0":
		f.hasAction = true
		return &findNode{eval: func(e *findEntry) bool { f.print(e.path, "\x00"); return true }}, nil
	case "-printf", "-fprintf":
		format, err := f.arg(tok)
		if err != nil {
			return nil, err
		}
		f.hasAction = true
		return &findNode{eval: func(e *findEntry) bool { f.print(f.printf(format, e), ""); return true }}, nil
	case "-ls":
		f.hasAction = true
		return &findNode{eval: func(e *findEntry) bool {
			f.print(fmt.Sprintf("%9d %6d %s %3d %-8s %-8s %8d %s %s", e.st.Ino, allocBlocks(e.st)/2, e.st.ModeString(), e.st.Nlink,
				c.userName(e.st.UID, false), c.groupName(e.st.GID, false), e.st.Size, lsTime(e.st.Mtime, f.now), e.path), "\n")
			return true
		}}, nil
	case "-delete":
		f.hasAction = true
		f.depthFirst = true
		return &findNode{eval: func(e *findEntry) bool {
			if e.path == "." {
				return true
			}
			var err error
			if e.st.IsDir() {
				err = c.FS.Rmdir(e.abs)
			} else {
				err = c.FS.Unlink(e.abs)
			}
			if err != nil {
				f.flush()
				c.Errorf("cannot delete %s: %s", q(e.path), ErrText(err))
				f.status = 1
				return false
			}
			return true
		}}, nil
	case "-exec", "-execdir", "-ok", "-okdir":
		var argv []string
		for {
			if f.pos >= len(f.args) {
				return nil, fmt.Errorf("missing argument to %s", q(tok))
			}
			a := f.args[f.pos]
			f.pos++
			if a == ";" {
				break
			}
			if a == "+" && len(argv) > 0 && argv[len(argv)-1] == "{}" {
				argv = argv[:len(argv)-1]
				b := &findBatch{argv: argv, ok: true}
				f.batches = append(f.batches, b)
				f.hasAction = true
				dir := strings.HasSuffix(tok, "dir")
				return &findNode{eval: func(e *findEntry) bool {
					p := e.path
					if dir {
						p = "./" + baseName(e.path, "")
					}
					b.paths = append(b.paths, p)
					if len(b.paths) >= 4096 {
						f.runBatch(b)
					}
					return true
				}}, nil
			}
			argv = append(argv, a)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("missing argument to %s", q(tok))
		}
		f.hasAction = true
		dir := strings.HasSuffix(tok, "dir")
		return &findNode{eval: func(e *findEntry) bool {
			p := e.path
			if dir {
				p = "./" + baseName(e.path, "")
			}
			cmd := make([]string, len(argv))
			for i, a := range argv {
				cmd[i] = strings.ReplaceAll(a, "{}", p)
			}
			f.flush()
			inv := Invocation{Args: cmd, Stdin: eofReader{}, Stdout: c.Stdout, Stderr: c.Stderr}
			if dir {
				inv.Dir = dirName(e.abs)
			}
			return c.Exec(c.Ctx, inv) == 0
		}}, nil
	}
	if strings.HasPrefix(tok, "-") {
		return nil, fmt.Errorf("unknown predicate %s", q(tok))
	}
	return nil, fmt.Errorf("paths must precede expression: %s", q(tok))
}

func (f *finder) runBatch(b *findBatch) {
	if len(b.paths) == 0 {
		return
	}
	f.flush()
	cmd := append(append([]string{}, b.argv...), b.paths...)
	b.paths = nil
	if f.c.Exec(f.c.Ctx, Invocation{Args: cmd, Stdin: eofReader{}, Stdout: f.c.Stdout, Stderr: f.c.Stderr}) != 0 {
		f.status = 1
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// pathGlob matches a find -path pattern, where "*" also matches "/".
func pathGlob(pat, p string) bool {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch ch := pat[i]; ch {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(pat[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteString(regexp.QuoteMeta(string(pat[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(p)
}

func (f *finder) printf(format string, e *findEntry) string {
	return formatSpec{escapes: true, nul: true, flags: "-0123456789."}.expand(format, func(width string, format string, i *int) string {
		var v string
		switch format[*i] {
		case '%':
			v = "%"
		case 'p':
			v = e.path
		case 'f':
			v = baseName(e.path, "")
		case 'h':
			v = dirName(e.path)
		case 'P':
			v = strings.TrimPrefix(strings.TrimPrefix(e.path, e.start), "/")
		case 's':
			v = strconv.FormatInt(e.st.Size, 10)
		case 'd':
			v = strconv.Itoa(e.depth)
		case 'm':
			v = strconv.FormatUint(uint64(e.st.Perm()), 8)
		case 'M':
			v = e.st.ModeString()
		case 'y':
			v = e.st.TypeLetter()
		case 'u':
			v = f.c.userName(e.st.UID, false)
		case 'g':
			v = f.c.groupName(e.st.GID, false)
		case 'U':
			v = strconv.Itoa(int(e.st.UID))
		case 'G':
			v = strconv.Itoa(int(e.st.GID))
		case 'i':
			v = strconv.FormatInt(e.st.Ino, 10)
		case 'n':
			v = strconv.Itoa(int(e.st.Nlink))
		case 'l':
			if e.st.IsSymlink() {
				v, _ = f.c.FS.Readlink(e.abs)
			}
		case 'T':
			if *i+1 < len(format) {
				(*i)++
				if format[*i] == '@' {
					v = fmt.Sprintf("%d.%09d0", e.st.Mtime.Unix(), e.st.Mtime.Nanosecond())
				} else {
					v = e.st.Mtime.Local().Format(map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05", 'F': "2006-01-02", 'T': "15:04:05"}[format[*i]])
				}
			}
		case 't':
			v = e.st.Mtime.Local().Format("Mon Jan _2 15:04:05.0000000000 2006")
		default:
			v = "%" + string(format[*i])
		}
		if width != "" {
			if n, err := strconv.Atoi(strings.TrimPrefix(width, "-")); err == nil {
				if strings.HasPrefix(width, "-") {
					v = fmt.Sprintf("%-*s", n, v)
				} else {
					v = fmt.Sprintf("%*s", n, v)
				}
			}
		}
		return v
	})
}
