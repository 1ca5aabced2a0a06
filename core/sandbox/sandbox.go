// Package sandbox runs shell scripts inside the engine, over an agent's
// filesystem: a POSIX shell (mvdan.cc/sh/v3's interpreter) whose every
// file access goes to the agent database and whose every command is Go
// code from package commands. No host process is ever started and no host
// file is ever opened; an unknown command answers "command not found".
//
//	sb, _ := sandbox.New(agent, sandbox.Options{Limits: sandbox.Normal})
//	res, _ := sb.Exec(ctx, "grep -rn 'func main' /src | head", sandbox.ExecOptions{})
//
// The network is closed unless Policy.Net allows URL prefixes (curl
// then reaches them, with the rule's headers added at the boundary), and
// Options.Bindings add host functions the script calls as commands.
//
// Each Exec is recorded in the agent's tool-call log as a call named
// "exec". A Session keeps the shell state (working directory, variables,
// functions) from one Exec to the next, for interactive use.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Options configure a Sandbox.
type Options struct {
	Policy Policy
	// Limits apply to each Exec; the zero value means no limits, so
	// pass Normal or Hardened.
	Limits Limits
	// Registry holds the commands; nil means commands.Default.
	Registry *commands.Registry
	// NoAudit skips the tool-call record of each Exec.
	NoAudit bool
	// Now is the clock of date, touch and ls (default time.Now).
	Now func() time.Time
	// Bindings are host functions the script runs as commands.
	Bindings []Binding
}

// Sandbox runs scripts over one agent filesystem. It is safe for
// concurrent use; each Exec runs in its own shell.
type Sandbox struct {
	fs    *vfs.FS
	tools *toolcalls.Log
	opts  Options
	pol   Policy
	reg   *commands.Registry
	net   *commands.Net // nil: no network
	binds map[string]*binding
}

// New returns a sandbox over the agent's filesystem, recording each Exec
// in the agent's tool-call log.
func New(a *core.Agent, opts Options) (*Sandbox, error) {
	return NewFS(a.FS, a.Tools, opts)
}

// NewFS is New for a filesystem and a tool-call log (nil: no audit).
func NewFS(fsys *vfs.FS, tools *toolcalls.Log, opts Options) (*Sandbox, error) {
	if fsys == nil {
		return nil, errors.New("sandbox: nil filesystem")
	}
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	s := &Sandbox{fs: fsys, tools: tools, opts: opts, pol: opts.Policy.withDefaults(), reg: opts.Registry}
	if s.reg == nil {
		s.reg = commands.Default
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if len(s.pol.Net) > 0 {
		// Validate checked the rules.
		s.net = &commands.Net{Rules: s.pol.Net, MaxResponseBytes: opts.Limits.MaxResponseBytes, Timeout: opts.Limits.NetTimeout}
	}
	binds, err := compileBindings(opts.Bindings, s.reg)
	if err != nil {
		return nil, err
	}
	s.binds = binds
	return s, nil
}

// ExecOptions tune one Exec.
type ExecOptions struct {
	// Dir is the working directory in the agent filesystem (default "/"
	// for Sandbox.Exec; a Session keeps its own).
	Dir string
	// Stdin is the script's standard input (default: empty).
	Stdin io.Reader
	// Env adds or overrides variables for this Exec.
	Env map[string]string
	// Stdout and Stderr, when set, receive the output as it is produced
	// instead of Result.Stdout and Result.Stderr.
	Stdout, Stderr io.Writer
}

// Result is the outcome of a script.
type Result struct {
	ExitCode int
	Stdout   string
	Stderr   string
	// Limit is set when a limit stopped the script (ExitCode is
	// ExitLimit).
	Limit *LimitError
	// Exited reports that the script ran "exit" (for interactive loops).
	Exited bool
	// Dir is the working directory when the script ended.
	Dir      string
	Duration time.Duration
}

// Exec runs script in a fresh shell and returns its output and exit
// status. The error is non-nil only when the script could not be judged:
// ctx was cancelled by the caller, or the audit record failed.
func (s *Sandbox) Exec(ctx context.Context, script string, opts ExecOptions) (Result, error) {
	sess, err := s.NewSession(opts.Dir)
	if err != nil {
		return Result{}, err
	}
	return sess.Exec(ctx, script, opts)
}

// Session is one shell whose state persists across Execs: working
// directory, variables, functions, options. Its Execs run one at a time.
type Session struct {
	s      *Sandbox
	mu     sync.Mutex
	runner *interp.Runner
	env    *sandboxEnviron
	run    atomic.Pointer[execState] // the Exec in progress
}

// execState is what the handlers of the shell need during one Exec.
type execState struct {
	b      *budget
	fs     *guardFS
	stdout io.Writer // limited, for the top level
	stderr io.Writer
	closed bool // set under the output mutex when the Exec has ended

	redirMu sync.Mutex
	redirs  []*atomicRedirect // replacing redirections of this Exec

	// stdinFiles maps the host pipe the interpreter hands a command for
	// "cmd < file" to the agent file behind it (stdin.go).
	stdinMu    sync.Mutex
	stdinFiles map[uint64]vfs.Stat
	// feeders are the goroutines copying agent files into those pipes,
	// and feedEnds the pipes' reading ends: an Exec ends only once every
	// feeder has closed its file (stdin.go), so that no handle of this
	// Exec is still open, or still reading, when it returns.
	feeders     sync.WaitGroup
	feedEnds    []*os.File
	feedStopped bool // stopFeeders has run: no new feeder
}

func (st *execState) addRedirect(f *atomicRedirect) {
	st.redirMu.Lock()
	st.redirs = append(st.redirs, f)
	st.redirMu.Unlock()
}

// finishRedirects settles the replacing redirections still open when the
// script ends ("exec > f" keeps one open): committed when the script
// ended normally, discarded when it was stopped. The interpreter closes
// the others itself after their command.
func (st *execState) finishRedirects(commit bool) {
	st.redirMu.Lock()
	rs := st.redirs
	st.redirs = nil
	st.redirMu.Unlock()
	for _, f := range rs {
		if commit {
			f.Close()
		} else {
			f.abort()
		}
	}
}

// NewSession starts a shell in dir (default "/").
func (s *Sandbox) NewSession(dir string) (*Session, error) {
	if dir == "" {
		dir = "/"
	}
	dir = path.Clean("/" + dir)
	st, err := s.fs.Stat(context.Background(), dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: working directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("sandbox: working directory %s is not a directory", dir)
	}
	sess := &Session{s: s}
	sess.env = newEnviron(s.pol)
	r, err := (&handlers{sess: sess}).newRunner(dir, sess.env)
	if err != nil {
		return nil, err
	}
	sess.runner = r
	return sess, nil
}

// newRunner makes a shell wired to the handlers.
func (h *handlers) newRunner(dir string, env *sandboxEnviron, opts ...interp.RunnerOption) (*interp.Runner, error) {
	all := append([]interp.RunnerOption{
		setDir(dir),
		interp.Env(env),
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.OpenHandler(h.open),
		interp.ReadDirHandler2(h.readDir),
		interp.StatHandler(h.stat),
		interp.AccessHandler(h.access),
		interp.CallHandler(h.call),
		interp.ExecHandlers(h.execMiddleware),
	}, opts...)
	r, err := interp.New(all...)
	if err != nil {
		return nil, err
	}
	// The interpreter reads TMPDIR once, at its first reset, to place the
	// FIFOs of process substitutions and to open them with os.OpenFile,
	// bypassing the open handler. Point it at a path below /dev/null,
	// where nothing can ever be created or opened, for that one read.
	env.hideTmp = true
	r.Reset()
	env.hideTmp = false
	return r, nil
}

// setDir sets the working directory without the host stat that
// interp.Dir would do.
func setDir(dir string) interp.RunnerOption {
	return func(r *interp.Runner) error {
		r.Dir = dir
		return nil
	}
}

// Dir is the session's working directory.
func (se *Session) Dir() string {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.runner.Dir
}

// Exec runs script in the session's shell. opts.Dir, when set, changes
// the working directory first.
func (se *Session) Exec(ctx context.Context, script string, opts ExecOptions) (Result, error) {
	se.mu.Lock()
	defer se.mu.Unlock()
	s := se.s
	start := time.Now()
	dir := se.runner.Dir
	if opts.Dir != "" {
		dir = path.Clean("/" + opts.Dir)
	}

	var outBuf, errBuf bytes.Buffer
	var outMu sync.Mutex
	outW, errW := io.Writer(&outBuf), io.Writer(&errBuf)
	if opts.Stdout != nil {
		outW = opts.Stdout
	}
	if opts.Stderr != nil {
		errW = opts.Stderr
	}

	runCtx, cancel := context.WithCancel(ctx)
	if s.opts.Limits.WallTime > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.opts.Limits.WallTime)
	}
	defer cancel()
	b := newBudget(s.opts.Limits, cancel)
	st := &execState{b: b, fs: &guardFS{ctx: runCtx, fs: s.fs, readable: s.pol.Readable, writable: s.pol.Writable, b: b, umask: s.pol.Umask, pipes: newPipeTable(runCtx, b.mem)}}
	st.stdout = &limitWriter{mu: &outMu, w: outW, b: b, counter: &b.output, own: &b.stdoutBytes, max: s.opts.Limits.MaxOutputBytes, name: "output", closed: &st.closed}
	st.stderr = &limitWriter{mu: &outMu, w: errW, b: b, counter: &b.output, own: &b.stderrBytes, max: s.opts.Limits.MaxOutputBytes, name: "output", closed: &st.closed}
	se.run.Store(st)

	res := Result{}
	unwatch := guard.watch(b)
	code, exited, limitErr, callerErr := se.runScript(runCtx, ctx, script, dir, opts, st)
	unwatch()
	st.finishRedirects(limitErr == nil && callerErr == nil && runCtx.Err() == nil)
	// Background jobs still running stop here: their context ends and
	// the handlers refuse to serve them.
	cancel()
	st.stopFeeders()
	se.run.Store(nil)
	res.ExitCode, res.Exited, res.Limit = code, exited, limitErr
	outMu.Lock()
	if limitErr != nil {
		msg := fmt.Sprintf("agentfs: %v\n", limitErr)
		io.WriteString(errW, msg)
		b.stderrBytes.Add(int64(len(msg)))
	}
	st.closed = true
	if opts.Stdout == nil {
		res.Stdout = outBuf.String()
	}
	if opts.Stderr == nil {
		res.Stderr = errBuf.String()
	}
	outMu.Unlock()
	res.Dir = se.runner.Dir
	res.Duration = time.Since(start)
	auditErr := s.audit(ctx, script, dir, start, res, b)
	if callerErr != nil {
		return res, callerErr
	}
	return res, auditErr
}

func (se *Session) runScript(runCtx, callerCtx context.Context, script, dir string, opts ExecOptions, st *execState) (code int, exited bool, limit *LimitError, callerErr error) {
	b := st.b
	if err := b.checkParse(script); err != nil {
		return ExitLimit, false, b.tripped.Load(), nil
	}
	file, err := parseScript(script, "", "agentfs-sh", st.stderr)
	if err != nil {
		fmt.Fprintf(st.stderr, "agentfs-sh: %v\n", err)
		return 2, false, nil, nil
	}
	if msg := unsupported(file); msg != "" {
		fmt.Fprintf(st.stderr, "agentfs-sh: %s\n", msg)
		return 2, false, nil, nil
	}
	rewriteScript(file)
	r := se.runner
	if dir != r.Dir {
		if fst, err := se.s.fs.Stat(runCtx, dir); err != nil || !fst.IsDir() {
			fmt.Fprintf(st.stderr, "agentfs-sh: cd: %s: No such file or directory\n", dir)
			return 1, false, nil, nil
		}
		r.Dir = dir
		// Keep $PWD in step with the directory, as cd would.
		se.setVar("PWD", dir)
	}
	for k, v := range opts.Env {
		se.setVar(k, v)
	}
	stdin, closeStdin := stdinPipe(opts.Stdin)
	defer closeStdin()
	if err := interp.StdIO(stdin, st.stdout, st.stderr)(r); err != nil {
		return 1, false, nil, err
	}
	err = r.Run(stepContext{Context: runCtx, b: b}, file)
	exited = r.Exited()
	if e := b.tripped.Load(); e != nil {
		return ExitLimit, exited, e, nil
	}
	if callerCtx.Err() != nil {
		return 130, exited, nil, callerCtx.Err()
	}
	if runCtx.Err() != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		e := b.trip(&LimitError{Limit: "wall time", Max: int64(se.s.opts.Limits.WallTime)})
		return ExitLimit, exited, e, nil
	}
	if err == nil {
		return 0, exited, nil, nil
	}
	var es interp.ExitStatus
	if errors.As(err, &es) {
		return int(es), exited, nil, nil
	}
	var le *LimitError
	if errors.As(err, &le) {
		return ExitLimit, exited, le, nil
	}
	fmt.Fprintf(st.stderr, "agentfs-sh: %v\n", err)
	return 1, exited, nil, nil
}

// setVar sets a variable in the running shell as an assignment would.
func (se *Session) setVar(name, value string) {
	// Running an assignment is the only public way to change a variable
	// of a Runner after its first reset.
	word := &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: value}}}
	stmt := &syntax.Stmt{Cmd: &syntax.DeclClause{
		Variant: &syntax.Lit{Value: "export"},
		Args:    []*syntax.Assign{{Name: &syntax.Lit{Value: name}, Value: word}},
	}}
	if !syntax.ValidName(name) {
		return
	}
	se.runner.Run(context.Background(), stmt)
}

// audit records the Exec as a tool call named "exec".
func (s *Sandbox) audit(ctx context.Context, script, dir string, start time.Time, res Result, b *budget) error {
	if s.tools == nil || s.opts.NoAudit {
		return nil
	}
	params, _ := json.Marshal(map[string]any{"command": toValidUTF8(script), "cwd": dir})
	result := map[string]any{
		"exit_code":    res.ExitCode,
		"stdout_bytes": b.stdoutBytes.Load(),
		"stderr_bytes": b.stderrBytes.Load(),
	}
	if res.Limit != nil {
		result["limit"] = res.Limit.Limit
	}
	out, _ := json.Marshal(result)
	var errMsg *string
	if res.ExitCode != 0 {
		m := fmt.Sprintf("exit status %d", res.ExitCode)
		if res.Limit != nil {
			m += ": " + res.Limit.Error()
		}
		errMsg = &m
	}
	// The record must survive the caller's cancellation.
	_, err := s.tools.Record(context.WithoutCancel(ctx), "exec", start, time.Now(), params, out, errMsg)
	if err != nil {
		return fmt.Errorf("sandbox: audit: %w", err)
	}
	return nil
}

func toValidUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// unsupported reports a construct the sandbox refuses, or "".
func unsupported(node syntax.Node) string {
	msg := ""
	syntax.Walk(node, func(n syntax.Node) bool {
		if msg != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CoprocClause:
			msg = "coproc is not supported in the sandbox"
		case *syntax.UnaryTest:
			if x.Op == syntax.TsUsrOwn || x.Op == syntax.TsGrpOwn {
				msg = "the -O and -G tests are not supported in the sandbox; use stat -c %u"
			}
		}
		return true
	})
	return msg
}

// unsupportedSource parses src (eval, source, trap) and reports a refused
// construct, or "" when it parses and is allowed (parse errors are left
// to the interpreter).
func unsupportedSource(src string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return ""
	}
	return unsupported(f)
}

// sandboxEnviron is the environment the shell starts from: the policy's
// variables only, nothing from the host.
type sandboxEnviron struct {
	vars    map[string]expand.Variable
	hideTmp bool
	home    string
	user    string
}

// noHostTmp is where the interpreter would put process-substitution FIFOs:
// below /dev/null nothing can be created nor opened.
const noHostTmp = "/dev/null/agentfs-sandbox"

func newEnviron(p Policy) *sandboxEnviron {
	e := &sandboxEnviron{vars: map[string]expand.Variable{}, home: p.Home, user: p.User}
	set := func(k, v string, exported bool) {
		e.vars[k] = expand.Variable{Set: true, Exported: exported, Kind: expand.String, Str: v}
	}
	for k, v := range defaultEnv(p) {
		set(k, v, true)
	}
	uid, gid := fmt.Sprint(p.UID), fmt.Sprint(p.GID)
	for k, v := range map[string]string{"UID": uid, "EUID": uid, "GID": gid, "HOSTNAME": p.Hostname} {
		vr := expand.Variable{Set: true, Kind: expand.String, Str: v, ReadOnly: k != "HOSTNAME"}
		e.vars[k] = vr
	}
	return e
}

func (e *sandboxEnviron) Get(name string) expand.Variable {
	if name == "TMPDIR" && e.hideTmp {
		return expand.Variable{Set: true, Kind: expand.String, Str: noHostTmp}
	}
	if strings.HasPrefix(name, "HOME ") {
		// "~user": answer here so that the interpreter never looks the
		// user up in the host's passwd database.
		u := strings.TrimPrefix(name, "HOME ")
		switch u {
		case e.user:
			return expand.Variable{Set: true, Kind: expand.String, Str: e.home}
		case "root":
			return expand.Variable{Set: true, Kind: expand.String, Str: "/root"}
		}
		return expand.Variable{Set: true, Kind: expand.String, Str: "/home/" + u}
	}
	return e.vars[name]
}

func (e *sandboxEnviron) Each(fn func(name string, vr expand.Variable) bool) {
	names := make([]string, 0, len(e.vars))
	for k := range e.vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !fn(k, e.vars[k]) {
			return
		}
	}
}

// Incomplete reports whether script stops in the middle of a construct
// (an open quote, "if" without "fi", a trailing pipe), so that an
// interactive loop should read another line before running it.
func Incomplete(script string) bool {
	_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	return err != nil && syntax.IsIncomplete(err)
}

// stdinPipe hands a reader to the interpreter through a pipe we own, so
// that the copying goroutine ends with the Exec even when the script
// does not read its input (the interpreter would make its own pipe and
// leave it to the garbage collector).
func stdinPipe(r io.Reader) (io.Reader, func()) {
	switch r.(type) {
	case nil:
		return nil, func() {}
	case *os.File:
		return r, func() {}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return r, func() {}
	}
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pr.Close() }
}
