package commands

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("wc", "wc [-lwcmL] [FILE]...", runWc)
}

type wcCounts struct{ lines, words, bytes, chars, maxLine int64 }

func runWc(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "lwcmL", long: map[string]string{
		"lines": "l", "words": "w", "bytes": "c", "chars": "m", "max-line-length": "L",
	}}, 1)
	if !ok {
		return code
	}
	show := []bool{o.has("l"), o.has("w"), o.has("m"), o.has("c"), o.has("L")}
	if !show[0] && !show[1] && !show[2] && !show[3] && !show[4] {
		show = []bool{true, true, false, true, false}
	}
	byteChars := c.CLocale()
	var results [][]int64
	var names []string
	var total wcCounts
	status := c.Inputs(files, func(name string, r io.Reader) error {
		var k wcCounts
		br := bufio.NewReaderSize(r, 64<<10)
		inWord := false
		lineLen := int64(0)
		for {
			var ch rune
			var size int
			var err error
			if byteChars {
				// LC_ALL=C: a character is a byte.
				var b byte
				b, err = br.ReadByte()
				ch, size = rune(b), 1
			} else {
				ch, size, err = br.ReadRune()
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			k.bytes += int64(size)
			k.chars++
			if ch == '\n' {
				k.lines++
				k.maxLine = max(k.maxLine, lineLen)
				lineLen = 0
			} else if ch == '\t' {
				lineLen += 8 - lineLen%8
			} else if byteChars || ch != utf8.RuneError || size != 1 {
				lineLen++
			}
			if (byteChars && ch < 0x80 && unicode.IsSpace(ch)) || (!byteChars && unicode.IsSpace(ch)) {
				inWord = false
			} else if !inWord {
				inWord = true
				k.words++
			}
		}
		k.maxLine = max(k.maxLine, lineLen)
		total.lines += k.lines
		total.words += k.words
		total.bytes += k.bytes
		total.chars += k.chars
		total.maxLine = max(total.maxLine, k.maxLine)
		results = append(results, []int64{k.lines, k.words, k.chars, k.bytes, k.maxLine})
		if name == "-" && len(files) == 0 {
			name = ""
		}
		names = append(names, name)
		return nil
	})
	if len(names) > 1 {
		results = append(results, []int64{total.lines, total.words, total.chars, total.bytes, total.maxLine})
		names = append(names, "total")
	}
	// GNU pads every column to the width of the largest number, at least
	// 7 when reading stdin, unless a single count of a single file.
	nshow := 0
	for _, s := range show {
		if s {
			nshow++
		}
	}
	// GNU pads every column to the digits of the summed sizes of the
	// regular input files, at least 7 when an input is not a regular file
	// (stdin, a pipe), and not at all for one count of one input.
	var sum int64
	irregular := false
	inputs := files
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	for _, f := range inputs {
		var st vfs.Stat
		var err error
		if f == "-" {
			// "wc < file" sizes its columns from the file, as GNU
			// does; a pipe or a terminal gets the width of 7.
			st, err = c.StdinStat()
		} else {
			st, err = c.Stat(f)
		}
		if err == nil && st.IsRegular() {
			sum += st.Size
		} else if err == nil || f == "-" {
			irregular = true
		}
	}
	width := len(strconv.FormatInt(sum, 10))
	if irregular {
		width = max(width, 7)
	}
	if nshow == 1 && len(names) == 1 {
		width = 1
	}
	w := c.bufOut()
	for i, r := range results {
		var cols []string
		for j, v := range r {
			if show[j] {
				cols = append(cols, fmt.Sprintf("%*d", width, v))
			}
		}
		line := strings.Join(cols, " ")
		if names[i] != "" {
			line += " " + names[i]
		}
		w.WriteString(line + "\n")
	}
	return exitWrite(c, w.Flush(), status)
}
