package commands

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
)

func init() {
	register("shuf", "shuf [-rz] [-n COUNT] [-o FILE] [--random-source=FILE] [-e ARG... | -i LO-HI | FILE]", runShuf)
}

func runShuf(c *Cmd) int {
	o, ops, code, ok := c.parseOpts(spec{short: "ei:n:o:rz", long: map[string]string{
		"echo": "e", "input-range=": "i", "head-count=": "n", "output=": "o", "random-source=": "s",
		"repeat": "r", "zero-terminated": "z",
	}}, 1)
	if !ok {
		return code
	}
	sep := byte('\n')
	if o.has("z") {
		sep = 0
	}
	count := int64(-1)
	if v, ok := o.val("n"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c.Fail("invalid line count: %s", q(v))
		}
		count = n
	}
	var lines []string
	switch {
	case o.has("e"):
		lines = ops
	case o.has("i"):
		if len(ops) > 0 {
			return c.Usage(1, "extra operand %s", q(ops[0]))
		}
		v, _ := o.val("i")
		lo, hi, ok := strings.Cut(v, "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || b+1 < a {
			return c.Fail("invalid input range: %s", q(v))
		}
		if !o.has("r") {
			// Every number is held to shuffle it.
			if err := c.Reserve(int64(min(b-a+1, 1<<40)) * 24); err != nil {
				return 1
			}
			for x := a; x <= b && x >= a; x++ {
				if len(lines)&0xffff == 0 && c.Cancelled() {
					return 1
				}
				lines = append(lines, strconv.FormatUint(x, 10))
			}
		} else {
			for x := a; x <= b && x >= a && x-a < 1<<16; x++ {
				lines = append(lines, strconv.FormatUint(x, 10))
			}
		}
	default:
		if len(ops) > 1 {
			return c.Usage(1, "extra operand %s", q(ops[1]))
		}
		name := "-"
		if len(ops) == 1 {
			name = ops[0]
		}
		data, err := c.ReadAll(name)
		if err != nil {
			c.PathError(name, err)
			return 1
		}
		s := string(data)
		s = strings.TrimSuffix(s, string(sep))
		if s != "" || len(data) > 0 {
			lines = strings.Split(s, string(sep))
		}
		if err := c.KeepLines(lines); err != nil {
			return 1
		}
	}
	// --random-source makes the order a function of the file's bytes:
	// the same file gives the same order (not GNU's order, which
	// depends on how GNU consumes the bytes).
	var rng *rand.Rand
	if src, ok := o.val("s"); ok {
		f, err := c.Open(src, false)
		if err != nil {
			c.PathError(src, err)
			return 1
		}
		h := sha256.New()
		_, err = io.Copy(h, io.LimitReader(f, 1<<20))
		f.Close()
		if err != nil {
			c.PathError(src, err)
			return 1
		}
		sum := h.Sum(nil)
		rng = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	} else {
		var seed [16]byte
		cryptoRead(seed[:])
		rng = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	}
	out := c.Stdout
	if name, ok := o.val("o"); ok {
		f, err := c.Create(name, false)
		if err != nil {
			c.PathError(name, err)
			return 1
		}
		defer f.Close()
		out = f
	}
	w := bufio.NewWriterSize(out, 32<<10)
	if o.has("r") {
		if len(lines) == 0 {
			if count != 0 {
				c.Errorf("no lines to repeat")
				return 1
			}
			return 0
		}
		for i := int64(0); count < 0 || i < count; i++ {
			if i&0xfff == 0 && c.Cancelled() {
				break
			}
			w.WriteString(lines[rng.IntN(len(lines))])
			if err := w.WriteByte(sep); err != nil {
				break
			}
			if w.Buffered() > 32<<10 {
				if err := w.Flush(); err != nil {
					return exitWrite(c, err, 0)
				}
			}
		}
		return exitWrite(c, w.Flush(), 0)
	}
	n := len(lines)
	if count >= 0 && count < int64(n) {
		n = int(count)
	}
	// A partial Fisher-Yates: the first n places are a uniform sample.
	for i := 0; i < n; i++ {
		j := i + rng.IntN(len(lines)-i)
		lines[i], lines[j] = lines[j], lines[i]
		w.WriteString(lines[i])
		w.WriteByte(sep)
	}
	return exitWrite(c, w.Flush(), 0)
}
