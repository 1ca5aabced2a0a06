package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

func init() {
	register("head", "head [-n [-]N] [-c [-]N] [-qv] [FILE]...", func(c *Cmd) int { return runHeadTail(c, true) })
	register("tail", "tail [-n [+]N] [-c [+]N] [-qv] [FILE]...", func(c *Cmd) int { return runHeadTail(c, false) })
}

var numOpt = regexp.MustCompile(`^-([0-9]+)([cl]?)$`)

// parseCount reads N with optional sign and multiplier suffix (k, K, M,
// G, b, KB, MB...).
func parseCount(s string) (n int64, sign byte, ok bool) {
	if s == "" {
		return 0, 0, false
	}
	if s[0] == '+' || s[0] == '-' {
		sign, s = s[0], s[1:]
	}
	mult := int64(1)
	suffixes := []struct {
		s string
		m int64
	}{{"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1000}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
		{"b", 512}, {"k", 1024}, {"K", 1024}, {"M", 1 << 20}, {"G", 1 << 30}}
	for _, x := range suffixes {
		if strings.HasSuffix(s, x.s) {
			s, mult = strings.TrimSuffix(s, x.s), x.m
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, 0, false
	}
	return v * mult, sign, true
}

func runHeadTail(c *Cmd, head bool) int {
	// Old style: head -5, tail -3, tail +2.
	args := append([]string{}, c.Args[1:]...)
	for i, a := range args {
		if a == "--" {
			break
		}
		if i > 0 && (args[i-1] == "-n" || args[i-1] == "-c" || args[i-1] == "--lines" || args[i-1] == "--bytes") {
			continue
		}
		if m := numOpt.FindStringSubmatch(a); m != nil {
			if m[2] == "c" {
				args[i] = "-c" + m[1]
			} else {
				args[i] = "-n" + m[1]
			}
		} else if !head && len(a) > 1 && a[0] == '+' && i == 0 {
			if _, err := strconv.Atoi(a[1:]); err == nil {
				args[i] = "-n+" + a[1:]
			}
		}
	}
	c2 := *c
	c2.Args = append([]string{c.Args[0]}, args...)
	o, files, code, ok := c2.parseOpts(spec{short: "n:c:qvfFs:z", long: map[string]string{
		"lines=": "n", "bytes=": "c", "quiet": "q", "silent": "q", "verbose": "v", "follow": "f", "zero-terminated": "z",
	}}, 1)
	if !ok {
		return code
	}
	bytesMode := o.last("n", "c") == "c"
	count, sign := int64(10), byte(0)
	if v, ok := o.val(map[bool]string{true: "c", false: "n"}[bytesMode]); ok {
		var good bool
		count, sign, good = parseCount(v)
		if !good {
			what := "lines"
			if bytesMode {
				what = "bytes"
			}
			return c.Fail("invalid number of %s: %s", what, q(v))
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	delim := byte('\n')
	if o.has("z") {
		delim = 0
	}
	headers := (len(files) > 1 && !o.has("q")) || o.has("v")
	w := c.bufOut()
	first := true
	status := c.Inputs(files, func(name string, r io.Reader) error {
		if headers {
			if !first {
				w.WriteString("\n")
			}
			shown := name
			if name == "-" {
				shown = "standard input"
			}
			fmt.Fprintf(w, "==> %s <==\n", shown)
		}
		first = false
		var err error
		if head {
			err = headStream(c, w, r, count, sign == '-', bytesMode, delim)
		} else {
			err = tailStream(c, w, r, count, sign == '+', bytesMode, delim)
		}
		if err == nil {
			err = w.Flush()
		}
		return err
	})
	return exitWrite(c, w.Flush(), status)
}

func headStream(c *Cmd, w *bufio.Writer, r io.Reader, n int64, allBut, bytesMode bool, delim byte) error {
	if bytesMode {
		if !allBut {
			_, err := io.CopyN(w, r, n)
			if err == io.EOF {
				err = nil
			}
			return err
		}
		data, err := c.ReadAllFrom(r, 0)
		if err != nil {
			return err
		}
		if int64(len(data)) > n {
			_, err = w.Write(data[:int64(len(data))-n])
		}
		return err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if !allBut {
		for i := int64(0); i < n; i++ {
			line, err := br.ReadSlice(delim)
			if len(line) > 0 {
				if _, werr := w.Write(line); werr != nil {
					return werr
				}
			}
			if err == bufio.ErrBufferFull {
				i--
				continue
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	data, err := c.ReadAllFrom(br, 0)
	if err != nil {
		return err
	}
	lines := splitKeep(data, delim)
	if int64(len(lines)) > n {
		for _, l := range lines[:int64(len(lines))-n] {
			w.Write(l)
		}
	}
	return nil
}

// splitKeep splits data after each delim, keeping the delimiters.
func splitKeep(data []byte, delim byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, delim)
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

func tailStream(c *Cmd, w *bufio.Writer, r io.Reader, n int64, fromStart, bytesMode bool, delim byte) error {
	data, err := c.ReadAllFrom(r, 0)
	if err != nil {
		return err
	}
	if bytesMode {
		if fromStart {
			if n > 0 {
				n--
			}
			if n < int64(len(data)) {
				_, err = w.Write(data[n:])
			}
			return err
		}
		if n < int64(len(data)) {
			data = data[int64(len(data))-n:]
		}
		_, err = w.Write(data)
		return err
	}
	lines := splitKeep(data, delim)
	if fromStart {
		if n > 0 {
			n--
		}
		if n < int64(len(lines)) {
			for _, l := range lines[n:] {
				w.Write(l)
			}
		}
		return nil
	}
	if n < int64(len(lines)) {
		lines = lines[int64(len(lines))-n:]
	}
	for _, l := range lines {
		if _, err := w.Write(l); err != nil {
			return err
		}
	}
	return nil
}
