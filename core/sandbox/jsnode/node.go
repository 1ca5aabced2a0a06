// Package jsnode is the sandbox's "node": JavaScript (CommonJS, ES
// modules, TypeScript) run inside the engine by goja, a JavaScript
// interpreter written in Go, with the parts of Node's API that agents use
// (fs, fs/promises, path, process, console, Buffer, timers, events, util,
// child_process, crypto hashes, fetch) implemented over the command's Cmd:
// files through the sandbox's permission-checked FS, commands through the
// sandbox's shell, the network through its policy. No host file, process
// or socket is reachable from a script by any other way.
//
// ES modules and TypeScript are turned into CommonJS by esbuild's Go API
// (one file at a time, as they are required), so goja only ever runs
// CommonJS. See docs/NODE.md.
package jsnode

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// Version is what process.version reports: the Node API level this
// command follows.
const Version = "v20.0.0"

func init() {
	commands.Default.Register(commands.Command{
		Name:  "node",
		Usage: "node [-e CODE | -p CODE | FILE | -] [ARGS...]  (JavaScript/TypeScript in the engine: fs, path, process, Buffer, timers, child_process, fetch)",
		Run:   Run,
	})
}

//go:embed prelude.js
var preludeSrc string

var (
	preludeOnce sync.Once
	preludeProg *goja.Program
	preludeErr  error
)

// exitSignal is the interrupt value of process.exit.
type exitSignal struct{ code int }

// cancelSignal is the interrupt value of a cancelled or limited run.
type cancelSignal struct{}

// Run is the node command.
func Run(c *commands.Cmd) int {
	opts, code, ok := parseArgs(c)
	if !ok {
		return code
	}
	if opts.version {
		fmt.Fprintln(c.Stdout, Version)
		return 0
	}
	n, err := newNode(c, opts)
	if err != nil {
		c.Errorf("%v", err)
		return 1
	}
	defer n.close()
	return n.main()
}

type options struct {
	eval, print bool
	code        string // -e/-p code
	script      string // file to run ("" with eval; "-" is stdin)
	args        []string
	preload     []string
	check       bool
	version     bool
}

func parseArgs(c *commands.Cmd) (options, int, bool) {
	var o options
	args := c.Args[1:]
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		args = args[1:]
		switch {
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print" || a == "-pe":
			if len(args) == 0 {
				c.Errorf("%s requires an argument", a)
				return o, 9, false
			}
			o.eval = true
			o.print = a == "-p" || a == "--print" || a == "-pe"
			o.code, args = args[0], args[1:]
			// Node stops reading options after the code: the rest are
			// the script's arguments.
			o.args = args
			return o, 0, true
		case strings.HasPrefix(a, "--eval="), strings.HasPrefix(a, "--print="):
			o.eval, o.print = true, strings.HasPrefix(a, "--print=")
			o.code = a[strings.IndexByte(a, '=')+1:]
			o.args = args
			return o, 0, true
		case a == "-v" || a == "--version":
			o.version = true
			return o, 0, true
		case a == "-c" || a == "--check":
			o.check = true
		case a == "-r" || a == "--require" || a == "--import":
			if len(args) == 0 {
				c.Errorf("%s requires an argument", a)
				return o, 9, false
			}
			o.preload = append(o.preload, args[0])
			args = args[1:]
		case a == "-h" || a == "--help":
			fmt.Fprintln(c.Stdout, "Usage: node [options] [ -e script | script.js | - ] [arguments]\n\nJavaScript, ES modules and TypeScript inside the agentfs sandbox.\n  -e, --eval CODE    run CODE\n  -p, --print CODE   run CODE and print its value\n  -c, --check        check the syntax only\n  -r, --require MOD  load MOD first\n  -v, --version      print the API level")
			return o, 0, false
		case strings.HasPrefix(a, "--input-type"), strings.HasPrefix(a, "--experimental"),
			strings.HasPrefix(a, "--no-"), strings.HasPrefix(a, "--enable-source-maps"),
			strings.HasPrefix(a, "--trace"), strings.HasPrefix(a, "--max-old-space-size"),
			strings.HasPrefix(a, "--stack-size"), strings.HasPrefix(a, "--loader"),
			strings.HasPrefix(a, "--unhandled-rejections"):
			// Accepted for compatibility: they change nothing here
			// (modules are detected, limits are the sandbox's).
		default:
			c.Errorf("bad option: %s", a)
			return o, 9, false
		}
	}
	if len(args) > 0 {
		o.script, o.args = args[0], args[1:]
	} else {
		o.script = "-"
	}
	return o, 0, true
}

// node is one run of a script: a runtime and its event loop. Only the
// loop's goroutine touches the runtime; other goroutines (child
// processes, fetch) post their results to it.
type node struct {
	c    *commands.Cmd
	ctx  context.Context
	rt   *goja.Runtime
	opts options
	cwd  string

	native   *goja.Object
	builtins map[string]goja.Value
	modules  map[string]*goja.Object // by file name
	mainMod  *goja.Object
	runTask  goja.Callable // prelude's task runner: calls, then drains nextTick
	emitExit goja.Callable

	// event loop
	timers     timerHeap
	timerByID  map[int64]*timer
	immediates []*immediate
	seq        int64
	pending    int // async operations whose result will be posted
	posted     chan post
	stop       chan struct{}

	rejections map[*goja.Promise]goja.Value
	rejOrder   []*goja.Promise

	files  map[int]*openFile
	nextFD int
	pipes  []*pipe // stdin of spawned children
	wg     sync.WaitGroup
	// cancel stops what the script started in other goroutines.
	cancel context.CancelFunc
}

func newNode(c *commands.Cmd, opts options) (*node, error) {
	preludeOnce.Do(func() {
		preludeProg, preludeErr = goja.Compile("node:internal/prelude", preludeSrc, true)
	})
	if preludeErr != nil {
		return nil, preludeErr
	}
	ctx, cancel := context.WithCancel(c.Ctx)
	n := &node{
		c: c, ctx: ctx, cancel: cancel, opts: opts, cwd: c.Dir,
		rt:         goja.New(),
		modules:    map[string]*goja.Object{},
		timerByID:  map[int64]*timer{},
		posted:     make(chan post, 64),
		stop:       make(chan struct{}),
		rejections: map[*goja.Promise]goja.Value{},
		files:      map[int]*openFile{},
		nextFD:     10,
	}
	rt := n.rt
	// Go's stack is not what bounds JavaScript recursion in goja (its
	// frames live on the heap), so this is the RangeError depth; Node's
	// default is about 11,000 frames.
	rt.SetMaxCallStackSize(10000)
	rt.SetFieldNameMapper(goja.UncapFieldNameMapper())
	rt.SetPromiseRejectionTracker(n.trackRejection)
	// Interrupt the script when the run is cancelled or a sandbox limit
	// (wall time, memory) stops it.
	go func() {
		select {
		case <-ctx.Done():
			rt.Interrupt(cancelSignal{})
		case <-n.stop:
		}
	}()
	if err := n.setup(); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

func (n *node) close() {
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
	n.cancel()
	for _, p := range n.pipes {
		p.close()
	}
	for fd, f := range n.files {
		f.f.Close()
		delete(n.files, fd)
	}
	// Child commands and requests see the cancellation; wait for them
	// so that nothing of this run outlives the command.
	n.wg.Wait()
}

// setup builds the globals and the builtin modules.
func (n *node) setup() error {
	rt := n.rt
	n.native = rt.NewObject()
	n.bindNative()
	if err := n.setupBuffer(); err != nil {
		return err
	}
	v, err := rt.RunProgram(preludeProg)
	if err != nil {
		return fmt.Errorf("prelude: %w", err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return errors.New("prelude: not a function")
	}
	res, err := fn(goja.Undefined(), n.native, rt.GlobalObject())
	if err != nil {
		return fmt.Errorf("prelude: %w", err)
	}
	o := res.ToObject(rt)
	mods := o.Get("builtins").ToObject(rt)
	n.builtins = map[string]goja.Value{}
	for _, k := range mods.Keys() {
		n.builtins[k] = mods.Get(k)
	}
	n.runTask, _ = goja.AssertFunction(o.Get("runTask"))
	n.emitExit, _ = goja.AssertFunction(o.Get("emitExit"))
	// The global require of "node -e" and of the REPL.
	return nil
}

// main runs the script and the event loop, and returns the exit status.
func (n *node) main() int {
	status := n.runMain()
	if status >= 0 {
		return status
	}
	return n.exitCode()
}

// runMain returns -1 when the script ended normally (the exit status is
// then process.exitCode).
func (n *node) runMain() int {
	for _, p := range n.opts.preload {
		if st := n.task(func() { n.requireFrom(p, n.cwd+"/[preload]") }); st >= 0 {
			return st
		}
	}
	o := n.opts
	if o.eval {
		return n.runEval(o.code, o.print)
	}
	var file string
	if o.script == "-" {
		data, err := io.ReadAll(io.LimitReader(n.c.Stdin, 64<<20))
		if err != nil {
			n.c.Errorf("stdin: %v", err)
			return 1
		}
		if st := n.task(func() { n.runSource("[stdin]", n.cwd, string(data), false) }); st >= 0 {
			return st
		}
		return n.loop()
	}
	file = n.abs(o.script)
	resolved, err := n.resolveFile(file)
	if err != nil {
		fmt.Fprintf(n.c.Stderr, "node:internal/modules/cjs/loader\n\nError: Cannot find module '%s'\n  code: 'MODULE_NOT_FOUND'\n", file)
		return 1
	}
	n.setArgv(resolved)
	if o.check {
		src, err := n.c.FS.ReadFile(resolved)
		if err == nil {
			_, err = n.compileModule(resolved, src)
		}
		if err != nil {
			fmt.Fprintf(n.c.Stderr, "%s\n%v\n", resolved, err)
			return 1
		}
		return 0
	}
	if st := n.task(func() { n.loadMain(resolved) }); st >= 0 {
		return st
	}
	return n.loop()
}

func (n *node) runEval(code string, print bool) int {
	n.setArgv("")
	var result goja.Value
	if st := n.task(func() { result = n.runSource("[eval]", n.cwd, code, print) }); st >= 0 {
		return st
	}
	if print {
		if st := n.guard(func() {
			// As console.log prints it: strings raw, the rest inspected.
			insp, _ := goja.AssertFunction(n.builtins["util"].ToObject(n.rt).Get("format"))
			s, err := insp(goja.Undefined(), result)
			if err != nil {
				panic(err)
			}
			n.write(1, []byte(s.String()+"\n"))
		}); st >= 0 {
			return st
		}
	}
	return n.loop()
}

func (n *node) setArgv(script string) {
	proc := n.builtins["process"].ToObject(n.rt)
	argv := []any{"/usr/local/bin/node"}
	if script != "" {
		argv = append(argv, script)
	}
	for _, a := range n.opts.args {
		argv = append(argv, a)
	}
	proc.Set("argv", n.rt.NewArray(argv...))
}

// guard runs f (which calls into JavaScript) and turns what stops the
// script into an exit status: process.exit, a cancellation or limit, an
// uncaught exception. It returns -1 when f returned normally.
func (n *node) guard(f func()) (status int) {
	defer func() {
		r := recover()
		if r == nil {
			status = n.checkRejections()
			return
		}
		status = n.failure(r)
	}()
	f()
	n.drainTicks()
	return -1
}

// failure turns a panic or error of a JavaScript call into an exit status.
func (n *node) failure(r any) int {
	err, _ := r.(error)
	if err == nil {
		if ex, ok := r.(*goja.Exception); ok {
			err = ex
		} else {
			panic(r)
		}
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		switch v := ie.Value().(type) {
		case exitSignal:
			return v.code
		case cancelSignal:
			return n.cancelStatus()
		}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		fmt.Fprintf(n.c.Stderr, "Uncaught RangeError: Maximum call stack size exceeded\n")
		return 1
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if n.listeners("uncaughtException") {
			// The script handles it: the loop goes on, as in Node.
			return n.guard(func() { n.emit("uncaughtException", ex.Value(), n.rt.ToValue("uncaughtException")) })
		}
		return n.uncaught(ex.Value())
	}
	if errors.Is(err, commands.ErrStop) || commands.IsWriteStop(err) {
		return n.cancelStatus()
	}
	fmt.Fprintf(n.c.Stderr, "node: %v\n", err)
	if os.Getenv("AGENTFS_NODE_DEBUG") != "" {
		fmt.Fprintf(n.c.Stderr, "%s\n", debug.Stack())
	}
	return 1
}

// cancelStatus is the exit status when the run was stopped from outside:
// the sandbox reports its limit itself.
func (n *node) cancelStatus() int {
	if n.c.Ctx.Err() != nil {
		return 130
	}
	return 1
}

// uncaught prints an uncaught exception like Node and returns 1 (or the
// exit status process.exit chose in an 'exit' listener).
func (n *node) uncaught(v goja.Value) int {
	msg := "Uncaught " + v.String()
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			msg = st.String()
		}
		if insp, ok := goja.AssertFunction(n.builtins["util"].ToObject(n.rt).Get("inspect")); ok {
			func() {
				defer func() { recover() }()
				if s, err := insp(goja.Undefined(), v); err == nil {
					msg = s.String()
				}
			}()
		}
	}
	fmt.Fprintf(n.c.Stderr, "%s\n\nNode.js %s (agentfs sandbox)\n", msg, Version)
	return 1
}

func (n *node) exitCode() int {
	proc := n.builtins["process"].ToObject(n.rt)
	v := proc.Get("exitCode")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	return int(v.ToInteger()) & 0xff
}

// trackRejection remembers promises rejected without a handler, which
// end the script after the current task (Node's default, "throw").
func (n *node) trackRejection(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		n.rejections[p] = p.Result()
		n.rejOrder = append(n.rejOrder, p)
	case goja.PromiseRejectionHandle:
		delete(n.rejections, p)
	}
}

func (n *node) checkRejections() int {
	if len(n.rejections) == 0 {
		n.rejOrder = n.rejOrder[:0]
		return -1
	}
	for _, p := range n.rejOrder {
		if v, ok := n.rejections[p]; ok {
			n.rejections = map[*goja.Promise]goja.Value{}
			n.rejOrder = nil
			if n.listeners("unhandledRejection") {
				return n.guard(func() { n.emit("unhandledRejection", v, n.rt.ToValue(p)) })
			}
			return n.uncaught(v)
		}
	}
	return -1
}

// listeners reports whether process has listeners for event.
func (n *node) listeners(event string) bool {
	proc := n.builtins["process"].ToObject(n.rt)
	lc, ok := goja.AssertFunction(proc.Get("listenerCount"))
	if !ok {
		return false
	}
	v, err := lc(proc, n.rt.ToValue(event))
	return err == nil && v.ToInteger() > 0
}

// emit calls process.emit(event, args...) as a task.
func (n *node) emit(event string, args ...goja.Value) {
	proc := n.builtins["process"].ToObject(n.rt)
	em, _ := goja.AssertFunction(proc.Get("emit"))
	f := n.rt.ToValue(func(goja.FunctionCall) goja.Value {
		if _, err := em(proc, append([]goja.Value{n.rt.ToValue(event)}, args...)...); err != nil {
			panic(err)
		}
		return goja.Undefined()
	})
	if _, err := n.runTask(goja.Undefined(), f); err != nil {
		panic(err)
	}
}

// drainTicks runs process.nextTick callbacks queued outside a task.
func (n *node) drainTicks() {
	if _, err := n.runTask(goja.Undefined(), goja.Undefined()); err != nil {
		panic(err)
	}
}

// task runs Go code that calls into JavaScript as one task of the event
// loop: nextTick callbacks and promise jobs run after it, in Node's order.
func (n *node) task(f func()) int {
	return n.call(n.rt.ToValue(func(goja.FunctionCall) goja.Value {
		f()
		return goja.Undefined()
	}))
}

// call runs one task of the event loop: fn, then the nextTick queue and
// the promise jobs.
func (n *node) call(fn goja.Value, args ...goja.Value) int {
	return n.guard(func() {
		if _, err := n.runTask(goja.Undefined(), append([]goja.Value{fn}, args...)...); err != nil {
			panic(err)
		}
	})
}

// abs makes p absolute against the script's working directory.
func (n *node) abs(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = n.cwd + "/" + p
	}
	return path.Clean(p)
}

// post is a result handed from another goroutine to the loop; done
// marks the last one of an operation.
type post struct {
	f    func()
	done bool
}

// postData hands an intermediate result (a chunk of output) to the loop.
func (n *node) postData(f func()) {
	select {
	case n.posted <- post{f: f}:
	case <-n.stop:
	}
}

// postDone hands the final result of an operation to the loop.
func (n *node) postDone(f func()) {
	select {
	case n.posted <- post{f: f, done: true}:
	case <-n.stop:
	}
}

func (n *node) runPost(p post) int {
	if p.done {
		n.pending--
	}
	return n.guard(p.f)
}

// startAsync counts an operation that will post its result, and runs it
// in its own goroutine.
func (n *node) startAsync(op func()) {
	n.pending++
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		op()
	}()
}

// loop runs timers, immediates and posted results until nothing is left,
// then emits 'exit'. It returns the exit status.
func (n *node) loop() int {
	for {
		if n.ctx.Err() != nil {
			return n.cancelStatus()
		}
		now := time.Now()
		// Timers whose time has come, in order of time then creation.
		for len(n.timers) > 0 && !n.timers[0].when.After(now) {
			t := n.timers.pop()
			if t.cleared {
				continue
			}
			if t.interval {
				t.when = now.Add(t.delay)
				t.seq = n.nextSeq()
				n.timers.push(t)
			} else {
				delete(n.timerByID, t.id)
			}
			if st := n.call(t.fn, t.args...); st >= 0 {
				return st
			}
		}
		// Results posted by other goroutines (I/O callbacks).
		for drained := false; !drained; {
			select {
			case p := <-n.posted:
				if st := n.runPost(p); st >= 0 {
					return st
				}
			default:
				drained = true
			}
		}
		// setImmediate callbacks queued before this phase.
		if len(n.immediates) > 0 {
			batch := n.immediates
			n.immediates = nil
			for _, im := range batch {
				if im.cleared {
					continue
				}
				if st := n.call(im.fn, im.args...); st >= 0 {
					return st
				}
			}
			continue
		}
		if !n.alive() {
			break
		}
		var wait <-chan time.Time
		var tm *time.Timer
		if next := n.nextTimer(); next != nil {
			d := time.Until(next.when)
			if d <= 0 {
				continue
			}
			tm = time.NewTimer(d)
			wait = tm.C
		}
		st := -1
		select {
		case <-n.ctx.Done():
			st = n.cancelStatus()
		case p := <-n.posted:
			st = n.runPost(p)
		case <-wait:
		}
		if tm != nil {
			tm.Stop()
		}
		if st >= 0 {
			return st
		}
	}
	var status int
	if st := n.guard(func() {
		if _, err := n.emitExit(goja.Undefined()); err != nil {
			panic(err)
		}
	}); st >= 0 {
		return st
	}
	status = n.exitCode()
	return status
}

// alive reports whether the loop has work: a referenced timer or a
// pending operation.
func (n *node) alive() bool {
	if n.pending > 0 || len(n.immediates) > 0 {
		return true
	}
	for _, t := range n.timers {
		if !t.cleared && t.ref {
			return true
		}
	}
	return false
}

func (n *node) nextTimer() *timer {
	for len(n.timers) > 0 && n.timers[0].cleared {
		n.timers.pop()
	}
	if len(n.timers) == 0 {
		return nil
	}
	return n.timers[0]
}

func (n *node) nextSeq() int64 {
	n.seq++
	return n.seq
}

type timer struct {
	id       int64
	seq      int64
	when     time.Time
	delay    time.Duration
	interval bool
	ref      bool
	cleared  bool
	fn       goja.Value
	args     []goja.Value
}

type immediate struct {
	cleared bool
	fn      goja.Value
	args    []goja.Value
}

// timerHeap orders timers by time, then by creation.
type timerHeap []*timer

func (h timerHeap) less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}

func (h *timerHeap) push(t *timer) {
	*h = append(*h, t)
	sort.SliceStable(*h, h.less)
}

func (h *timerHeap) pop() *timer {
	t := (*h)[0]
	*h = (*h)[1:]
	return t
}

// write sends data to the script's stdout (1) or stderr (2). A stopped
// stream (closed pipe, output limit) ends the script quietly.
func (n *node) write(fd int, data []byte) {
	w := n.c.Stdout
	if fd == 2 {
		w = n.c.Stderr
	}
	if _, err := w.Write(data); err != nil {
		if commands.IsWriteStop(err) {
			n.rt.Interrupt(cancelSignal{})
			return
		}
		panic(n.rt.NewGoError(err))
	}
}
