package commands

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

func init() {
	register("sort", "sort [-nrughfbsuzcCV] [-k POS1[,POS2]]... [-t SEP] [-o FILE] [FILE]...", runSort)
}

type sortKey struct {
	f1, c1, f2, c2                                int // fields and chars, 1-based; f2 == 0: end of line
	numeric, general, human, reverse, fold, blank bool
	version, dict                                 bool
	hasOpts                                       bool
}

func parseKeyOpts(s string, k *sortKey) (rest string, ok bool) {
	for len(s) > 0 && strings.ContainsRune("nrghfbMVdi", rune(s[len(s)-1])) {
		k.hasOpts = true
		switch s[len(s)-1] {
		case 'n':
			k.numeric = true
		case 'g':
			k.general = true
		case 'h':
			k.human = true
		case 'r':
			k.reverse = true
		case 'f':
			k.fold = true
		case 'b':
			k.blank = true
		case 'V':
			k.version = true
		case 'd':
			k.dict = true
		}
		s = s[:len(s)-1]
	}
	return s, true
}

func parseSortKey(s string) (sortKey, bool) {
	var k sortKey
	p1, p2, has2 := strings.Cut(s, ",")
	p1, _ = parseKeyOpts(p1, &k)
	f, ch, _ := strings.Cut(p1, ".")
	var err error
	if k.f1, err = strconv.Atoi(f); err != nil || k.f1 < 1 {
		return k, false
	}
	if ch != "" {
		if k.c1, err = strconv.Atoi(ch); err != nil || k.c1 < 1 {
			return k, false
		}
	}
	if has2 {
		p2, _ = parseKeyOpts(p2, &k)
		f, ch, _ := strings.Cut(p2, ".")
		if k.f2, err = strconv.Atoi(f); err != nil || k.f2 < 1 {
			return k, false
		}
		if ch != "" {
			if k.c2, err = strconv.Atoi(ch); err != nil {
				return k, false
			}
		}
	}
	return k, true
}

// fieldStarts returns the start offsets of the fields of line and their
// ends (exclusive).
func sortFields(line string, sep int) (starts, ends []int) {
	if sep >= 0 {
		start := 0
		for i := 0; i < len(line); i++ {
			if int(line[i]) == sep {
				starts, ends = append(starts, start), append(ends, i)
				start = i + 1
			}
		}
		return append(starts, start), append(ends, len(line))
	}
	// Fields begin with their leading blanks.
	i := 0
	for i < len(line) {
		start := i
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		starts, ends = append(starts, start), append(ends, i)
	}
	return starts, ends
}

func keyText(line string, k sortKey, sep int, globalBlank bool) string {
	starts, ends := sortFields(line, sep)
	nf := len(starts)
	begin := len(line)
	if k.f1 <= nf {
		begin = starts[k.f1-1]
		if k.blank || globalBlank {
			for begin < ends[k.f1-1] && (line[begin] == ' ' || line[begin] == '\t') {
				begin++
			}
		}
		if k.c1 > 0 {
			begin = min(begin+k.c1-1, ends[k.f1-1])
		}
	}
	end := len(line)
	if k.f2 > 0 {
		if k.f2 <= nf {
			if k.c2 == 0 {
				end = ends[k.f2-1]
			} else {
				s := starts[k.f2-1]
				if k.blank || globalBlank {
					for s < ends[k.f2-1] && (line[s] == ' ' || line[s] == '\t') {
						s++
					}
				}
				end = min(s+k.c2, ends[k.f2-1])
			}
		}
	}
	if end < begin {
		return ""
	}
	return line[begin:end]
}

// numPrefix parses the leading number of s as sort -n does.
func numPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ',') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s[:i], ",", ""), 64)
	if err != nil {
		return 0
	}
	return v
}

func humanValue(s string) float64 {
	s = strings.TrimLeft(s, " \t")
	v := numPrefix(s)
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '.' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i < len(s) {
		if p := strings.IndexByte("KMGTPEZY", s[i]&^0x20); p >= 0 && s[i] != 'k' || s[i] == 'k' {
			if s[i] == 'k' {
				p = 0
			}
			mult := 1.0
			for j := 0; j <= p; j++ {
				mult *= 1e6 // order only: each suffix outranks any number below it
			}
			if v == 0 {
				return 0
			}
			if v < 0 {
				return v * mult
			}
			return v * mult
		}
	}
	return v
}

func generalValue(s string) float64 {
	s = strings.TrimSpace(s)
	end := len(s)
	for end > 0 {
		if v, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return v
		}
		end--
	}
	return -1e308
}

func versionLess(a, b string) int {
	for a != "" || b != "" {
		// non-digit parts
		i := 0
		for i < len(a) && !(a[i] >= '0' && a[i] <= '9') {
			i++
		}
		j := 0
		for j < len(b) && !(b[j] >= '0' && b[j] <= '9') {
			j++
		}
		if c := strings.Compare(a[:i], b[:j]); c != 0 {
			return c
		}
		a, b = a[i:], b[j:]
		i, j = 0, 0
		for i < len(a) && a[i] >= '0' && a[i] <= '9' {
			i++
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		na, _ := strconv.ParseUint(strings.TrimLeft(a[:i], "0")+"0", 10, 64)
		nb, _ := strconv.ParseUint(strings.TrimLeft(b[:j], "0")+"0", 10, 64)
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
		a, b = a[i:], b[j:]
	}
	return 0
}

func compareKey(a, b string, k sortKey) int {
	var r int
	switch {
	case k.numeric:
		x, y := numPrefix(a), numPrefix(b)
		r = cmpFloat(x, y)
	case k.general:
		r = cmpFloat(generalValue(a), generalValue(b))
	case k.human:
		r = cmpFloat(humanValue(a), humanValue(b))
	case k.version:
		r = versionLess(a, b)
	default:
		if k.dict {
			a, b = dictOnly(a), dictOnly(b)
		}
		if k.fold {
			a, b = strings.ToUpper(a), strings.ToUpper(b)
		}
		r = strings.Compare(a, b)
	}
	if k.reverse {
		r = -r
	}
	return r
}

func dictOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || r == '\t' {
			return r
		}
		return -1
	}, s)
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func runSort(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "nrghfbsuzcCVdk:t:o:S:T:M", long: map[string]string{
		"numeric-sort": "n", "reverse": "r", "general-numeric-sort": "g", "human-numeric-sort": "h", "ignore-case": "f",
		"ignore-leading-blanks": "b", "stable": "s", "unique": "u", "zero-terminated": "z", "check": "c", "version-sort": "V",
		"key=": "k", "field-separator=": "t", "output=": "o", "buffer-size=": "S", "temporary-directory=": "T", "dictionary-order": "d",
	}}, 2)
	if !ok {
		return code
	}
	global := sortKey{numeric: o.has("n"), general: o.has("g"), human: o.has("h"), reverse: o.has("r"), fold: o.has("f"),
		blank: o.has("b"), version: o.has("V"), dict: o.has("d")}
	var keys []sortKey
	for _, ks := range o.vals("k") {
		k, ok := parseSortKey(ks)
		if !ok {
			return c.Usage(2, "invalid number at field start: invalid count at start of %s", q(ks))
		}
		if !k.hasOpts {
			k.numeric, k.general, k.human, k.reverse, k.fold, k.version, k.dict = global.numeric, global.general, global.human, global.reverse, global.fold, global.version, global.dict
			k.blank = k.blank || global.blank
		}
		keys = append(keys, k)
	}
	sep := -1
	if t, ok := o.val("t"); ok {
		if t == "\\0" {
			sep = 0
		} else if len(t) != 1 {
			return c.Fail("multi-character tab %s", q(t))
		} else {
			sep = int(t[0])
		}
	}
	delim := byte('\n')
	if o.has("z") {
		delim = 0
	}
	var lines []string
	status := c.Inputs(files, func(name string, r io.Reader) error {
		data, err := c.ReadAllFrom(r, 0)
		if err != nil {
			return err
		}
		if len(data) > 0 {
			data = bytes.TrimSuffix(data, []byte{delim})
			for _, l := range bytes.Split(data, []byte{delim}) {
				// Each line is a copy of its bytes and a string header
				// in the list (and one more in the list's spare room).
				if err := c.Reserve(int64(len(l)) + 2*lineCost); err != nil {
					return err
				}
				lines = append(lines, string(l))
			}
		}
		// The input's bytes were copied into the lines.
		c.Release(int64(len(data)))
		return nil
	})
	if status != 0 || c.Cancelled() {
		return 2
	}

	stable, unique := o.has("s"), o.has("u")
	cmp := func(a, b string) int {
		if len(keys) == 0 {
			ka, kb := a, b
			if global.blank {
				ka, kb = strings.TrimLeft(a, " \t"), strings.TrimLeft(b, " \t")
			}
			if r := compareKey(ka, kb, global); r != 0 || global == (sortKey{}) {
				return r
			}
		} else {
			for _, k := range keys {
				if r := compareKey(keyText(a, k, sep, false), keyText(b, k, sep, false), k); r != 0 {
					return r
				}
			}
		}
		return 0
	}
	calls := 0
	full := func(a, b string) int {
		if calls++; calls&0xffff == 0 && c.Cancelled() {
			panic(errSortCancelled)
		}
		if r := cmp(a, b); r != 0 {
			return r
		}
		if stable || unique {
			return 0
		}
		r := strings.Compare(a, b)
		if global.reverse {
			r = -r
		}
		return r
	}
	if o.has("c") || o.has("C") {
		for i := 1; i < len(lines); i++ {
			r := full(lines[i-1], lines[i])
			if r > 0 || (unique && r == 0) {
				if o.has("c") {
					c.Errorf("-:%d: disorder: %s", i+1, lines[i])
				}
				return 1
			}
		}
		return 0
	}
	sorted := cancellable(func() {
		if stable || unique {
			// Equal keys keep their input order (-s), and -u keeps the first.
			slices.SortStableFunc(lines, full)
		} else {
			// full breaks every tie with the whole line, so order among
			// equal elements cannot show: pdqsort, O(n log n).
			slices.SortFunc(lines, full)
		}
	})
	if !sorted {
		return 2
	}
	if unique {
		out := lines[:0]
		for i, l := range lines {
			if i == 0 || cmp(out[len(out)-1], l) != 0 {
				out = append(out, l)
			}
		}
		lines = out
	}
	var w io.Writer = c.Stdout
	if name, ok := o.val("o"); ok {
		f, err := c.Create(name, false)
		if err != nil {
			c.Errorf("open failed: %s: %s", name, ErrText(err))
			return 2
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	for _, l := range lines {
		bw.WriteString(l)
		if err := bw.WriteByte(delim); err != nil {
			break
		}
	}
	return exitWrite(c, bw.Flush(), 0)
}

// Sorting millions of lines is CPU without any stream to notice a
// cancelled run: the comparisons look at the context every 64Ki calls
// and unwind the sort with this panic, which cancellable recovers.
var errSortCancelled = errors.New("sort: cancelled")

// cancellable runs fn and reports whether it ran to its end (false:
// fn unwound with errSortCancelled).
func cancellable(fn func()) (done bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errSortCancelled {
				panic(r)
			}
			done = false
		}
	}()
	fn()
	return true
}
