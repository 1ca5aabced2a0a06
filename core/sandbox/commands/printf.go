package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

func init() {
	register("printf", "printf FORMAT [ARGUMENT]...", runPrintf)
}

// printfEscape interprets one backslash escape at s[i] (s[i] == '\\');
// bSyntax is %b's, where octal takes a leading 0 and \c stops output.
func printfEscape(s string, i int, bSyntax bool) (out string, next int, stop bool) {
	if i+1 >= len(s) {
		return "\\", i + 1, false
	}
	c := s[i+1]
	switch c {
	case 'n':
		return "\n", i + 2, false
	case 't':
		return "\t", i + 2, false
	case 'r':
		return "\r", i + 2, false
	case 'a':
		return "\a", i + 2, false
	case 'b':
		return "\b", i + 2, false
	case 'f':
		return "\f", i + 2, false
	case 'v':
		return "\v", i + 2, false
	case 'e', 'E':
		return "\x1b", i + 2, false
	case '\\':
		return "\\", i + 2, false
	case '"':
		return "\"", i + 2, false
	case '\'':
		return "'", i + 2, false
	case 'c':
		if bSyntax {
			return "", i + 2, true
		}
	case 'x':
		j := i + 2
		for j < len(s) && j < i+4 && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
			j++
		}
		if j > i+2 {
			n, _ := strconv.ParseUint(s[i+2:j], 16, 8)
			return string([]byte{byte(n)}), j, false
		}
	case 'u', 'U':
		max := 4
		if c == 'U' {
			max = 8
		}
		j := i + 2
		for j < len(s) && j < i+2+max && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
			j++
		}
		if j > i+2 {
			n, _ := strconv.ParseUint(s[i+2:j], 16, 32)
			return string(rune(n)), j, false
		}
	}
	if c >= '0' && c <= '7' {
		j := i + 1
		limit := i + 4
		if bSyntax && c == '0' {
			j = i + 2
			limit = i + 5
		}
		start := j
		for j < len(s) && j < limit && s[j] >= '0' && s[j] <= '7' {
			j++
		}
		n, _ := strconv.ParseUint("0"+s[start:j], 8, 16)
		return string([]byte{byte(n)}), j, false
	}
	return "\\" + string(c), i + 2, false
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./,:=+@%^", r)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./,:=+@%^", r)) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func runPrintf(c *Cmd) int {
	args := c.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.Errorf("usage: printf format [arguments]")
		return 2
	}
	out, status := Sprintf(args[0], args[1:], func(msg string) { c.Errorf("%s", msg) })
	if _, err := io.WriteString(c.Stdout, out); err != nil {
		return exitWrite(c, err, 1)
	}
	return status
}

// Sprintf formats as the printf utility does (the format is reused while
// arguments remain); errs receives the messages for bad arguments.
func Sprintf(format string, args []string, errs func(string)) (string, int) {
	var b strings.Builder
	status := 0
	argi := 0
	nextArg := func() (string, bool) {
		if argi < len(args) {
			argi++
			return args[argi-1], true
		}
		return "", false
	}
	num := func(conv byte) (int64, uint64, float64) {
		a, _ := nextArg()
		if a == "" {
			return 0, 0, 0
		}
		if a[0] == '\'' || a[0] == '"' {
			r, _ := utf8.DecodeRuneInString(a[1:])
			return int64(r), uint64(r), float64(r)
		}
		if strings.IndexByte("eEfFgG", conv) >= 0 {
			f, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
			if err != nil {
				errs(a + ": invalid number")
				status = 1
			}
			return int64(f), uint64(f), f
		}
		i, err := strconv.ParseInt(strings.TrimSpace(a), 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(strings.TrimSpace(a), 0, 64)
			if uerr == nil {
				return int64(u), u, float64(u)
			}
			errs(a + ": invalid number")
			status = 1
		}
		return i, uint64(i), float64(i)
	}
	for {
		consumed := false
		for i := 0; i < len(format); {
			ch := format[i]
			if ch == '\\' {
				s, next, _ := printfEscape(format, i, false)
				b.WriteString(s)
				i = next
				continue
			}
			if ch != '%' {
				b.WriteByte(ch)
				i++
				continue
			}
			if i+1 < len(format) && format[i+1] == '%' {
				b.WriteByte('%')
				i += 2
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			flags := format[i+1 : j]
			width := ""
			if j < len(format) && format[j] == '*' {
				a, _ := nextArg()
				n, _ := strconv.Atoi(a)
				width = strconv.Itoa(n)
				j++
			} else {
				k := j
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				width = format[k:j]
			}
			prec := ""
			hasPrec := false
			if j < len(format) && format[j] == '.' {
				hasPrec = true
				j++
				if j < len(format) && format[j] == '*' {
					a, _ := nextArg()
					n, _ := strconv.Atoi(a)
					prec = strconv.Itoa(n)
					j++
				} else {
					k := j
					for j < len(format) && format[j] >= '0' && format[j] <= '9' {
						j++
					}
					prec = format[k:j]
				}
			}
			for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 && format[j] != 'q' {
				j++
			}
			if j >= len(format) {
				errs(format[i:] + ": missing format character")
				return b.String(), 1
			}
			conv := format[j]
			i = j + 1
			consumed = true
			spec := "%" + flags + width
			if hasPrec {
				spec += "." + prec
			}
			switch conv {
			case 's':
				a, _ := nextArg()
				b.WriteString(fmt.Sprintf(spec+"s", a))
			case 'b':
				a, _ := nextArg()
				var eb strings.Builder
				stop := false
				for k := 0; k < len(a); {
					if a[k] == '\\' {
						s, next, st := printfEscape(a, k, true)
						eb.WriteString(s)
						k = next
						if st {
							stop = true
							break
						}
						continue
					}
					eb.WriteByte(a[k])
					k++
				}
				b.WriteString(fmt.Sprintf(spec+"s", eb.String()))
				if stop {
					return b.String(), status
				}
			case 'q':
				a, _ := nextArg()
				b.WriteString(fmt.Sprintf(spec+"s", shellQuote(a)))
			case 'c':
				a, _ := nextArg()
				if a != "" {
					_, size := utf8.DecodeRuneInString(a)
					a = a[:size]
				}
				b.WriteString(fmt.Sprintf("%"+flags+width+"s", a))
			case 'd', 'i':
				n, _, _ := num(conv)
				b.WriteString(fmt.Sprintf(spec+"d", n))
			case 'u':
				_, u, _ := num(conv)
				b.WriteString(fmt.Sprintf(spec+"d", u))
			case 'o', 'x', 'X':
				_, u, _ := num(conv)
				b.WriteString(fmt.Sprintf(spec+string(conv), u))
			case 'e', 'E', 'f', 'F', 'g', 'G':
				_, _, f := num(conv)
				if conv == 'F' {
					conv = 'f'
				}
				b.WriteString(fmt.Sprintf(spec+string(conv), f))
			default:
				errs("%" + string(conv) + ": invalid format character")
				return b.String(), 1
			}
		}
		if !consumed || argi >= len(args) {
			break
		}
	}
	return b.String(), status
}
