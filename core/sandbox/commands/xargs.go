package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

func init() {
	register("xargs", "xargs [-0] [-d DELIM] [-n N] [-L N] [-I REPL] [-r] [-t] [-a FILE] [COMMAND [ARG]...]", runXargs)
}

// splitXargs splits input as xargs does by default: blanks separate
// arguments; single and double quotes and backslashes quote.
func splitXargs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				return nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", map[byte]string{'\'': "single", '"': "double"}[ch])
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inArg = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inArg = true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f':
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(ch)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out, nil
}

func runXargs(c *Cmd) int {
	o, cmd, code, ok := c.parseOpts(spec{short: "0d:n:L:I:i::rta:s:P:x", noPermute: true, long: map[string]string{
		"null": "0", "delimiter=": "d", "max-args=": "n", "max-lines=": "L", "replace=": "I", "no-run-if-empty": "r",
		"verbose": "t", "arg-file=": "a", "max-chars=": "s", "max-procs=": "P", "exit": "x",
	}}, 1)
	if !ok {
		return code
	}
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	var in io.Reader = c.Stdin
	if a, ok := o.val("a"); ok {
		f, err := c.Open(a, true)
		if err != nil {
			c.PathError(a, err)
			return 1
		}
		defer f.Close()
		in = f
	}
	data, err := c.ReadAllFrom(in, 0)
	if err != nil {
		return c.Fail("read error: %s", ErrText(err))
	}
	text := string(data)
	repl, hasRepl := o.val("I")
	if v, ok := o.val("i"); ok && !hasRepl {
		repl, hasRepl = v, true
		if repl == "" {
			repl = "{}"
		}
	}
	var items []string
	perLines := 0
	switch {
	case o.has("0"):
		items = strings.Split(text, "\x00")
		if len(items) > 0 && items[len(items)-1] == "" {
			items = items[:len(items)-1]
		}
	case o.has("d"):
		d, _ := o.val("d")
		d = unescapeC(d)
		items = strings.Split(text, d)
		if len(items) > 0 && items[len(items)-1] == "" || len(items) > 0 && items[len(items)-1] == "\n" && d != "\n" {
			items = items[:len(items)-1]
		}
	case hasRepl:
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			l = strings.TrimLeft(l, " \t")
			if l != "" {
				items = append(items, l)
			}
		}
		if text == "" {
			items = nil
		}
	case o.has("L"):
		v, _ := o.val("L")
		perLines, _ = strconv.Atoi(v)
		if perLines < 1 {
			return c.Fail("value %s for -L option should be >= 1", q(v))
		}
		var err error
		if items, err = splitXargs(text); err != nil {
			return c.Fail("%v", err)
		}
	default:
		var err error
		if items, err = splitXargs(text); err != nil {
			c.Errorf("%v", err)
			return 1
		}
	}
	maxArgs := 0
	if v, ok := o.val("n"); ok {
		maxArgs, _ = strconv.Atoi(v)
		if maxArgs < 1 {
			return c.Fail("value %s for -n option should be >= 1", q(v))
		}
	}
	if perLines > 0 {
		// -L N: N input lines per command.
		var groups [][]string
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for i := 0; i < len(lines); i += perLines {
			var g []string
			for _, l := range lines[i:min(i+perLines, len(lines))] {
				parts, _ := splitXargs(l)
				g = append(g, parts...)
			}
			if len(g) > 0 {
				groups = append(groups, g)
			}
		}
		return c.xargsRun(cmd, groups, o.has("t"))
	}
	var groups [][]string
	switch {
	case hasRepl:
		for _, it := range items {
			argv := make([]string, len(cmd))
			for i, a := range cmd {
				argv[i] = strings.ReplaceAll(a, repl, it)
			}
			groups = append(groups, argv)
		}
		return c.xargsRunFull(groups, o.has("t"))
	case maxArgs > 0:
		for i := 0; i < len(items); i += maxArgs {
			groups = append(groups, items[i:min(i+maxArgs, len(items))])
		}
	default:
		if len(items) > 0 || !o.has("r") {
			groups = [][]string{items}
		}
	}
	return c.xargsRun(cmd, groups, o.has("t"))
}

func (c *Cmd) xargsRun(cmd []string, groups [][]string, trace bool) int {
	var full [][]string
	for _, g := range groups {
		full = append(full, append(append([]string{}, cmd...), g...))
	}
	return c.xargsRunFull(full, trace)
}

func (c *Cmd) xargsRunFull(cmds [][]string, trace bool) int {
	status := 0
	for _, argv := range cmds {
		if c.Cancelled() {
			return 1
		}
		if trace {
			fmt.Fprintln(c.Stderr, strings.Join(argv, " "))
		}
		st := c.Exec(c.Ctx, Invocation{Args: argv, Stdin: eofReader{}, Stdout: c.Stdout, Stderr: c.Stderr})
		switch {
		case st == 255:
			c.Errorf("%s: exited with status 255; aborting", argv[0])
			return 124
		case st == 127 || st == 126:
			return st
		case st != 0:
			status = 123
		}
	}
	return status
}

// unescapeC interprets \n, \t, \0, \\ and \xHH.
func unescapeC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		case '\\':
			b.WriteByte('\\')
		case 'x':
			if i+2 < len(s)+0 && i+2 <= len(s)-1 {
				if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
