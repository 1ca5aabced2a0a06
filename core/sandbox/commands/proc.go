package commands

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func init() {
	register("timeout", "timeout [-s SIG] [-k DUR] DURATION COMMAND [ARG]...", runTimeout)
	register("expr", "expr EXPRESSION", runExpr)
}

func parseDuration(s string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, unit = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, unit = s[:len(s)-1], 24*time.Hour
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

func runTimeout(c *Cmd) int {
	args := c.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		switch {
		case (args[0] == "-s" || args[0] == "-k" || args[0] == "--signal" || args[0] == "--kill-after") && len(args) > 1:
			args = args[2:]
		case args[0] == "--preserve-status" || args[0] == "--foreground" || args[0] == "-v" || args[0] == "--verbose":
			args = args[1:]
		case strings.HasPrefix(args[0], "--signal=") || strings.HasPrefix(args[0], "--kill-after=") || strings.HasPrefix(args[0], "-s") || strings.HasPrefix(args[0], "-k"):
			args = args[1:]
		case args[0] == "--":
			args = args[1:]
			goto run
		default:
			return c.Usage(125, "invalid option -- '%s'", strings.TrimLeft(args[0], "-"))
		}
	}
run:
	if len(args) < 2 {
		return c.Usage(125, "missing operand")
	}
	d, ok := parseDuration(args[0])
	if !ok {
		c.Errorf("invalid time interval %s", q(args[0]))
		return 125
	}
	ctx := c.Ctx
	var cancel context.CancelFunc = func() {}
	if d > 0 {
		ctx, cancel = context.WithTimeout(c.Ctx, d)
	}
	defer cancel()
	st := c.Exec(ctx, Invocation{Args: args[1:], Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr})
	if ctx.Err() != nil && c.Ctx.Err() == nil {
		return 124
	}
	return st
}

// expr: a recursive-descent evaluator over the argument list.
type exprParser struct {
	args []string
	i    int
	err  error
}

func (p *exprParser) peek() string {
	if p.i < len(p.args) {
		return p.args[p.i]
	}
	return ""
}

func (p *exprParser) next() string {
	s := p.peek()
	p.i++
	return s
}

func exprNum(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func exprTrue(s string) bool { return s != "" && s != "0" && s != "-0" }

func (p *exprParser) or() string {
	l := p.and()
	for p.peek() == "|" {
		p.next()
		r := p.and()
		if !exprTrue(l) {
			l = r
		}
		if !exprTrue(l) {
			l = "0"
		}
	}
	return l
}

func (p *exprParser) and() string {
	l := p.cmp()
	for p.peek() == "&" {
		p.next()
		r := p.cmp()
		if !exprTrue(l) || !exprTrue(r) {
			l = "0"
		}
	}
	return l
}

func (p *exprParser) cmp() string {
	l := p.add()
	for {
		op := p.peek()
		switch op {
		case "<", "<=", "=", "==", "!=", ">=", ">":
		default:
			return l
		}
		p.next()
		r := p.add()
		var c int
		a, aok := exprNum(l)
		b, bok := exprNum(r)
		if aok && bok {
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		} else {
			c = strings.Compare(l, r)
		}
		res := false
		switch op {
		case "<":
			res = c < 0
		case "<=":
			res = c <= 0
		case "=", "==":
			res = c == 0
		case "!=":
			res = c != 0
		case ">=":
			res = c >= 0
		case ">":
			res = c > 0
		}
		l = map[bool]string{true: "1", false: "0"}[res]
	}
}

func (p *exprParser) arith(l, op, r string) string {
	a, aok := exprNum(l)
	b, bok := exprNum(r)
	if !aok || !bok {
		p.err = fmt.Errorf("non-integer argument")
		return "0"
	}
	switch op {
	case "+":
		return strconv.FormatInt(a+b, 10)
	case "-":
		return strconv.FormatInt(a-b, 10)
	case "*":
		return strconv.FormatInt(a*b, 10)
	}
	if b == 0 {
		p.err = fmt.Errorf("division by zero")
		return "0"
	}
	if op == "/" {
		return strconv.FormatInt(a/b, 10)
	}
	return strconv.FormatInt(a%b, 10)
}

func (p *exprParser) add() string {
	l := p.mul()
	for p.peek() == "+" || p.peek() == "-" {
		op := p.next()
		l = p.arith(l, op, p.mul())
	}
	return l
}

func (p *exprParser) mul() string {
	l := p.match()
	for p.peek() == "*" || p.peek() == "/" || p.peek() == "%" {
		op := p.next()
		l = p.arith(l, op, p.match())
	}
	return l
}

func (p *exprParser) regexMatch(s, re string) string {
	goRe, err := posixToGo(re, false)
	if err != nil {
		p.err = err
		return "0"
	}
	r, err := regexp.Compile("^(?:" + goRe + ")")
	if err != nil {
		p.err = err
		return "0"
	}
	m := r.FindStringSubmatch(s)
	if r.NumSubexp() > 0 {
		if m == nil {
			return ""
		}
		return m[1]
	}
	if m == nil {
		return "0"
	}
	return strconv.Itoa(utf8.RuneCountInString(m[0]))
}

func (p *exprParser) match() string {
	l := p.primary()
	for p.peek() == ":" {
		p.next()
		l = p.regexMatch(l, p.primary())
	}
	return l
}

func (p *exprParser) primary() string {
	if p.i >= len(p.args) {
		p.err = fmt.Errorf("syntax error: missing argument after %s", q(p.args[len(p.args)-1]))
		return ""
	}
	t := p.next()
	switch t {
	case "(":
		v := p.or()
		if p.next() != ")" {
			p.err = fmt.Errorf("syntax error: expecting ')'")
		}
		return v
	case "length":
		return strconv.Itoa(utf8.RuneCountInString(p.primary()))
	case "match":
		s := p.primary()
		return p.regexMatch(s, p.primary())
	case "substr":
		s, pos, n := []rune(p.primary()), p.primary(), p.primary()
		a, _ := exprNum(pos)
		b, _ := exprNum(n)
		if a < 1 || b < 1 || a > int64(len(s)) {
			return ""
		}
		end := min(int64(len(s)), a-1+b)
		return string(s[a-1 : end])
	case "index":
		s, chars := p.primary(), p.primary()
		i := strings.IndexAny(s, chars)
		if i < 0 {
			return "0"
		}
		return strconv.Itoa(utf8.RuneCountInString(s[:i]) + 1)
	case "+":
		return p.next()
	}
	return t
}

func runExpr(c *Cmd) int {
	args := c.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.Errorf("missing operand")
		return 2
	}
	p := &exprParser{args: args}
	v := p.or()
	if p.err == nil && p.i < len(args) {
		p.err = fmt.Errorf("syntax error: unexpected argument %s", q(args[p.i]))
	}
	if p.err != nil {
		c.Errorf("%v", p.err)
		if strings.Contains(p.err.Error(), "syntax") {
			return 2
		}
		return 2
	}
	fmt.Fprintln(c.Stdout, v)
	if exprTrue(v) {
		return 0
	}
	return 1
}
