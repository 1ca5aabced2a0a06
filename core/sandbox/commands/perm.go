package commands

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("chmod", "chmod [-Rcfv] [--reference=RFILE] MODE[,MODE]... FILE...", runChmod)
	register("chown", "chown [-Rcfvh] [--reference=RFILE] [OWNER][:[GROUP]] FILE...", runChown)
	register("chgrp", "chgrp [-Rcfvh] GROUP FILE...", runChown)
}

// applyMode computes a new mode from a chmod MODE (octal, or symbolic
// clauses "[ugoa]*([-+=]([rwxXst]*|[ugo]))+" joined by commas) as GNU
// chmod does; umask applies to clauses without a "who".
func applyMode(spec string, cur uint32, isDir bool, umask uint32) (uint32, error) {
	bad := fmt.Errorf("invalid mode: %s", q(spec))
	if spec != "" && strings.Trim(spec, "01234567") == "" {
		n, err := strconv.ParseUint(spec, 8, 32)
		if err != nil || n > 0o7777 {
			return 0, bad
		}
		m := uint32(n)
		if isDir && len(spec) < 5 {
			// GNU keeps a directory's set-id bits unless the
			// octal mode names them with a fifth digit.
			m |= cur & 0o6000
		}
		return m, nil
	}
	mode := cur & 0o7777
	for _, clause := range strings.Split(spec, ",") {
		i := 0
		var who uint32
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			switch clause[i] {
			case 'u':
				who |= 0o4700
			case 'g':
				who |= 0o2070
			case 'o':
				who |= 0o1007
			case 'a':
				who |= 0o7777
			}
			i++
		}
		masked := who == 0
		if masked {
			who = 0o7777
		}
		if i == len(clause) {
			return 0, bad
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return 0, bad
			}
			i++
			var bits uint32
			if i < len(clause) && strings.IndexByte("ugo", clause[i]) >= 0 {
				// Copy the bits of another class.
				var src uint32
				switch clause[i] {
				case 'u':
					src = (mode >> 6) & 7
				case 'g':
					src = (mode >> 3) & 7
				case 'o':
					src = mode & 7
				}
				bits = src<<6 | src<<3 | src
				i++
			} else {
				for ; i < len(clause) && strings.IndexByte("rwxXst", clause[i]) >= 0; i++ {
					switch clause[i] {
					case 'r':
						bits |= 0o444
					case 'w':
						bits |= 0o222
					case 'x':
						bits |= 0o111
					case 'X':
						if isDir || mode&0o111 != 0 {
							bits |= 0o111
						}
					case 's':
						bits |= 0o6000
					case 't':
						bits |= 0o1000
					}
				}
			}
			bits &= who
			if masked {
				bits &^= umask
			}
			switch op {
			case '+':
				mode |= bits
			case '-':
				mode &^= bits
			case '=':
				clear := who & 0o777
				if !isDir {
					clear |= who & 0o7000
				}
				mode = mode&^clear | bits
			}
		}
	}
	return mode, nil
}

func runChmod(c *Cmd) int {
	// A mode like "-w" looks like an option: take it out first.
	args := c.Args[1:]
	var modeArg string
	var rest []string
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if modeArg == "" && len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "rwxXst") == "" && !strings.ContainsAny(a[1:], "Rcfv") {
			modeArg = a
			continue
		}
		rest = append(rest, a)
	}
	o, ops, err := spec{short: "Rcfv", long: map[string]string{
		"recursive": "R", "changes": "c", "silent": "f", "quiet": "f", "verbose": "v", "reference=": "r",
		"no-preserve-root": "n", "preserve-root": "p",
	}}.parse(rest)
	if err != nil {
		return c.Usage(1, "%v", err)
	}
	ref, haveRef := o.val("r")
	if modeArg == "" && !haveRef {
		if len(ops) == 0 {
			return c.Usage(1, "missing operand")
		}
		modeArg, ops = ops[0], ops[1:]
	}
	if len(ops) == 0 {
		return c.Usage(1, "missing operand after %s", q(modeArg))
	}
	var refMode uint32
	if haveRef {
		st, err := c.Stat(ref)
		if err != nil {
			return c.Fail("failed to get attributes of %s: %s", q(ref), ErrText(err))
		}
		refMode = st.Perm()
	} else if _, err := applyMode(modeArg, 0, false, 0); err != nil {
		return c.Fail("%v", err)
	}
	umask := c.Umask
	quiet, verbose, changes := o.has("f"), o.has("v"), o.has("c")
	status := 0
	var one func(name string, st vfs.Stat, top bool)
	one = func(name string, st vfs.Stat, top bool) {
		if c.Cancelled() {
			return
		}
		p := c.Abs(name)
		if st.IsSymlink() {
			// chmod never changes a link itself; -R does not follow
			// the links it meets, and a named link is followed.
			if !top {
				return
			}
			var err error
			if st, err = c.FS.Stat(p); err != nil {
				if !quiet {
					c.Errorf("cannot operate on dangling symlink %s", q(name))
				}
				status = 1
				return
			}
		}
		newMode := refMode
		if !haveRef {
			newMode, _ = applyMode(modeArg, st.Perm(), st.IsDir(), umask)
		}
		if newMode != st.Perm() {
			if err := c.FS.Chmod(p, newMode); err != nil {
				if !quiet {
					c.Errorf("changing permissions of %s: %s", q(name), ErrText(err))
				}
				status = 1
				return
			}
		}
		if verbose || (changes && newMode != st.Perm()) {
			if newMode != st.Perm() {
				fmt.Fprintf(c.Stdout, "mode of %s changed from %04o (%s) to %04o (%s)\n", q(name), st.Perm(), st.ModeString()[1:], newMode, vfs.ModeString(st.Type() | newMode)[1:])
			} else {
				fmt.Fprintf(c.Stdout, "mode of %s retained as %04o (%s)\n", q(name), st.Perm(), st.ModeString()[1:])
			}
		}
		if o.has("R") && st.IsDir() {
			entries, err := c.FS.ReaddirPlus(p)
			if err != nil {
				c.Errorf("cannot read directory %s: %s", q(name), ErrText(err))
				status = 1
				return
			}
			for _, e := range entries {
				one(path.Join(name, e.Name), e.Stat, false)
			}
		}
	}
	for _, name := range ops {
		st, err := c.Lstat(name)
		if err != nil {
			if !quiet {
				c.Errorf("cannot access %s: %s", q(name), ErrText(err))
			}
			status = 1
			continue
		}
		one(name, st, true)
	}
	if c.Cancelled() {
		return 1
	}
	return status
}

// lookupUser resolves an owner as the sandbox sees users: its own user,
// root, or a number.
func (c *Cmd) lookupUser(name string) (int64, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int64(n), true
	}
	switch name {
	case c.ID.User:
		return int64(c.ID.UID), true
	case "root":
		return 0, true
	}
	return 0, false
}

func (c *Cmd) lookupGroup(name string) (int64, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int64(n), true
	}
	switch name {
	case c.ID.User:
		// The user's own group has the user's name, as on most systems.
		return int64(c.ID.GID), true
	case "root":
		return 0, true
	}
	return 0, false
}

func runChown(c *Cmd) int {
	isChgrp := c.Name() == "chgrp"
	o, ops, code, ok := c.parseOpts(spec{short: "RcfvhHLP", long: map[string]string{
		"recursive": "R", "changes": "c", "silent": "f", "quiet": "f", "verbose": "v", "no-dereference": "h",
		"dereference": "D", "reference=": "r", "from=": "F", "preserve-root": "p", "no-preserve-root": "n",
	}}, 1)
	if !ok {
		return code
	}
	uid, gid := int64(-1), int64(-1)
	if ref, ok := o.val("r"); ok {
		st, err := c.Stat(ref)
		if err != nil {
			return c.Fail("failed to get attributes of %s: %s", q(ref), ErrText(err))
		}
		uid, gid = int64(st.UID), int64(st.GID)
		if isChgrp {
			uid = -1
		}
	} else {
		if len(ops) == 0 {
			return c.Usage(1, "missing operand")
		}
		spec := ops[0]
		ops = ops[1:]
		if isChgrp {
			g, ok := c.lookupGroup(spec)
			if !ok {
				return c.Fail("invalid group: %s", q(spec))
			}
			gid = g
		} else {
			user, group, hasGroup := strings.Cut(spec, ":")
			if !hasGroup {
				user, group, hasGroup = strings.Cut(spec, ".")
				if hasGroup {
					if _, ok := c.lookupUser(spec); ok {
						user, group, hasGroup = spec, "", false
					}
				}
			}
			if user != "" {
				u, ok := c.lookupUser(user)
				if !ok {
					return c.Fail("invalid user: %s", q(spec))
				}
				uid = u
			}
			if hasGroup && group == "" && user != "" {
				// "user:": the user's login group.
				if uid == int64(c.ID.UID) {
					gid = int64(c.ID.GID)
				} else {
					gid = uid
				}
			} else if group != "" {
				g, ok := c.lookupGroup(group)
				if !ok {
					return c.Fail("invalid group: %s", q(spec))
				}
				gid = g
			}
		}
	}
	if len(ops) == 0 {
		return c.Usage(1, "missing operand after %s", q(c.Args[len(c.Args)-1]))
	}
	quiet, verbose := o.has("f"), o.has("v") || o.has("c")
	noDeref := o.has("h")
	status := 0
	var one func(name string, st vfs.Stat, top bool)
	one = func(name string, st vfs.Stat, top bool) {
		if c.Cancelled() {
			return
		}
		p := c.Abs(name)
		// -R never follows the links it meets; -h acts on a named link.
		follow := top && !noDeref
		if err := c.FS.Chown(p, uid, gid, follow || !st.IsSymlink()); err != nil {
			if !quiet {
				what := "ownership"
				if isChgrp || uid < 0 {
					what = "group"
				}
				c.Errorf("changing %s of %s: %s", what, q(name), ErrText(err))
			}
			status = 1
			return
		}
		if verbose {
			fmt.Fprintf(c.Stdout, "changed ownership of %s\n", q(name))
		}
		if o.has("R") && st.IsDir() {
			entries, err := c.FS.ReaddirPlus(p)
			if err != nil {
				c.Errorf("cannot read directory %s: %s", q(name), ErrText(err))
				status = 1
				return
			}
			for _, e := range entries {
				one(path.Join(name, e.Name), e.Stat, false)
			}
		}
	}
	for _, name := range ops {
		st, err := c.Lstat(name)
		if err != nil {
			if !quiet {
				c.Errorf("cannot access %s: %s", q(name), ErrText(err))
			}
			status = 1
			continue
		}
		if st.IsSymlink() && !noDeref {
			if fst, err := c.Stat(name); err == nil {
				st = fst
			}
		}
		one(name, st, true)
	}
	if c.Cancelled() {
		return 1
	}
	return status
}
