package commands

import (
	"fmt"
	"regexp"
	"strings"
)

// posixToGo translates a POSIX basic (ere=false) or extended regular
// expression into Go's syntax. GNU extensions are kept: \< \> \b \w \W
// \s \S, and \+ \? \| in basic syntax. Back-references cannot be
// expressed in Go's RE2 and are reported as an error.
func posixToGo(re string, ere bool) (string, error) {
	var b strings.Builder
	n := len(re)
	atStart := true // where "*" is literal
	for i := 0; i < n; i++ {
		ch := re[i]
		switch {
		case ch == '[':
			j, class, err := bracket(re, i)
			if err != nil {
				return "", err
			}
			b.WriteString(class)
			i = j
			atStart = false
			continue
		case ch == '\\' && i+1 < n:
			i++
			e := re[i]
			switch {
			case e >= '1' && e <= '9':
				return "", fmt.Errorf("back-references (\\%c) are not supported", e)
			case e == '<' || e == '>':
				b.WriteString(`\b`)
			case e == 'b' || e == 'B' || e == 'w' || e == 'W' || e == 's' || e == 'S':
				b.WriteByte('\\')
				b.WriteByte(e)
			case e == 'n':
				b.WriteString(`\n`)
			case e == 't':
				b.WriteString(`\t`)
			case e == '`':
				b.WriteString(`\A`)
			case e == '\'':
				b.WriteString(`\z`)
			case !ere && strings.IndexByte("(){}|+?", e) >= 0:
				b.WriteByte(e)
				atStart = e == '(' || e == '|'
				continue
			default:
				b.WriteString(regexp.QuoteMeta(string(e)))
			}
			atStart = false
			continue
		case ch == '*' && atStart:
			b.WriteString(`\*`)
			atStart = false
			continue
		case !ere && strings.IndexByte("(){}|+?", ch) >= 0:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		case ere && ch == '{':
			// A "{" that does not start a valid interval is literal.
			j := strings.IndexByte(re[i:], '}')
			if j < 0 || !regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}$`).MatchString(re[i:i+j+1]) || atStart {
				b.WriteString(`\{`)
			} else {
				b.WriteString(re[i : i+j+1])
				i += j
			}
		case ch == '^' && !ere && !atStart:
			b.WriteString(`\^`)
		case ch == '$' && !ere && i+1 < n && !(re[i+1] == '\\' && i+2 < n && (re[i+2] == ')' || re[i+2] == '|')):
			b.WriteString(`\$`)
		default:
			b.WriteByte(ch)
		}
		atStart = ch == '^' || (ere && (ch == '(' || ch == '|'))
	}
	return b.String(), nil
}

// bracket translates a bracket expression starting at re[i] == '['; it
// returns the index of the closing ']'.
func bracket(re string, i int) (int, string, error) {
	var b strings.Builder
	b.WriteByte('[')
	j := i + 1
	if j < len(re) && re[j] == '^' {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(re); j++ {
		ch := re[j]
		switch {
		case ch == ']' && !first:
			b.WriteByte(']')
			return j, b.String(), nil
		case ch == ']':
			b.WriteString(`\]`)
		case ch == '[' && j+1 < len(re) && (re[j+1] == ':' || re[j+1] == '=' || re[j+1] == '.'):
			end := strings.Index(re[j+2:], string(re[j+1])+"]")
			if end < 0 {
				return 0, "", fmt.Errorf("unterminated character class")
			}
			inner := re[j+2 : j+2+end]
			switch re[j+1] {
			case ':':
				b.WriteString("[:" + inner + ":]")
			default:
				b.WriteString(regexp.QuoteMeta(inner))
			}
			j += 2 + end + 1
		case ch == '\\':
			b.WriteString(`\\`)
		case ch == '[':
			b.WriteString(`\[`)
		default:
			b.WriteByte(ch)
		}
		first = false
	}
	return 0, "", fmt.Errorf("unmatched [, [^, [:, [., or [=")
}
