package commands

import (
	"crypto/rand"
	"fmt"
	"strings"
)

func cryptoRead(p []byte) (int, error) { return rand.Read(p) }

// spec describes the options of a command, getopt_long style. short is a
// getopt string ("nrk:t:": a colon after a letter means it takes an
// argument); long maps long names to keys ("lines=" takes an argument,
// "reverse" does not; the key is the value of the map, usually the
// matching short letter).
type spec struct {
	short string
	long  map[string]string
	// noPermute stops at the first operand (POSIX), instead of GNU's
	// option permutation.
	noPermute bool
}

type opt struct{ key, val string }

// opts is the result of parse.
type opts struct{ list []opt }

func (o *opts) has(k string) bool {
	for _, x := range o.list {
		if x.key == k {
			return true
		}
	}
	return false
}

func (o *opts) count(k string) int {
	n := 0
	for _, x := range o.list {
		if x.key == k {
			n++
		}
	}
	return n
}

// val returns the last value of k.
func (o *opts) val(k string) (string, bool) {
	v, ok := "", false
	for _, x := range o.list {
		if x.key == k {
			v, ok = x.val, true
		}
	}
	return v, ok
}

func (o *opts) vals(k string) []string {
	var out []string
	for _, x := range o.list {
		if x.key == k {
			out = append(out, x.val)
		}
	}
	return out
}

// last returns which of keys appeared last ("" if none).
func (o *opts) last(keys ...string) string {
	found := ""
	for _, x := range o.list {
		for _, k := range keys {
			if x.key == k {
				found = k
			}
		}
	}
	return found
}

// argKind also reports an optional argument ("i::"), which is only taken
// when attached: -i.bak, not -i .bak.
func (s spec) argKind(c byte) (known, arg, optional bool) {
	i := strings.IndexByte(s.short, c)
	if i < 0 || c == ':' {
		return false, false, false
	}
	arg = i+1 < len(s.short) && s.short[i+1] == ':'
	optional = arg && i+2 < len(s.short) && s.short[i+2] == ':'
	return true, arg, optional
}

// parse splits args (without the command name) into options and operands.
func (s spec) parse(args []string) (*opts, []string, error) {
	o := &opts{}
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			return o, operands, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			key, takes, err := s.matchLong(name)
			if err != nil {
				return nil, nil, err
			}
			if takes {
				if !hasVal {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("option '--%s' requires an argument", name)
					}
					i++
					val = args[i]
				}
			} else if hasVal {
				return nil, nil, fmt.Errorf("option '--%s' doesn't allow an argument", name)
			}
			o.list = append(o.list, opt{key, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				known, takes, optional := s.argKind(a[j])
				if !known {
					return nil, nil, fmt.Errorf("invalid option -- '%c'", a[j])
				}
				if takes {
					val := a[j+1:]
					if val == "" && !optional {
						if i+1 >= len(args) {
							return nil, nil, fmt.Errorf("option requires an argument -- '%c'", a[j])
						}
						i++
						val = args[i]
					}
					o.list = append(o.list, opt{string(a[j]), val})
					break
				}
				o.list = append(o.list, opt{string(a[j]), ""})
			}
		default:
			if s.noPermute {
				operands = append(operands, args[i:]...)
				return o, operands, nil
			}
			operands = append(operands, a)
		}
	}
	return o, operands, nil
}

func (s spec) matchLong(name string) (key string, takes bool, err error) {
	var matches []string
	for k := range s.long {
		n := strings.TrimSuffix(k, "=")
		if n == name {
			return s.long[k], strings.HasSuffix(k, "="), nil
		}
		if strings.HasPrefix(n, name) {
			matches = append(matches, k)
		}
	}
	if len(matches) == 1 {
		return s.long[matches[0]], strings.HasSuffix(matches[0], "="), nil
	}
	if len(matches) > 1 {
		return "", false, fmt.Errorf("option '--%s' is ambiguous", name)
	}
	return "", false, fmt.Errorf("unrecognized option '--%s'", name)
}

// parseOrUsage parses and prints a usage error (returning ok=false) on
// failure.
func (c *Cmd) parseOpts(s spec, code int) (*opts, []string, int, bool) {
	o, operands, err := s.parse(c.Args[1:])
	if err != nil {
		return nil, nil, c.Usage(code, "%v", err), false
	}
	return o, operands, 0, true
}
