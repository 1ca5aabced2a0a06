package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Policy says what a script may touch. The zero Policy allows the whole
// agent filesystem and every command, with a minimal environment; the
// host is never reachable whatever the policy.
type Policy struct {
	// Readable and Writable are path prefixes in the agent filesystem
	// ("/work" allows /work and everything below it). Nil means the
	// whole filesystem; an empty non-nil slice means nothing. Writable
	// paths are readable too. Symlinks are resolved before the check.
	Readable []string
	Writable []string
	// Allow, when not nil, is the list of utilities that may run; the
	// shell's builtins (cd, echo, test...) always may, unless denied.
	Allow []string
	// Deny lists commands that may not run, builtins included ("eval").
	Deny []string
	// Env is the environment of the script, passed explicitly: nothing
	// comes from the host. HOME, PATH, USER, LOGNAME and SHELL get
	// defaults when absent.
	Env map[string]string
	// User, UID, GID and Hostname are what whoami, $UID, ls -l and
	// hostname report. Defaults: "agent", 1000, 1000, "sandbox".
	User     string
	UID, GID uint32
	Hostname string
	// Home is $HOME (default "/").
	Home string
	// Umask applies to the files and directories the script creates
	// (default 022, as a login shell has). Set NoUmask for none.
	Umask   uint32
	NoUmask bool
	// Net allows network requests (curl): none by default. A request
	// runs when a rule's prefix and methods match its URL and method,
	// after every redirect too; the matching rule's headers are added at
	// the boundary, so that secrets stay on the host. Loopback, private
	// and link-local addresses are refused, after DNS resolution, unless
	// the rule has AllowPrivate.
	Net []NetRule
	// DefaultDeny makes Readable, Writable and Allow allow-lists even
	// when nil: nothing is readable, writable or runnable unless listed.
	// The shell's builtins (echo, cd, test...) still run unless denied:
	// they reach no file but through redirections, which the path rules
	// guard. The network is closed unless Net opens it, in every mode.
	DefaultDeny bool
}

// NetRule allows requests under a URL prefix; see commands.NetRule.
type NetRule = commands.NetRule

func (p *Policy) withDefaults() Policy {
	q := *p
	if q.User == "" {
		q.User = "agent"
	}
	if q.UID == 0 && p.User == "" {
		q.UID, q.GID = 1000, 1000
	}
	if q.Hostname == "" {
		q.Hostname = "sandbox"
	}
	if q.Home == "" {
		q.Home = "/"
	}
	if q.Umask == 0 && !q.NoUmask {
		q.Umask = 0o022
	}
	if q.DefaultDeny {
		// Nil means "everything" below: make each list an explicit one.
		for _, l := range []*[]string{&q.Readable, &q.Writable, &q.Allow} {
			if *l == nil {
				*l = []string{}
			}
		}
	}
	q.Readable, q.Writable = cleanPrefixes(q.Readable), cleanPrefixes(q.Writable)
	return q
}

// Effective returns the policy as a script runs under it: every default
// filled in, path prefixes cleaned, Env with the variables the shell
// adds (HOME, PATH, USER, LOGNAME, SHELL). It is what an operator audits
// (agentfs sh --print-policy, the SDKs' policy()).
func (p *Policy) Effective() Policy {
	q := p.withDefaults()
	q.Env = defaultEnv(q)
	return q
}

// defaultEnv is the environment of a script under q (defaults filled).
func defaultEnv(q Policy) map[string]string {
	env := map[string]string{
		"HOME": q.Home, "PATH": "/usr/local/bin:/usr/bin:/bin", "USER": q.User, "LOGNAME": q.User, "SHELL": "/bin/sh",
	}
	for k, v := range q.Env {
		env[k] = v
	}
	return env
}

// Bounds of a policy: past them Validate refuses it, so that a hostile
// policy cannot make every path check or every command lookup costly.
const (
	MaxPolicyEntries = 1024      // entries of each list (paths, commands, env, net rules, headers)
	maxPolicyPath    = 4096      // bytes of a path prefix (PATH_MAX)
	maxPolicyName    = 255       // bytes of a command name (NAME_MAX)
	maxPolicyValue   = 128 << 10 // bytes of an env or header value (MAX_ARG_STRLEN)
)

// PolicyError is a policy refused by Validate: it is EINVAL, and says
// which entry and why.
type PolicyError struct {
	Field string // "readable[2]", "env", "net[0].headers"
	Value string // the offending value, shortened
	Msg   string
}

func (e *PolicyError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("invalid sandbox policy: %s %q: %s", e.Field, e.Value, e.Msg)
	}
	return fmt.Sprintf("invalid sandbox policy: %s: %s", e.Field, e.Msg)
}

// Unwrap makes the error EINVAL for errors.Is and vfs.Errno.
func (e *PolicyError) Unwrap() error { return syscall.EINVAL }

func policyErr(field string, i int, value, msg string) error {
	if i >= 0 {
		field = fmt.Sprintf("%s[%d]", field, i)
	}
	if len(value) > 64 {
		value = value[:64] + "..."
	}
	return &PolicyError{Field: field, Value: value, Msg: msg}
}

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	methodName = regexp.MustCompile(`^[A-Z]+$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Validate refuses, with a *PolicyError (EINVAL), a policy that does not
// say clearly what it allows: a path prefix that is relative, holds ".."
// or a glob character (prefixes are literal), a command name with a
// slash or a space, an environment variable name that is not one, a
// network rule that is not an http(s) URL prefix, a header that would
// split the request, or lists past MaxPolicyEntries. Nothing runs under a
// policy Validate refuses.
func (p *Policy) Validate() error {
	for _, l := range []struct {
		field string
		list  []string
	}{{"readable", p.Readable}, {"writable", p.Writable}} {
		if len(l.list) > MaxPolicyEntries {
			return policyErr(l.field, -1, "", fmt.Sprintf("%d entries, more than %d", len(l.list), MaxPolicyEntries))
		}
		for i, pre := range l.list {
			if err := checkPrefix(pre); err != "" {
				return policyErr(l.field, i, pre, err)
			}
		}
	}
	for _, l := range []struct {
		field string
		list  []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		if len(l.list) > MaxPolicyEntries {
			return policyErr(l.field, -1, "", fmt.Sprintf("%d entries, more than %d", len(l.list), MaxPolicyEntries))
		}
		for i, c := range l.list {
			if c == "" || len(c) > maxPolicyName || strings.ContainsAny(c, "/*?\x00") || strings.IndexFunc(c, unicode.IsSpace) >= 0 {
				return policyErr(l.field, i, c, "not a command name (a name such as grep, no path, space or glob)")
			}
		}
	}
	if len(p.Env) > MaxPolicyEntries {
		return policyErr("env", -1, "", fmt.Sprintf("%d variables, more than %d", len(p.Env), MaxPolicyEntries))
	}
	for k, v := range p.Env {
		if !envName.MatchString(k) {
			return policyErr("env", -1, k, "not a variable name (letters, digits and _, not starting with a digit)")
		}
		if len(v) > maxPolicyValue || strings.IndexByte(v, 0) >= 0 {
			return policyErr("env."+k, -1, "", fmt.Sprintf("the value has a NUL byte or is longer than %d bytes", maxPolicyValue))
		}
	}
	if len(p.Net) > MaxPolicyEntries {
		return policyErr("net", -1, "", fmt.Sprintf("%d rules, more than %d", len(p.Net), MaxPolicyEntries))
	}
	for i, r := range p.Net {
		if err := checkNetRule(r); err != nil {
			return policyErr("net", i, r.Prefix, "must be an http:// or https:// URL prefix with a host, without user info, query or fragment")
		}
		for _, m := range r.Methods {
			if !methodName.MatchString(m) {
				return policyErr(fmt.Sprintf("net[%d].methods", i), -1, m, "not an HTTP method (GET, POST...)")
			}
		}
		if len(r.Headers) > MaxPolicyEntries {
			return policyErr(fmt.Sprintf("net[%d].headers", i), -1, "", fmt.Sprintf("more than %d headers", MaxPolicyEntries))
		}
		for k, v := range r.Headers {
			if !headerName.MatchString(k) {
				return policyErr(fmt.Sprintf("net[%d].headers", i), -1, k, "not a header name")
			}
			if len(v) > maxPolicyValue || strings.ContainsAny(v, "\r\n\x00") {
				return policyErr(fmt.Sprintf("net[%d].headers.%s", i, k), -1, "", "the value has CR, LF or NUL, or is too long")
			}
		}
	}
	return nil
}

// checkPrefix says what is wrong with a path prefix ("" when nothing).
func checkPrefix(p string) string {
	switch {
	case p == "":
		return "empty path"
	case len(p) > maxPolicyPath:
		return fmt.Sprintf("longer than %d bytes", maxPolicyPath)
	case !strings.HasPrefix(p, "/"):
		return "not an absolute path (prefixes start with /)"
	case strings.IndexByte(p, 0) >= 0:
		return "has a NUL byte"
	case strings.ContainsAny(p, "*?[{"):
		return "has a glob character: a rule is a literal path prefix (/work allows /work and below)"
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return `has a ".." component`
		}
	}
	return ""
}

func cleanPrefixes(list []string) []string {
	if list == nil {
		return nil
	}
	out := []string{}
	for _, p := range list {
		out = append(out, path.Clean("/"+p))
	}
	return out
}

func under(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if pre == "/" || p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// guardFS is the filesystem the shell and the utilities see: the agent
// filesystem behind the policy's path rules and the write budget.
type guardFS struct {
	// ctx is the Exec's context: a cancelled or timed-out run stops at
	// its next filesystem operation.
	ctx      context.Context
	fs       *vfs.FS
	readable []string // nil: everything
	writable []string // nil: everything
	b        *budget
	umask    uint32
	pipes    *pipeTable // process substitution: /dev/fd/N of this Exec
}

var _ commands.FS = (*guardFS)(nil)

func denied(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: syscall.EACCES} }

// resolved returns p with its symlinks resolved (as far as they exist),
// so that a link cannot lead out of the allowed prefixes.
func (g *guardFS) resolved(p string, followLast bool) string {
	comps := strings.Split(strings.Trim(p, "/"), "/")
	cur := "/"
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		if len(comps) == 0 && !followLast {
			return next
		}
		st, err := g.fs.Lstat(g.ctx, next)
		if err != nil || !st.IsSymlink() {
			cur = next
			continue
		}
		if hops++; hops > vfs.SymlinkMax {
			return next
		}
		target, err := g.fs.Readlink(g.ctx, next)
		if err != nil {
			return next
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		comps = append(strings.Split(target, "/"), comps...)
	}
	return cur
}

func (g *guardFS) check(op, p string, write, followLast bool) error {
	prefixes := g.readable
	if write {
		prefixes = g.writable
	}
	if prefixes == nil {
		return nil
	}
	clean := path.Clean("/" + p)
	ok := under(clean, prefixes) || (!write && g.writable != nil && under(clean, g.writable))
	if ok {
		r := g.resolved(clean, followLast)
		ok = under(r, prefixes) || (!write && g.writable != nil && under(r, g.writable))
	}
	if !ok {
		return denied(op, p)
	}
	return nil
}

func (g *guardFS) read(op, p string, follow bool) error {
	if g.readable == nil {
		return nil
	}
	return g.check(op, p, false, follow)
}

func (g *guardFS) write(op, p string, follow bool) error {
	if g.b != nil {
		if e := g.b.tripped.Load(); e != nil {
			return e
		}
	}
	return g.check(op, p, true, follow)
}

func (g *guardFS) Stat(p string) (vfs.Stat, error) {
	if st, ok, err := g.pipes.stat(p); ok {
		return st, err
	}
	if err := g.read("stat", p, true); err != nil {
		return vfs.Stat{}, err
	}
	return g.fs.Stat(g.ctx, p)
}

func (g *guardFS) Lstat(p string) (vfs.Stat, error) {
	if st, ok, err := g.pipes.stat(p); ok {
		return st, err
	}
	if err := g.read("lstat", p, false); err != nil {
		return vfs.Stat{}, err
	}
	return g.fs.Lstat(g.ctx, p)
}

func (g *guardFS) ReadFile(p string) ([]byte, error) {
	if data, ok, err := g.pipes.readFile(p); ok {
		return data, err
	}
	if err := g.read("open", p, true); err != nil {
		return nil, err
	}
	return g.fs.ReadFile(g.ctx, p)
}

func (g *guardFS) WriteFile(p string, data []byte, opts vfs.WriteOptions) error {
	if err := g.write("open", p, true); err != nil {
		return err
	}
	if err := g.b.addFSWrite(int64(len(data))); err != nil {
		return &fs.PathError{Op: "write", Path: p, Err: syscall.EFBIG}
	}
	if opts.Perm == 0 {
		opts.Perm = 0o666
	}
	opts.Perm &^= g.umask
	return g.fs.WriteFile(g.ctx, p, data, opts)
}

func (g *guardFS) Open(p string, flags int, perm uint32) (commands.File, error) {
	if f, ok, err := g.pipes.open(p, flags); ok {
		return f, err
	}
	writing := flags&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	var err error
	if writing {
		err = g.write("open", p, flags&hostfs.ONoFollow == 0)
	} else {
		err = g.read("open", p, flags&hostfs.ONoFollow == 0)
	}
	if err != nil {
		return nil, err
	}
	f, err := g.fs.Open(g.ctx, p, flags, perm&^g.umask)
	if err != nil {
		return nil, err
	}
	return &guardFile{File: f, b: g.b, path: p}, nil
}

func (g *guardFS) ReaddirPlus(p string) ([]vfs.DirEntry, error) {
	if err := g.read("readdir", p, true); err != nil {
		return nil, err
	}
	return g.fs.ReaddirPlus(g.ctx, p)
}

func (g *guardFS) Mkdir(p string, perm uint32) error {
	if err := g.write("mkdir", p, false); err != nil {
		return err
	}
	return g.fs.Mkdir(g.ctx, p, perm&^g.umask)
}

func (g *guardFS) MkdirAll(p string, perm uint32) error {
	if err := g.write("mkdir", p, false); err != nil {
		return err
	}
	return g.fs.MkdirAll(g.ctx, p, perm&^g.umask)
}

func (g *guardFS) Unlink(p string) error {
	if err := g.write("unlink", p, false); err != nil {
		return err
	}
	return g.fs.Unlink(g.ctx, p)
}

func (g *guardFS) Rmdir(p string) error {
	if err := g.write("rmdir", p, false); err != nil {
		return err
	}
	return g.fs.Rmdir(g.ctx, p)
}

func (g *guardFS) RemoveAll(p string) error {
	if err := g.write("remove", p, false); err != nil {
		return err
	}
	return g.fs.RemoveAll(g.ctx, p)
}

func (g *guardFS) Rename(oldp, newp string) error {
	if err := g.write("rename", oldp, false); err != nil {
		return err
	}
	if err := g.write("rename", newp, false); err != nil {
		return err
	}
	return g.fs.Rename(g.ctx, oldp, newp)
}

func (g *guardFS) Link(oldp, newp string) error {
	if err := g.write("link", oldp, false); err != nil {
		return err
	}
	if err := g.write("link", newp, false); err != nil {
		return err
	}
	return g.fs.Link(g.ctx, oldp, newp)
}

func (g *guardFS) Symlink(target, linkp string) error {
	if err := g.write("symlink", linkp, false); err != nil {
		return err
	}
	return g.fs.Symlink(g.ctx, target, linkp)
}

func (g *guardFS) Readlink(p string) (string, error) {
	if err := g.read("readlink", p, false); err != nil {
		return "", err
	}
	return g.fs.Readlink(g.ctx, p)
}

func (g *guardFS) Chmod(p string, perm uint32) error {
	if err := g.write("chmod", p, true); err != nil {
		return err
	}
	return g.fs.Chmod(g.ctx, p, perm)
}

func (g *guardFS) Chown(p string, uid, gid int64, follow bool) error {
	if err := g.write("chown", p, follow); err != nil {
		return err
	}
	return g.fs.Chown(g.ctx, p, uid, gid, follow)
}

func (g *guardFS) Utimens(p string, atime, mtime *time.Time, follow bool) error {
	if err := g.write("utimens", p, follow); err != nil {
		return err
	}
	return g.fs.Utimens(g.ctx, p, atime, mtime, follow)
}

func (g *guardFS) Truncate(p string, size int64) error {
	if err := g.write("truncate", p, true); err != nil {
		return err
	}
	if st, err := g.fs.Stat(g.ctx, p); err == nil && size > st.Size {
		if err := g.b.addFSWrite(size - st.Size); err != nil {
			return &fs.PathError{Op: "truncate", Path: p, Err: syscall.EFBIG}
		}
	}
	return g.fs.Truncate(g.ctx, p, size)
}

func (g *guardFS) CopyFile(src, dst string) error {
	if err := g.read("open", src, true); err != nil {
		return err
	}
	if err := g.write("open", dst, true); err != nil {
		return err
	}
	st, err := g.fs.Stat(g.ctx, src)
	if err != nil {
		return err
	}
	if err := g.b.addFSWrite(st.Size); err != nil {
		return &fs.PathError{Op: "write", Path: dst, Err: syscall.EFBIG}
	}
	_, existed := g.fs.Stat(g.ctx, dst)
	if err := g.fs.CopyFile(g.ctx, src, dst); err != nil {
		return err
	}
	if existed != nil {
		// A new file gets the source's mode less the umask, as cp does.
		return g.fs.Chmod(g.ctx, dst, st.Perm()&^g.umask)
	}
	return nil
}

// guardFile counts the bytes written through an open file.
type guardFile struct {
	*vfs.File
	b    *budget
	path string
}

func (f *guardFile) Write(p []byte) (int, error) {
	if err := f.b.addFSWrite(int64(len(p))); err != nil {
		return 0, &fs.PathError{Op: "write", Path: f.path, Err: syscall.EFBIG}
	}
	return f.File.Write(p)
}

// Read of a directory is EISDIR, as read(2).
func (f *guardFile) Read(p []byte) (int, error) { return f.File.Read(p) }

func (g *guardFS) Statfs() (vfs.FSStat, error) { return g.fs.Statfs(g.ctx) }

// Redirections that replace a file ("cmd > f", "cmd &> f") write through
// an atomic replacement (vfs.AtomicFile): the file keeps its old content
// until the redirection is closed after the command, and keeps it for
// good if the script is stopped by a limit, cancelled or killed first.
// Other readers see the old content meanwhile, as after "cmd > f.tmp &&
// mv f.tmp f"; what the command wrote is the new content whatever its
// exit status, as in any shell.

// atomicRedirect is the file of such a redirection.
type atomicRedirect struct {
	a    *vfs.AtomicFile
	b    *budget
	ctx  context.Context // the script's: done means stopped
	mu   sync.Mutex
	done bool
}

// createAtomic opens p for a replacing redirection. ok is false when p
// exists and is not a regular file (a FIFO, a device): then the caller
// opens it as a file.
func (g *guardFS) createAtomic(ctx context.Context, p string, excl bool, perm uint32) (f *atomicRedirect, ok bool, err error) {
	if err := g.write("open", p, true); err != nil {
		return nil, true, err
	}
	a, err := g.fs.CreateAtomic(ctx, p, vfs.WriteOptions{Perm: perm &^ g.umask, Exclusive: excl})
	if err != nil {
		if vfs.Errno(err) == syscall.EINVAL {
			return nil, false, nil
		}
		return nil, true, err
	}
	return &atomicRedirect{a: a, b: g.b, ctx: ctx}, true, nil
}

func (f *atomicRedirect) Write(p []byte) (int, error) {
	if err := f.b.addFSWrite(int64(len(p))); err != nil {
		return 0, &fs.PathError{Op: "write", Path: f.a.Name(), Err: syscall.EFBIG}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return 0, &fs.PathError{Op: "write", Path: f.a.Name(), Err: syscall.EBADF}
	}
	return f.a.Write(p)
}

// Read is EBADF: the file is open for writing only.
func (f *atomicRedirect) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: f.a.Name(), Err: syscall.EBADF}
}

// Close commits the new content unless the script was stopped.
func (f *atomicRedirect) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return nil
	}
	f.done = true
	if e := f.b.tripped.Load(); e != nil {
		f.a.Abort()
		return e
	}
	select {
	case <-f.ctx.Done():
		f.a.Abort()
		return f.ctx.Err()
	default:
	}
	return f.a.Commit()
}

// abort discards the content if the redirection is still open.
func (f *atomicRedirect) abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.done = true
		f.a.Abort()
	}
}

// CheckPath applies the policy's path rules to an operation made outside
// a script (the agent tools' file tools): nil, or an EACCES
// *fs.PathError, exactly as the shell's commands would be answered.
// Symlinks are resolved as far as they exist.
func (s *Sandbox) CheckPath(op, p string, write bool) error {
	g := &guardFS{fs: s.fs, readable: cleanPrefixes(s.pol.Readable), writable: cleanPrefixes(s.pol.Writable)}
	if write {
		return g.write(op, p, true)
	}
	return g.read(op, p, true)
}
