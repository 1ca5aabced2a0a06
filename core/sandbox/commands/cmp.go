package commands

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

func init() {
	register("cmp", "cmp [-blsn] [-i SKIP1[:SKIP2]] [-n LIMIT] FILE1 [FILE2 [SKIP1 [SKIP2]]]", runCmp)
}

// parseSize reads a GNU size: a number with an optional suffix, as dd
// and cmp take them: c=1, w=2, b=512, K/k/KiB=1024, kB/KB=1000, and the
// same for M, G, T, P, E.
func parseSize(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	mult := int64(1)
	switch suf := s[i:]; suf {
	case "", "c":
	case "w":
		mult = 2
	case "b":
		mult = 512
	default:
		p := strings.IndexByte("KMGTPE", strings.ToUpper(suf[:1])[0])
		if p < 0 || (suf[0] != 'k' && suf[0] != strings.ToUpper(suf[:1])[0]) {
			return 0, false
		}
		base := int64(1024)
		switch suf[1:] {
		case "", "iB":
		case "B":
			base = 1000
		default:
			return 0, false
		}
		for range p + 1 {
			mult *= base
		}
	}
	if n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

func runCmp(c *Cmd) int {
	o, ops, code, ok := c.parseOpts(spec{short: "blsn:i:", long: map[string]string{
		"print-bytes": "b", "verbose": "l", "silent": "s", "quiet": "s", "bytes=": "n", "ignore-initial=": "i",
	}}, 2)
	if !ok {
		return code
	}
	if len(ops) == 0 {
		return c.Usage(2, "missing operand after 'cmp'")
	}
	if len(ops) > 4 {
		return c.Usage(2, "extra operand %s", q(ops[4]))
	}
	names := []string{ops[0], "-"}
	if len(ops) > 1 {
		names[1] = ops[1]
	}
	var skip [2]int64
	if v, ok := o.val("i"); ok {
		a, b, two := strings.Cut(v, ":")
		s1, ok1 := parseSize(a)
		s2 := s1
		ok2 := true
		if two {
			s2, ok2 = parseSize(b)
		}
		if !ok1 || !ok2 {
			return c.Usage(2, "invalid --ignore-initial value %s", q(v))
		}
		skip = [2]int64{s1, s2}
	}
	for i := 2; i < len(ops); i++ {
		n, ok := parseSize(ops[i])
		if !ok {
			return c.Usage(2, "invalid --ignore-initial value %s", q(ops[i]))
		}
		skip[i-2] = n
	}
	limit := int64(-1)
	if v, ok := o.val("n"); ok {
		n, ok := parseSize(v)
		if !ok {
			return c.Usage(2, "invalid --bytes value %s", q(v))
		}
		limit = n
	}
	silent, list, printBytes := o.has("s"), o.has("l"), o.has("b")
	if names[0] == names[1] && names[0] != "-" && skip[0] == skip[1] {
		return 0
	}
	var rd [2]*bufio.Reader
	var sizes [2]int64
	for i, name := range names {
		f, err := c.Open(name, true)
		if err != nil {
			if !silent {
				c.PathError(name, err)
			}
			return 2
		}
		defer f.Close()
		sizes[i] = -1
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				if !silent {
					c.Errorf("%s: Is a directory", name)
				}
				return 2
			}
			if st.IsRegular() {
				sizes[i] = max(st.Size-skip[i], 0)
			}
		}
		rd[i] = bufio.NewReaderSize(f, 64<<10)
		if _, err := io.CopyN(io.Discard, rd[i], skip[i]); err != nil && err != io.EOF {
			if !silent {
				c.PathError(name, err)
			}
			return 2
		}
	}
	// -l pads the byte numbers to the digits of the largest one that
	// can be compared.
	width := 1
	if list {
		m := limit
		for _, s := range sizes {
			if s >= 0 && (m < 0 || s < m) {
				m = s
			}
		}
		if m > 0 {
			width = len(strconv.FormatInt(m, 10))
		}
	}
	w := c.bufOut()
	byteNo, line := int64(0), int64(1)
	differ := false
	// GNU's message says "char" untranslated (the C locale) and "byte"
	// in the English catalogs.
	unit := "byte"
	if c.CLocale() {
		unit = "char"
	}
	var last byte
	for limit < 0 || byteNo < limit {
		if byteNo&0xffff == 0 && c.Cancelled() {
			w.Flush()
			return 2
		}
		b1, err1 := rd[0].ReadByte()
		b2, err2 := rd[1].ReadByte()
		if err1 != nil || err2 != nil {
			if err1 != nil && err1 != io.EOF {
				w.Flush()
				c.PathError(names[0], err1)
				return 2
			}
			if err2 != nil && err2 != io.EOF {
				w.Flush()
				c.PathError(names[1], err2)
				return 2
			}
			if err1 == io.EOF && err2 == io.EOF {
				break
			}
			short := names[0]
			if err2 == io.EOF {
				short = names[1]
			}
			w.Flush()
			if !silent {
				switch {
				case byteNo == 0:
					c.Errorf("EOF on %s which is empty", short)
				case list:
					c.Errorf("EOF on %s after byte %d", short, byteNo)
				default:
					// Whether the shorter file ended on a newline.
					ended := line - 1
					if ended > 0 && last == '\n' {
						c.Errorf("EOF on %s after byte %d, line %d", short, byteNo, ended)
					} else {
						c.Errorf("EOF on %s after byte %d, in line %d", short, byteNo, line)
					}
				}
			}
			return 1
		}
		byteNo++
		if b1 != b2 {
			differ = true
			if silent {
				return 1
			}
			if !list {
				if printBytes {
					fmt.Fprintf(w, "%s %s differ: byte %d, line %d is %3o %s %3o %s\n", names[0], names[1], byteNo, line, b1, printable(b1), b2, printable(b2))
				} else {
					fmt.Fprintf(w, "%s %s differ: %s %d, line %d\n", names[0], names[1], unit, byteNo, line)
				}
				return exitWrite(c, w.Flush(), 1)
			}
			if printBytes {
				fmt.Fprintf(w, "%*d %3o %-4s %3o %s\n", width, byteNo, b1, printable(b1), b2, printable(b2))
			} else {
				fmt.Fprintf(w, "%*d %3o %3o\n", width, byteNo, b1, b2)
			}
		}
		if b1 == '\n' {
			line++
		}
		last = b1
	}
	status := 0
	if differ {
		status = 1
	}
	return exitWrite(c, w.Flush(), status)
}

// printable is how cmp -b shows a byte: itself, ^X for controls, M- for
// the high half.
func printable(b byte) string {
	s := ""
	if b >= 0x80 {
		s = "M-"
		b -= 0x80
	}
	switch {
	case b < 0x20:
		return s + "^" + string(rune(b+'@'))
	case b == 0x7f:
		return s + "^?"
	}
	return s + string(rune(b))
}
