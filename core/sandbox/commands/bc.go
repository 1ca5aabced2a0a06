package commands

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

func init() {
	register("bc", "bc [-lqsw] [FILE]...", runBc)
}

// bc: an arbitrary-precision calculator with GNU bc's arithmetic rules
// (scale of each operation, truncation, ibase/obase, line wrapping),
// variables, arrays, if/while/for, define/return/auto, print and
// strings, and the -l library (s c a l e, scale 20). Written here: no
// maintained Go implementation exists to pin.

// num is n / 10^scale.
type num struct {
	n     *big.Int
	scale int
}

var bigTen = big.NewInt(10)

func pow10(k int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(k)), nil) }

func newNum(i int64) num { return num{n: big.NewInt(i)} }

// rescale gives x the scale s (truncating toward zero).
func (x num) rescale(s int) num {
	switch {
	case s == x.scale:
		return x
	case s > x.scale:
		return num{n: new(big.Int).Mul(x.n, pow10(s-x.scale)), scale: s}
	}
	return num{n: new(big.Int).Quo(x.n, pow10(x.scale-s)), scale: s}
}

func (x num) isZero() bool { return x.n.Sign() == 0 }

func (x num) cmp(y num) int {
	s := max(x.scale, y.scale)
	return x.rescale(s).n.Cmp(y.rescale(s).n)
}

func (x num) int64() (int64, bool) {
	i := x.rescale(0).n
	if !i.IsInt64() {
		return 0, false
	}
	return i.Int64(), true
}

func bcAdd(x, y num, sub bool) num {
	s := max(x.scale, y.scale)
	a, b := x.rescale(s).n, y.rescale(s).n
	if sub {
		return num{n: new(big.Int).Sub(a, b), scale: s}
	}
	return num{n: new(big.Int).Add(a, b), scale: s}
}

func bcMul(x, y num, scale int) num {
	p := num{n: new(big.Int).Mul(x.n, y.n), scale: x.scale + y.scale}
	return p.rescale(min(x.scale+y.scale, max(scale, x.scale, y.scale)))
}

var errDivZero = errors.New("Divide by zero")

func bcDiv(x, y num, scale int) (num, error) {
	if y.isZero() {
		return num{}, errDivZero
	}
	// x/y at scale: x.n*10^(scale+y.scale) / (y.n*10^x.scale)
	a := new(big.Int).Mul(x.n, pow10(scale+y.scale))
	b := new(big.Int).Mul(y.n, pow10(x.scale))
	return num{n: a.Quo(a, b), scale: scale}, nil
}

func bcMod(x, y num, scale int) (num, error) {
	q, err := bcDiv(x, y, scale)
	if err != nil {
		return num{}, err
	}
	s := max(scale+y.scale, x.scale)
	return bcAdd(x.rescale(s), bcMul(q, y, s).rescale(s), true), nil
}

// maxBcExponent bounds x^n: the result is held in memory.
const maxBcExponent = 1 << 20

func bcPow(x, y num, scale int) (num, error) {
	e, ok := y.int64()
	if !ok || e > maxBcExponent || e < -maxBcExponent {
		return num{}, errors.New("exponent too large in raise")
	}
	if e == 0 {
		return newNum(1), nil
	}
	neg := e < 0
	if neg {
		e = -e
	}
	p := num{n: new(big.Int).Exp(x.n, big.NewInt(e), nil), scale: x.scale * int(e)}
	if neg {
		return bcDiv(newNum(1), p, scale)
	}
	return p.rescale(min(x.scale*int(e), max(scale, x.scale))), nil
}

func bcSqrt(x num, scale int) (num, error) {
	if x.n.Sign() < 0 {
		return num{}, errors.New("Square root of a negative number")
	}
	rs := max(scale, x.scale)
	v := new(big.Int).Mul(x.n, pow10(2*rs-x.scale))
	return num{n: v.Sqrt(v), scale: rs}, nil
}

// length is the count of significant digits.
func (x num) length() int {
	if x.isZero() {
		return max(1, x.scale)
	}
	s := new(big.Int).Abs(x.n).String()
	return max(len(s), x.scale)
}

// parseBcNumber reads a literal in base ibase; a lone digit keeps its
// value whatever the base, as in GNU bc.
func parseBcNumber(lit string, ibase int) num {
	if len(lit) == 1 {
		return newNum(int64(digitVal(lit[0])))
	}
	intPart, frac, _ := strings.Cut(lit, ".")
	n := new(big.Int)
	b := big.NewInt(int64(ibase))
	for i := 0; i < len(intPart); i++ {
		n.Mul(n, b)
		n.Add(n, big.NewInt(int64(digitVal(intPart[i]))))
	}
	r := num{n: n}
	if frac == "" {
		return r
	}
	// Other bases: the fraction's value at the scale of its digits.
	fn, fd := new(big.Int), big.NewInt(1)
	for i := 0; i < len(frac); i++ {
		fn.Mul(fn, b)
		fn.Add(fn, big.NewInt(int64(digitVal(frac[i]))))
		fd.Mul(fd, b)
	}
	fv, _ := bcDiv(num{n: fn}, num{n: fd}, len(frac))
	return bcAdd(r, fv, false)
}

func digitVal(c byte) int {
	if c >= '0' && c <= '9' {
		return int(c - '0')
	}
	return int(c-'A') + 10
}

// format prints x in base obase as bc does.
func (x num) format(obase int) string {
	if x.isZero() {
		return "0"
	}
	neg := x.n.Sign() < 0
	abs := num{n: new(big.Int).Abs(x.n), scale: x.scale}
	ip := abs.rescale(0).n
	fp := bcAdd(abs, num{n: ip}, true) // fraction, scale x.scale
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if obase == 10 {
		if ip.Sign() != 0 || x.scale == 0 {
			b.WriteString(ip.String())
		}
		if x.scale > 0 {
			f := fp.n.String()
			b.WriteByte('.')
			b.WriteString(strings.Repeat("0", x.scale-len(f)) + f)
		}
		if b.String() == "-" || b.String() == "" {
			return "0"
		}
		return b.String()
	}
	digit := func(d int64, first bool) string {
		if obase <= 16 {
			return string("0123456789ABCDEF"[d])
		}
		w := len(fmt.Sprint(obase - 1))
		s := fmt.Sprintf("%0*d", w, d)
		if first {
			return " " + s
		}
		return " " + s
	}
	if ip.Sign() != 0 || x.scale == 0 {
		var ds []string
		ob := big.NewInt(int64(obase))
		v := new(big.Int).Set(ip)
		m := new(big.Int)
		for v.Sign() > 0 {
			v.QuoRem(v, ob, m)
			ds = append(ds, digit(m.Int64(), false))
		}
		if len(ds) == 0 {
			ds = []string{digit(0, true)}
		}
		for i := len(ds) - 1; i >= 0; i-- {
			b.WriteString(ds[i])
		}
	}
	if x.scale > 0 {
		b.WriteByte('.')
		// Digits until their place value is below 10^-scale.
		place := big.NewInt(1)
		limit := pow10(x.scale)
		f := fp
		for place.Cmp(limit) < 0 {
			f = num{n: new(big.Int).Mul(f.n, big.NewInt(int64(obase))), scale: f.scale}
			d := f.rescale(0).n
			b.WriteString(digit(d.Int64(), false))
			f = bcAdd(f, num{n: d}, true)
			place.Mul(place, big.NewInt(int64(obase)))
		}
	}
	return b.String()
}

// ---- lexer

type bcTok struct {
	kind string // "num", "name", "str", "op", "nl", "eof"
	val  string
	line int
}

func bcLex(src string) (toks []bcTok, err error) {
	// What was read before an error runs, as in bc: the tokens always
	// end with "eof".
	defer func() {
		if err != nil {
			toks = append(toks, bcTok{"eof", "", 0})
		}
	}()
	line := 1
	for i := 0; i < len(src); {
		ch := src[i]
		switch {
		case ch == '\n':
			toks = append(toks, bcTok{"nl", "\n", line})
			line++
			i++
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
		case ch == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			line++
		case ch == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return toks, fmt.Errorf("(standard_in) %d: comment not terminated", line)
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
		case ch == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return toks, fmt.Errorf("(standard_in) %d: string not terminated", line)
			}
			s := src[i+1 : i+1+end]
			toks = append(toks, bcTok{"str", s, line})
			line += strings.Count(s, "\n")
			i += end + 2
		case ch >= '0' && ch <= '9' || (ch >= 'A' && ch <= 'F') || ch == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			dot := false
			for j < len(src) {
				c := src[j]
				if c >= '0' && c <= '9' || c >= 'A' && c <= 'F' {
					j++
				} else if c == '.' && !dot {
					dot = true
					j++
				} else if c == '\\' && j+1 < len(src) && src[j+1] == '\n' {
					j += 2
					line++
				} else {
					break
				}
			}
			toks = append(toks, bcTok{"num", strings.ReplaceAll(src[i:j], "\\\n", ""), line})
			i = j
		case ch == '.':
			toks = append(toks, bcTok{"name", "last", line})
			i++
		case ch >= 'a' && ch <= 'z' || ch == '_':
			j := i
			for j < len(src) && (src[j] >= 'a' && src[j] <= 'z' || src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
				j++
			}
			toks = append(toks, bcTok{"name", src[i:j], line})
			i = j
		default:
			op := ""
			for _, o := range []string{"++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "==", "!=", "<=", ">=", "&&", "||"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("+-*/%^=<>!(){}[];,", rune(ch)) {
					return toks, fmt.Errorf("(standard_in) %d: illegal character: %c", line, ch)
				}
				op = string(ch)
			}
			toks = append(toks, bcTok{"op", op, line})
			i += len(op)
		}
	}
	toks = append(toks, bcTok{"eof", "", line})
	return toks, nil
}

// ---- parser: statements and expressions as closures over the state

type bcNode struct {
	kind  string // num var arr call bin un assign pre post str print block if while for break continue return quit halt expr define
	val   string
	a, b  *bcNode
	c, d  *bcNode
	list  []*bcNode
	names []string // define: params; auto
	autos []string
}

type bcParser struct {
	toks []bcTok
	pos  int
}

type bcSyntaxError struct{ line int }

func (e bcSyntaxError) Error() string { return fmt.Sprintf("(standard_in) %d: syntax error", e.line) }

func (p *bcParser) peek() bcTok { return p.toks[p.pos] }
func (p *bcParser) next() bcTok {
	t := p.toks[p.pos]
	if t.kind != "eof" {
		p.pos++
	}
	return t
}
func (p *bcParser) isOp(v string) bool {
	t := p.peek()
	return t.kind == "op" && t.val == v
}
func (p *bcParser) expectOp(v string) {
	if !p.isOp(v) {
		panic(bcSyntaxError{p.peek().line})
	}
	p.next()
}
func (p *bcParser) isName(v string) bool {
	t := p.peek()
	return t.kind == "name" && t.val == v
}
func (p *bcParser) skipNL() {
	for p.peek().kind == "nl" {
		p.next()
	}
}

// blockRest parses statements up to the closing brace.
func (p *bcParser) blockRest() *bcNode {
	var list []*bcNode
	for {
		p.skipNL()
		if p.isOp("}") {
			p.next()
			return &bcNode{kind: "block", list: list}
		}
		if p.peek().kind == "eof" {
			panic(bcSyntaxError{p.peek().line})
		}
		if s := p.statement(); s != nil {
			list = append(list, s)
		}
	}
}

var bcKeywords = map[string]bool{"if": true, "else": true, "while": true, "for": true, "break": true, "continue": true,
	"define": true, "return": true, "auto": true, "quit": true, "halt": true, "print": true, "length": true,
	"sqrt": true, "scale": false, "ibase": false, "obase": false, "last": false, "read": true, "limits": true}

// statement parses one statement (nil for an empty one).
func (p *bcParser) statement() *bcNode {
	t := p.peek()
	switch {
	case t.kind == "nl" || t.kind == "op" && t.val == ";":
		p.next()
		return nil
	case t.kind == "str":
		p.next()
		return &bcNode{kind: "str", val: t.val}
	case t.kind == "op" && t.val == "{":
		p.next()
		return p.blockRest()
	case t.kind == "name":
		switch t.val {
		case "if":
			p.next()
			p.expectOp("(")
			cond := p.expr()
			p.expectOp(")")
			p.skipNL()
			body := p.statement()
			n := &bcNode{kind: "if", a: cond, b: body}
			save := p.pos
			p.skipNL()
			if p.isName("else") {
				p.next()
				p.skipNL()
				n.c = p.statement()
			} else {
				p.pos = save
			}
			return n
		case "while":
			p.next()
			p.expectOp("(")
			cond := p.expr()
			p.expectOp(")")
			p.skipNL()
			return &bcNode{kind: "while", a: cond, b: p.statement()}
		case "for":
			p.next()
			p.expectOp("(")
			var init, cond, step *bcNode
			if !p.isOp(";") {
				init = p.expr()
			}
			p.expectOp(";")
			if !p.isOp(";") {
				cond = p.expr()
			}
			p.expectOp(";")
			if !p.isOp(")") {
				step = p.expr()
			}
			p.expectOp(")")
			p.skipNL()
			return &bcNode{kind: "for", a: init, b: cond, c: step, d: p.statement()}
		case "break", "continue", "quit", "halt":
			p.next()
			return &bcNode{kind: t.val}
		case "return":
			p.next()
			n := &bcNode{kind: "return"}
			if p.isOp("(") || (p.peek().kind != "nl" && !p.isOp(";") && !p.isOp("}") && p.peek().kind != "eof") {
				n.a = p.expr()
			}
			return n
		case "print":
			p.next()
			n := &bcNode{kind: "print"}
			for {
				if p.peek().kind == "str" {
					n.list = append(n.list, &bcNode{kind: "str", val: p.next().val})
				} else {
					n.list = append(n.list, p.expr())
				}
				if !p.isOp(",") {
					return n
				}
				p.next()
			}
		case "define":
			p.next()
			name := p.next()
			if name.kind != "name" {
				panic(bcSyntaxError{name.line})
			}
			p.expectOp("(")
			n := &bcNode{kind: "define", val: name.val}
			for !p.isOp(")") {
				a := p.next()
				if a.kind != "name" {
					panic(bcSyntaxError{a.line})
				}
				if p.isOp("[") {
					p.next()
					p.expectOp("]")
					n.names = append(n.names, a.val+"[]")
				} else {
					n.names = append(n.names, a.val)
				}
				if p.isOp(",") {
					p.next()
				}
			}
			p.next()
			p.skipNL()
			if !p.isOp("{") {
				panic(bcSyntaxError{p.peek().line})
			}
			p.next()
			p.skipNL()
			if p.isName("auto") {
				p.next()
				for {
					a := p.next()
					if a.kind != "name" {
						panic(bcSyntaxError{a.line})
					}
					if p.isOp("[") {
						p.next()
						p.expectOp("]")
						n.autos = append(n.autos, a.val+"[]")
					} else {
						n.autos = append(n.autos, a.val)
					}
					if !p.isOp(",") {
						break
					}
					p.next()
				}
			}
			n.a = p.blockRest()
			return n
		}
	}
	e := p.expr()
	return &bcNode{kind: "expr", a: e}
}

func (p *bcParser) expr() *bcNode { return p.orExpr() }

func (p *bcParser) orExpr() *bcNode {
	n := p.andExpr()
	for p.isOp("||") {
		p.next()
		n = &bcNode{kind: "bin", val: "||", a: n, b: p.andExpr()}
	}
	return n
}

func (p *bcParser) andExpr() *bcNode {
	n := p.notExpr()
	for p.isOp("&&") {
		p.next()
		n = &bcNode{kind: "bin", val: "&&", a: n, b: p.notExpr()}
	}
	return n
}

func (p *bcParser) notExpr() *bcNode {
	if p.isOp("!") {
		p.next()
		return &bcNode{kind: "un", val: "!", a: p.notExpr()}
	}
	return p.relExpr()
}

func (p *bcParser) relExpr() *bcNode {
	n := p.assignExpr()
	for _, op := range []string{"==", "!=", "<", "<=", ">", ">="} {
		if p.isOp(op) {
			p.next()
			return &bcNode{kind: "bin", val: op, a: n, b: p.assignExpr()}
		}
	}
	return n
}

func (p *bcParser) assignExpr() *bcNode {
	n := p.addExpr()
	if n.kind == "var" || n.kind == "arr" {
		for _, op := range []string{"=", "+=", "-=", "*=", "/=", "%=", "^="} {
			if p.isOp(op) {
				p.next()
				return &bcNode{kind: "assign", val: op, a: n, b: p.assignExpr()}
			}
		}
	}
	return n
}

func (p *bcParser) addExpr() *bcNode {
	n := p.mulExpr()
	for p.isOp("+") || p.isOp("-") {
		op := p.next().val
		n = &bcNode{kind: "bin", val: op, a: n, b: p.mulExpr()}
	}
	return n
}

func (p *bcParser) mulExpr() *bcNode {
	n := p.powExpr()
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.next().val
		n = &bcNode{kind: "bin", val: op, a: n, b: p.powExpr()}
	}
	return n
}

func (p *bcParser) powExpr() *bcNode {
	n := p.unary()
	if p.isOp("^") {
		p.next()
		return &bcNode{kind: "bin", val: "^", a: n, b: p.powExpr()}
	}
	return n
}

func (p *bcParser) unary() *bcNode {
	if p.isOp("-") {
		p.next()
		return &bcNode{kind: "un", val: "-", a: p.unary()}
	}
	if p.isOp("++") || p.isOp("--") {
		op := p.next().val
		v := p.primary()
		if v.kind != "var" && v.kind != "arr" {
			panic(bcSyntaxError{p.peek().line})
		}
		return &bcNode{kind: "pre", val: op, a: v}
	}
	v := p.primary()
	if (v.kind == "var" || v.kind == "arr") && (p.isOp("++") || p.isOp("--")) {
		return &bcNode{kind: "post", val: p.next().val, a: v}
	}
	return v
}

func (p *bcParser) primary() *bcNode {
	t := p.next()
	switch t.kind {
	case "num":
		return &bcNode{kind: "num", val: t.val}
	case "op":
		if t.val == "(" {
			e := p.expr()
			p.expectOp(")")
			if e.kind == "assign" {
				return &bcNode{kind: "paren", a: e}
			}
			return e
		}
	case "name":
		if bcKeywords[t.val] && t.val != "length" && t.val != "sqrt" && t.val != "read" {
			break
		}
		if p.isOp("(") {
			p.next()
			n := &bcNode{kind: "call", val: t.val}
			for !p.isOp(")") {
				if p.peek().kind == "name" && p.toks[p.pos+1].kind == "op" && p.toks[p.pos+1].val == "[" &&
					p.toks[p.pos+2].kind == "op" && p.toks[p.pos+2].val == "]" {
					n.list = append(n.list, &bcNode{kind: "arrref", val: p.next().val})
					p.next()
					p.next()
				} else {
					n.list = append(n.list, p.expr())
				}
				if p.isOp(",") {
					p.next()
				} else if !p.isOp(")") {
					panic(bcSyntaxError{p.peek().line})
				}
			}
			p.next()
			return n
		}
		if p.isOp("[") {
			p.next()
			idx := p.expr()
			p.expectOp("]")
			return &bcNode{kind: "arr", val: t.val, a: idx}
		}
		return &bcNode{kind: "var", val: t.val}
	}
	panic(bcSyntaxError{t.line})
}
