package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
)

func init() {
	register("jq", "jq [-rjcnseSR] [--arg K V] [--argjson K JSON] [--tab] [--indent N] FILTER [FILE]...", runJq)
}

type jqOpts struct {
	raw, join, compact, sortKeys, tab bool
	indent                            int
	order                             *jqOrder
}

func runJq(c *Cmd) int {
	args := c.Args[1:]
	var filter string
	haveFilter := false
	var files []string
	opt := jqOpts{indent: 2, order: newJQOrder()}
	nullInput, slurp, exitStatus, rawInput := false, false, false, false
	var names []string
	var values []any
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--arg" && i+2 < len(args):
			names, values = append(names, "$"+args[i+1]), append(values, args[i+2])
			i += 2
		case a == "--argjson" && i+2 < len(args):
			var v any
			if err := json.Unmarshal([]byte(args[i+2]), &v); err != nil {
				c.Errorf("invalid JSON text passed to --argjson")
				return 2
			}
			names, values = append(names, "$"+args[i+1]), append(values, normalizeJSON(v))
			i += 2
		case a == "--tab":
			opt.tab = true
		case a == "--indent" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 0 || n > 7 {
				c.Errorf("Cannot indent more than 7 characters")
				return 2
			}
			opt.indent = n
			i++
		case a == "--raw-output":
			opt.raw = true
		case a == "--join-output":
			opt.raw, opt.join = true, true
		case a == "--compact-output":
			opt.compact = true
		case a == "--null-input":
			nullInput = true
		case a == "--slurp":
			slurp = true
		case a == "--exit-status":
			exitStatus = true
		case a == "--sort-keys":
			opt.sortKeys = true
		case a == "--raw-input":
			rawInput = true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			for _, f := range a[1:] {
				switch f {
				case 'r':
					opt.raw = true
				case 'j':
					opt.raw, opt.join = true, true
				case 'c':
					opt.compact = true
				case 'n':
					nullInput = true
				case 's':
					slurp = true
				case 'e':
					exitStatus = true
				case 'S':
					opt.sortKeys = true
				case 'R':
					rawInput = true
				case 'M', 'C', 'a':
				default:
					c.Errorf("Unknown option: %s", a)
					return 2
				}
			}
		default:
			if !haveFilter {
				filter, haveFilter = a, true
			} else {
				files = append(files, a)
			}
		}
	}
	if !haveFilter {
		c.Errorf("usage: jq [OPTIONS] FILTER [FILES...]")
		return 2
	}
	q, err := gojq.Parse(filter)
	if err != nil {
		c.Errorf("error: %v", err)
		return 3
	}
	opt.order.addQuery(q)
	q.FuncDefs = append(jqOrderDefs(), q.FuncDefs...)
	iter := &jqInputs{}
	code, err := gojq.Compile(q, gojq.WithVariables(names), opt.order.keysFunction(), gojq.WithInputIter(iter), gojq.WithEnvironLoader(func() []string {
		if c.Environ == nil {
			return nil
		}
		return c.Environ()
	}))
	if err != nil {
		c.Errorf("error: %v", err)
		return 3
	}
	// Collect the inputs.
	var data []byte
	st := c.Inputs(files, func(name string, r io.Reader) error {
		b, err := c.ReadAllFrom(r, 0)
		data = append(data, b...)
		return err
	})
	if st != 0 {
		return 2
	}
	var inputs []any
	if rawInput {
		if slurp {
			inputs = []any{string(data)}
		} else {
			for _, l := range SplitLines(data) {
				inputs = append(inputs, l)
			}
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		for {
			v, err := opt.order.decode(dec)
			if err == io.EOF {
				break
			} else if err != nil {
				c.Errorf("error (at <stdin>:0): %v", err)
				return 2
			}
			inputs = append(inputs, normalizeJSON(v))
		}
		if slurp {
			if inputs == nil {
				inputs = []any{}
			}
			inputs = []any{inputs}
		}
	}
	iter.list = inputs
	w := c.bufOut()
	status := 0
	var last any = nil
	haveLast := false
	runOne := func(v any) bool {
		it := code.RunWithContext(c.Ctx, v, values...)
		for {
			out, ok := it.Next()
			if !ok {
				return true
			}
			if err, ok := out.(error); ok {
				if he, ok := err.(interface{ IsHaltError() bool }); ok && he.IsHaltError() {
					return false
				}
				if c.Cancelled() {
					// A limit or the caller stopped the run: the
					// sandbox says which, jq says nothing.
					return false
				}
				w.Flush()
				c.Errorf("error (at <stdin>:0): %v", err)
				status = 5
				// jq stops the outputs of this input at its first
				// error and goes on with the next input.
				return true
			}
			last, haveLast = out, true
			writeJQ(w, out, opt)
			if w.Buffered() > 32<<10 {
				if err := w.Flush(); err != nil {
					return false
				}
			}
		}
	}
	if nullInput {
		runOne(nil)
	} else {
		for {
			v, ok := iter.Next()
			if !ok || !runOne(v) || c.Cancelled() {
				break
			}
		}
	}
	if exitStatus && status == 0 {
		switch {
		case !haveLast:
			status = 4
		case last == nil || last == false:
			status = 1
		}
	}
	return exitWrite(c, w.Flush(), status)
}

// jqInputs feeds the inputs both to the main loop and to the input and
// inputs builtins.
type jqInputs struct {
	list []any
	idx  int
}

func (j *jqInputs) Next() (any, bool) {
	if j.idx >= len(j.list) {
		return nil, false
	}
	v := j.list[j.idx]
	j.idx++
	return v, true
}

// normalizeJSON turns json.Number into int or float64 as gojq expects.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			if i >= math.MinInt && i <= math.MaxInt {
				return int(i)
			}
		}
		if !strings.ContainsAny(string(x), ".eE") {
			if b, ok := new(big.Int).SetString(string(x), 10); ok {
				return b
			}
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i := range x {
			x[i] = normalizeJSON(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = normalizeJSON(x[k])
		}
		return x
	}
	return v
}

func writeJQ(w io.Writer, v any, opt jqOpts) {
	var b bytes.Buffer
	if s, ok := v.(string); ok && opt.raw {
		b.WriteString(s)
	} else {
		encodeJQ(&b, v, opt, 0)
	}
	if !opt.join {
		b.WriteByte('\n')
	}
	w.Write(b.Bytes())
}

func jqFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "null"
	case math.IsInf(f, 1):
		return "1.7976931348623157e+308"
	case math.IsInf(f, -1):
		return "-1.7976931348623157e+308"
	case f == math.Trunc(f) && math.Abs(f) < 1e17:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'g', 17, 64)
	if g := strconv.FormatFloat(f, 'g', -1, 64); len(g) < len(s) {
		s = g
	}
	return s
}

func encodeJQ(b *bytes.Buffer, v any, opt jqOpts, depth int) {
	newline := func(d int) {
		if opt.compact {
			return
		}
		b.WriteByte('\n')
		if opt.tab {
			b.WriteString(strings.Repeat("\t", d))
		} else {
			b.WriteString(strings.Repeat(" ", d*opt.indent))
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		b.WriteString(jqFloat(x))
	case *big.Int:
		b.WriteString(x.String())
	case string:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		enc.Encode(x)
		b.Truncate(b.Len() - 1)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			encodeJQ(b, e, opt, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		var keys []string
		if opt.sortKeys {
			keys = make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
		} else {
			keys = opt.order.keys(x)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			encodeJQ(b, k, opt, depth+1)
			b.WriteByte(':')
			if !opt.compact {
				b.WriteByte(' ')
			}
			encodeJQ(b, x[k], opt, depth+1)
		}
		newline(depth)
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", x)
	}
}
