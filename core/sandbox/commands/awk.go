package commands

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"
)

// awk runs GoAWK with system(), pipes and file redirections disabled
// (NoExec, NoFileWrites, NoFileReads): the input files are read here from
// the agent filesystem and handed over as standard input, one "-" per
// file, so that FNR restarts for each file. FILENAME is served by a Go
// function, as GoAWK would say "-".

func init() {
	register("awk", "awk [-F FS] [-v VAR=VAL]... [-f PROGFILE | 'PROGRAM'] [FILE | VAR=VAL]...", runAwk)
}

var awkAssign = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*=`)

const (
	awkFilenameFunc = "_agentfs_filename"
	awkTickFunc     = "_agentfs_tick"
)

// rewriteAwk replaces the variable FILENAME by a call to the Go function
// that knows the current file, and puts a call of the tick function
// (which fails once the run is cancelled) in every loop and function:
// GoAWK looks at the context only every 1000 instructions, and
// 'while (1) s = s s' doubles a string a few hundred times in that many,
// far past any memory. The tick goes
//
//   - into the condition of while, do-while and for(;;) loops:
//     "while (T() && (COND))", "for (I; T() && (COND); S)";
//   - at the start of the body of for-in loops and of functions
//     (recursion): "{ T(); ...", or "if (T()) STMT" for a body without
//     braces.
func rewriteAwk(src string) string {
	lines := strings.SplitAfter(src, "\n")
	offset := func(p lexer.Position) int {
		n := 0
		for i := 0; i < p.Line-1 && i < len(lines); i++ {
			n += len(lines[i])
		}
		return n + p.Column - 1
	}
	type edit struct {
		at, drop int
		text     string
	}
	var edits []edit
	insert := func(at int, text string) { edits = append(edits, edit{at: at, text: text}) }
	type paren struct {
		kind  lexer.Token // WHILE, FOR, FUNCTION, or ILLEGAL for others
		open  int         // offset just after "("
		semis []int       // offsets of the ";" of a for(;;) head
	}
	var stack []paren
	tick := awkTickFunc + "()"
	l := lexer.NewLexer([]byte(src))
	prev := lexer.NEWLINE
	funcHeader := false
	// bodyAt: the next statement is the body of a for-in loop (or of a
	// function, brace only) that needs a tick.
	bodyAt, bodyKind := -1, lexer.ILLEGAL
	for {
		pos, tok, val := l.Scan()
		if tok == lexer.EOF || tok == lexer.ILLEGAL {
			break
		}
		if tok == lexer.DIV || tok == lexer.DIV_ASSIGN {
			switch prev {
			case lexer.NEWLINE, lexer.LPAREN, lexer.COMMA, lexer.LBRACE, lexer.MATCH, lexer.NOT_MATCH, lexer.AND, lexer.OR,
				lexer.NOT, lexer.SEMICOLON, lexer.RBRACE, lexer.QUESTION, lexer.COLON:
				pos, tok, val = l.ScanRegex()
			}
		}
		at := offset(pos)
		if bodyAt >= 0 && tok != lexer.NEWLINE {
			switch {
			case tok == lexer.LBRACE:
				insert(at+1, " "+tick+";")
			case bodyKind == lexer.FOR:
				insert(bodyAt, " if ("+tick+")")
			}
			bodyAt = -1
		}
		switch tok {
		case lexer.NAME:
			if val == "FILENAME" && at+8 <= len(src) && src[at:at+8] == "FILENAME" {
				edits = append(edits, edit{at: at, drop: 8, text: awkFilenameFunc + "()"})
			}
		case lexer.FUNCTION:
			funcHeader = true
		case lexer.LPAREN:
			kind := lexer.ILLEGAL
			switch {
			case prev == lexer.WHILE || prev == lexer.FOR:
				kind = prev
			case funcHeader && len(stack) == 0:
				kind, funcHeader = lexer.FUNCTION, false
			}
			stack = append(stack, paren{kind: kind, open: at + 1})
		case lexer.SEMICOLON:
			if n := len(stack); n > 0 && stack[n-1].kind == lexer.FOR {
				stack[n-1].semis = append(stack[n-1].semis, at)
			}
		case lexer.RPAREN:
			n := len(stack)
			if n == 0 {
				break
			}
			p := stack[n-1]
			stack = stack[:n-1]
			switch p.kind {
			case lexer.WHILE:
				insert(p.open, tick+" && (")
				insert(at, ")")
			case lexer.FOR:
				if len(p.semis) >= 2 {
					s1, s2 := p.semis[0], p.semis[1]
					if strings.TrimSpace(src[s1+1:s2]) == "" {
						insert(s1+1, " "+tick)
					} else {
						insert(s1+1, " "+tick+" && (")
						insert(s2, ")")
					}
				} else {
					bodyAt, bodyKind = at+1, lexer.FOR
				}
			case lexer.FUNCTION:
				bodyAt, bodyKind = at+1, lexer.FUNCTION
			}
		}
		prev = tok
	}
	// Apply from the end, so that earlier offsets stay valid; at equal
	// offsets, in the order found.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	for _, e := range edits {
		if e.at < 0 || e.at+e.drop > len(src) {
			continue
		}
		src = src[:e.at] + e.text + src[e.at+e.drop:]
	}
	return src
}

// awkInput serves the input files one after another, with an EOF
// between them.
type awkInput struct {
	c       *Cmd
	names   []string
	idx     int
	cur     io.Reader
	closer  io.Closer
	current string
	failed  bool
}

func (in *awkInput) Read(p []byte) (int, error) {
	if in.cur == nil {
		if in.idx >= len(in.names) {
			return 0, io.EOF
		}
		name := in.names[in.idx]
		in.idx++
		in.current = name
		if name == "-" {
			in.cur = in.c.Stdin
		} else {
			f, err := in.c.Open(name, false)
			if err != nil {
				in.c.Errorf("cannot open %s: %s", q(name), ErrText(err))
				in.failed = true
				return 0, io.EOF
			}
			in.cur, in.closer = f, f
		}
	}
	n, err := in.cur.Read(p)
	if err == io.EOF {
		if in.closer != nil {
			in.closer.Close()
		}
		in.cur, in.closer = nil, nil
	}
	return n, err
}

func runAwk(c *Cmd) int {
	args := c.Args[1:]
	var vars []string
	var progSrc string
	haveProg := false
	fs := ""
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			goto operands
		case a == "-F" && len(args) > 1:
			fs, args = args[1], args[2:]
		case strings.HasPrefix(a, "-F") && len(a) > 2:
			fs, args = a[2:], args[1:]
		case a == "-v" && len(args) > 1:
			vars, args = append(vars, args[1]), args[2:]
		case strings.HasPrefix(a, "-v") && len(a) > 2:
			vars, args = append(vars, a[2:]), args[1:]
		case a == "-f" && len(args) > 1:
			data, err := c.ReadAll(args[1])
			if err != nil {
				c.Errorf("can't open source file %s: %s", q(args[1]), ErrText(err))
				return 2
			}
			progSrc += string(data) + "\n"
			haveProg = true
			args = args[2:]
		case strings.HasPrefix(a, "-") && len(a) > 1 && a != "-":
			c.Errorf("unknown option %s", q(a))
			return 2
		default:
			goto operands
		}
	}
operands:
	if !haveProg {
		if len(args) == 0 {
			c.Errorf("usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
			return 2
		}
		progSrc, args = args[0], args[1:]
	}
	in := &awkInput{c: c}
	funcs := map[string]any{
		awkFilenameFunc: func() string {
			if in.current == "-" {
				return ""
			}
			return in.current
		},
		awkTickFunc: func() (int, error) {
			if c.Cancelled() {
				return 0, ErrStop
			}
			return 1, nil
		},
	}
	prog, err := parser.ParseProgram([]byte(rewriteAwk(progSrc)), &parser.ParserConfig{Funcs: funcs})
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), awkFilenameFunc+"()", "FILENAME")
		msg = strings.ReplaceAll(msg, awkTickFunc+"() && ", "")
		c.Errorf("%s", msg)
		return 2
	}
	var goArgs []string
	for _, a := range args {
		if awkAssign.MatchString(a) || a == "" {
			goArgs = append(goArgs, a)
			continue
		}
		in.names = append(in.names, a)
		goArgs = append(goArgs, "-")
	}
	var vs []string
	if fs != "" {
		if fs == "t" {
			fs = "\t"
		}
		vs = append(vs, "FS", fs)
	}
	for _, v := range vars {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			c.Errorf("invalid -v argument %s", q(v))
			return 2
		}
		if u, err := lexer.Unescape(val); err == nil {
			val = u
		}
		vs = append(vs, k, val)
	}
	env := []string{}
	if c.Environ != nil {
		for _, kv := range c.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env = append(env, k, v)
		}
	}
	var stdin io.Reader = c.Stdin
	if len(in.names) > 0 {
		stdin = in
	}
	var stderr bytes.Buffer
	cfg := &interp.Config{
		Stdin: stdin, Output: c.Stdout, Error: &stderr, Argv0: "awk", Args: goArgs, Vars: vs, Funcs: funcs,
		NoExec: true, NoFileWrites: true, NoFileReads: true, Environ: env,
		ShellCommand: []string{"false"},
	}
	interpreter, err := interp.New(prog)
	if err != nil {
		c.Errorf("%v", err)
		return 2
	}
	status, err := interpreter.ExecuteContext(c.Ctx, cfg)
	c.Stderr.Write(stderr.Bytes())
	if err != nil {
		if IsWriteStop(err) || errors.Is(err, c.Ctx.Err()) && c.Ctx.Err() != nil {
			return 2
		}
		msg := err.Error()
		msg = strings.ReplaceAll(msg, "due to NoFileReads", "in the sandbox (give files as arguments or use redirection)")
		msg = strings.ReplaceAll(msg, "due to NoFileWrites", "in the sandbox (redirect the output of awk instead)")
		msg = strings.ReplaceAll(msg, "due to NoExec", "in the sandbox")
		c.Errorf("%s", msg)
		return 2
	}
	if in.failed {
		return 2
	}
	return status
}
