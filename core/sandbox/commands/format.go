package commands

import "strings"

// maxFieldWidth is the widest field a format directive may ask for, as
// fmt's own limit: "%0999999999n" must not become a gigabyte of zeros
// (or, wider still, a panic of strings.Repeat). A wider one is ignored,
// as an unparsable width is.
const maxFieldWidth = 1_000_000

// formatSpec describes a printf-like format of find -printf and stat -c.
type formatSpec struct {
	escapes bool   // expand backslash escapes \n \t \\ (unknown ones stay)
	nul     bool   // with escapes, \0 is a NUL byte
	flags   string // characters allowed between % and the directive
}

// expand walks format, copying text, expanding escapes, and calling
// directive for each %-directive with its flags; directive may consume
// more of format by advancing *i past format[*i] (the directive letter).
func (s formatSpec) expand(format string, directive func(flags string, format string, i *int) string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if s.escapes && ch == '\\' && i+1 < len(format) {
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			case '0':
				if s.nul {
					b.WriteByte(0)
					break
				}
				fallthrough
			default:
				b.WriteByte('\\')
				b.WriteByte(format[i])
			}
			continue
		}
		if ch != '%' || i+1 >= len(format) {
			b.WriteByte(ch)
			continue
		}
		i++
		j := i
		for j < len(format) && strings.IndexByte(s.flags, format[j]) >= 0 {
			j++
		}
		flags := format[i:j]
		i = j
		if i >= len(format) {
			break
		}
		b.WriteString(directive(flags, format, &i))
	}
	return b.String()
}
