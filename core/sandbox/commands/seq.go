package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

func init() {
	register("seq", "seq [-w] [-s SEP] [-f FORMAT] [FIRST [INCREMENT]] LAST", runSeq)
}

func runSeq(c *Cmd) int {
	// Negative numbers are operands, not options.
	var args []string
	sep, format, equal := "\n", "", false
	rest := c.Args[1:]
	for len(rest) > 0 {
		a := rest[0]
		switch {
		case a == "-w" || a == "--equal-width":
			equal = true
		case a == "-s" && len(rest) > 1:
			sep, rest = rest[1], rest[1:]
		case strings.HasPrefix(a, "-s") && len(a) > 2:
			sep = a[2:]
		case strings.HasPrefix(a, "--separator="):
			sep = strings.TrimPrefix(a, "--separator=")
		case a == "-f" && len(rest) > 1:
			format, rest = rest[1], rest[1:]
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			format = a[2:]
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case a == "--":
			args = append(args, rest[1:]...)
			rest = nil
			continue
		default:
			if len(a) > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9' || a[1] == '.') {
				return c.Usage(1, "invalid option -- '%s'", a[1:])
			}
			args = append(args, a)
		}
		if len(rest) > 0 {
			rest = rest[1:]
		}
	}
	if len(args) == 0 || len(args) > 3 {
		if len(args) == 0 {
			return c.Usage(1, "missing operand")
		}
		return c.Usage(1, "extra operand %s", q(args[3]))
	}
	nums := make([]float64, len(args))
	prec := 0
	for i, a := range args {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil || math.IsNaN(v) {
			return c.Usage(1, "invalid floating point argument: %s", q(a))
		}
		nums[i] = v
		if j := strings.IndexByte(a, '.'); j >= 0 && i != len(args)-1 || j >= 0 && len(args) == 1 {
			prec = max(prec, len(a)-j-1)
		}
	}
	first, incr, last := 1.0, 1.0, nums[len(nums)-1]
	if len(nums) >= 2 {
		first = nums[0]
	}
	if len(nums) == 3 {
		incr = nums[1]
	}
	if incr == 0 {
		return c.Usage(1, "invalid Zero increment value: %s", q(args[1]))
	}
	fmtNum := func(v float64) string {
		if format != "" {
			return fmt.Sprintf(format, v)
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	width := 0
	if equal {
		width = max(len(fmtNum(first)), len(fmtNum(last)))
	}
	w := c.bufOut()
	n := 0
	for i := 0; ; i++ {
		v := first + float64(i)*incr
		if incr > 0 && v > last+1e-10 || incr < 0 && v < last-1e-10 {
			break
		}
		if n > 0 {
			w.WriteString(sep)
		}
		s := fmtNum(v)
		if equal && len(s) < width {
			if strings.HasPrefix(s, "-") {
				s = "-" + strings.Repeat("0", width-len(s)) + s[1:]
			} else {
				s = strings.Repeat("0", width-len(s)) + s
			}
		}
		if _, err := w.WriteString(s); err != nil {
			return exitWrite(c, err, 1)
		}
		n++
		if n%4096 == 0 && c.Cancelled() {
			return 1
		}
	}
	if n > 0 {
		w.WriteString("\n")
	}
	return exitWrite(c, w.Flush(), 0)
}
