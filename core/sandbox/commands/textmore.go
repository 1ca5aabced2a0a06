package commands

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

func init() {
	register("comm", "comm [-123] FILE1 FILE2", runComm)
	register("paste", "paste [-s] [-d LIST] [FILE]...", runPaste)
	register("fold", "fold [-s] [-w WIDTH] [FILE]...", runFold)
	register("expand", "expand [-t N] [FILE]...", runExpand)
	register("unexpand", "unexpand [-a] [-t N] [FILE]...", runUnexpand)
	register("column", "column [-t] [-s SEP] [-o SEP] [FILE]...", runColumn)
	register("join", "join [-t CHAR] [-1 F] [-2 F] [-a 1|2] [-v 1|2] FILE1 FILE2", runJoin)
	register("strings", "strings [-n MIN] [FILE]...", runStrings)
	register("od", "od [-A d|o|x|n] [-t x1|o1|c|d1] [-c] [-x] [-b] [-v] [FILE]...", runOd)
}

func (c *Cmd) readLines(name string) ([]string, error) {
	data, err := c.ReadAll(name)
	if err != nil {
		return nil, err
	}
	return SplitLines(data), nil
}

func runComm(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "123", long: map[string]string{"output-delimiter=": "d"}}, 1)
	if !ok {
		return code
	}
	if len(args) != 2 {
		return c.Usage(1, "missing operand")
	}
	a, err := c.readLines(args[0])
	if err != nil {
		c.PathError(args[0], err)
		return 1
	}
	b, err := c.readLines(args[1])
	if err != nil {
		c.PathError(args[1], err)
		return 1
	}
	sep, _ := o.val("d")
	if !o.has("d") {
		sep = "\t"
	}
	show := []bool{!o.has("1"), !o.has("2"), !o.has("3")}
	w := c.bufOut()
	col := func(n int, s string) {
		if !show[n] {
			return
		}
		for i := 0; i < n; i++ {
			if show[i] {
				w.WriteString(sep)
			}
		}
		w.WriteString(s + "\n")
	}
	// As GNU comm, check the order and say so (the output is still made).
	status := 0
	for n, lines := range [][]string{a, b} {
		for k := 1; k < len(lines); k++ {
			if lines[k] < lines[k-1] {
				w.Flush()
				c.Errorf("file %d is not in sorted order", n+1)
				status = 1
				break
			}
		}
	}
	defer func() {
		if status != 0 {
			c.Errorf("input is not in sorted order")
		}
	}()
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || i < len(a) && a[i] < b[j]:
			col(0, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			col(1, b[j])
			j++
		default:
			col(2, a[i])
			i++
			j++
		}
	}
	return exitWrite(c, w.Flush(), status)
}

func runPaste(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "sd:z", long: map[string]string{"serial": "s", "delimiters=": "d"}}, 1)
	if !ok {
		return code
	}
	delims := []string{"\t"}
	if d, ok := o.val("d"); ok {
		delims = nil
		d = unescapeC(d)
		for _, r := range d {
			delims = append(delims, string(r))
		}
		if len(delims) == 0 {
			delims = []string{""}
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	// Standard input named several times is dealt out line by line.
	dashes := 0
	for _, f := range files {
		if f == "-" {
			dashes++
		}
	}
	var stdinLines []string
	if dashes > 0 {
		data, err := c.ReadAllFrom(c.Stdin, 0)
		if err != nil {
			c.PathError("-", err)
			return 1
		}
		stdinLines = SplitLines(data)
	}
	var cols [][]string
	dash := 0
	for _, f := range files {
		if f == "-" {
			var lines []string
			for k := dash; k < len(stdinLines); k += dashes {
				lines = append(lines, stdinLines[k])
			}
			dash++
			cols = append(cols, lines)
			continue
		}
		lines, err := c.readLines(f)
		if err != nil {
			c.PathError(f, err)
			return 1
		}
		cols = append(cols, lines)
	}
	w := c.bufOut()
	if o.has("s") {
		for _, lines := range cols {
			for i, l := range lines {
				if i > 0 {
					w.WriteString(delims[(i-1)%len(delims)])
				}
				w.WriteString(l)
			}
			w.WriteString("\n")
		}
		return exitWrite(c, w.Flush(), 0)
	}
	rows := 0
	for _, col := range cols {
		rows = max(rows, len(col))
	}
	for r := 0; r < rows; r++ {
		for i, col := range cols {
			if i > 0 {
				w.WriteString(delims[(i-1)%len(delims)])
			}
			if r < len(col) {
				w.WriteString(col[r])
			}
		}
		w.WriteString("\n")
	}
	return exitWrite(c, w.Flush(), 0)
}

func runFold(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "sbw:", long: map[string]string{"spaces": "s", "bytes": "b", "width=": "w"}}, 1)
	if !ok {
		return code
	}
	width := 80
	if v, ok := o.val("w"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c.Fail("invalid number of columns: %s", q(v))
		}
		width = n
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, noEOL bool) error {
			for len(line) > width {
				cut := width
				if o.has("s") {
					if i := strings.LastIndexAny(line[:width], " \t"); i >= 0 {
						cut = i + 1
					}
				}
				w.WriteString(line[:cut] + "\n")
				line = line[cut:]
			}
			w.WriteString(line)
			if !noEOL {
				w.WriteString("\n")
			}
			return nil
		})
	})
	return exitWrite(c, w.Flush(), status)
}

func tabStops(o *opts) (int, bool) {
	v, ok := o.val("t")
	if !ok {
		return 8, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0
}

func runExpand(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "t:i", long: map[string]string{"tabs=": "t", "initial": "i"}}, 1)
	if !ok {
		return code
	}
	tab, good := tabStops(o)
	if !good {
		return c.Fail("tab size must be a positive number")
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, noEOL bool) error {
			col := 0
			leading := true
			for _, ch := range line {
				if ch == '\t' && (leading || !o.has("i")) {
					n := tab - col%tab
					w.WriteString(strings.Repeat(" ", n))
					col += n
					continue
				}
				if ch != ' ' {
					leading = false
				}
				w.WriteRune(ch)
				col++
			}
			if !noEOL {
				w.WriteString("\n")
			}
			return nil
		})
	})
	return exitWrite(c, w.Flush(), status)
}

func runUnexpand(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "at:", long: map[string]string{"all": "a", "tabs=": "t", "first-only": "f"}}, 1)
	if !ok {
		return code
	}
	tab, good := tabStops(o)
	if !good {
		return c.Fail("tab size must be a positive number")
	}
	all := o.has("a") || o.has("t")
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, noEOL bool) error {
			var b strings.Builder
			col, spaces := 0, 0
			leading := true
			flush := func() {
				b.WriteString(strings.Repeat(" ", spaces))
				spaces = 0
			}
			for _, ch := range line {
				if ch == ' ' && (leading || all) {
					spaces++
					col++
					if col%tab == 0 {
						if spaces > 1 {
							b.WriteByte('\t')
						} else {
							b.WriteByte(' ')
						}
						spaces = 0
					}
					continue
				}
				flush()
				if ch == '\t' {
					col += tab - col%tab
				} else {
					col++
					leading = false
				}
				b.WriteRune(ch)
			}
			flush()
			w.WriteString(b.String())
			if !noEOL {
				w.WriteString("\n")
			}
			return nil
		})
	})
	return exitWrite(c, w.Flush(), status)
}

func runColumn(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "ts:o:", long: map[string]string{"table": "t", "separator=": "s", "output-separator=": "o"}}, 1)
	if !ok {
		return code
	}
	if !o.has("t") {
		return c.Usage(1, "only table mode (-t) is supported in the sandbox")
	}
	seps, hasSep := o.val("s")
	outSep, hasOut := o.val("o")
	if !hasOut {
		outSep = "  "
	}
	var rows [][]string
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, _ bool) error {
			var f []string
			if hasSep {
				f = strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(seps, r) })
			} else {
				f = strings.Fields(line)
			}
			if len(f) > 0 {
				rows = append(rows, f)
			}
			return nil
		})
	})
	var widths []int
	for _, r := range rows {
		for i, f := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(f))
		}
	}
	w := c.bufOut()
	for _, r := range rows {
		for i, f := range r {
			if i == len(r)-1 {
				w.WriteString(f)
				break
			}
			w.WriteString(f + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(f)) + outSep)
		}
		w.WriteString("\n")
	}
	return exitWrite(c, w.Flush(), status)
}

func runJoin(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "t:1:2:a:v:j:i", long: map[string]string{"ignore-case": "i"}}, 1)
	if !ok {
		return code
	}
	if len(args) != 2 {
		return c.Usage(1, "missing operand")
	}
	sep, hasSep := o.val("t")
	field := func(k string) int {
		v, ok := o.val(k)
		if !ok {
			v, ok = o.val("j")
		}
		if !ok {
			return 1
		}
		n, _ := strconv.Atoi(v)
		return max(n, 1)
	}
	f1, f2 := field("1"), field("2")
	split := func(l string) []string {
		if hasSep {
			return strings.Split(l, sep)
		}
		return strings.Fields(l)
	}
	outSep := " "
	if hasSep {
		outSep = sep
	}
	a, err := c.readLines(args[0])
	if err != nil {
		c.PathError(args[0], err)
		return 1
	}
	b, err := c.readLines(args[1])
	if err != nil {
		c.PathError(args[1], err)
		return 1
	}
	key := func(fs []string, n int) string {
		if n-1 < len(fs) {
			if o.has("i") {
				return strings.ToLower(fs[n-1])
			}
			return fs[n-1]
		}
		return ""
	}
	rest := func(fs []string, n int) []string {
		var out []string
		for i, f := range fs {
			if i != n-1 {
				out = append(out, f)
			}
		}
		return out
	}
	unpaired := map[string]bool{}
	for _, v := range o.vals("a") {
		unpaired[v] = true
	}
	only := map[string]bool{}
	for _, v := range o.vals("v") {
		only[v] = true
	}
	w := c.bufOut()
	emit := func(k string, parts ...[]string) {
		line := []string{k}
		for _, p := range parts {
			line = append(line, p...)
		}
		w.WriteString(strings.Join(line, outSep) + "\n")
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var fa, fb []string
		if i < len(a) {
			fa = split(a[i])
		}
		if j < len(b) {
			fb = split(b[j])
		}
		switch {
		case j >= len(b) || i < len(a) && key(fa, f1) < key(fb, f2):
			if unpaired["1"] || only["1"] {
				emit(fa[min(f1, len(fa))-1], rest(fa, f1))
			}
			i++
		case i >= len(a) || key(fb, f2) < key(fa, f1):
			if unpaired["2"] || only["2"] {
				emit(fb[min(f2, len(fb))-1], rest(fb, f2))
			}
			j++
		default:
			// Every line of b with the same key pairs with this line.
			k := key(fa, f1)
			jEnd := j
			for jEnd < len(b) && key(split(b[jEnd]), f2) == k {
				jEnd++
			}
			for ; i < len(a) && key(split(a[i]), f1) == k; i++ {
				fa = split(a[i])
				for jj := j; jj < jEnd; jj++ {
					if len(only) == 0 {
						fbj := split(b[jj])
						emit(fa[f1-1], rest(fa, f1), rest(fbj, f2))
					}
				}
			}
			j = jEnd
		}
	}
	return exitWrite(c, w.Flush(), 0)
}

func runStrings(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "n:a", long: map[string]string{"bytes=": "n", "all": "a"}}, 1)
	if !ok {
		return code
	}
	minLen := 4
	if v, ok := o.val("n"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c.Fail("invalid minimum string length %s", v)
		}
		minLen = n
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		br := bufio.NewReader(r)
		var cur []byte
		flush := func() {
			if len(cur) >= minLen {
				w.Write(cur)
				w.WriteByte('\n')
			}
			cur = cur[:0]
		}
		for {
			b, err := br.ReadByte()
			if err != nil {
				flush()
				if err == io.EOF {
					return nil
				}
				return err
			}
			if b >= 32 && b < 127 || b == '\t' {
				cur = append(cur, b)
			} else {
				flush()
			}
		}
	})
	return exitWrite(c, w.Flush(), status)
}

// odSpec is one output format of od (-t TYPE).
type odSpec struct {
	kind  byte // a c d o u x
	size  int  // bytes per field
	width int  // digits of a field
	z     bool // show the bytes as text after the line
}

func parseOdType(t string) ([]odSpec, bool) {
	var out []odSpec
	for t != "" {
		k := t[0]
		t = t[1:]
		sp := odSpec{kind: k, size: 1}
		switch k {
		case 'a', 'c':
		case 'd', 'o', 'u', 'x':
			sp.size = 4
			if t != "" {
				switch t[0] {
				case 'C':
					sp.size, t = 1, t[1:]
				case 'S':
					sp.size, t = 2, t[1:]
				case 'I':
					sp.size, t = 4, t[1:]
				case 'L':
					sp.size, t = 8, t[1:]
				default:
					n := 0
					for n < len(t) && t[n] >= '0' && t[n] <= '9' {
						n++
					}
					if n > 0 {
						sz, _ := strconv.Atoi(t[:n])
						if sz != 1 && sz != 2 && sz != 4 && sz != 8 {
							return nil, false
						}
						sp.size, t = sz, t[n:]
					}
				}
			}
		default:
			return nil, false
		}
		if t != "" && t[0] == 'z' {
			sp.z, t = true, t[1:]
		}
		bits := uint(8 * sp.size)
		switch k {
		case 'a', 'c':
			sp.width = 3
		case 'o':
			sp.width = int(bits+2) / 3
		case 'x':
			sp.width = sp.size * 2
		case 'u':
			sp.width = len(strconv.FormatUint(1<<bits-1, 10))
			if bits == 64 {
				sp.width = 20
			}
		case 'd':
			sp.width = len(strconv.FormatUint(1<<(bits-1), 10)) + 1
			if bits == 64 {
				sp.width = 20
			}
		}
		out = append(out, sp)
	}
	return out, true
}

var odNames = [...]string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr", "so", "si",
	"dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp"}

func runOd(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "A:t:cxbvdoj:N:w:is", long: map[string]string{
		"address-radix=": "A", "format=": "t", "output-duplicates": "v", "skip-bytes=": "j", "read-bytes=": "N", "width=": "w",
	}}, 1)
	if !ok {
		return code
	}
	radix, _ := o.val("A")
	if radix == "" {
		radix = "o"
	}
	if len(radix) != 1 || !strings.Contains("doxn", radix) {
		return c.Usage(1, "invalid output address radix '%s'; it must be one character from [doxn]", radix)
	}
	var specs []odSpec
	for _, x := range o.list {
		var add []odSpec
		switch x.key {
		case "c":
			add, _ = parseOdType("c")
		case "x":
			add, _ = parseOdType("x2")
		case "b":
			add, _ = parseOdType("o1")
		case "d":
			add, _ = parseOdType("u2")
		case "o":
			add, _ = parseOdType("o2")
		case "i":
			add, _ = parseOdType("d4")
		case "s":
			add, _ = parseOdType("d2")
		case "t":
			var ok bool
			if add, ok = parseOdType(x.val); !ok {
				return c.Usage(1, "invalid type string %s", q(x.val))
			}
		}
		specs = append(specs, add...)
	}
	if len(specs) == 0 {
		specs, _ = parseOdType("o2")
	}
	skip, limit := int64(0), int64(-1)
	if v, ok := o.val("j"); ok {
		n, ok := parseOdNumber(v)
		if !ok {
			return c.Fail("invalid skip-bytes argument %s", q(v))
		}
		skip = n
	}
	if v, ok := o.val("N"); ok {
		n, ok := parseOdNumber(v)
		if !ok {
			return c.Fail("invalid read-bytes argument %s", q(v))
		}
		limit = n
	}
	perLine := 16
	if v, ok := o.val("w"); ok {
		n, err := strconv.Atoi(v)
		if v == "" {
			n, err = 32, nil
		}
		if err != nil || n <= 0 || n > 1<<16 {
			return c.Fail("invalid -w argument %s", q(v))
		}
		perLine = n
	}
	lcm := 1
	for _, sp := range specs {
		for lcm%sp.size != 0 {
			lcm++
		}
	}
	if perLine%lcm != 0 {
		perLine = lcm
	}
	var data []byte
	toSkip := skip
	status := c.Inputs(files, func(name string, r io.Reader) error {
		if toSkip > 0 {
			n, err := io.CopyN(io.Discard, r, toSkip)
			toSkip -= n
			if err != nil && err != io.EOF {
				return err
			}
			if toSkip > 0 {
				return nil
			}
		}
		if limit >= 0 {
			r = io.LimitReader(r, limit-int64(len(data)))
		}
		b, err := c.ReadAllFrom(r, 0)
		data = append(data, b...)
		return err
	})
	if toSkip > 0 {
		c.Errorf("cannot skip past end of combined input")
		return 1
	}
	addrWidth := 7
	if radix == "x" {
		addrWidth = 6
	}
	addr := func(n int64) string {
		switch radix {
		case "d":
			return fmt.Sprintf("%07d", n)
		case "x":
			return fmt.Sprintf("%06x", n)
		case "n":
			return ""
		}
		return fmt.Sprintf("%07o", n)
	}
	// GNU aligns the formats of a line: every block of perLine bytes is
	// as wide as the widest format makes it, the padding spread over
	// the fields.
	blockWidth := 0
	for _, sp := range specs {
		blockWidth = max(blockWidth, (sp.width+1)*(perLine/sp.size))
	}
	w := c.bufOut()
	var prev []byte
	starred := false
	for off := 0; off < len(data); off += perLine {
		row := data[off:min(off+perLine, len(data))]
		if !o.has("v") && prev != nil && string(prev) == string(row) && len(row) == perLine {
			if !starred {
				w.WriteString("*\n")
				starred = true
			}
			continue
		}
		starred = false
		prev = row
		for si, sp := range specs {
			if si == 0 {
				w.WriteString(addr(skip + int64(off)))
			} else if radix != "n" {
				w.WriteString(strings.Repeat(" ", addrWidth))
			}
			fields := perLine / sp.size
			pad := blockWidth - sp.width*fields
			rem, printed := pad, 0
			for i := 0; i < len(row); i += sp.size {
				next := pad * (fields - printed - 1) / fields
				fw := sp.width + rem - next
				rem = next
				printed++
				var v uint64
				for k := sp.size - 1; k >= 0; k-- {
					v <<= 8
					if i+k < len(row) {
						v |= uint64(row[i+k])
					}
				}
				var f string
				bits := uint(8 * sp.size)
				switch sp.kind {
				case 'c':
					f = strings.TrimLeft(odChar(row[i]), " ")
				case 'a':
					b := row[i] & 0x7f
					switch {
					case int(b) < len(odNames):
						f = odNames[b]
					case b == 0x7f:
						f = "del"
					default:
						f = string(rune(b))
					}
				case 'x':
					f = fmt.Sprintf("%0*x", sp.width, v)
				case 'o':
					f = fmt.Sprintf("%0*o", sp.width, v)
				case 'u':
					f = strconv.FormatUint(v, 10)
				case 'd':
					sv := int64(v)
					if bits < 64 && v >= 1<<(bits-1) {
						sv = int64(v) - int64(1)<<bits
					}
					f = strconv.FormatInt(sv, 10)
				}
				fmt.Fprintf(w, "%*s", fw, f)
			}
			if sp.z {
				// Fill the missing fields of a short last line.
				for ; printed < fields; printed++ {
					next := pad * (fields - printed - 1) / fields
					w.WriteString(strings.Repeat(" ", sp.width+rem-next))
					rem = next
				}
				w.WriteString("  >")
				for _, b := range row {
					if b >= 32 && b < 127 {
						w.WriteByte(b)
					} else {
						w.WriteByte('.')
					}
				}
				w.WriteString("<")
			}
			w.WriteString("\n")
		}
	}
	if radix != "n" {
		w.WriteString(addr(skip+int64(len(data))) + "\n")
	}
	return exitWrite(c, w.Flush(), status)
}

// parseOdNumber is od's -j and -N: decimal, 0x hex, 0 octal, with the
// size suffixes (b, k, m, ...).
func parseOdNumber(s string) (int64, bool) {
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		n, err := strconv.ParseInt(s[2:], 16, 64)
		return n, err == nil && n >= 0
	case len(s) > 1 && s[0] == '0' && strings.Trim(s, "01234567") == "":
		n, err := strconv.ParseInt(s[1:], 8, 64)
		return n, err == nil
	}
	if strings.HasSuffix(s, "m") {
		s = s[:len(s)-1] + "M"
	}
	return parseSize(s)
}

func odChar(b byte) string {
	switch b {
	case 0:
		return `  \0`
	case '\a':
		return `  \a`
	case '\b':
		return `  \b`
	case '\f':
		return `  \f`
	case '\n':
		return `  \n`
	case '\r':
		return `  \r`
	case '\t':
		return `  \t`
	case '\v':
		return `  \v`
	}
	if b >= 32 && b < 127 {
		return "   " + string(b)
	}
	return fmt.Sprintf(" %03o", b)
}
