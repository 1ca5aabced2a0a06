package commands

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

func init() {
	register("cat", "cat [-nbsETA] [FILE]...", runCat)
}

func runCat(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "nbsETAuv", long: map[string]string{
		"number": "n", "number-nonblank": "b", "squeeze-blank": "s", "show-ends": "E", "show-tabs": "T", "show-all": "A",
	}}, 1)
	if !ok {
		return code
	}
	number, nonblank := o.has("n"), o.has("b")
	squeeze, ends, tabs := o.has("s"), o.has("E") || o.has("A"), o.has("T") || o.has("A")
	plain := !number && !nonblank && !squeeze && !ends && !tabs
	w := c.bufOut()
	lineNo := 0
	prevBlank := false
	status := c.Inputs(files, func(name string, r io.Reader) error {
		if plain {
			_, err := io.Copy(w, r)
			return err
		}
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				eol := strings.HasSuffix(line, "\n")
				body := strings.TrimSuffix(line, "\n")
				blank := body == ""
				if squeeze && blank && prevBlank && eol {
					continue
				}
				prevBlank = blank && eol
				if (number && !nonblank) || (nonblank && !blank) {
					lineNo++
					fmt.Fprintf(w, "%6d\t", lineNo)
				}
				if tabs {
					body = strings.ReplaceAll(body, "\t", "^I")
				}
				w.WriteString(body)
				if eol {
					if ends {
						w.WriteByte('$')
					}
					w.WriteByte('\n')
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return exitWrite(c, w.Flush(), status)
}
