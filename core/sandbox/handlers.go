package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// handlers connect the interpreter to the agent filesystem and to the
// commands. They never fall back to the interpreter's defaults, which
// would reach the host.
type handlers struct {
	sess *Session
}

// errNoExec is returned when a handler runs after its Exec has ended (a
// background job outliving the script).
var errNoExec = errors.New("sandbox: the script has ended")

func (h *handlers) state() (*execState, error) {
	st := h.sess.run.Load()
	if st == nil {
		return nil, errNoExec
	}
	return st, nil
}

func absPath(dir, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = dir + "/" + p
	}
	return path.Clean(p)
}

// shellError is what the interpreter prints for a failed redirection:
// "agentfs-sh: NAME: No such file or directory", as bash would.
type shellError struct {
	errno syscall.Errno
}

func (e shellError) Error() string { return commands.ErrText(e.errno) }
func (e shellError) Unwrap() error { return e.errno }

// pathError turns an engine error into the *os.PathError the interpreter
// reports as a non-fatal failure; limit errors stay fatal.
func pathError(p string, err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	errno := commands.Errno(err)
	if errno == 0 {
		errno = syscall.EIO
	}
	return &fs.PathError{Op: "agentfs-sh:", Path: p, Err: shellError{errno}}
}

// sourcePrefix marks the path of "source FILE" after the call handler
// rewrote it: the interpreter stats a sourced file on the host before
// opening it, and below /dev/null that stat can only fail.
const sourcePrefix = noHostTmp + "/source"

func (h *handlers) open(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	st, err := h.state()
	if err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	shown := p
	isSource := strings.HasPrefix(p, sourcePrefix+"/")
	if isSource {
		p = strings.TrimPrefix(p, sourcePrefix)
		shown = p
	}
	abs := absPath(hc.Dir, p)
	if isSource && flag == os.O_RDONLY {
		// "source FILE": the script is read here so that it gets the
		// sandbox's rewrites (process substitution, background jobs).
		data, err := st.fs.ReadFile(abs)
		if err != nil {
			return nil, pathError(shown, err)
		}
		if out, ok := rewriteSource(string(data)); ok {
			data = []byte(out)
		}
		return readOnly{strings.NewReader(string(data))}, nil
	}
	if f, ok := commands.OpenDevice(abs, hc.Stdin, hc.Stdout, hc.Stderr); ok {
		return f, nil
	}
	if f, ok, err := st.fs.pipes.open(abs, flag); ok {
		if err != nil {
			return nil, pathError(shown, err)
		}
		return f, nil
	}
	if flag&^os.O_EXCL == os.O_WRONLY|os.O_CREATE|os.O_TRUNC {
		// "cmd > f": the old content or the new, never a mix (policy.go).
		f, ok, err := st.fs.createAtomic(ctx, abs, flag&os.O_EXCL != 0, uint32(perm.Perm()))
		if err != nil {
			return nil, pathError(shown, err)
		}
		if ok {
			st.addRedirect(f)
			return f, nil
		}
	}
	if flag == os.O_RDONLY {
		// A background job may open its "< f" while its Exec ends: the
		// feeder is reserved first, so that Exec waits for the file's
		// Close, or the open is refused once Exec has stopped feeders.
		if !st.reserveFeeder() {
			return nil, pathError(shown, syscall.ECANCELED)
		}
		f, err := st.fs.Open(abs, flag, uint32(perm.Perm()))
		if err != nil {
			st.feeders.Done()
			return nil, pathError(shown, err)
		}
		return st.stdinPipe(f), nil
	}
	f, err := st.fs.Open(abs, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, pathError(shown, err)
	}
	return f, nil
}

func (h *handlers) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	st, err := h.state()
	if err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	entries, err := st.fs.ReaddirPlus(absPath(hc.Dir, p))
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: errnoOr(err)}
	}
	out := make([]fs.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = fs.FileInfoToDirEntry(fileInfo{name: e.Name, st: e.Stat})
	}
	return out, nil
}

func errnoOr(err error) error {
	if e := commands.Errno(err); e != 0 {
		return e
	}
	return err
}

func (h *handlers) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	st, err := h.state()
	if err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	abs := absPath(hc.Dir, name)
	if commands.IsDevice(abs) {
		return fileInfo{name: path.Base(abs), st: commands.DeviceStat(abs)}, nil
	}
	if follow {
		vs, err := st.fs.Stat(abs)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: errnoOr(err)}
		}
		return fileInfo{name: path.Base(abs), st: vs}, nil
	}
	vs, err := st.fs.Lstat(abs)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: errnoOr(err)}
	}
	return fileInfo{name: path.Base(abs), st: vs}, nil
}

func (h *handlers) access(ctx context.Context, p string, mode interp.AccessMode) error {
	st, err := h.state()
	if err != nil {
		return err
	}
	hc := interp.HandlerCtx(ctx)
	abs := absPath(hc.Dir, p)
	if commands.IsDevice(abs) {
		if mode&interp.AccessExec != 0 {
			return syscall.EACCES
		}
		return nil
	}
	vs, err := st.fs.Stat(abs)
	if err != nil {
		return err
	}
	if mode&interp.AccessWrite != 0 {
		if err := st.fs.write("access", abs, true); err != nil {
			return err
		}
	}
	if mode&interp.AccessExec != 0 && !vs.IsDir() && vs.Mode&0o111 == 0 {
		return syscall.EACCES
	}
	return nil
}

// Internal command names the call handler rewrites builtins to; the
// colon keeps them apart from anything a script can define.
const (
	cmdFail = "agentfs:fail"
	cmdPwd  = "agentfs:pwd"
	cmdType = "agentfs:type"
)

func (h *handlers) call(ctx context.Context, args []string) ([]string, error) {
	st, err := h.state()
	if err != nil {
		return nil, err
	}
	if err := st.b.addCommand(); err != nil {
		return nil, err
	}
	if max := st.b.limits.MaxCallDepth; max > 0 && !interp.IsBuiltin(args[0]) {
		if _, ok := h.sess.s.reg.Lookup(args[0]); !ok && h.sess.s.binds[args[0]] == nil {
			// Maybe a shell function: measure the nesting, every 8th
			// such call (the stack walk costs as much as the depth).
			if st.b.maybeFuncCalls.Add(1)%8 == 0 && callDepth(max) > max {
				return nil, st.b.trip(&LimitError{Limit: "call depth", Max: int64(max)})
			}
		}
	}
	return h.rewrite(ctx, args), nil
}

// rewrite replaces the builtins that would look at the host (pwd -P,
// type, command -v, source) by the sandbox's own versions, and refuses
// code that would (process substitution in eval, source or trap).
func (h *handlers) rewrite(ctx context.Context, args []string) []string {
	pol := h.sess.s.pol
	name := args[0]
	for _, d := range pol.Deny {
		if d == name {
			return []string{cmdFail, "126", name + ": command not allowed by the sandbox policy"}
		}
	}
	switch name {
	case "builtin":
		if len(args) > 1 {
			rest := h.rewrite(ctx, args[1:])
			if rest[0] != args[1] {
				return rest
			}
		}
	case "command":
		for _, a := range args[1:] {
			if a == "-v" || a == "-V" {
				return append([]string{cmdType, "-command"}, args[1:]...)
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
		}
		if len(args) > 1 {
			rest := h.rewrite(ctx, args[1:])
			if rest[0] != args[1] {
				return rest
			}
		}
	case "printf":
		// The interpreter's printf lacks precision ("%.2f"); ours is
		// complete. "printf -v VAR" must set a variable: the builtin.
		if len(args) > 1 && args[1] != "-v" {
			return append([]string{"agentfs:printf"}, args[1:]...)
		}
		if len(args) > 3 && args[1] == "-v" {
			// printf -v VAR: format here, assign through eval.
			out, _ := commands.Sprintf(args[3], args[4:], func(string) {})
			name := args[2]
			if !validVarRef(name) {
				return []string{cmdFail, "2", "printf: `" + name + "': not a valid identifier"}
			}
			return []string{"eval", name + "=" + singleQuote(out)}
		}
	case "pwd":
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "P") {
				return append([]string{cmdPwd}, args[1:]...)
			}
		}
	case "type":
		return append([]string{cmdType, "-type"}, args[1:]...)
	case "eval":
		src := strings.Join(args[1:], " ")
		if msg := unsupportedSource(src); msg != "" {
			return []string{cmdFail, "2", "eval: " + msg}
		}
		if out, ok := rewriteSource(src); ok {
			return []string{"eval", out}
		}
	case "trap":
		if len(args) > 2 {
			if msg := unsupportedSource(args[1]); msg != "" {
				return []string{cmdFail, "2", "trap: " + msg}
			}
			if out, ok := rewriteSource(args[1]); ok {
				return append([]string{"trap", out}, args[2:]...)
			}
		}
	case "test", "[":
		for _, a := range args[1:] {
			if a == "-O" || a == "-G" {
				return []string{cmdFail, "2", name + ": the -O and -G tests are not supported in the sandbox"}
			}
		}
	case "source", ".":
		if len(args) > 1 {
			hc := interp.HandlerCtx(ctx)
			abs := absPath(hc.Dir, args[1])
			if st, err := h.state(); err == nil && !isPipe(abs) {
				if data, err := st.fs.ReadFile(abs); err == nil {
					if msg := unsupportedSource(string(data)); msg != "" {
						return []string{cmdFail, "2", name + ": " + msg}
					}
				}
			}
			out := append([]string{}, args...)
			out[1] = sourcePrefix + abs
			return out
		}
	}
	return args
}

func (h *handlers) execMiddleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	// next is the interpreter's default, which starts host processes: it
	// is never called.
	_ = next
	return func(ctx context.Context, args []string) error {
		st, err := h.state()
		if err != nil {
			return err
		}
		hc := interp.HandlerCtx(ctx)
		env := envFromShell(hc.Env)
		code := h.dispatch(ctx, st, &hc, commands.Invocation{Args: args, Stdin: hc.Stdin, Stdout: hc.Stdout, Stderr: hc.Stderr}, hc.Dir, env)
		if e := st.b.tripped.Load(); e != nil {
			return e
		}
		if code != 0 {
			return interp.ExitStatus(uint8(code))
		}
		return nil
	}
}

// envView is the environment a command sees.
type envView struct {
	get  func(string) (string, bool)
	list func() []string
}

func envFromShell(env expand.Environ) envView {
	return envView{
		get: func(name string) (string, bool) {
			vr := env.Get(name)
			if !vr.IsSet() {
				return "", false
			}
			return vr.String(), true
		},
		list: func() []string {
			seen := map[string]string{}
			env.Each(func(name string, vr expand.Variable) bool {
				if vr.Exported && vr.IsSet() && vr.Kind == expand.String {
					seen[name] = vr.Str
				} else {
					delete(seen, name)
				}
				return true
			})
			out := make([]string, 0, len(seen))
			for k, v := range seen {
				out = append(out, k+"="+v)
			}
			sort.Strings(out)
			return out
		},
	}
}

func envFromList(list []string) envView {
	m := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return envView{
		get: func(name string) (string, bool) {
			v, ok := m[name]
			return v, ok
		},
		list: func() []string {
			out := make([]string, 0, len(m))
			for k, v := range m {
				out = append(out, k+"="+v)
			}
			sort.Strings(out)
			return out
		},
	}
}

// binDirs are where "/usr/bin/grep" and the like name a utility.
var binDirs = map[string]bool{"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true}

// nestedBuiltins are shell builtins that xargs, find -exec and env may run
// (printf is a utility of the registry).
var nestedBuiltins = map[string]bool{"echo": true, "test": true, "[": true, ":": true}

// known reports whether name runs something in this sandbox.
func (h *handlers) known(name string) bool {
	if h.sess.s.binds[name] != nil {
		return h.allowed(name)
	}
	if _, ok := h.sess.s.reg.Lookup(name); ok {
		return h.allowed(name)
	}
	return isShell(name) && h.allowed(name)
}

func (h *handlers) allowed(name string) bool {
	pol := h.sess.s.pol
	for _, d := range pol.Deny {
		if d == name {
			return false
		}
	}
	if pol.Allow == nil || interp.IsBuiltin(name) {
		// The allow list is for utilities; builtins may always run
		// unless denied, from the shell or from xargs alike.
		return true
	}
	for _, a := range pol.Allow {
		if a == name {
			return true
		}
	}
	return false
}

func isShell(name string) bool { return name == "sh" || name == "bash" || name == "dash" }

// dispatch runs one command. hc is the interpreter's context when the
// command comes from the shell itself (nil when nested in xargs or find
// without one).
func (h *handlers) dispatch(ctx context.Context, st *execState, hc *interp.HandlerContext, inv commands.Invocation, dir string, env envView) (code int) {
	args := inv.Args
	name := args[0]
	stdin := inv.Stdin
	if stdin == nil {
		stdin = eof{}
	}
	if f, ok := stdin.(*os.File); ok {
		stdin = st.stdinFile(f)
	}
	stdout, stderr := inv.Stdout, inv.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	errf := func(format string, a ...any) { fmt.Fprintf(stderr, format, a...) }
	switch name {
	case cmdBgEnter, cmdBgLeave:
		return st.background(args)
	case cmdPsub, cmdPsubRelease:
		return st.psub(args, stdout, stderr)
	case cmdTimeStart, cmdTimeEnd:
		return timeCmd(args, stdout, stderr)
	case cmdFail:
		errf("%s\n", args[2])
		if args[1] == "126" {
			return 126
		}
		return 2
	}
	if !h.allowed(name) && !strings.HasPrefix(name, "agentfs:") {
		errf("%s: command not allowed by the sandbox policy\n", name)
		return 126
	}
	if strings.Contains(name, "/") {
		abs := absPath(dir, name)
		fst, err := st.fs.Stat(abs)
		switch {
		case err == nil && fst.IsDir():
			errf("agentfs-sh: %s: Is a directory\n", name)
			return 126
		case err == nil && fst.Mode&0o111 == 0:
			errf("agentfs-sh: %s: Permission denied\n", name)
			return 126
		case err == nil:
			// A script: run it with the sandbox's shell.
			return h.runShell(ctx, st, commands.Invocation{Args: append([]string{"sh", abs}, args[1:]...), Stdin: stdin, Stdout: stdout, Stderr: stderr}, dir, env, name)
		case binDirs[path.Dir(abs)] && h.known(path.Base(abs)):
			inv.Args = append([]string{path.Base(abs)}, args[1:]...)
			return h.dispatch(ctx, st, hc, inv, dir, env)
		}
		errf("agentfs-sh: %s: No such file or directory\n", name)
		return 127
	}
	if isShell(name) {
		return h.runShell(ctx, st, commands.Invocation{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr}, dir, env, "")
	}
	var run commands.Func
	switch name {
	case cmdPwd, "agentfs:printf":
		base := strings.TrimPrefix(name, "agentfs:")
		c, ok := h.sess.s.reg.Lookup(base)
		if !ok {
			errf("%s: command not found\n", base)
			return 127
		}
		run = c.Run
		args = append([]string{base}, args[1:]...)
	case cmdType:
		return h.typeCmd(stdout, stderr, args[1], args[2:])
	default:
		if b := h.sess.s.binds[name]; b != nil {
			run = func(c *commands.Cmd) int { return b.run(c.Ctx, c.Args, c.Stdin, c.Stdout, c.Stderr) }
			break
		}
		c, ok := h.sess.s.reg.Lookup(name)
		if !ok {
			if hc != nil && nestedBuiltins[name] && interp.IsBuiltin(name) {
				if err := hc.Builtin(ctx, args); err != nil {
					var es interp.ExitStatus
					if errors.As(err, &es) {
						return int(es)
					}
					return 1
				}
				return 0
			}
			errf("%s: command not found\n", name)
			return 127
		}
		run = c.Run
	}
	sandbox := h.sess.s
	cmd := &commands.Cmd{
		Ctx:     ctx,
		Args:    args,
		Dir:     dir,
		Env:     env.get,
		Environ: env.list,
		Stdin:   stdin,
		Stdout:  stdout,
		Stderr:  stderr,
		FS:      st.fs,
		ID:      commands.Identity{User: sandbox.pol.User, UID: sandbox.pol.UID, GID: sandbox.pol.GID, Hostname: sandbox.pol.Hostname},
		Lookup:  h.known,
		Now:     sandbox.opts.Now,
		Net:     sandbox.net,
		Mem:     st.b.mem,
		Umask:   st.fs.umask,
	}
	// What the command reserved is given back when it returns.
	defer cmd.ReleaseAll()
	if !commands.IsDevNull(stdout) {
		// What a command writes may pile up in memory (a pipe's reader,
		// a command substitution): it counts against the stream limit.
		cmd.Stdout = &limitWriter{w: stdout, b: st.b, counter: &st.b.stream, max: st.b.limits.MaxStreamBytes, name: "stream"}
	}
	cmd.Exec = func(ctx context.Context, sub commands.Invocation) int {
		if err := st.b.addCommand(); err != nil {
			return ExitLimit
		}
		if len(sub.Args) == 0 {
			return 0
		}
		e := env
		if sub.Env != nil {
			e = envFromList(sub.Env)
		}
		d := dir
		if sub.Dir != "" {
			d = sub.Dir
		}
		return h.dispatch(ctx, st, hc, sub, d, e)
	}
	defer func() {
		if r := recover(); r != nil {
			// A bug of a utility (ours or a library's: goawk, gojq) stops
			// that command only, as a crash of a process would: the
			// script goes on with status 2. The files the command opened
			// are closed by its own defers, which ran before this one.
			errf("%s: internal error in %s: %v\n", name, name, r)
			code = 2
		}
	}()
	return run(cmd)
}

// readOnly is a script handed to the interpreter from memory.
type readOnly struct{ io.Reader }

func (readOnly) Write([]byte) (int, error) { return 0, syscall.EBADF }
func (readOnly) Close() error              { return nil }

type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }

// typeCmd answers type, command -v and command -V without looking at the
// host: keywords, functions, builtins, then the sandbox's utilities,
// which live in /usr/bin.
func (h *handlers) typeCmd(stdout, stderr io.Writer, mode string, args []string) int {
	verbose, pathOnly, typeOnly := mode == "-type", false, false
	var names []string
	for _, a := range args {
		switch a {
		case "-v":
			verbose = false
		case "-V":
			verbose = true
		case "-p", "-P":
			pathOnly = true
		case "-t":
			typeOnly = true
		case "-a", "-f":
		default:
			names = append(names, a)
		}
	}
	status := 0
	for _, n := range names {
		kind := ""
		switch {
		case syntax.IsKeyword(n):
			kind = "keyword"
		case h.sess.runner != nil && h.sess.runner.Funcs[n] != nil:
			kind = "function"
		case interp.IsBuiltin(n):
			kind = "builtin"
		case h.known(n):
			kind = "file"
		}
		switch {
		case kind == "":
			status = 1
			if verbose && !typeOnly {
				if mode == "-type" {
					fmt.Fprintf(stderr, "agentfs-sh: type: %s: not found\n", n)
				} else {
					fmt.Fprintf(stderr, "agentfs-sh: command: %s: not found\n", n)
				}
			}
		case typeOnly:
			fmt.Fprintln(stdout, kind)
		case pathOnly:
			if kind == "file" {
				fmt.Fprintln(stdout, "/usr/bin/"+n)
			}
		case !verbose:
			if kind == "file" {
				fmt.Fprintln(stdout, "/usr/bin/"+n)
			} else {
				fmt.Fprintln(stdout, n)
			}
		default:
			switch kind {
			case "keyword":
				fmt.Fprintf(stdout, "%s is a shell keyword\n", n)
			case "function":
				fmt.Fprintf(stdout, "%s is a function\n", n)
			case "builtin":
				fmt.Fprintf(stdout, "%s is a shell builtin\n", n)
			default:
				fmt.Fprintf(stdout, "%s is /usr/bin/%s\n", n, n)
			}
		}
	}
	return status
}

func validVarRef(s string) bool {
	name, idx, hasIdx := strings.Cut(s, "[")
	if !syntax.ValidName(name) {
		return false
	}
	if hasIdx {
		return strings.HasSuffix(idx, "]") && !strings.ContainsAny(idx, "`$();&|<>'\"")
	}
	return true
}

func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
