package commands

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// bcState is a running bc.
type bcState struct {
	c       *Cmd
	w       io.Writer
	scale   int
	ibase   int
	obase   int
	last    num
	vars    []map[string]num // scopes: globals first, then auto frames
	arrays  []map[string]map[int64]num
	funcs   map[string]*bcNode
	lineLen int
	col     int
	steps   int64
	depth   int
	retVal  num
}

type bcSignal int

const (
	bcNone bcSignal = iota
	bcBreak
	bcContinue
	bcReturn
	bcQuit
)

type bcRuntimeError struct{ msg string }

func (e bcRuntimeError) Error() string { return e.msg }

func (st *bcState) fail(format string, a ...any) { panic(bcRuntimeError{fmt.Sprintf(format, a...)}) }

// maxBcScale bounds scale: digits are held in memory.
const maxBcScale = 100000

func (st *bcState) get(name string) num {
	switch name {
	case "scale":
		return newNum(int64(st.scale))
	case "ibase":
		return newNum(int64(st.ibase))
	case "obase":
		return newNum(int64(st.obase))
	case "last":
		return st.last
	}
	for i := len(st.vars) - 1; i >= 0; i-- {
		if v, ok := st.vars[i][name]; ok {
			return v
		}
	}
	return newNum(0)
}

func (st *bcState) set(name string, v num) {
	switch name {
	case "scale":
		n, ok := v.int64()
		if !ok || n < 0 || n > maxBcScale {
			st.fail("scale out of range")
		}
		st.scale = int(n)
		return
	case "ibase":
		n, _ := v.int64()
		st.ibase = int(min(max(n, 2), 16))
		return
	case "obase":
		n, ok := v.int64()
		if !ok || n < 2 || n > 999 {
			st.fail("obase out of range")
		}
		st.obase = int(n)
		return
	case "last":
		st.last = v
		return
	}
	for i := len(st.vars) - 1; i >= 1; i-- {
		if _, ok := st.vars[i][name]; ok {
			st.vars[i][name] = v
			return
		}
	}
	st.vars[0][name] = v
}

func (st *bcState) array(name string) map[int64]num {
	for i := len(st.arrays) - 1; i >= 1; i-- {
		if a, ok := st.arrays[i][name]; ok {
			return a
		}
	}
	a, ok := st.arrays[0][name]
	if !ok {
		a = map[int64]num{}
		st.arrays[0][name] = a
	}
	return a
}

func (st *bcState) index(n *bcNode) int64 {
	i, ok := st.eval(n).int64()
	if !ok || i < 0 || i > 16777215 {
		st.fail("Array %s subscript out of bounds.", n.val)
	}
	return i
}

func (st *bcState) tick() {
	st.steps++
	if st.steps&0x3ff == 0 && st.c.Cancelled() {
		panic(errBcStop)
	}
}

var errBcStop = errors.New("bc: stopped")

func (st *bcState) store(target *bcNode, v num) {
	if target.kind == "arr" {
		st.array(target.val)[st.index(target.a)] = v
		return
	}
	st.set(target.val, v)
}

func (st *bcState) load(target *bcNode) num {
	if target.kind == "arr" {
		if v, ok := st.array(target.val)[st.index(target.a)]; ok {
			return v
		}
		return newNum(0)
	}
	return st.get(target.val)
}

func (st *bcState) binary(op string, a, b num) num {
	var r num
	var err error
	switch op {
	case "+":
		r = bcAdd(a, b, false)
	case "-":
		r = bcAdd(a, b, true)
	case "*":
		r = bcMul(a, b, st.scale)
	case "/":
		r, err = bcDiv(a, b, st.scale)
	case "%":
		r, err = bcMod(a, b, st.scale)
	case "^":
		if b.scale > 0 && b.rescale(0).cmp(b) != 0 {
			fmt.Fprintf(st.c.Stderr, "Runtime warning (func=(main), adr=0): non-zero scale in exponent\n")
		}
		r, err = bcPow(a, b, st.scale)
	}
	if err != nil {
		st.fail("%s", err.Error())
	}
	if len(r.n.Bits()) > 1<<20 {
		st.fail("number too large")
	}
	return r
}

func bcBool(b bool) num {
	if b {
		return newNum(1)
	}
	return newNum(0)
}

func (st *bcState) eval(n *bcNode) num {
	st.tick()
	switch n.kind {
	case "num":
		return parseBcNumber(n.val, st.ibase)
	case "var", "arr":
		return st.load(n)
	case "paren":
		return st.eval(n.a)
	case "un":
		v := st.eval(n.a)
		if n.val == "!" {
			return bcBool(v.isZero())
		}
		return num{n: new(big.Int).Neg(v.n), scale: v.scale}
	case "pre", "post":
		old := st.load(n.a)
		d := newNum(1)
		nv := bcAdd(old, d, n.val == "--")
		st.store(n.a, nv)
		if n.kind == "pre" {
			return nv
		}
		return old
	case "assign":
		v := st.eval(n.b)
		if n.val != "=" {
			v = st.binary(n.val[:1], st.load(n.a), v)
		}
		st.store(n.a, v)
		return st.load(n.a)
	case "bin":
		switch n.val {
		case "&&":
			return bcBool(!st.eval(n.a).isZero() && !st.eval(n.b).isZero())
		case "||":
			return bcBool(!st.eval(n.a).isZero() || !st.eval(n.b).isZero())
		}
		a, b := st.eval(n.a), st.eval(n.b)
		switch n.val {
		case "==":
			return bcBool(a.cmp(b) == 0)
		case "!=":
			return bcBool(a.cmp(b) != 0)
		case "<":
			return bcBool(a.cmp(b) < 0)
		case "<=":
			return bcBool(a.cmp(b) <= 0)
		case ">":
			return bcBool(a.cmp(b) > 0)
		case ">=":
			return bcBool(a.cmp(b) >= 0)
		}
		return st.binary(n.val, a, b)
	case "call":
		return st.call(n)
	}
	st.fail("bad expression")
	return num{}
}

func (st *bcState) call(n *bcNode) num {
	args := n.list
	arg := func(i int) num {
		if i >= len(args) {
			st.fail("Parameter number mismatch")
		}
		return st.eval(args[i])
	}
	switch n.val {
	case "length":
		return newNum(int64(arg(0).length()))
	case "sqrt":
		r, err := bcSqrt(arg(0), st.scale)
		if err != nil {
			st.fail("%s", err.Error())
		}
		return r
	case "scale":
		return newNum(int64(arg(0).scale))
	case "read":
		st.fail("read() is not supported in the sandbox's bc")
	}
	f := st.funcs[n.val]
	if f == nil {
		if lf, ok := bcLibFuncs[n.val]; ok && st.funcs["\x00lib"] != nil {
			return lf(st, arg(0))
		}
		st.fail("Function %s not defined.", n.val)
	}
	if len(args) != len(f.names) {
		st.fail("Parameter number mismatch")
	}
	if st.depth > 1000 {
		st.fail("function call nesting too deep")
	}
	vars, arrays := map[string]num{}, map[string]map[int64]num{}
	for i, p := range f.names {
		if strings.HasSuffix(p, "[]") {
			if args[i].kind != "arrref" {
				st.fail("Parameter number mismatch")
			}
			cp := map[int64]num{}
			for k, v := range st.array(args[i].val) {
				cp[k] = v
			}
			arrays[strings.TrimSuffix(p, "[]")] = cp
			continue
		}
		vars[p] = st.eval(args[i])
	}
	for _, a := range f.autos {
		if strings.HasSuffix(a, "[]") {
			arrays[strings.TrimSuffix(a, "[]")] = map[int64]num{}
		} else {
			vars[a] = newNum(0)
		}
	}
	st.vars = append(st.vars, vars)
	st.arrays = append(st.arrays, arrays)
	st.depth++
	defer func() {
		st.vars = st.vars[:len(st.vars)-1]
		st.arrays = st.arrays[:len(st.arrays)-1]
		st.depth--
	}()
	st.retVal = newNum(0)
	if st.exec(f.a) == bcReturn {
		return st.retVal
	}
	return newNum(0)
}

func (st *bcState) out(s string) {
	// Long numbers wrap with a backslash at BC_LINE_LENGTH (70).
	for st.lineLen > 2 && st.col+len(s) > st.lineLen-2 && !strings.HasPrefix(s, "\n") {
		cut := st.lineLen - 2 - st.col
		if cut <= 0 {
			io.WriteString(st.w, "\\\n")
			st.col = 0
			continue
		}
		io.WriteString(st.w, s[:cut]+"\\\n")
		s = s[cut:]
		st.col = 0
	}
	io.WriteString(st.w, s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		st.col = len(s) - i - 1
	} else {
		st.col += len(s)
	}
}

// outRaw writes a string (strings are not wrapped).
func (st *bcState) outRaw(s string) {
	io.WriteString(st.w, s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		st.col = len(s) - i - 1
	} else {
		st.col += len(s)
	}
}

func bcEscapes(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\a`, "\a", `\b`, "\b", `\f`, "\f", `\r`, "\r", `\q`, `"`, `\e`, `\`)
	return r.Replace(s)
}

func (st *bcState) exec(n *bcNode) bcSignal {
	if n == nil {
		return bcNone
	}
	st.tick()
	switch n.kind {
	case "expr":
		v := st.eval(n.a)
		if n.a.kind != "assign" {
			st.out(v.format(st.obase))
			st.outRaw("\n")
			st.last = v
		}
	case "str":
		st.outRaw(n.val)
	case "print":
		for _, x := range n.list {
			if x.kind == "str" {
				st.outRaw(bcEscapes(x.val))
				continue
			}
			v := st.eval(x)
			st.out(v.format(st.obase))
			st.last = v
		}
	case "block":
		for _, s := range n.list {
			if sig := st.exec(s); sig != bcNone {
				return sig
			}
		}
	case "if":
		if !st.eval(n.a).isZero() {
			return st.exec(n.b)
		}
		return st.exec(n.c)
	case "while":
		for !st.eval(n.a).isZero() {
			sig := st.exec(n.b)
			if sig == bcBreak {
				break
			}
			if sig == bcReturn || sig == bcQuit {
				return sig
			}
		}
	case "for":
		if n.a != nil {
			st.eval(n.a)
		}
		for n.b == nil || !st.eval(n.b).isZero() {
			sig := st.exec(n.d)
			if sig == bcBreak {
				break
			}
			if sig == bcReturn || sig == bcQuit {
				return sig
			}
			if n.c != nil {
				st.eval(n.c)
			}
		}
	case "break":
		return bcBreak
	case "continue":
		return bcContinue
	case "return":
		if st.depth == 0 {
			st.fail("Return outside of a function.")
		}
		if n.a != nil {
			st.retVal = st.eval(n.a)
		} else {
			st.retVal = newNum(0)
		}
		return bcReturn
	case "quit", "halt":
		return bcQuit
	case "define":
		st.funcs[n.val] = n
	}
	return bcNone
}

func runBc(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "lqswhv", long: map[string]string{
		"mathlib": "l", "quiet": "q", "standard": "s", "warn": "w", "help": "h", "version": "v",
	}}, 1)
	if !ok {
		return code
	}
	if o.has("h") {
		fmt.Fprintln(c.Stdout, "usage: bc [-lqsw] [FILE]...\n  -l  the math library (s c a l e) and scale=20")
		return 0
	}
	if o.has("v") {
		fmt.Fprintln(c.Stdout, "bc (agentfs sandbox)")
		return 0
	}
	var src strings.Builder
	for _, f := range files {
		data, err := c.ReadAll(f)
		if err != nil {
			c.Errorf("File %s is unavailable.", f)
			return 1
		}
		src.Write(data)
		src.WriteByte('\n')
	}
	if data, err := c.ReadAllFrom(c.Stdin, 0); err == nil {
		src.Write(data)
	} else if IsWriteStop(err) {
		return 1
	}
	w := c.bufOut()
	st := &bcState{c: c, w: w, ibase: 10, obase: 10, last: newNum(0), lineLen: 70,
		vars: []map[string]num{{}}, arrays: []map[string]map[int64]num{{}}, funcs: map[string]*bcNode{}}
	if v := c.Getenv("BC_LINE_LENGTH"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			st.lineLen = n
		}
	}
	if o.has("l") {
		st.scale = 20
		st.funcs["\x00lib"] = &bcNode{}
	}
	status := bcRun(st, src.String())
	return exitWrite(c, w.Flush(), status)
}

// bcRun parses and runs src statement by statement, as bc does: what
// comes before a syntax error has run. It returns the exit status.
func bcRun(st *bcState, src string) (status int) {
	toks, lexErr := bcLex(src)
	p := &bcParser{toks: toks}
	for p.peek().kind != "eof" {
		var stmt *bcNode
		start := p.pos
		func() {
			defer func() {
				if r := recover(); r != nil {
					se, ok := r.(bcSyntaxError)
					if !ok {
						panic(r)
					}
					flushTo(st)
					// bc reports and goes on; its status stays 0.
					fmt.Fprintln(st.c.Stderr, se.Error())
					// Skip to the end of the line.
					for p.pos < len(p.toks)-1 && p.toks[p.pos].kind != "nl" {
						p.pos++
					}
					stmt = nil
				}
			}()
			stmt = p.statement()
		}()
		if p.pos == start && p.peek().kind != "eof" {
			p.next()
		}
		if stmt == nil {
			continue
		}
		sig, stop, failed := st.safeExec(stmt)
		if stop {
			return 1
		}
		if failed {
			// A runtime error drops the rest of its line, as in bc.
			for p.peek().kind != "nl" && p.peek().kind != "eof" {
				p.next()
			}
		}
		if sig == bcQuit {
			return status
		}
	}
	if lexErr != nil {
		flushTo(st)
		fmt.Fprintln(st.c.Stderr, lexErr.Error())
	}
	return status
}

func flushTo(st *bcState) {
	if f, ok := st.w.(interface{ Flush() error }); ok {
		f.Flush()
	}
}

// safeExec runs one top-level statement; a runtime error ends it with a
// message, as in bc, and the next statement runs.
func (st *bcState) safeExec(n *bcNode) (sig bcSignal, stop, failed bool) {
	defer func() {
		if r := recover(); r != nil {
			if r == errBcStop {
				stop = true
				return
			}
			re, ok := r.(bcRuntimeError)
			if !ok {
				panic(r)
			}
			flushTo(st)
			fmt.Fprintf(st.c.Stderr, "Runtime error (func=(main), adr=0): %s\n", re.msg)
			st.vars = st.vars[:1]
			st.arrays = st.arrays[:1]
			st.depth = 0
			sig, failed = bcNone, true
		}
	}()
	return st.exec(n), false, false
}
