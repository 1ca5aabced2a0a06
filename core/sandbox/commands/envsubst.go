package commands

import (
	"fmt"
	"io"
	"strings"
)

func init() {
	register("envsubst", "envsubst [-v] [SHELL-FORMAT]", runEnvsubst)
}

// envRefs finds the $NAME and ${NAME} references of s, in order, with
// their byte ranges; other forms (${X:-y}, $1, $$) are left alone, as
// GNU envsubst does.
func envRefs(s string, fn func(start, end int, name string)) {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		j := i + 1
		braced := s[j] == '{'
		if braced {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || isAlpha(s[k]) || (k > j && s[k] >= '0' && s[k] <= '9')) {
			k++
		}
		if k == j {
			continue
		}
		if braced {
			if k >= len(s) || s[k] != '}' {
				continue
			}
			fn(i, k+1, s[j:k])
			i = k
			continue
		}
		fn(i, k, s[j:k])
		i = k - 1
	}
}

func isAlpha(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func runEnvsubst(c *Cmd) int {
	o, ops, code, ok := c.parseOpts(spec{short: "vh", long: map[string]string{"variables": "v", "help": "h"}}, 1)
	if !ok {
		return code
	}
	if o.has("h") {
		fmt.Fprintln(c.Stdout, "Usage: envsubst [OPTION] [SHELL-FORMAT]\nSubstitutes the values of environment variables in standard input.\n  -v, --variables   output the variables occurring in SHELL-FORMAT")
		return 0
	}
	if len(ops) > 1 {
		return c.Usage(1, "too many arguments")
	}
	if o.has("v") {
		if len(ops) == 0 {
			return c.Usage(1, "missing arguments")
		}
		w := c.bufOut()
		envRefs(ops[0], func(_, _ int, name string) { fmt.Fprintln(w, name) })
		return exitWrite(c, w.Flush(), 0)
	}
	var only map[string]bool
	if len(ops) == 1 {
		only = map[string]bool{}
		envRefs(ops[0], func(_, _ int, name string) { only[name] = true })
	}
	w := c.bufOut()
	err := Lines(c.Stdin, func(line string, noEOL bool) error {
		var b strings.Builder
		last := 0
		envRefs(line, func(start, end int, name string) {
			if only != nil && !only[name] {
				return
			}
			b.WriteString(line[last:start])
			b.WriteString(c.Getenv(name))
			last = end
		})
		b.WriteString(line[last:])
		if !noEOL {
			b.WriteByte('\n')
		}
		_, err := io.WriteString(w, b.String())
		return err
	})
	if err != nil && !IsWriteStop(err) {
		c.Errorf("%s", ErrText(err))
		return 1
	}
	return exitWrite(c, w.Flush(), 0)
}
