package commands

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("mkdir", "mkdir [-pv] [-m MODE] DIR...", runMkdir)
	register("rmdir", "rmdir [-pv] [--ignore-fail-on-non-empty] DIR...", runRmdir)
	register("rm", "rm [-rRfdvi] FILE...", runRm)
	register("mv", "mv [-fnvT] SOURCE... DEST", runMv)
	register("cp", "cp [-rRapfnvTLP] SOURCE... DEST", runCp)
	register("ln", "ln [-sfnvT] TARGET... LINK", runLn)
	register("touch", "touch [-acm] [-d DATE] [-t STAMP] [-r FILE] FILE...", runTouch)
}

// q quotes a name as GNU tools do in the C locale.
func q(s string) string { return "'" + s + "'" }

func parseMode(s string, base uint32) (uint32, bool) {
	if n, err := strconv.ParseUint(s, 8, 32); err == nil {
		return uint32(n), true
	}
	mode := base
	for _, clause := range strings.Split(s, ",") {
		i := strings.IndexAny(clause, "+-=")
		if i < 0 {
			return 0, false
		}
		who, op, perms := clause[:i], clause[i], clause[i+1:]
		var mask uint32
		if who == "" || strings.Contains(who, "a") {
			mask = 0o777
		}
		if strings.Contains(who, "u") {
			mask |= 0o700
		}
		if strings.Contains(who, "g") {
			mask |= 0o070
		}
		if strings.Contains(who, "o") {
			mask |= 0o007
		}
		var bits uint32
		for _, p := range perms {
			switch p {
			case 'r':
				bits |= 0o444
			case 'w':
				bits |= 0o222
			case 'x', 'X':
				bits |= 0o111
			default:
				return 0, false
			}
		}
		bits &= mask
		switch op {
		case '+':
			mode |= bits
		case '-':
			mode &^= bits
		case '=':
			mode = mode&^mask | bits
		}
	}
	return mode, true
}

func runMkdir(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "pvm:", long: map[string]string{"parents": "p", "verbose": "v", "mode=": "m"}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return c.Usage(1, "missing operand")
	}
	perm := uint32(0o777)
	if m, ok := o.val("m"); ok {
		if perm, ok = parseMode(m, 0o777); !ok {
			return c.Fail("invalid mode %s", q(m))
		}
	}
	status := 0
	for _, a := range args {
		p := c.Abs(a)
		var err error
		if o.has("p") {
			if st, serr := c.FS.Stat(p); serr == nil && st.IsDir() {
				continue
			}
			err = c.FS.MkdirAll(p, perm)
		} else {
			err = c.FS.Mkdir(p, perm)
		}
		if err != nil {
			c.Errorf("cannot create directory %s: %s", q(a), ErrText(err))
			status = 1
			continue
		}
		if _, ok := o.val("m"); ok {
			c.FS.Chmod(p, perm)
		}
		if o.has("v") {
			fmt.Fprintf(c.Stdout, "mkdir: created directory %s\n", q(a))
		}
	}
	return status
}

func runRmdir(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "pv", long: map[string]string{"parents": "p", "verbose": "v", "ignore-fail-on-non-empty": "I"}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return c.Usage(1, "missing operand")
	}
	status := 0
	for _, a := range args {
		names := []string{a}
		if o.has("p") {
			for d := dirName(a); d != "." && d != "/"; d = dirName(d) {
				names = append(names, d)
			}
		}
		for _, n := range names {
			err := c.FS.Rmdir(c.Abs(n))
			if err != nil {
				if o.has("I") && Errno(err) == syscall.ENOTEMPTY {
					break
				}
				c.Errorf("failed to remove %s: %s", q(n), ErrText(err))
				status = 1
				break
			}
			if o.has("v") {
				fmt.Fprintf(c.Stdout, "rmdir: removing directory, %s\n", q(n))
			}
		}
	}
	return status
}

func runRm(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "rRfdvi", long: map[string]string{
		"recursive": "r", "force": "f", "dir": "d", "verbose": "v", "interactive": "i", "no-preserve-root": "N", "preserve-root": "P",
	}}, 1)
	if !ok {
		return code
	}
	force := o.last("f", "i") == "f"
	recursive := o.has("r") || o.has("R")
	if len(args) == 0 {
		if force {
			return 0
		}
		return c.Usage(1, "missing operand")
	}
	status := 0
	for _, a := range args {
		p := c.Abs(a)
		base := baseName(a, "")
		if base == "." || base == ".." {
			c.Errorf("refusing to remove '.' or '..' directory: skipping %s", q(a))
			status = 1
			continue
		}
		lp := strings.TrimSuffix(p, "/")
		if p == "/" {
			lp = "/"
		}
		st, err := c.FS.Lstat(lp)
		if err != nil {
			if force && Errno(err) == syscall.ENOENT {
				continue
			}
			c.Errorf("cannot remove %s: %s", q(a), ErrText(err))
			status = 1
			continue
		}
		if st.IsDir() {
			if recursive && p == "/" && !o.has("N") {
				c.Errorf("it is dangerous to operate recursively on '/'")
				c.Errorf("use --no-preserve-root to override this failsafe")
				status = 1
				continue
			}
			switch {
			case recursive:
				err = c.removeTree(p, a, o.has("v"))
			case o.has("d"):
				err = c.FS.Rmdir(p)
			default:
				c.Errorf("cannot remove %s: Is a directory", q(a))
				status = 1
				continue
			}
		} else {
			err = c.FS.Unlink(strings.TrimSuffix(p, "/"))
			if err == nil && o.has("v") {
				fmt.Fprintf(c.Stdout, "removed %s\n", q(a))
			}
		}
		if err != nil {
			c.Errorf("cannot remove %s: %s", q(a), ErrText(err))
			status = 1
		}
	}
	return status
}

// removeTree removes a directory tree; verbose lists every entry as GNU
// rm -v does (children first).
func (c *Cmd) removeTree(p, shown string, verbose bool) error {
	if !verbose {
		if p == "/" {
			entries, err := c.FS.ReaddirPlus("/")
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := c.FS.RemoveAll("/" + e.Name); err != nil {
					return err
				}
			}
			return nil
		}
		return c.FS.RemoveAll(p)
	}
	entries, err := c.FS.ReaddirPlus(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		cp, cs := joinPath(p, e.Name), joinPath(shown, e.Name)
		if e.Stat.IsDir() {
			if err := c.removeTree(cp, cs, true); err != nil {
				return err
			}
			continue
		}
		if err := c.FS.Unlink(cp); err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "removed %s\n", q(cs))
	}
	if err := c.FS.Rmdir(p); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "removed directory %s\n", q(shown))
	return nil
}

func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// target works out where SOURCE goes for mv, cp and ln: into DEST when
// DEST is a directory (and -T is not given).
func (c *Cmd) destFor(src, dest string, destIsDir bool) string {
	if destIsDir {
		return joinPath(dest, baseName(src, ""))
	}
	return dest
}

func (c *Cmd) splitDest(op string, args []string, noTarget bool, targetDir string) (srcs []string, dest string, isDir bool, status int, ok bool) {
	if targetDir != "" {
		st, err := c.Stat(targetDir)
		if err != nil || !st.IsDir() {
			c.Errorf("target directory %s: %s", q(targetDir), ErrText(orErr(err, syscall.ENOTDIR)))
			return nil, "", false, 1, false
		}
		if len(args) == 0 {
			return nil, "", false, c.Usage(1, "missing file operand"), false
		}
		return args, targetDir, true, 0, true
	}
	if len(args) == 0 {
		return nil, "", false, c.Usage(1, "missing file operand"), false
	}
	if len(args) == 1 {
		return nil, "", false, c.Usage(1, "missing destination file operand after %s", q(args[0])), false
	}
	srcs, dest = args[:len(args)-1], args[len(args)-1]
	st, err := c.Stat(dest)
	isDir = err == nil && st.IsDir() && !noTarget
	if noTarget && len(srcs) > 1 {
		return nil, "", false, c.Usage(1, "extra operand %s", q(srcs[1])), false
	}
	if len(srcs) > 1 && !isDir {
		if err != nil {
			c.Errorf("target %s: %s", q(dest), ErrText(err))
		} else {
			c.Errorf("target %s is not a directory", q(dest))
		}
		return nil, "", false, 1, false
	}
	return srcs, dest, isDir, 0, true
}

func orErr(err error, e syscall.Errno) error {
	if err != nil {
		return err
	}
	return e
}

func runMv(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "fnvTit:", long: map[string]string{
		"force": "f", "no-clobber": "n", "verbose": "v", "no-target-directory": "T", "interactive": "i", "target-directory=": "t",
	}}, 1)
	if !ok {
		return code
	}
	td, _ := o.val("t")
	srcs, dest, isDir, status, ok := c.splitDest("mv", args, o.has("T"), td)
	if !ok {
		return status
	}
	for _, s := range srcs {
		d := c.destFor(s, dest, isDir)
		sp, dp := c.Abs(s), c.Abs(d)
		sst, err := c.FS.Lstat(strings.TrimSuffix(sp, "/"))
		if err != nil {
			c.Errorf("cannot stat %s: %s", q(s), ErrText(err))
			status = 1
			continue
		}
		dst, derr := c.FS.Lstat(strings.TrimSuffix(dp, "/"))
		if derr == nil {
			if o.last("n", "f", "i") == "n" {
				continue
			}
			if dst.Ino == sst.Ino {
				c.Errorf("%s and %s are the same file", q(s), q(d))
				status = 1
				continue
			}
			if dst.IsDir() && !sst.IsDir() {
				c.Errorf("cannot overwrite directory %s with non-directory", q(d))
				status = 1
				continue
			}
			if !dst.IsDir() && sst.IsDir() {
				c.Errorf("cannot overwrite non-directory %s with directory %s", q(d), q(s))
				status = 1
				continue
			}
		}
		if sst.IsDir() && (dp == sp || strings.HasPrefix(strings.TrimSuffix(dp, "/")+"/", strings.TrimSuffix(sp, "/")+"/")) {
			c.Errorf("cannot move %s to a subdirectory of itself, %s", q(s), q(d))
			status = 1
			continue
		}
		if err := c.FS.Rename(strings.TrimSuffix(sp, "/"), strings.TrimSuffix(dp, "/")); err != nil {
			c.Errorf("cannot move %s to %s: %s", q(s), q(d), ErrText(err))
			status = 1
			continue
		}
		if o.has("v") {
			fmt.Fprintf(c.Stdout, "renamed %s -> %s\n", q(s), q(d))
		}
	}
	return status
}

type cpOpts struct {
	recursive, preserve, noClobber, verbose, deref, force bool
}

func runCp(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "rRapfnvTLPdt:iu", long: map[string]string{
		"recursive": "r", "archive": "a", "preserve": "p", "force": "f", "no-clobber": "n", "verbose": "v",
		"no-target-directory": "T", "dereference": "L", "no-dereference": "P", "target-directory=": "t", "interactive": "i", "update": "u",
	}}, 1)
	if !ok {
		return code
	}
	opt := cpOpts{
		recursive: o.has("r") || o.has("R") || o.has("a"),
		preserve:  o.has("p") || o.has("a"),
		noClobber: o.last("n", "f", "i") == "n",
		verbose:   o.has("v"),
		force:     o.has("f"),
	}
	// Without -R, symlinks are followed; with it they are copied as
	// links unless -L.
	opt.deref = !opt.recursive || o.last("L", "P", "d", "a") == "L"
	td, _ := o.val("t")
	srcs, dest, isDir, status, ok := c.splitDest("cp", args, o.has("T"), td)
	if !ok {
		return status
	}
	for _, s := range srcs {
		d := c.destFor(s, dest, isDir)
		var st vfs.Stat
		var err error
		if opt.deref {
			st, err = c.Stat(s)
		} else {
			st, err = c.Lstat(strings.TrimSuffix(s, "/"))
		}
		if err != nil {
			c.Errorf("cannot stat %s: %s", q(s), ErrText(err))
			status = 1
			continue
		}
		if st.IsDir() && !opt.recursive {
			c.Errorf("-r not specified; omitting directory %s", q(s))
			status = 1
			continue
		}
		if err := c.copyTree(s, d, opt); err != nil {
			if errors.Is(err, vfs.ErrCopyStopped) {
				return 1
			}
			status = 1
		}
	}
	return status
}

// copyTree is cp of one operand: vfs.CopyTree through the sandbox's
// policy-checking filesystem, each failed entry reported as GNU cp does
// (with the operand's own spelling) and skipped.
func (c *Cmd) copyTree(s, d string, opt cpOpts) error {
	var failed error
	name := func(operand, rel string) string {
		if rel == "" {
			return operand
		}
		return joinPath(operand, rel)
	}
	err := vfs.CopyTree(c.FS, c.Abs(s), c.Abs(d), vfs.CopyOptions{
		FollowTop: opt.deref,
		Deref:     opt.deref,
		Preserve:  opt.preserve,
		NoClobber: opt.noClobber,
		Stop:      c.Cancelled,
		Done: func(rel string, st vfs.Stat, created bool) {
			if opt.verbose && (created || !st.IsDir()) {
				fmt.Fprintf(c.Stdout, "%s -> %s\n", q(name(s, rel)), q(name(d, rel)))
			}
		},
		Failed: func(e *vfs.CopyError) error {
			c.Errorf("%s", e.Message(q(name(s, e.Rel)), q(name(d, e.Rel))))
			failed = e
			return nil
		},
	})
	if err != nil {
		return err
	}
	return failed
}

func runLn(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "sfnvTrt:", long: map[string]string{
		"symbolic": "s", "force": "f", "no-dereference": "n", "verbose": "v", "no-target-directory": "T", "relative": "r", "target-directory=": "t",
	}}, 1)
	if !ok {
		return code
	}
	td, _ := o.val("t")
	if len(args) == 1 && td == "" {
		args = append(args, ".")
	}
	srcs, dest, _, status, ok := c.splitDest("ln", args, o.has("T"), td)
	if !ok {
		return status
	}
	isDir := false
	if !o.has("T") {
		var st vfs.Stat
		var err error
		if o.has("n") {
			st, err = c.Lstat(dest)
		} else {
			st, err = c.Stat(dest)
		}
		isDir = err == nil && st.IsDir()
	}
	for _, s := range srcs {
		d := c.destFor(s, dest, isDir)
		dp := c.Abs(d)
		if o.has("f") {
			if st, err := c.FS.Lstat(dp); err == nil && !st.IsDir() {
				c.FS.Unlink(dp)
			}
		}
		var err error
		if o.has("s") {
			err = c.FS.Symlink(s, dp)
		} else {
			err = c.FS.Link(c.Abs(s), dp)
		}
		if err != nil {
			kind := "hard link"
			if o.has("s") {
				kind = "symbolic link"
			}
			if Errno(err) == syscall.ENOENT && !o.has("s") {
				if _, serr := c.FS.Lstat(c.Abs(s)); serr != nil {
					c.Errorf("failed to access %s: %s", q(s), ErrText(serr))
					status = 1
					continue
				}
			}
			c.Errorf("failed to create %s %s: %s", kind, q(d), ErrText(err))
			status = 1
			continue
		}
		if o.has("v") {
			arrow := "=>"
			if o.has("s") {
				arrow = "->"
			}
			fmt.Fprintf(c.Stdout, "%s %s %s\n", q(d), arrow, q(s))
		}
	}
	return status
}

// parseDate understands the date forms agents pass to touch -d and date -d.
func parseDate(s string, now time.Time) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "@") {
		f, err := strconv.ParseFloat(s[1:], 64)
		if err != nil {
			return time.Time{}, false
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), true
	}
	switch s {
	case "now", "":
		return now, true
	case "today":
		return now, true
	case "yesterday":
		return now.AddDate(0, 0, -1), true
	case "tomorrow":
		return now.AddDate(0, 0, 1), true
	}
	layouts := []string{time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05 -0700",
		"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "2006/01/02", "Mon Jan _2 15:04:05 MST 2006", "Mon Jan _2 15:04:05 2006", "Jan 2 2006", "2 Jan 2006"}
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, now.Location()); err == nil {
			return t, true
		}
	}
	// "N days ago", "+N hours", "N minutes"
	fields := strings.Fields(s)
	if len(fields) >= 2 {
		n, err := strconv.Atoi(strings.TrimPrefix(fields[0], "+"))
		if err == nil {
			if len(fields) == 3 && fields[2] == "ago" {
				n = -n
			} else if len(fields) != 2 {
				return time.Time{}, false
			}
			unit := strings.TrimSuffix(fields[1], "s")
			switch unit {
			case "second", "sec":
				return now.Add(time.Duration(n) * time.Second), true
			case "minute", "min":
				return now.Add(time.Duration(n) * time.Minute), true
			case "hour":
				return now.Add(time.Duration(n) * time.Hour), true
			case "day":
				return now.AddDate(0, 0, n), true
			case "week":
				return now.AddDate(0, 0, 7*n), true
			case "month":
				return now.AddDate(0, n, 0), true
			case "year":
				return now.AddDate(n, 0, 0), true
			}
		}
	}
	return time.Time{}, false
}

// parseStamp parses touch -t [[CC]YY]MMDDhhmm[.ss].
func parseStamp(s string, now time.Time) (time.Time, bool) {
	sec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || len(s[i+1:]) != 2 {
			return time.Time{}, false
		}
		sec, s = n, s[:i]
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return time.Time{}, false
		}
	}
	year := now.Year()
	switch len(s) {
	case 8:
	case 10:
		yy, _ := strconv.Atoi(s[:2])
		if yy < 69 {
			year = 2000 + yy
		} else {
			year = 1900 + yy
		}
		s = s[2:]
	case 12:
		year, _ = strconv.Atoi(s[:4])
		s = s[4:]
	default:
		return time.Time{}, false
	}
	mo, _ := strconv.Atoi(s[0:2])
	d, _ := strconv.Atoi(s[2:4])
	h, _ := strconv.Atoi(s[4:6])
	mi, _ := strconv.Atoi(s[6:8])
	return time.Date(year, time.Month(mo), d, h, mi, sec, 0, now.Location()), true
}

func runTouch(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "acmd:t:r:fh", long: map[string]string{
		"no-create": "c", "date=": "d", "reference=": "r", "time=": "T", "no-dereference": "h",
	}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return c.Usage(1, "missing file operand")
	}
	now := c.Now()
	at, mt := now, now
	if d, ok := o.val("d"); ok {
		t, ok := parseDate(d, now)
		if !ok {
			return c.Fail("invalid date format %s", q(d))
		}
		at, mt = t, t
	}
	if s, ok := o.val("t"); ok {
		t, ok := parseStamp(s, now)
		if !ok {
			return c.Fail("invalid date format %s", q(s))
		}
		at, mt = t, t
	}
	if r, ok := o.val("r"); ok {
		st, err := c.Stat(r)
		if err != nil {
			return c.Fail("failed to get attributes of %s: %s", q(r), ErrText(err))
		}
		at, mt = st.Atime, st.Mtime
	}
	onlyA, onlyM := o.has("a") && !o.has("m"), o.has("m") && !o.has("a")
	status := 0
	for _, a := range args {
		p := c.Abs(a)
		if IsDevice(p) {
			continue
		}
		if _, err := c.FS.Lstat(p); err != nil {
			if Errno(err) != syscall.ENOENT || o.has("c") {
				if Errno(err) != syscall.ENOENT {
					c.Errorf("cannot touch %s: %s", q(a), ErrText(err))
					status = 1
				}
				continue
			}
			f, err := c.FS.Open(p, os.O_WRONLY|os.O_CREATE, 0o666)
			if err != nil {
				c.Errorf("cannot touch %s: %s", q(a), ErrText(err))
				status = 1
				continue
			}
			f.Close()
		}
		var ap, mp *time.Time
		if !onlyM {
			ap = &at
		}
		if !onlyA {
			mp = &mt
		}
		if err := c.FS.Utimens(p, ap, mp, !o.has("h")); err != nil {
			c.Errorf("setting times of %s: %s", q(a), ErrText(err))
			status = 1
		}
	}
	return status
}
