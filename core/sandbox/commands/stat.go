package commands

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("stat", "stat [-L] [-c FORMAT | --printf FORMAT] FILE...", runStat)
	register("readlink", "readlink [-f|-e|-m] [-n] FILE...", runReadlink)
	register("realpath", "realpath [-e|-m] [-s] [--relative-to DIR] FILE...", runRealpath)
	register("pwd", "pwd [-LP]", runPwd)
}

func statTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05.000000000 -0700")
}

func (c *Cmd) statFormat(format, name string, st vfs.Stat, printf bool) string {
	return formatSpec{escapes: printf, flags: "-0123456789"}.expand(format, func(pad string, format string, i *int) string {
		var v string
		switch format[*i] {
		case '%':
			v = "%"
		case 'n':
			v = name
		case 'N':
			v = "'" + name + "'"
			if st.IsSymlink() {
				t, _ := c.FS.Readlink(c.Abs(name))
				v += " -> '" + t + "'"
			}
		case 's':
			v = strconv.FormatInt(dispSize(st), 10)
		case 'a':
			v = strconv.FormatUint(uint64(st.Perm()), 8)
		case 'A':
			v = st.ModeString()
		case 'f':
			v = strconv.FormatUint(uint64(st.Mode), 16)
		case 'F':
			v = st.FileType()
		case 'u':
			v = strconv.FormatUint(uint64(st.UID), 10)
		case 'g':
			v = strconv.FormatUint(uint64(st.GID), 10)
		case 'U':
			v = c.userName(st.UID, false)
		case 'G':
			v = c.groupName(st.GID, false)
		case 'i':
			v = strconv.FormatInt(st.Ino, 10)
		case 'h':
			v = strconv.FormatUint(uint64(st.Nlink), 10)
		case 'b':
			v = strconv.FormatInt(allocBlocks(st), 10)
		case 'B':
			v = "512"
		case 'o':
			v = "4096"
		case 'd', 'D':
			v = "0"
		case 't', 'T':
			v = "0"
		case 'X':
			v = strconv.FormatInt(st.Atime.Unix(), 10)
		case 'Y':
			v = strconv.FormatInt(st.Mtime.Unix(), 10)
		case 'Z':
			v = strconv.FormatInt(st.Ctime.Unix(), 10)
		case 'W':
			v = "0"
		case 'x':
			v = statTime(st.Atime)
		case 'y':
			v = statTime(st.Mtime)
		case 'z':
			v = statTime(st.Ctime)
		case 'w':
			v = "-"
		default:
			v = "?"
		}
		if pad != "" {
			if n, err := strconv.Atoi(strings.TrimLeft(pad, "-0")); err == nil && n <= maxFieldWidth {
				switch {
				case strings.HasPrefix(pad, "-"):
					v = fmt.Sprintf("%-*s", n, v)
				case strings.HasPrefix(pad, "0"):
					v = strings.Repeat("0", max(0, n-len(v))) + v
				default:
					v = fmt.Sprintf("%*s", n, v)
				}
			}
		}
		return v
	})
}

func runStat(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "Lc:t", long: map[string]string{"dereference": "L", "format=": "c", "printf=": "p", "terse": "t"}}, 1)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.Usage(1, "missing operand")
	}
	status := 0
	w := c.bufOut()
	for _, f := range files {
		var st vfs.Stat
		var err error
		if o.has("L") {
			st, err = c.Stat(f)
		} else {
			st, err = c.Lstat(f)
		}
		if err != nil {
			c.Errorf("cannot statx %s: %s", q(f), ErrText(err))
			status = 1
			continue
		}
		switch {
		case o.has("p"):
			v, _ := o.val("p")
			w.WriteString(c.statFormat(v, f, st, true))
		case o.has("c"):
			v, _ := o.val("c")
			w.WriteString(c.statFormat(v, f, st, false) + "\n")
		case o.has("t"):
			w.WriteString(c.statFormat("%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o", f, st, false) + "\n")
		default:
			name := "%N"
			if !st.IsSymlink() {
				name = "%n"
			}
			format := "  File: " + name + "\n" +
				"  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n" +
				"Device: 0,0\tInode: %-11i Links: %h\n" +
				"Access: (%04a/%A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n" +
				"Access: %x\nModify: %y\nChange: %z\n Birth: -\n"
			w.WriteString(c.statFormat(format, f, st, false))
		}
	}
	return exitWrite(c, w.Flush(), status)
}

// canon resolves name to an absolute path without symlinks, "." or "..".
// mode 'e': every component must exist; 'f': all but the last; 'm': none.
func (c *Cmd) canon(name string, mode byte) (string, error) {
	p := c.Abs(name)
	comps := strings.Split(strings.Trim(p, "/"), "/")
	resolved := "/"
	hops := 0
	for len(comps) > 0 {
		comp := comps[0]
		comps = comps[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, comp)
		st, err := c.FS.Lstat(next)
		if err != nil {
			if Errno(err) == syscall.ENOENT && (mode == 'm' || mode == 'f' && len(nonEmpty(comps)) == 0) {
				resolved = next
				continue
			}
			return "", err
		}
		if st.IsSymlink() {
			hops++
			if hops > 40 {
				return "", syscall.ELOOP
			}
			target, err := c.FS.Readlink(next)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				resolved = "/"
			}
			comps = append(strings.Split(target, "/"), comps...)
			continue
		}
		if !st.IsDir() && len(nonEmpty(comps)) > 0 && mode != 'm' {
			return "", syscall.ENOTDIR
		}
		resolved = next
	}
	return resolved, nil
}

func nonEmpty(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" && x != "." {
			out = append(out, x)
		}
	}
	return out
}

func runReadlink(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "femnqsvz", long: map[string]string{
		"canonicalize": "f", "canonicalize-existing": "e", "canonicalize-missing": "m", "no-newline": "n", "quiet": "q", "silent": "s", "verbose": "v", "zero": "z",
	}}, 1)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.Usage(1, "missing operand")
	}
	end := "\n"
	if o.has("n") && len(files) == 1 {
		end = ""
	}
	if o.has("z") {
		end = "\x00"
	}
	mode := o.last("f", "e", "m")
	status := 0
	for _, f := range files {
		var out string
		var err error
		if mode != "" {
			out, err = c.canon(f, mode[0])
		} else {
			out, err = c.FS.Readlink(strings.TrimSuffix(c.Abs(f), "/"))
		}
		if err != nil {
			if o.has("v") {
				c.PathError(f, err)
			}
			status = 1
			continue
		}
		fmt.Fprint(c.Stdout, out+end)
	}
	return status
}

func runRealpath(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "emsqLPz", long: map[string]string{
		"canonicalize-existing": "e", "canonicalize-missing": "m", "strip": "s", "no-symlinks": "s", "quiet": "q",
		"relative-to=": "r", "relative-base=": "b", "logical": "L", "physical": "P", "zero": "z",
	}}, 1)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.Usage(1, "missing operand")
	}
	mode := byte('f')
	if m := o.last("e", "m"); m != "" {
		mode = m[0]
	}
	end := "\n"
	if o.has("z") {
		end = "\x00"
	}
	relTo := ""
	if r, ok := o.val("r"); ok {
		var err error
		if relTo, err = c.canon(r, 'm'); err != nil {
			c.PathError(r, err)
			return 1
		}
	}
	status := 0
	for _, f := range files {
		var out string
		var err error
		if o.has("s") {
			out = path.Clean(c.Abs(f))
		} else {
			out, err = c.canon(f, mode)
		}
		if err != nil {
			if !o.has("q") {
				c.PathError(f, err)
			}
			status = 1
			continue
		}
		if relTo != "" {
			out = relPath(relTo, out)
		}
		fmt.Fprint(c.Stdout, out+end)
	}
	return status
}

// relPath returns target relative to base (both absolute and clean).
func relPath(base, target string) string {
	bs := nonEmpty(strings.Split(base, "/"))
	ts := nonEmpty(strings.Split(target, "/"))
	i := 0
	for i < len(bs) && i < len(ts) && bs[i] == ts[i] {
		i++
	}
	var parts []string
	for range bs[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, ts[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// runPwd serves "pwd -P" (the shell's own pwd would look at the host).
func runPwd(c *Cmd) int {
	physical := false
	for _, a := range c.Args[1:] {
		switch a {
		case "-P":
			physical = true
		case "-L":
			physical = false
		default:
			return c.Usage(1, "invalid option %s", q(a))
		}
	}
	dir := c.Dir
	if physical {
		p, err := c.canon(dir, 'e')
		if err != nil {
			return c.Fail("error retrieving current directory: %s", ErrText(err))
		}
		dir = p
	}
	fmt.Fprintln(c.Stdout, dir)
	return 0
}
