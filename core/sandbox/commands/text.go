package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

func init() {
	register("uniq", "uniq [-cdDuiz] [-f N] [-s N] [-w N] [INPUT [OUTPUT]]", runUniq)
	register("cut", "cut -b LIST | -c LIST | -f LIST [-d DELIM] [-s] [--complement] [--output-delimiter S] [FILE]...", runCut)
	register("tac", "tac [FILE]...", runTac)
	register("rev", "rev [FILE]...", runRev)
	register("nl", "nl [-b a|t|n] [-w N] [-s SEP] [-v N] [-i N] [-n ln|rn|rz] [FILE]...", runNl)
	register("tee", "tee [-a] [FILE]...", runTee)
}

func runUniq(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "cdDuizf:s:w:", long: map[string]string{
		"count": "c", "repeated": "d", "all-repeated": "D", "unique": "u", "ignore-case": "i", "zero-terminated": "z",
		"skip-fields=": "f", "skip-chars=": "s", "check-chars=": "w",
	}}, 1)
	if !ok {
		return code
	}
	if len(args) > 2 {
		return c.Usage(1, "extra operand %s", q(args[2]))
	}
	atoi := func(k string) int {
		v, _ := o.val(k)
		n, _ := strconv.Atoi(v)
		return n
	}
	skipF, skipC, checkC := atoi("f"), atoi("s"), -1
	if o.has("w") {
		checkC = atoi("w")
	}
	delim := byte('\n')
	if o.has("z") {
		delim = 0
	}
	in := []string{}
	if len(args) > 0 {
		in = args[:1]
	}
	var out io.Writer = c.Stdout
	if len(args) == 2 {
		f, err := c.Create(args[1], false)
		if err != nil {
			c.PathError(args[1], err)
			return 1
		}
		defer f.Close()
		out = f
	}
	keyOf := func(l string) string {
		for i := 0; i < skipF; i++ {
			l = strings.TrimLeft(l, " \t")
			j := strings.IndexAny(l, " \t")
			if j < 0 {
				l = ""
				break
			}
			l = l[j:]
		}
		if skipC < len(l) {
			l = l[skipC:]
		} else {
			l = ""
		}
		if checkC >= 0 && checkC < len(l) {
			l = l[:checkC]
		}
		if o.has("i") {
			l = strings.ToLower(l)
		}
		return l
	}
	w := bufio.NewWriter(out)
	var group []string
	flush := func() {
		if len(group) == 0 {
			return
		}
		n := len(group)
		switch {
		case o.has("D"):
			if n > 1 {
				for _, l := range group {
					w.WriteString(l)
					w.WriteByte(delim)
				}
			}
		case o.has("d") && n < 2, o.has("u") && n > 1:
		default:
			if o.has("c") {
				fmt.Fprintf(w, "%7d ", n)
			}
			w.WriteString(group[0])
			w.WriteByte(delim)
		}
		group = group[:0]
	}
	status := c.Inputs(in, func(name string, r io.Reader) error {
		data, err := c.ReadAllFrom(r, 0)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return nil
		}
		// A string copy of the input and a header per line.
		if err := c.Reserve(int64(len(data)) + lineCost*int64(bytes.Count(data, []byte{delim})+1)); err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), string(delim)), string(delim)) {
			if len(group) > 0 && keyOf(group[0]) != keyOf(l) {
				flush()
			}
			group = append(group, l)
		}
		return nil
	})
	flush()
	return exitWrite(c, w.Flush(), status)
}

// ranges is a cut LIST: 1-based inclusive ranges.
type ranges [][2]int

func parseList(s string) (ranges, bool) {
	var out ranges
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			return nil, false
		}
		lo, hi, dash := strings.Cut(part, "-")
		var a, b int
		var err error
		if lo == "" {
			a = 1
		} else if a, err = strconv.Atoi(lo); err != nil || a < 1 {
			return nil, false
		}
		switch {
		case !dash:
			b = a
		case hi == "":
			b = 1 << 30
		default:
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, false
			}
		}
		out = append(out, [2]int{a, b})
	}
	return out, true
}

func (r ranges) has(i int) bool {
	for _, x := range r {
		if i >= x[0] && i <= x[1] {
			return true
		}
	}
	return false
}

func runCut(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "b:c:f:d:snz", long: map[string]string{
		"bytes=": "b", "characters=": "c", "fields=": "f", "delimiter=": "d", "only-delimited": "s", "complement": "C",
		"output-delimiter=": "O", "zero-terminated": "z",
	}}, 1)
	if !ok {
		return code
	}
	mode := o.last("b", "c", "f")
	if mode == "" {
		return c.Usage(1, "you must specify a list of bytes, characters, or fields")
	}
	listS, _ := o.val(mode)
	list, good := parseList(listS)
	if !good {
		return c.Usage(1, "invalid field value %s", q(listS))
	}
	delim := "\t"
	if d, ok := o.val("d"); ok {
		if mode != "f" {
			return c.Usage(1, "an input delimiter may be specified only when operating on fields")
		}
		if utf8.RuneCountInString(d) > 1 {
			return c.Usage(1, "the delimiter must be a single character")
		}
		delim = d
		if d == "" {
			delim = "\x00"
		}
	}
	outDelim, hasOut := o.val("O")
	complement := o.has("C")
	eol := byte('\n')
	if o.has("z") {
		eol = 0
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString(eol)
			if line != "" {
				line = strings.TrimSuffix(line, string(eol))
				sel := func(i int) bool { return list.has(i) != complement }
				switch mode {
				case "f":
					if !strings.Contains(line, delim) {
						if !o.has("s") {
							w.WriteString(line)
							w.WriteByte(eol)
						}
						break
					}
					fields := strings.Split(line, delim)
					od := delim
					if hasOut {
						od = outDelim
					}
					first := true
					for i, f := range fields {
						if sel(i + 1) {
							if !first {
								w.WriteString(od)
							}
							w.WriteString(f)
							first = false
						}
					}
					w.WriteByte(eol)
				case "b", "c":
					units := []string{}
					if mode == "c" && false {
						for _, r := range line {
							units = append(units, string(r))
						}
					} else {
						for i := 0; i < len(line); i++ {
							units = append(units, line[i:i+1])
						}
					}
					prev := -2
					for i, u := range units {
						if sel(i + 1) {
							if hasOut && prev >= 0 && prev != i-1 {
								w.WriteString(outDelim)
							}
							w.WriteString(u)
							prev = i
						}
					}
					w.WriteByte(eol)
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return exitWrite(c, w.Flush(), status)
}

func runTac(c *Cmd) int {
	_, files, code, ok := c.parseOpts(spec{short: ""}, 1)
	if !ok {
		return code
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		data, err := c.ReadAllFrom(r, 0)
		if err != nil {
			return err
		}
		// A slice header per line.
		if err := c.Reserve(24 * int64(bytes.Count(data, []byte{'\n'})+1)); err != nil {
			return err
		}
		lines := splitKeep(data, '\n')
		for i := len(lines) - 1; i >= 0; i-- {
			w.Write(lines[i])
		}
		return nil
	})
	return exitWrite(c, w.Flush(), status)
}

func runRev(c *Cmd) int {
	_, files, code, ok := c.parseOpts(spec{short: ""}, 1)
	if !ok {
		return code
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, noEOL bool) error {
			rs := []rune(line)
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			w.WriteString(string(rs))
			if !noEOL {
				w.WriteByte('\n')
			}
			return nil
		})
	})
	return exitWrite(c, w.Flush(), status)
}

func runNl(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "b:w:s:v:i:n:", long: map[string]string{
		"body-numbering=": "b", "number-width=": "w", "number-separator=": "s", "starting-line-number=": "v",
		"line-increment=": "i", "number-format=": "n",
	}}, 1)
	if !ok {
		return code
	}
	style, _ := o.val("b")
	if style == "" {
		style = "t"
	}
	width, sep, start, incr, format := 6, "\t", 1, 1, "rn"
	if v, ok := o.val("w"); ok {
		width, _ = strconv.Atoi(v)
	}
	if v, ok := o.val("s"); ok {
		sep = v
	}
	if v, ok := o.val("v"); ok {
		start, _ = strconv.Atoi(v)
	}
	if v, ok := o.val("i"); ok {
		incr, _ = strconv.Atoi(v)
	}
	if v, ok := o.val("n"); ok {
		format = v
	}
	n := start
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		return Lines(r, func(line string, noEOL bool) error {
			number := style == "a" || (style == "t" && line != "")
			if number {
				var num string
				switch format {
				case "ln":
					num = fmt.Sprintf("%-*d", width, n)
				case "rz":
					num = fmt.Sprintf("%0*d", width, n)
				default:
					num = fmt.Sprintf("%*d", width, n)
				}
				w.WriteString(num + sep + line)
				n += incr
			} else {
				w.WriteString(strings.Repeat(" ", width+len(sep)) + line)
			}
			w.WriteByte('\n')
			return nil
		})
	})
	return exitWrite(c, w.Flush(), status)
}

func runTee(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "aip", long: map[string]string{"append": "a", "ignore-interrupts": "i"}}, 1)
	if !ok {
		return code
	}
	writers := []io.Writer{c.Stdout}
	names := []string{"standard output"}
	var closers []File
	status := 0
	for _, f := range files {
		h, err := c.Create(f, o.has("a"))
		if err != nil {
			c.PathError(f, err)
			status = 1
			continue
		}
		writers = append(writers, h)
		names = append(names, f)
		closers = append(closers, h)
	}
	defer func() {
		for _, h := range closers {
			h.Close()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		if c.Cancelled() {
			return 1
		}
		n, err := c.Stdin.Read(buf)
		if n > 0 {
			for i, w := range writers {
				if w == nil {
					continue
				}
				if _, werr := w.Write(buf[:n]); werr != nil {
					if i == 0 && IsWriteStop(werr) {
						writers[0] = nil
						continue
					}
					if IsWriteStop(werr) {
						return 1
					}
					c.PathError(names[i], werr)
					writers[i] = nil
					status = 1
				}
			}
		}
		if err == io.EOF {
			return status
		}
		if err != nil {
			c.Errorf("read error: %s", ErrText(err))
			return 1
		}
	}
}
