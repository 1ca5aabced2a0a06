package cmd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// quoteName makes a file name (or key) safe to print one per line: a
// name holding a control character (a newline would forge a line of
// output, an escape sequence would drive the terminal), invalid UTF-8, or
// a single quote (so that a quoted name and a literal one never look
// alike) is printed as a shell word, as GNU ls does with
// --quoting-style=shell-escape: printable runs in '...', the rest as
// $'\n', $'\x1b'. Pasted into a shell, the word is the exact name. Other
// names, spaces included, print as they are. Commands that print names
// take --literal for the raw bytes.
func quoteName(s string) string {
	if !needsQuoting(s) {
		return s
	}
	var b strings.Builder
	open := false // inside a '...' run
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1, !unicode.IsPrint(r) && r != ' ':
			if open {
				b.WriteByte('\'')
				open = false
			}
			b.WriteString("$'")
			for _, c := range []byte(s[i : i+size]) {
				b.WriteString(escapeByte(c))
			}
			b.WriteByte('\'')
		case r == '\'':
			if open {
				b.WriteByte('\'')
				open = false
			}
			b.WriteString(`\'`)
		default:
			if !open {
				b.WriteByte('\'')
				open = true
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	if open {
		b.WriteByte('\'')
	}
	return b.String()
}

func needsQuoting(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r == '\'' || (!unicode.IsPrint(r) && r != ' ') {
			return true
		}
	}
	return false
}

// escapeByte is the $'...' escape of one byte, as bash writes it.
func escapeByte(c byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	return fmt.Sprintf(`\%03o`, c)
}

// nameQuoter is quoteName, or the identity under --literal.
func nameQuoter(literal bool) func(string) string {
	if literal {
		return func(s string) string { return s }
	}
	return quoteName
}
