package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// sed is implemented here rather than through a library: the scripts
// agents write use GNU syntax (BRE with \( \) \1, a/i/c one-liners, I
// flags, 0,/re/ and first~step addresses), and r/w must read and write the
// agent filesystem, never the host's.

func init() {
	register("sed", "sed [-nEirsz] [-e SCRIPT]... [-f FILE]... [SCRIPT] [FILE]...", runSed)
}

type sedAddr struct {
	kind  byte // 'n' line, '$' last, 'r' regex, 's' first~step, '0' line zero
	line  int
	step  int
	re    *regexp.Regexp
	empty bool // "//": the last regex used
}

type sedCmd struct {
	a1, a2   *sedAddr
	a2kind   byte // 0, 'a' (address), '+' (+N), '~' (~N)
	a2n      int
	negate   bool
	name     byte
	text     string // a i c text, label, file name
	re       *regexp.Regexp
	reEmpty  bool
	repl     []sedRepl
	global   bool
	nth      int
	print    int // p flag count
	wfile    string
	from, to []rune // y
	block    int    // index of matching } for {
	exitCode int
	active   bool // range state
	rangeEnd int
}

type sedRepl struct {
	lit   string
	group int // -1: literal
	conv  byte
}

type sedParser struct {
	s   string
	i   int
	ere bool
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }
func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}
func (p *sedParser) skipWS() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// delimited reads up to an unescaped delim; "\delim" yields delim (kept
// escaped when it is special in a regex and regex is true).
func (p *sedParser) delimited(delim byte, regex bool) (string, error) {
	var b strings.Builder
	inBracket := false
	for !p.eof() {
		ch := p.s[p.i]
		if regex && ch == '[' && !inBracket {
			inBracket = true
			b.WriteByte(ch)
			p.i++
			if !p.eof() && p.s[p.i] == '^' {
				b.WriteByte('^')
				p.i++
			}
			if !p.eof() && p.s[p.i] == ']' {
				b.WriteByte(']')
				p.i++
			}
			continue
		}
		if inBracket {
			if ch == '[' && p.i+1 < len(p.s) && strings.IndexByte(":=.", p.s[p.i+1]) >= 0 {
				end := strings.Index(p.s[p.i+2:], string(p.s[p.i+1])+"]")
				if end >= 0 {
					b.WriteString(p.s[p.i : p.i+2+end+2])
					p.i += 2 + end + 2
					continue
				}
			}
			if ch == ']' {
				inBracket = false
			}
			b.WriteByte(ch)
			p.i++
			continue
		}
		if ch == '\\' && p.i+1 < len(p.s) {
			next := p.s[p.i+1]
			p.i += 2
			switch {
			case next == delim:
				if regex && strings.IndexByte(`.*[]^$\+?(){}|/`, delim) >= 0 && delim != '/' {
					b.WriteByte('\\')
				}
				b.WriteByte(delim)
			case next == 'n' && !regex:
				b.WriteString("\\n")
			case next == '\n':
				b.WriteString("\\\n")
			default:
				b.WriteByte('\\')
				b.WriteByte(next)
			}
			continue
		}
		if ch == delim {
			p.i++
			return b.String(), nil
		}
		if ch == '\n' && regex {
			return "", fmt.Errorf("unterminated address regex")
		}
		b.WriteByte(ch)
		p.i++
	}
	return "", fmt.Errorf("unterminated `s' command")
}

func (p *sedParser) compile(re string, flags string) (*regexp.Regexp, error) {
	goRe, err := posixToGo(re, p.ere)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if strings.ContainsAny(flags, "iI") {
		prefix += "i"
	}
	if strings.ContainsAny(flags, "mM") {
		prefix += "m"
	}
	if prefix != "" {
		goRe = "(?" + prefix + ")" + goRe
	}
	r, err := regexp.Compile(goRe)
	if err != nil {
		return nil, fmt.Errorf("invalid regex %s: %v", q(re), err)
	}
	r.Longest()
	return r, nil
}

func (p *sedParser) number() (int, bool) {
	start := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if start == p.i {
		return 0, false
	}
	n, _ := strconv.Atoi(p.s[start:p.i])
	return n, true
}

func (p *sedParser) addr() (*sedAddr, error) {
	switch ch := p.peek(); {
	case ch >= '0' && ch <= '9':
		n, _ := p.number()
		if p.peek() == '~' {
			p.i++
			step, _ := p.number()
			return &sedAddr{kind: 's', line: n, step: step}, nil
		}
		if n == 0 {
			return &sedAddr{kind: '0'}, nil
		}
		return &sedAddr{kind: 'n', line: n}, nil
	case ch == '$':
		p.i++
		return &sedAddr{kind: '$'}, nil
	case ch == '/' || ch == '\\':
		delim := byte('/')
		if ch == '\\' {
			p.i++
			delim = p.peek()
		}
		p.i++
		re, err := p.delimited(delim, true)
		if err != nil {
			return nil, fmt.Errorf("unterminated address regex")
		}
		flags := ""
		for p.peek() == 'I' || p.peek() == 'M' {
			flags += string(p.peek())
			p.i++
		}
		if re == "" {
			return &sedAddr{kind: 'r', empty: true}, nil
		}
		r, err := p.compile(re, flags)
		if err != nil {
			return nil, err
		}
		return &sedAddr{kind: 'r', re: r}, nil
	}
	return nil, nil
}

// readText reads the text of a, i, c: GNU one-liner "a text" or "a\"
// followed by lines ending in backslash.
func (p *sedParser) readText() string {
	p.skipWS()
	if p.peek() == '\\' {
		p.i++
		if p.peek() == '\n' {
			p.i++
		}
	}
	var b strings.Builder
	for !p.eof() {
		ch := p.s[p.i]
		if ch == '\\' && p.i+1 < len(p.s) {
			next := p.s[p.i+1]
			p.i += 2
			if next == '\n' || next == 'n' {
				b.WriteByte('\n')
			} else if next == 't' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(next)
			}
			continue
		}
		if ch == '\n' {
			p.i++
			break
		}
		b.WriteByte(ch)
		p.i++
	}
	return b.String()
}

func (p *sedParser) word() string {
	p.skipWS()
	start := p.i
	for !p.eof() && p.s[p.i] != '\n' && p.s[p.i] != ';' {
		p.i++
	}
	return strings.TrimRight(p.s[start:p.i], " \t")
}

func (p *sedParser) filename() string {
	p.skipWS()
	start := p.i
	for !p.eof() && p.s[p.i] != '\n' {
		p.i++
	}
	return p.s[start:p.i]
}

func parseRepl(s string) []sedRepl {
	var out []sedRepl
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, sedRepl{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '&':
			flush()
			out = append(out, sedRepl{group: 0})
		case ch == '\\' && i+1 < len(s):
			i++
			e := s[i]
			switch {
			case e >= '0' && e <= '9':
				flush()
				out = append(out, sedRepl{group: int(e - '0')})
			case e == 'n':
				lit.WriteByte('\n')
			case e == 't':
				lit.WriteByte('\t')
			case e == 'L' || e == 'U' || e == 'l' || e == 'u' || e == 'E':
				flush()
				out = append(out, sedRepl{group: -2, conv: e})
			default:
				lit.WriteByte(e)
			}
		default:
			lit.WriteByte(ch)
		}
	}
	flush()
	return out
}

func parseSed(script string, ere bool) ([]*sedCmd, error) {
	p := &sedParser{s: script, ere: ere}
	var cmds []*sedCmd
	var stack []int
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) >= 0 {
			p.i++
		}
		if p.eof() {
			break
		}
		if p.peek() == '#' {
			for !p.eof() && p.peek() != '\n' {
				p.i++
			}
			continue
		}
		cmd := &sedCmd{}
		var err error
		if cmd.a1, err = p.addr(); err != nil {
			return nil, err
		}
		if cmd.a1 != nil {
			p.skipWS()
			if p.peek() == ',' {
				p.i++
				p.skipWS()
				switch p.peek() {
				case '+', '~':
					cmd.a2kind = p.peek()
					p.i++
					cmd.a2n, _ = p.number()
				default:
					cmd.a2kind = 'a'
					if cmd.a2, err = p.addr(); err != nil {
						return nil, err
					}
					if cmd.a2 == nil {
						return nil, fmt.Errorf("unexpected `,'")
					}
				}
			}
		}
		p.skipWS()
		for p.peek() == '!' {
			cmd.negate = true
			p.i++
			p.skipWS()
		}
		if p.eof() {
			return nil, fmt.Errorf("missing command")
		}
		cmd.name = p.s[p.i]
		p.i++
		switch cmd.name {
		case '{':
			stack = append(stack, len(cmds))
		case '}':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unexpected `}'")
			}
			cmds[stack[len(stack)-1]].block = len(cmds)
			stack = stack[:len(stack)-1]
		case 'a', 'i', 'c':
			cmd.text = p.readText()
		case ':':
			cmd.text = p.word()
			if cmd.text == "" {
				return nil, fmt.Errorf("\":\" lacks a label")
			}
		case 'b', 't', 'T':
			cmd.text = p.word()
		case 'r', 'R', 'w', 'W':
			cmd.text = p.filename()
		case 'q', 'Q', 'l', 'L':
			p.skipWS()
			cmd.exitCode, _ = p.number()
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 's':
			delim := p.peek()
			if delim == 0 || delim == '\n' || delim == '\\' {
				return nil, fmt.Errorf("unterminated `s' command")
			}
			p.i++
			re, err := p.delimited(delim, true)
			if err != nil {
				return nil, err
			}
			repl, err := p.delimited(delim, false)
			if err != nil {
				return nil, err
			}
			flags := ""
			for !p.eof() && strings.IndexByte("gpiImMe0123456789w", p.peek()) >= 0 {
				ch := p.peek()
				if ch == 'w' {
					p.i++
					cmd.wfile = p.filename()
					break
				}
				if ch == 'e' {
					return nil, fmt.Errorf("the `e' flag is not supported in the sandbox")
				}
				if ch >= '0' && ch <= '9' {
					cmd.nth, _ = p.number()
					continue
				}
				switch ch {
				case 'g':
					cmd.global = true
				case 'p':
					cmd.print++
				}
				flags += string(ch)
				p.i++
			}
			if re == "" {
				cmd.reEmpty = true
			} else if cmd.re, err = p.compile(re, flags); err != nil {
				return nil, err
			}
			cmd.repl = parseRepl(repl)
		case 'y':
			delim := p.peek()
			p.i++
			from, err := p.delimited(delim, false)
			if err != nil {
				return nil, fmt.Errorf("unterminated `y' command")
			}
			to, err := p.delimited(delim, false)
			if err != nil {
				return nil, fmt.Errorf("unterminated `y' command")
			}
			unesc := func(s string) []rune {
				s = strings.ReplaceAll(s, `\n`, "\n")
				s = strings.ReplaceAll(s, `\\`, `\`)
				return []rune(s)
			}
			cmd.from, cmd.to = unesc(from), unesc(to)
			if len(cmd.from) != len(cmd.to) {
				return nil, fmt.Errorf("strings for `y' command are different lengths")
			}
		case 'e':
			return nil, fmt.Errorf("the `e' command is not supported in the sandbox")
		default:
			return nil, fmt.Errorf("unknown command: `%c'", cmd.name)
		}
		// Only ; } # spaces or newline may follow a command.
		p.skipWS()
		if !p.eof() && strings.IndexByte(";\n}#", p.peek()) < 0 && strings.IndexByte("aic:btTrRwW{", cmd.name) < 0 {
			return nil, fmt.Errorf("extra characters after command")
		}
		cmds = append(cmds, cmd)
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("unmatched `{'")
	}
	return cmds, nil
}

// sedRun is the state of one execution.
type sedRun struct {
	c       *Cmd
	cmds    []*sedCmd
	quiet   bool
	nul     bool
	lineNo  int
	input   *sedInput
	out     *bufio.Writer
	pat     string
	hold    string
	appendQ []string
	lastRe  *regexp.Regexp
	tflag   bool
	quit    int // -1: go on
	quitNow bool
	wfiles  map[string]File // by name; nil after a failed write
	wstatus int             // 4 after a failed write to a w file
	rfiles  map[string]*bufio.Reader
	// pendingNL: the last line printed lacked its newline, as its input
	// line did; it is added before anything printed after it.
	pendingNL bool
	// held keeps the pattern and hold spaces and the append queue in the
	// run's memory budget; ops counts commands run, to look at the
	// context every 1024 of them (a branch loop reads no input).
	held     *Held
	appendSz int
	ops      uint
}

type sedInput struct {
	c         *Cmd
	files     []string
	idx       int
	cur       *bufio.Reader
	next      *string
	nextNoEOL bool
	curNoEOL  bool // the line just read had no delimiter at its end
	status    int
	delim     byte
	name      string
	curSize   int64 // bytes of the current file, reserved in the budget
}

func (in *sedInput) open() bool {
	for in.cur == nil {
		if in.idx >= len(in.files) {
			return false
		}
		name := in.files[in.idx]
		in.idx++
		f, err := in.c.Open(name, true)
		if err != nil {
			in.c.Errorf("can't read %s: %s", name, ErrText(err))
			in.status = 2
			continue
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			in.c.Errorf("couldn't edit %s: not a regular file", name)
			in.status = 2
			continue
		}
		// The previous file's bytes are dropped: one file at a time
		// counts against the memory budget.
		in.c.Release(in.curSize)
		in.curSize = 0
		data, err := in.c.ReadAllFrom(f, 0)
		f.Close()
		if err != nil {
			in.c.Errorf("read error on %s: %s", name, ErrText(err))
			in.status = 2
			continue
		}
		in.name = name
		in.cur = bufio.NewReader(bytes.NewReader(data))
		in.curSize = int64(len(data))
	}
	return true
}

func (in *sedInput) readRaw() (string, bool, bool) {
	for in.open() {
		s, err := in.cur.ReadString(in.delim)
		if s != "" {
			noEOL := !strings.HasSuffix(s, string(in.delim))
			return strings.TrimSuffix(s, string(in.delim)), noEOL, true
		}
		if err != nil {
			in.cur = nil
		}
	}
	return "", false, false
}

func (in *sedInput) read() (string, bool) {
	if in.next != nil {
		s := *in.next
		in.next = nil
		in.curNoEOL = in.nextNoEOL
		return s, true
	}
	s, noEOL, ok := in.readRaw()
	in.curNoEOL = noEOL
	return s, ok
}

func (in *sedInput) isLast() bool {
	if in.next != nil {
		return false
	}
	s, noEOL, ok := in.readRaw()
	if !ok {
		return true
	}
	in.next, in.nextNoEOL = &s, noEOL
	return false
}

func runSed(c *Cmd) (exit int) {
	o, args, code, ok := c.parseOpts(spec{short: "ne:f:Eri::szu", long: map[string]string{
		"quiet": "n", "silent": "n", "expression=": "e", "file=": "f", "regexp-extended": "E", "in-place": "i",
		"in-place=": "i", "separate": "s", "null-data": "z", "unbuffered": "u", "posix": "P", "debug": "D",
	}}, 1)
	if !ok {
		return code
	}
	var parts []string
	for _, x := range o.list {
		switch x.key {
		case "e":
			parts = append(parts, x.val)
		case "f":
			data, err := c.ReadAll(x.val)
			if err != nil {
				c.Errorf("couldn't open file %s: %s", x.val, ErrText(err))
				return 1
			}
			parts = append(parts, strings.TrimSuffix(string(data), "\n"))
		}
	}
	if len(parts) == 0 {
		if len(args) == 0 {
			return c.Usage(1, "no script specified")
		}
		parts, args = []string{args[0]}, args[1:]
	}
	cmds, err := parseSed(strings.Join(parts, "\n"), o.has("E") || o.has("r"))
	if err != nil {
		c.Errorf("-e expression #1, char 0: %v", err)
		return 1
	}
	labels := map[string]int{}
	for i, cmd := range cmds {
		if cmd.name == ':' {
			labels[cmd.text] = i
		}
	}
	for _, cmd := range cmds {
		if (cmd.name == 'b' || cmd.name == 't' || cmd.name == 'T') && cmd.text != "" {
			if _, ok := labels[cmd.text]; !ok {
				c.Errorf("-e expression #1, char 0: can't find label for jump to %s", q(cmd.text))
				return 4 // as GNU sed
			}
		}
	}
	delim := byte('\n')
	if o.has("z") {
		delim = 0
	}
	inPlace := o.has("i")
	suffix, _ := o.val("i")
	if len(args) == 0 {
		if inPlace {
			return c.Fail("no input files")
		}
		args = []string{"-"}
	}
	run := &sedRun{c: c, cmds: cmds, quiet: o.has("n"), nul: o.has("z"), quit: -1, wfiles: map[string]File{}, rfiles: map[string]*bufio.Reader{}, held: c.NewHeld()}
	defer func() {
		if !run.closeWfiles() && exit == 0 {
			exit = 4
		}
	}()
	// As GNU sed, every w file is created (truncated) before any input is
	// read, even one no line reaches, and one that cannot be opened stops
	// sed before it prints anything.
	for _, cmd := range cmds {
		name := cmd.wfile
		if cmd.name == 'w' || cmd.name == 'W' {
			name = cmd.text
		}
		if name == "" || name == "/dev/stdout" {
			continue
		}
		if _, ok := run.wfiles[name]; ok {
			continue
		}
		f, err := c.Create(name, false)
		if err != nil {
			c.Errorf("couldn't open file %s: %s", name, ErrText(err))
			return 4
		}
		run.wfiles[name] = f
	}
	if !inPlace && !o.has("s") {
		run.input = &sedInput{c: c, files: args, delim: delim}
		run.out = c.bufOut()
		run.exec(labels)
		err := run.out.Flush()
		status := run.input.status
		if run.quit >= 0 {
			status = run.quit
		}
		if run.wstatus != 0 {
			status = run.wstatus
		}
		return exitWrite(c, err, status)
	}
	status := 0
	for _, name := range args {
		run.input = &sedInput{c: c, files: []string{name}, delim: delim}
		var buf bytes.Buffer
		if inPlace {
			st, err := c.Stat(name)
			if err != nil {
				c.Errorf("can't read %s: %s", name, ErrText(err))
				status = 2
				continue
			}
			if !st.IsRegular() {
				c.Errorf("couldn't edit %s: not a regular file", name)
				status = 4
				continue
			}
			run.out = bufio.NewWriter(&buf)
		} else {
			run.out = c.bufOut()
		}
		run.lineNo = 0
		run.exec(labels)
		run.out.Flush()
		if run.input.status != 0 {
			status = run.input.status
			continue
		}
		if inPlace {
			if suffix != "" {
				backup := suffix
				if strings.Contains(suffix, "*") {
					backup = strings.ReplaceAll(suffix, "*", baseName(name, ""))
					if !strings.Contains(backup, "/") {
						backup = joinPath(dirName(name), backup)
					}
				} else {
					backup = name + suffix
				}
				if err := c.FS.CopyFile(c.Abs(name), c.Abs(backup)); err != nil {
					c.Errorf("couldn't open file %s: %s", backup, ErrText(err))
					status = 4
					continue
				}
			}
			if err := c.FS.WriteFile(c.Abs(name), buf.Bytes(), vfs.WriteOptions{}); err != nil {
				c.Errorf("couldn't edit %s: %s", name, ErrText(err))
				status = 4
			}
		}
		if run.quitNow {
			break
		}
	}
	if run.quit >= 0 {
		status = run.quit
	}
	if run.wstatus != 0 {
		status = run.wstatus
	}
	return status
}

func (r *sedRun) matchAddr(a *sedAddr) bool {
	switch a.kind {
	case 'n':
		return r.lineNo == a.line
	case '$':
		return r.input.isLast()
	case 's':
		if a.step <= 0 {
			return r.lineNo == a.line
		}
		return r.lineNo >= a.line && (r.lineNo-a.line)%a.step == 0
	case '0':
		return false
	case 'r':
		re := a.re
		if a.empty {
			re = r.lastRe
		}
		if re == nil {
			return false
		}
		r.lastRe = re
		return re.MatchString(r.pat)
	}
	return false
}

func (r *sedRun) selected(cmd *sedCmd) bool {
	if cmd.a1 == nil {
		return true
	}
	if cmd.a2kind == 0 {
		return r.matchAddr(cmd.a1)
	}
	if cmd.active {
		switch cmd.a2kind {
		case '+':
			if r.lineNo >= cmd.rangeEnd {
				cmd.active = false
			}
			return true
		case '~':
			if cmd.a2n <= 0 || r.lineNo%cmd.a2n == 0 {
				cmd.active = false
			}
			return true
		}
		switch cmd.a2.kind {
		case 'n':
			if r.lineNo >= cmd.a2.line {
				cmd.active = false
			}
			if r.lineNo > cmd.a2.line {
				// The end line was before: the range is just this line.
				return true
			}
			return true
		default:
			if r.matchAddr(cmd.a2) {
				cmd.active = false
			}
			return true
		}
	}
	start := false
	if cmd.a1.kind == '0' {
		start = r.lineNo == 1
		if start && cmd.a2.kind == 'r' && r.matchAddr(cmd.a2) {
			return true
		}
	} else {
		start = r.matchAddr(cmd.a1)
	}
	if !start {
		return false
	}
	switch cmd.a2kind {
	case '+':
		cmd.rangeEnd = r.lineNo + cmd.a2n
		cmd.active = cmd.a2n > 0
	case '~':
		cmd.active = !(cmd.a2n <= 0 || r.lineNo%cmd.a2n == 0)
	default:
		if cmd.a2.kind == 'n' {
			cmd.active = cmd.a2.line > r.lineNo
		} else if cmd.a2.kind == '$' {
			cmd.active = !r.input.isLast()
		} else {
			cmd.active = true
		}
	}
	return true
}

func (r *sedRun) put(s string) {
	if r.pendingNL {
		r.out.WriteByte('\n')
		r.pendingNL = false
	}
	r.out.WriteString(s)
}

// emit prints the pattern space (or part of it) with its newline, which
// a last input line without one does not get.
func (r *sedRun) emit(s string) {
	r.put(s)
	switch {
	case r.input.curNoEOL:
		r.pendingNL = true
	case r.nul:
		r.out.WriteByte(0)
	default:
		r.out.WriteByte('\n')
	}
}

func (r *sedRun) flushAppend() {
	for _, a := range r.appendQ {
		r.put(a)
	}
	r.appendQ = r.appendQ[:0]
	r.appendSz = 0
}

func (r *sedRun) exec(labels map[string]int) {
	for !r.quitNow {
		line, ok := r.input.read()
		if !ok {
			return
		}
		if r.c.Cancelled() {
			return
		}
		r.lineNo++
		r.pat = line
		r.tflag = false
		if r.cycle(labels) {
			return
		}
	}
}

// cycle runs the script on the pattern space; it reports whether sed
// must stop.
func (r *sedRun) cycle(labels map[string]int) bool {
	autoprint := !r.quiet
	deleted := false
	restart := false
	for pc := 0; pc < len(r.cmds); pc++ {
		// ":a;ba" and "G;ba" loop here without reading input: the run's
		// context and memory budget are checked in the loop itself.
		r.ops++
		if r.ops&1023 == 0 && r.c.Cancelled() {
			return true
		}
		if r.held != nil && r.held.Set(int64(len(r.pat)+len(r.hold)+r.appendSz)) != nil {
			return true
		}
		cmd := r.cmds[pc]
		if cmd.name == '}' || cmd.name == ':' {
			continue
		}
		sel := r.selected(cmd)
		if cmd.negate {
			sel = !sel
		}
		if !sel {
			if cmd.name == '{' {
				pc = cmd.block
			}
			continue
		}
		switch cmd.name {
		case '{':
		case '=':
			r.put(fmt.Sprintf("%d\n", r.lineNo))
		case 'a':
			r.appendQ = append(r.appendQ, cmd.text+"\n")
			r.appendSz += len(cmd.text) + 1 + lineCost
		case 'i':
			r.put(cmd.text + "\n")
		case 'c':
			if cmd.a2kind == 0 || !cmd.active {
				r.put(cmd.text + "\n")
			}
			deleted = true
		case 'd':
			deleted = true
		case 'D':
			if i := strings.IndexByte(r.pat, '\n'); i >= 0 {
				r.pat = r.pat[i+1:]
				restart = true
			} else {
				deleted = true
			}
		case 'g':
			r.pat = r.hold
		case 'G':
			r.pat += "\n" + r.hold
		case 'h':
			r.hold = r.pat
		case 'H':
			r.hold += "\n" + r.pat
		case 'x':
			r.pat, r.hold = r.hold, r.pat
		case 'l':
			r.put(sedEscape(r.pat, cmd.exitCode) + "\n")
		case 'n':
			if r.quit >= 0 {
				return true
			}
			if !r.quiet {
				r.emit(r.pat)
			}
			r.flushAppend()
			line, ok := r.input.read()
			if !ok {
				autoprint = false
				r.quitNow = true
				deleted = true
				break
			}
			r.lineNo++
			r.pat = line
		case 'N':
			r.flushAppend()
			line, ok := r.input.read()
			if !ok {
				// GNU prints the pattern space when there is no next line.
				r.quitNow = true
				if r.quiet {
					deleted = true
				}
				pc = len(r.cmds)
				break
			}
			r.lineNo++
			r.pat += "\n" + line
		case 'p':
			r.emit(r.pat)
		case 'P':
			first, _, _ := strings.Cut(r.pat, "\n")
			r.emit(first)
		case 'q':
			r.quit = cmd.exitCode
			r.quitNow = true
			pc = len(r.cmds)
		case 'Q':
			r.quit = cmd.exitCode
			r.quitNow = true
			return true
		case 'z':
			r.pat = ""
		case 'F':
			name := r.input.name
			if name == "-" {
				name = "-"
			}
			r.put(name + "\n")
		case 'b':
			if cmd.text == "" {
				pc = len(r.cmds)
			} else {
				pc = labels[cmd.text]
			}
		case 't', 'T':
			jump := r.tflag
			if cmd.name == 'T' {
				jump = !r.tflag
			}
			r.tflag = false
			if jump {
				if cmd.text == "" {
					pc = len(r.cmds)
				} else {
					pc = labels[cmd.text]
				}
			}
		case 'r':
			data, err := r.c.ReadAll(cmd.text)
			if err == nil && len(data) > 0 {
				s := string(data)
				if !strings.HasSuffix(s, "\n") {
					s += "\n"
				}
				r.appendQ = append(r.appendQ, s)
				r.appendSz += len(s) + lineCost
			}
		case 'R':
			br, ok := r.rfiles[cmd.text]
			if !ok {
				if data, err := r.c.ReadAll(cmd.text); err == nil {
					br = bufio.NewReader(bytes.NewReader(data))
				}
				r.rfiles[cmd.text] = br
			}
			if br != nil {
				if l, err := br.ReadString('\n'); l != "" {
					if err != nil {
						l += "\n"
					}
					r.appendQ = append(r.appendQ, l)
					r.appendSz += len(l) + lineCost
				}
			}
		case 'w', 'W':
			s := r.pat
			if cmd.name == 'W' {
				s, _, _ = strings.Cut(s, "\n")
			}
			r.write(cmd.text, s)
		case 's':
			re := cmd.re
			if cmd.reEmpty {
				re = r.lastRe
			}
			if re == nil {
				r.c.Errorf("no previous regular expression")
				return true
			}
			r.lastRe = re
			if out, ok := sedSubst(re, r.pat, cmd); ok {
				r.pat = out
				r.tflag = true
				for i := 0; i < cmd.print; i++ {
					r.emit(r.pat)
				}
				if cmd.wfile != "" {
					r.write(cmd.wfile, r.pat)
				}
			}
		case 'y':
			rs := []rune(r.pat)
			for i, ch := range rs {
				for j, f := range cmd.from {
					if ch == f {
						rs[i] = cmd.to[j]
						break
					}
				}
			}
			r.pat = string(rs)
		}
		if deleted {
			break
		}
		if restart {
			// D with a newline: start the next cycle without reading.
			r.flushAppend()
			r.tflag = false
			return r.cycle(labels)
		}
	}
	if autoprint && !deleted {
		r.emit(r.pat)
	}
	r.flushAppend()
	return r.quitNow
}

func (r *sedRun) write(name, s string) {
	if name == "/dev/stdout" {
		r.emit(s)
		return
	}
	// Every name was opened before the first line (runSed); a file
	// whose write failed was closed and is skipped from then on.
	f := r.wfiles[name]
	if f == nil {
		return
	}
	if _, err := io.WriteString(f, s+"\n"); err != nil {
		// GNU sed: "couldn't write N items to FILE", status 4.
		r.c.Errorf("couldn't write to %s: %s", name, ErrText(err))
		r.wstatus = 4
		f.Close()
		r.wfiles[name] = nil
	}
}

// closeWfiles closes the w files still open and reports whether all
// closed cleanly.
func (r *sedRun) closeWfiles() bool {
	ok := true
	for name, f := range r.wfiles {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil {
			r.c.Errorf("couldn't close %s: %s", name, ErrText(err))
			ok = false
		}
	}
	return ok
}

func sedSubst(re *regexp.Regexp, s string, cmd *sedCmd) (string, bool) {
	matches := re.FindAllStringSubmatchIndex(s, -1)
	if len(matches) == 0 {
		return s, false
	}
	var b strings.Builder
	last := 0
	done := false
	n := 0
	for _, m := range matches {
		n++
		if cmd.nth > 0 && n < cmd.nth {
			continue
		}
		if done {
			break
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(expandRepl(s, m, cmd.repl))
		last = m[1]
		if !cmd.global {
			done = true
		}
	}
	if cmd.nth > 0 && n < cmd.nth {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

func expandRepl(s string, m []int, repl []sedRepl) string {
	var b strings.Builder
	mode, one := byte(0), byte(0)
	put := func(t string) {
		for _, ch := range t {
			str := string(ch)
			switch {
			case one == 'u':
				str = strings.ToUpper(str)
				one = 0
			case one == 'l':
				str = strings.ToLower(str)
				one = 0
			case mode == 'U':
				str = strings.ToUpper(str)
			case mode == 'L':
				str = strings.ToLower(str)
			}
			b.WriteString(str)
		}
	}
	for _, r := range repl {
		switch {
		case r.group == -1:
			put(r.lit)
		case r.group == -2:
			switch r.conv {
			case 'U', 'L':
				mode = r.conv
			case 'E':
				mode = 0
			default:
				one = r.conv
			}
		default:
			if 2*r.group+1 < len(m) && m[2*r.group] >= 0 {
				put(s[m[2*r.group]:m[2*r.group+1]])
			}
		}
	}
	return b.String()
}

// sedEscape renders the pattern space for the l command.
func sedEscape(s string, width int) string {
	if width == 0 {
		width = 70
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		var t string
		switch ch {
		case '\\':
			t = `\\`
		case '\a':
			t = `\a`
		case '\b':
			t = `\b`
		case '\f':
			t = `\f`
		case '\n':
			t = `\n`
		case '\r':
			t = `\r`
		case '\t':
			t = `\t`
		case '\v':
			t = `\v`
		default:
			if ch < 32 || ch >= 127 {
				t = fmt.Sprintf("\\%03o", ch)
			} else {
				t = string(ch)
			}
		}
		if width > 1 && col+len(t) > width-1 {
			b.WriteString("\\\n")
			col = 0
		}
		b.WriteString(t)
		col += len(t)
	}
	return b.String() + "$"
}
