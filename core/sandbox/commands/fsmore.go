package commands

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("du", "du [-sahcb] [-d N] [FILE]...", runDu)
	register("df", "df [-h] [FILE]...", runDf)
	register("truncate", "truncate [-c] -s [+-]SIZE FILE...", runTruncate)
	register("tree", "tree [-adf] [-L N] [DIR]...", runTree)
	register("file", "file [-b] FILE...", runFile)
	register("split", "split [-l N | -b SIZE] [-d] [-a N] [FILE [PREFIX]]", runSplit)
}

func runDu(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "sahckbmd:x", long: map[string]string{
		"summarize": "s", "all": "a", "human-readable": "h", "total": "c", "max-depth=": "d", "bytes": "b", "apparent-size": "A",
	}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	maxDepth := -1
	if v, ok := o.val("d"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c.Fail("invalid maximum depth %s", q(v))
		}
		maxDepth = n
	}
	if o.has("s") {
		maxDepth = 0
	}
	bytesMode := o.has("b") || o.has("A")
	size := func(st vfs.Stat) int64 {
		if bytesMode {
			if st.IsDir() {
				return dispSize(st)
			}
			return st.Size
		}
		return allocBlocks(st) * 512
	}
	show := func(n int64) string {
		switch {
		case o.has("h"):
			return humanSize(n)
		case bytesMode:
			return strconv.FormatInt(n, 10)
		case o.has("m"):
			return strconv.FormatInt((n+(1<<20)-1)>>20, 10)
		}
		return strconv.FormatInt((n+1023)/1024, 10)
	}
	w := c.bufOut()
	status := 0
	var total int64
	var walk func(name, abs string, st vfs.Stat, depth int) int64
	walk = func(name, abs string, st vfs.Stat, depth int) int64 {
		sum := size(st)
		if st.IsDir() {
			entries, err := c.FS.ReaddirPlus(abs)
			if err != nil {
				c.Errorf("cannot read directory %s: %s", q(name), ErrText(err))
				status = 1
			}
			for _, e := range entries {
				sum += walk(joinPath(name, e.Name), joinPath(abs, e.Name), e.Stat, depth+1)
			}
		}
		if (st.IsDir() || o.has("a") || depth == 0) && (maxDepth < 0 || depth <= maxDepth) {
			fmt.Fprintf(w, "%s\t%s\n", show(sum), name)
		}
		return sum
	}
	for _, a := range args {
		st, err := c.Lstat(a)
		if err != nil {
			c.Errorf("cannot access %s: %s", q(a), ErrText(err))
			status = 1
			continue
		}
		total += walk(a, c.Abs(a), st, 0)
	}
	if o.has("c") {
		fmt.Fprintf(w, "%s\ttotal\n", show(total))
	}
	return exitWrite(c, w.Flush(), status)
}

func runDf(c *Cmd) int {
	o, _, code, ok := c.parseOpts(spec{short: "hkPTi", long: map[string]string{"human-readable": "h"}}, 1)
	if !ok {
		return code
	}
	s, err := c.FS.Statfs()
	if err != nil {
		return c.Fail("%s", ErrText(err))
	}
	bs := s.BlockSize
	total, free := s.Blocks*bs, s.BlocksFree*bs
	used := total - free
	pct := int64(0)
	if total > 0 {
		pct = (used*100 + total - 1) / total
	}
	num := func(n int64) string {
		if o.has("h") {
			return humanSize(n)
		}
		return strconv.FormatInt(n/1024, 10)
	}
	head := "1K-blocks"
	if o.has("h") {
		head = "Size"
	}
	fmt.Fprintf(c.Stdout, "Filesystem     %9s %9s %9s %4s Mounted on\n", head, "Used", "Available", "Use%")
	fmt.Fprintf(c.Stdout, "agentfs        %9s %9s %9s %3d%% /\n", num(total), num(used), num(free), pct)
	return 0
}

func runTruncate(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "cs:r:o", long: map[string]string{"no-create": "c", "size=": "s", "reference=": "r"}}, 1)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.Usage(1, "missing file operand")
	}
	var n int64
	var sign byte
	if r, ok := o.val("r"); ok {
		st, err := c.Stat(r)
		if err != nil {
			return c.Fail("cannot stat %s: %s", q(r), ErrText(err))
		}
		n = st.Size
	} else if v, ok := o.val("s"); ok {
		if v != "" && strings.IndexByte("<>/%", v[0]) >= 0 {
			return c.Fail("size prefix %c is not supported in the sandbox", v[0])
		}
		var good bool
		n, sign, good = parseCount(v)
		if !good {
			return c.Fail("invalid number: %s", q(v))
		}
	} else {
		return c.Usage(1, "you must specify either '--size' or '--reference'")
	}
	status := 0
	for _, f := range files {
		p := c.Abs(f)
		st, err := c.FS.Stat(p)
		if err != nil {
			if Errno(err) != syscall.ENOENT || o.has("c") {
				if Errno(err) != syscall.ENOENT {
					c.Errorf("cannot open %s for writing: %s", q(f), ErrText(err))
					status = 1
				}
				continue
			}
			h, err := c.FS.Open(p, os.O_WRONLY|os.O_CREATE, 0o666)
			if err != nil {
				c.Errorf("cannot open %s for writing: %s", q(f), ErrText(err))
				status = 1
				continue
			}
			h.Close()
		}
		size := n
		switch sign {
		case '+':
			size = st.Size + n
		case '-':
			size = max(0, st.Size-n)
		}
		if err := c.FS.Truncate(p, size); err != nil {
			c.Errorf("failed to truncate %s: %s", q(f), ErrText(err))
			status = 1
		}
	}
	return status
}

func runTree(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "adfL:", long: map[string]string{}}, 1)
	if !ok {
		return code
	}
	depth := -1
	if v, ok := o.val("L"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c.Fail("Invalid level, must be greater than 0.")
		}
		depth = n
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	w := c.bufOut()
	dirs, files := 0, 0
	var walk func(name, abs, prefix string, level int)
	walk = func(name, abs, prefix string, level int) {
		if depth >= 0 && level >= depth {
			return
		}
		entries, err := c.FS.ReaddirPlus(abs)
		if err != nil {
			return
		}
		var list []vfs.DirEntry
		for _, e := range entries {
			if strings.HasPrefix(e.Name, ".") && !o.has("a") {
				continue
			}
			if o.has("d") && !e.Stat.IsDir() {
				continue
			}
			list = append(list, e)
		}
		for i, e := range list {
			branch, next := "├── ", "│   "
			if i == len(list)-1 {
				branch, next = "└── ", "    "
			}
			shown := e.Name
			if o.has("f") {
				shown = joinPath(name, e.Name)
			}
			if e.Stat.IsSymlink() {
				t, _ := c.FS.Readlink(joinPath(abs, e.Name))
				shown += " -> " + t
			}
			w.WriteString(prefix + branch + shown + "\n")
			if e.Stat.IsDir() {
				dirs++
				walk(joinPath(name, e.Name), joinPath(abs, e.Name), prefix+next, level+1)
			} else {
				files++
			}
		}
	}
	status := 0
	for _, a := range args {
		st, err := c.Stat(a)
		if err != nil || !st.IsDir() {
			fmt.Fprintf(w, "%s  [error opening dir]\n", a)
			status = 2
			continue
		}
		w.WriteString(a + "\n")
		walk(a, c.Abs(a), "", 0)
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, one)
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	if o.has("d") {
		fmt.Fprintf(w, "\n%s\n", plural(dirs, "directory", "directories"))
	} else {
		fmt.Fprintf(w, "\n%s, %s\n", plural(dirs, "directory", "directories"), plural(files, "file", "files"))
	}
	return exitWrite(c, w.Flush(), status)
}

// fileKind describes content as file(1) does, for the common cases.
func fileKind(data []byte, mode uint32) string {
	if len(data) == 0 {
		return "empty"
	}
	switch {
	case len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b:
		return "gzip compressed data"
	case len(data) > 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n":
		return "PNG image data"
	case len(data) > 3 && string(data[:3]) == "\xff\xd8\xff":
		return "JPEG image data"
	case len(data) > 4 && string(data[:4]) == "%PDF":
		return "PDF document"
	case len(data) > 4 && string(data[:4]) == "PK\x03\x04":
		return "Zip archive data"
	case len(data) > 4 && string(data[:4]) == "\x7fELF":
		return "ELF executable"
	case len(data) > 262 && string(data[257:262]) == "ustar":
		return "POSIX tar archive"
	}
	for _, b := range data {
		if b == 0 {
			return "data"
		}
	}
	if !utf8.Valid(data) {
		return "ISO-8859 text"
	}
	text := "ASCII text"
	for _, b := range data {
		if b >= 0x80 {
			text = "Unicode text, UTF-8 text"
			break
		}
	}
	if strings.HasPrefix(string(data), "#!") {
		line, _, _ := strings.Cut(string(data[2:]), "\n")
		interp := strings.Fields(line)
		kind := "script"
		if len(interp) > 0 {
			prog := interp[0][strings.LastIndexByte(interp[0], '/')+1:]
			if prog == "env" && len(interp) > 1 {
				prog = interp[1]
			}
			switch prog {
			case "sh":
				kind = "POSIX shell script"
			case "bash":
				kind = "Bourne-Again shell script"
			default:
				kind = prog + " script"
			}
		}
		text = kind + ", " + text + " executable"
	} else if t := strings.TrimSpace(string(data)); (strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")) || (strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]")) {
		return "JSON text data"
	}
	return text
}

func runFile(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "bLi", long: map[string]string{"brief": "b", "dereference": "L", "mime-type": "i"}}, 1)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.Usage(1, "missing file operand")
	}
	width := 0
	for _, f := range files {
		width = max(width, len(f)+1)
	}
	for _, f := range files {
		var kind string
		st, err := c.Lstat(f)
		if o.has("L") && err == nil {
			st, err = c.Stat(f)
		}
		switch {
		case err != nil:
			kind = "cannot open `" + f + "' (" + ErrText(err) + ")"
		case st.IsDir():
			kind = "directory"
		case st.IsSymlink():
			t, _ := c.FS.Readlink(c.Abs(f))
			kind = "symbolic link to " + t
		default:
			f2, err := c.Open(f, false)
			if err != nil {
				kind = "cannot open `" + f + "' (" + ErrText(err) + ")"
				break
			}
			buf := make([]byte, 4096)
			n, _ := io.ReadFull(f2, buf)
			f2.Close()
			kind = fileKind(buf[:n], st.Mode)
		}
		if o.has("b") {
			fmt.Fprintln(c.Stdout, kind)
		} else {
			fmt.Fprintf(c.Stdout, "%-*s %s\n", width, f+":", kind)
		}
	}
	return 0
}

func splitSuffix(i, length int, numeric bool) (string, bool) {
	base, digits := 26, "abcdefghijklmnopqrstuvwxyz"
	if numeric {
		base, digits = 10, "0123456789"
	}
	b := make([]byte, length)
	for k := length - 1; k >= 0; k-- {
		b[k] = digits[i%base]
		i /= base
	}
	return string(b), i == 0
}

func runSplit(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "l:b:da:", long: map[string]string{"lines=": "l", "bytes=": "b", "numeric-suffixes": "d", "suffix-length=": "a"}}, 1)
	if !ok {
		return code
	}
	in, prefix := "-", "x"
	if len(args) > 0 {
		in = args[0]
	}
	if len(args) > 1 {
		prefix = args[1]
	}
	length := 2
	if v, ok := o.val("a"); ok {
		length, _ = strconv.Atoi(v)
		length = max(length, 1)
	}
	data, err := c.ReadAll(in)
	if err != nil {
		c.PathError(in, err)
		return 1
	}
	var chunks [][]byte
	if v, ok := o.val("b"); ok {
		n, _, good := parseCount(v)
		if !good || n <= 0 {
			return c.Fail("invalid number of bytes: %s", q(v))
		}
		for i := int64(0); i < int64(len(data)); i += n {
			chunks = append(chunks, data[i:min(i+n, int64(len(data)))])
		}
	} else {
		n := int64(1000)
		if v, ok := o.val("l"); ok {
			var good bool
			if n, _, good = parseCount(v); !good || n <= 0 {
				return c.Fail("invalid number of lines: %s", q(v))
			}
		}
		lines := splitKeep(data, '\n')
		for i := int64(0); i < int64(len(lines)); i += n {
			var chunk []byte
			for _, l := range lines[i:min(i+n, int64(len(lines)))] {
				chunk = append(chunk, l...)
			}
			chunks = append(chunks, chunk)
		}
	}
	for i, ch := range chunks {
		suf, fits := splitSuffix(i, length, o.has("d"))
		if !fits {
			return c.Fail("output file suffixes exhausted")
		}
		if err := c.FS.WriteFile(c.Abs(prefix+suf), ch, vfs.WriteOptions{}); err != nil {
			c.PathError(prefix+suf, err)
			return 1
		}
	}
	return 0
}
