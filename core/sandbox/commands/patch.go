package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("patch", "patch [-pN] [-R] [-N] [-i PATCHFILE] [-o OUTFILE] [--dry-run] [-s] [ORIGFILE [PATCHFILE]]", runPatch)
}

type patchHunk struct {
	oldStart, oldLen, newStart, newLen int
	lines                              []string // with their ' ', '-', '+' prefix
	oldNoEOL, newNoEOL                 bool
	text                               string // as in the patch, for .rej files
}

type patchFile struct {
	oldName, newName string
	hunks            []*patchHunk
	header           string
}

func parseRange(s string) (start, n int) {
	a, b, ok := strings.Cut(s, ",")
	start, _ = strconv.Atoi(a)
	n = 1
	if ok {
		n, _ = strconv.Atoi(b)
	}
	return start, n
}

func headerName(line string) string {
	name := strings.TrimSpace(line[4:])
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		name = name[:i]
	}
	return strings.Trim(name, `"`)
}

func parsePatch(text string) []*patchFile {
	lines := strings.SplitAfter(text, "\n")
	var files []*patchFile
	var cur *patchFile
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\n")
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			cur = &patchFile{oldName: headerName(l), newName: headerName(strings.TrimSuffix(lines[i+1], "\n")), header: lines[i] + lines[i+1]}
			files = append(files, cur)
			i++
			continue
		}
		if cur == nil || !strings.HasPrefix(l, "@@ -") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		h := &patchHunk{text: lines[i]}
		h.oldStart, h.oldLen = parseRange(strings.TrimPrefix(f[1], "-"))
		h.newStart, h.newLen = parseRange(strings.TrimPrefix(f[2], "+"))
		oldSeen, newSeen := 0, 0
		for i+1 < len(lines) && (oldSeen < h.oldLen || newSeen < h.newLen || strings.HasPrefix(lines[i+1], `\`)) {
			i++
			hl := strings.TrimSuffix(lines[i], "\n")
			h.text += lines[i]
			switch {
			case strings.HasPrefix(hl, `\`):
				if len(h.lines) > 0 {
					switch h.lines[len(h.lines)-1][0] {
					case '-':
						h.oldNoEOL = true
					case '+':
						h.newNoEOL = true
					default:
						h.oldNoEOL, h.newNoEOL = true, true
					}
				}
				continue
			case hl == "":
				hl = " "
			}
			switch hl[0] {
			case ' ':
				oldSeen++
				newSeen++
			case '-':
				oldSeen++
			case '+':
				newSeen++
			default:
				i--
				oldSeen, newSeen = h.oldLen, h.newLen
				continue
			}
			h.lines = append(h.lines, hl)
		}
		cur.hunks = append(cur.hunks, h)
	}
	return files
}

// dangerousPatchName reports a file name from a patch that is absolute
// or climbs with "..".
func dangerousPatchName(name string) bool {
	if strings.HasPrefix(name, "/") {
		return true
	}
	for _, comp := range strings.Split(name, "/") {
		if comp == ".." {
			return true
		}
	}
	return false
}

func stripPath(name string, p int) string {
	if p < 0 {
		return baseName(name, "")
	}
	for i := 0; i < p; i++ {
		j := strings.IndexByte(name, '/')
		if j < 0 {
			return name
		}
		name = name[j+1:]
	}
	return name
}

// applyHunk finds the hunk's old lines near their expected place and
// replaces them; it returns the offset used.
func applyHunk(lines []string, h *patchHunk, delta int, reverse bool) ([]string, int, bool) {
	var oldL, newL []string
	for _, l := range h.lines {
		op, body := l[0], l[1:]
		if reverse && op != ' ' {
			op = map[byte]byte{'+': '-', '-': '+'}[op]
		}
		switch op {
		case ' ':
			oldL, newL = append(oldL, body), append(newL, body)
		case '-':
			oldL = append(oldL, body)
		case '+':
			newL = append(newL, body)
		}
	}
	start := h.oldStart - 1
	if reverse {
		start = h.newStart - 1
	}
	if len(oldL) == 0 {
		start++ // "@@ -N,0": insert after line N
	}
	start += delta
	matches := func(at int) bool {
		if at < 0 || at+len(oldL) > len(lines) {
			return false
		}
		for k, l := range oldL {
			if lines[at+k] != l {
				return false
			}
		}
		return true
	}
	for off := 0; off <= len(lines)+len(oldL); off++ {
		for _, at := range []int{start - off, start + off} {
			if matches(at) {
				out := append([]string{}, lines[:at]...)
				out = append(out, newL...)
				out = append(out, lines[at+len(oldL):]...)
				return out, at - start, true
			}
			if off == 0 {
				break
			}
		}
	}
	return lines, 0, false
}

func runPatch(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "p:RNi:o:sfbtEu", long: map[string]string{
		"strip=": "p", "reverse": "R", "forward": "N", "input=": "i", "output=": "o", "dry-run": "D", "silent": "s", "quiet": "s",
		"force": "f", "backup": "b", "batch": "t", "remove-empty-files": "E", "unified": "u",
	}}, 2)
	if !ok {
		return code
	}
	strip := -1
	if v, ok := o.val("p"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.Errorf("strip count %s is not a number", v)
			return 2
		}
		strip = n
	}
	var patchText []byte
	var err error
	source := "-"
	if v, ok := o.val("i"); ok {
		source = v
	} else if len(args) > 1 {
		source = args[1]
	}
	if patchText, err = c.ReadAll(source); err != nil {
		c.Errorf("can't open patch file %s: %s", source, ErrText(err))
		return 2
	}
	files := parsePatch(string(patchText))
	if len(files) == 0 {
		c.Errorf("Only garbage was found in the patch input.")
		return 2
	}
	quiet, dry, reverse := o.has("s"), o.has("D"), o.has("R")
	status := 0
	for _, pf := range files {
		name := pf.newName
		if name == "/dev/null" || reverse && pf.oldName != "/dev/null" {
			name = pf.oldName
		}
		target := stripPath(name, strip)
		if len(args) > 0 {
			target = args[0]
		} else {
			if _, err := c.Stat(target); err != nil && pf.oldName != "/dev/null" {
				if alt := stripPath(pf.oldName, strip); alt != target && !dangerousPatchName(alt) {
					if _, err := c.Stat(alt); err == nil {
						target = alt
					}
				}
			}
			// A name from the patch text must stay below the working
			// directory, as GNU patch (2.7.2+) insists: an absolute name
			// or a ".." would let a patch write anywhere it likes. A
			// file named on the command line is the caller's choice.
			if dangerousPatchName(target) {
				c.Errorf("Ignoring potentially dangerous file name %s", target)
				fmt.Fprintf(c.Stdout, "No file to patch.  Skipping patch.\n%d out of %d hunk%s ignored\n", len(pf.hunks), len(pf.hunks), map[bool]string{true: "", false: "s"}[len(pf.hunks) == 1])
				status = 1
				continue
			}
		}
		creating := pf.oldName == "/dev/null" && !reverse || pf.newName == "/dev/null" && reverse
		deleting := pf.newName == "/dev/null" && !reverse || pf.oldName == "/dev/null" && reverse
		verb := "patching"
		if dry {
			verb = "checking"
		}
		if !quiet {
			fmt.Fprintf(c.Stdout, "%s file %s\n", verb, target)
		}
		var content string
		if data, err := c.ReadAll(target); err == nil {
			content = string(data)
		} else if !creating {
			c.Errorf("%s: %s", target, ErrText(err))
			status = 1
			continue
		}
		noEOL := content != "" && !strings.HasSuffix(content, "\n")
		lines := SplitLines([]byte(content))
		delta := 0
		mismatch := false // a hunk moved or failed: keep a .orig, as GNU patch
		var rejects []*patchHunk
		for n, h := range pf.hunks {
			var applied bool
			var off int
			lines, off, applied = applyHunk(lines, h, delta, reverse)
			if !applied {
				fmt.Fprintf(c.Stdout, "Hunk #%d FAILED at %d.\n", n+1, h.oldStart)
				rejects = append(rejects, h)
				continue
			}
			if off != 0 {
				mismatch = true
			}
			if off != 0 && !quiet {
				plural := "s"
				if off == 1 || off == -1 {
					plural = ""
				}
				fmt.Fprintf(c.Stdout, "Hunk #%d succeeded at %d (offset %d line%s).\n", n+1, h.oldStart+delta+off, off, plural)
			}
			delta += off
			newLen, oldLen := h.newLen, h.oldLen
			if reverse {
				newLen, oldLen = oldLen, newLen
			}
			delta += newLen - oldLen
			last := h.newNoEOL
			if reverse {
				last = h.oldNoEOL
			}
			if h.oldNoEOL || h.newNoEOL {
				noEOL = last
			}
		}
		if len(rejects) > 0 {
			status = 1
			rej := target + ".rej"
			fmt.Fprintf(c.Stdout, "%d out of %d hunk%s FAILED -- saving rejects to file %s\n", len(rejects), len(pf.hunks), map[bool]string{true: "", false: "s"}[len(pf.hunks) == 1], rej)
			mismatch = true
			if !dry {
				text := pf.header
				for _, h := range rejects {
					text += h.text
				}
				c.FS.WriteFile(c.Abs(rej), []byte(text), vfs.WriteOptions{})
			}
		}
		if dry {
			continue
		}
		if mismatch && !creating {
			c.FS.WriteFile(c.Abs(target+".orig"), []byte(content), vfs.WriteOptions{})
		}
		out := strings.Join(lines, "\n")
		if len(lines) > 0 && !noEOL {
			out += "\n"
		}
		dest := target
		if v, ok := o.val("o"); ok {
			dest = v
		}
		if deleting && out == "" {
			if err := c.FS.Unlink(c.Abs(target)); err != nil {
				c.PathError(target, err)
				status = 2
			}
			continue
		}
		if creating {
			c.FS.MkdirAll(c.Abs(dirName(dest)), 0o755)
		}
		var w io.Writer
		f, err := c.Create(dest, false)
		if err == nil {
			w = f
			_, err = io.WriteString(w, out)
			f.Close()
		}
		if err != nil {
			c.PathError(dest, err)
			status = 2
		}
	}
	return status
}
