package commands

import (
	"bytes"
	"errors"
	"io"
	"regexp"
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

const awkFilenameFunc = "_agentfs_filename"

// rewriteFilename replaces the variable FILENAME by a call to the Go
// function that knows the current file.
func rewriteFilename(src string) string {
	if !strings.Contains(src, "FILENAME") {
		return src
	}
	lines := strings.SplitAfter(src, "\n")
	offset := func(p lexer.Position) int {
		n := 0
		for i := 0; i < p.Line-1 && i < len(lines); i++ {
			n += len(lines[i])
		}
		return n + p.Column - 1
	}
	l := lexer.NewLexer([]byte(src))
	var spots []int
	prev := lexer.NEWLINE
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
		if tok == lexer.NAME && val == "FILENAME" {
			spots = append(spots, offset(pos))
		}
		prev = tok
	}
	for i := len(spots) - 1; i >= 0; i-- {
		o := spots[i]
		if o >= 0 && o+8 <= len(src) && src[o:o+8] == "FILENAME" {
			src = src[:o] + awkFilenameFunc + "()" + src[o+8:]
		}
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
	funcs := map[string]any{awkFilenameFunc: func() string {
		if in.current == "-" {
			return ""
		}
		return in.current
	}}
	prog, err := parser.ParseProgram([]byte(rewriteFilename(progSrc)), &parser.ParserConfig{Funcs: funcs})
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), awkFilenameFunc+"()", "FILENAME")
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
