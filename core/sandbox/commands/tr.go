package commands

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

func init() {
	register("tr", "tr [-cdst] SET1 [SET2]", runTr)
}

var trClasses = map[string]func(b byte) bool{
	"alpha": func(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' },
	"digit": func(b byte) bool { return b >= '0' && b <= '9' },
	"alnum": func(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' },
	"upper": func(b byte) bool { return b >= 'A' && b <= 'Z' },
	"lower": func(b byte) bool { return b >= 'a' && b <= 'z' },
	"space": func(b byte) bool { return b == ' ' || b >= '\t' && b <= '\r' },
	"blank": func(b byte) bool { return b == ' ' || b == '\t' },
	"punct": func(b byte) bool {
		return b > ' ' && b < 127 && !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9')
	},
	"cntrl":  func(b byte) bool { return b < 32 || b == 127 },
	"print":  func(b byte) bool { return b >= 32 && b < 127 },
	"graph":  func(b byte) bool { return b > 32 && b < 127 },
	"xdigit": func(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F' },
}

// trUnescape reads one possibly escaped byte at s[i].
func trUnescape(s string, i int) (byte, int) {
	if s[i] != '\\' || i+1 >= len(s) {
		return s[i], i + 1
	}
	i++
	switch s[i] {
	case 'n':
		return '\n', i + 1
	case 't':
		return '\t', i + 1
	case 'r':
		return '\r', i + 1
	case 'a':
		return 7, i + 1
	case 'b':
		return 8, i + 1
	case 'f':
		return 12, i + 1
	case 'v':
		return 11, i + 1
	case '\\':
		return '\\', i + 1
	}
	if s[i] >= '0' && s[i] <= '7' {
		j := i
		for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
			j++
		}
		n, _ := strconv.ParseUint(s[i:j], 8, 16)
		return byte(n), j
	}
	return s[i], i + 1
}

// trExpand expands a tr SET into bytes. fill is the length to reach for
// [c*] in SET2.
func trExpand(s string, fill int) ([]byte, error) {
	var out []byte
	starAt, starByte := -1, byte(0)
	for i := 0; i < len(s); {
		if s[i] == '[' && i+1 < len(s) {
			if s[i+1] == ':' {
				if end := strings.Index(s[i+2:], ":]"); end >= 0 {
					name := s[i+2 : i+2+end]
					f, ok := trClasses[name]
					if !ok {
						return nil, fmt.Errorf("invalid character class %s", q(name))
					}
					for b := 0; b < 256; b++ {
						if f(byte(b)) {
							out = append(out, byte(b))
						}
					}
					i += 2 + end + 2
					continue
				}
			}
			if s[i+1] == '=' && i+4 < len(s) && s[i+3] == '=' && s[i+4] == ']' {
				out = append(out, s[i+2])
				i += 5
				continue
			}
			// [c*n] or [c*]
			c, j := trUnescape(s, i+1)
			if j < len(s) && s[j] == '*' {
				if end := strings.IndexByte(s[j:], ']'); end >= 0 {
					numStr := s[j+1 : j+end]
					if numStr == "" {
						starAt, starByte = len(out), c
					} else {
						base := 10
						if strings.HasPrefix(numStr, "0") {
							base = 8
						}
						n, err := strconv.ParseInt(numStr, base, 32)
						if err != nil {
							return nil, fmt.Errorf("invalid repeat count %s in [c*n] construct", q(numStr))
						}
						// The count is the caller's: a set longer than
						// maxTrSet is refused before it is built.
						if n > maxTrSet-int64(len(out)) {
							return nil, fmt.Errorf("repeat count %s in [c*n] construct makes a set longer than %d bytes", q(numStr), maxTrSet)
						}
						for k := int64(0); k < n; k++ {
							out = append(out, c)
						}
						if n == 0 {
							starAt, starByte = len(out), c
						}
					}
					i = j + end + 1
					continue
				}
			}
		}
		c, j := trUnescape(s, i)
		if j < len(s) && s[j] == '-' && j+1 < len(s) {
			hi, k := trUnescape(s, j+1)
			if hi < c {
				return nil, fmt.Errorf("range-endpoints of '%c-%c' are in reverse collating sequence order", c, hi)
			}
			for b := int(c); b <= int(hi); b++ {
				out = append(out, byte(b))
			}
			i = k
			continue
		}
		out = append(out, c)
		i = j
	}
	if starAt >= 0 {
		n := min(fill, maxTrSet) - len(out)
		if n > 0 {
			rep := make([]byte, n)
			for k := range rep {
				rep[k] = starByte
			}
			out = append(out[:starAt], append(rep, out[starAt:]...)...)
		}
	}
	return out, nil
}

func runTr(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "cCdst", long: map[string]string{
		"complement": "c", "delete": "d", "squeeze-repeats": "s", "truncate-set1": "t",
	}}, 1)
	if !ok {
		return code
	}
	del, squeeze, comp := o.has("d"), o.has("s"), o.has("c") || o.has("C")
	need := 2
	if del && !squeeze || squeeze && !del && len(args) == 1 {
		need = 1
	}
	if len(args) < need {
		if len(args) == 0 {
			return c.Usage(1, "missing operand")
		}
		return c.Usage(1, "missing operand after %s", q(args[len(args)-1]))
	}
	if len(args) > need {
		return c.Usage(1, "extra operand %s", q(args[need]))
	}
	set1, err := trExpand(args[0], 0)
	if err != nil {
		return c.Fail("%v", err)
	}
	var in1 [256]bool
	for _, b := range set1 {
		in1[b] = true
	}
	if comp {
		var cs []byte
		for b := 0; b < 256; b++ {
			if !in1[b] {
				cs = append(cs, byte(b))
			}
		}
		set1 = cs
		in1 = [256]bool{}
		for _, b := range set1 {
			in1[b] = true
		}
	}
	var set2 []byte
	if len(args) == 2 {
		if set2, err = trExpand(args[1], len(set1)); err != nil {
			return c.Fail("%v", err)
		}
	}
	var mapping [256]int
	for i := range mapping {
		mapping[i] = i
	}
	translate := !del && len(set2) > 0
	if translate {
		if o.has("t") && len(set1) > len(set2) {
			set1 = set1[:len(set2)]
		}
		for i, b := range set1 {
			if i < len(set2) {
				mapping[b] = int(set2[i])
			} else {
				mapping[b] = int(set2[len(set2)-1])
			}
		}
	}
	var squeezeSet [256]bool
	sq := set1
	if len(set2) > 0 {
		sq = set2
	}
	for _, b := range sq {
		squeezeSet[b] = true
	}
	br := bufio.NewReaderSize(c.Stdin, 64<<10)
	w := c.bufOut()
	last := -1
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.Fail("read error: %s", ErrText(err))
		}
		if del && in1[b] {
			continue
		}
		out := byte(mapping[b])
		if squeeze && squeezeSet[out] && int(out) == last {
			continue
		}
		last = int(out)
		if err := w.WriteByte(out); err != nil {
			return exitWrite(c, err, 1)
		}
	}
	return exitWrite(c, w.Flush(), 0)
}

// maxTrSet bounds an expanded set: only its first 256 distinct bytes can
// matter, but a position in SET1 maps to the same position in SET2, so
// lengths are kept up to a size no real script comes near.
const maxTrSet = 1 << 20
