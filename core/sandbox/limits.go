package sandbox

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// Limits bound what one Exec may consume. A zero field means no limit.
type Limits struct {
	// MaxCommands is the number of simple commands run: builtins,
	// functions and utilities, including those run by xargs and find.
	MaxCommands int64
	// MaxSteps is the number of interpreter steps: every statement and
	// every loop iteration. It stops loops that run no command at all,
	// such as "while ((1)); do x=1; done".
	MaxSteps int64
	// MaxCallDepth is how deeply shell functions may nest (recursion).
	// Each level costs the interpreter about 10 KB of Go stack, and Go
	// aborts the whole process past 1 GB of stack.
	MaxCallDepth int
	// WallTime is the longest an Exec may run.
	WallTime time.Duration
	// MaxOutputBytes is what stdout and stderr together may carry back
	// to the caller.
	MaxOutputBytes int64
	// MaxStreamBytes is what the utilities may write in total to any
	// stream, pipes and command substitutions included, so that
	// x=$(yes) cannot exhaust memory.
	MaxStreamBytes int64
	// MaxFSWriteBytes is the data the script may write to the agent
	// filesystem.
	MaxFSWriteBytes int64
	// MaxResponseBytes is the largest body one curl request may receive
	// (curl exits 63 beyond it).
	MaxResponseBytes int64
	// NetTimeout is the longest one curl request may take (curl exits 28
	// beyond it); --max-time may only shorten it.
	NetTimeout time.Duration
	// MaxMemoryBytes is the memory one Exec may hold. What the utilities
	// keep (lines to sort, files read whole, sed's spaces, archives) is
	// reserved before it is kept; what nobody can declare (shell
	// variables, awk and jq values) is watched through the process heap
	// (see memguard.go). Past it the script stops with the "memory"
	// limit.
	MaxMemoryBytes int64
	// MaxBackground is how many background jobs ("cmd &") may run at
	// once; one more stops the script with the "background jobs" limit.
	MaxBackground int
}

// Profiles of limits, by name.
var (
	// Normal suits an agent doing ordinary work on a project.
	Normal = Limits{
		MaxCommands:     100_000,
		MaxSteps:        5_000_000,
		MaxCallDepth:    1000,
		WallTime:        60 * time.Second,
		MaxOutputBytes:  16 << 20,
		MaxStreamBytes:  256 << 20,
		MaxFSWriteBytes: 1 << 30,
		// A response is held in memory before it is written out.
		MaxResponseBytes: 64 << 20,
		NetTimeout:       30 * time.Second,
		MaxMemoryBytes:   512 << 20,
		MaxBackground:    64,
	}
	// Hardened suits untrusted scripts: small budgets everywhere.
	Hardened = Limits{
		MaxCommands:      10_000,
		MaxSteps:         200_000,
		MaxCallDepth:     200,
		WallTime:         10 * time.Second,
		MaxOutputBytes:   1 << 20,
		MaxStreamBytes:   16 << 20,
		MaxFSWriteBytes:  64 << 20,
		MaxResponseBytes: 4 << 20,
		NetTimeout:       5 * time.Second,
		MaxMemoryBytes:   64 << 20,
		MaxBackground:    16,
	}
)

// Profile returns the limits of a profile name: "normal" or "hardened".
func Profile(name string) (Limits, error) {
	switch name {
	case "normal", "":
		return Normal, nil
	case "hardened":
		return Hardened, nil
	}
	return Limits{}, fmt.Errorf("sandbox: unknown profile %q (normal or hardened)", name)
}

// ExitLimit is the exit status of a script stopped by a limit, as
// timeout(1) exits with 124.
const ExitLimit = 124

// LimitError says which limit stopped a script.
type LimitError struct {
	Limit string // "commands", "steps", "call depth", "wall time", "output", "stream", "filesystem writes", "memory", "background jobs"
	Max   int64  // the limit (nanoseconds for wall time)
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "wall time":
		return fmt.Sprintf("sandbox limit exceeded: wall time %s", time.Duration(e.Max))
	case "call depth":
		return fmt.Sprintf("sandbox limit exceeded: call depth %d", e.Max)
	case "output", "stream", "filesystem writes", "memory":
		return fmt.Sprintf("sandbox limit exceeded: %s of %d bytes", e.Limit, e.Max)
	}
	return fmt.Sprintf("sandbox limit exceeded: %d %s", e.Max, e.Limit)
}

// budget is the consumption of one Exec.
type budget struct {
	limits   Limits
	commands atomic.Int64
	steps    atomic.Int64
	output   atomic.Int64
	stream   atomic.Int64
	fsWrites atomic.Int64
	// what reached the caller, for the audit record
	stdoutBytes, stderrBytes atomic.Int64
	maybeFuncCalls           atomic.Int64
	background               atomic.Int64 // background jobs running
	mem                      *commands.Mem
	tripped                  atomic.Pointer[LimitError]
	cancel                   context.CancelFunc
}

func (b *budget) trip(e *LimitError) *LimitError {
	if b.tripped.CompareAndSwap(nil, e) {
		b.cancel()
	}
	return b.tripped.Load()
}

// addCommand counts one command and reports the limit error, if any.
func (b *budget) addCommand() error {
	if e := b.tripped.Load(); e != nil {
		return e
	}
	if n := b.commands.Add(1); b.limits.MaxCommands > 0 && n > b.limits.MaxCommands {
		return b.trip(&LimitError{Limit: "commands", Max: b.limits.MaxCommands})
	}
	return nil
}

// addFSWrite reserves n bytes of filesystem writes.
func (b *budget) addFSWrite(n int64) error {
	if e := b.tripped.Load(); e != nil {
		return e
	}
	if m := b.limits.MaxFSWriteBytes; m > 0 && b.fsWrites.Add(n) > m {
		b.fsWrites.Add(-n)
		return b.trip(&LimitError{Limit: "filesystem writes", Max: m})
	}
	return nil
}

// newBudget is the budget of one Exec; cancel stops its context.
func newBudget(l Limits, cancel context.CancelFunc) *budget {
	b := &budget{limits: l, cancel: cancel}
	b.mem = commands.NewMem(l.MaxMemoryBytes, func() { b.tripMemory() })
	return b
}

func (b *budget) tripMemory() *LimitError {
	return b.trip(&LimitError{Limit: "memory", Max: b.limits.MaxMemoryBytes})
}

// Within reports whether every limit of l is at most the same limit of
// ceiling, a zero (no limit) being above everything.
func (l Limits) Within(ceiling Limits) bool {
	le := func(a, c int64) bool { return c == 0 || a != 0 && a <= c }
	return le(l.MaxCommands, ceiling.MaxCommands) &&
		le(l.MaxSteps, ceiling.MaxSteps) &&
		le(int64(l.MaxCallDepth), int64(ceiling.MaxCallDepth)) &&
		le(int64(l.WallTime), int64(ceiling.WallTime)) &&
		le(l.MaxOutputBytes, ceiling.MaxOutputBytes) &&
		le(l.MaxStreamBytes, ceiling.MaxStreamBytes) &&
		le(l.MaxFSWriteBytes, ceiling.MaxFSWriteBytes) &&
		le(l.MaxResponseBytes, ceiling.MaxResponseBytes) &&
		le(int64(l.NetTimeout), int64(ceiling.NetTimeout)) &&
		le(l.MaxMemoryBytes, ceiling.MaxMemoryBytes) &&
		le(int64(l.MaxBackground), int64(ceiling.MaxBackground))
}

// parseCost is what parsing a script may cost per byte of source: a
// statement of two bytes ("y\n", as "yes | sh" feeds) becomes a tree of
// a few hundred bytes.
const parseCost = 128

// checkParse refuses to parse a script whose syntax tree would not fit
// the memory budget: the parser cannot be stopped half way.
func (b *budget) checkParse(script string) error {
	if err := b.mem.Check(int64(len(script)) * parseCost); err != nil {
		return b.tripMemory()
	}
	return nil
}

// stepContext counts interpreter steps: the interpreter asks Err before
// every statement and every loop iteration, so it is the one place where
// a loop that runs no command can be stopped.
type stepContext struct {
	context.Context
	b *budget
}

func (c stepContext) Err() error {
	guard.checkNow()
	if e := c.b.tripped.Load(); e != nil {
		return e
	}
	if n := c.b.steps.Add(1); c.b.limits.MaxSteps > 0 && n > c.b.limits.MaxSteps {
		return c.b.trip(&LimitError{Limit: "steps", Max: c.b.limits.MaxSteps})
	}
	return c.Context.Err()
}

// limitWriter passes writes to w until the shared counter passes max;
// then it trips the limit and fails with commands.ErrStop.
type limitWriter struct {
	mu      *sync.Mutex // shared by stdout and stderr when they capture
	w       io.Writer
	b       *budget
	counter *atomic.Int64
	own     *atomic.Int64 // bytes passed on by this writer, or nil
	max     int64
	name    string
	closed  *bool // when set (under mu), writes are dropped
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.b.tripped.Load() != nil && l.name == "output" {
		return 0, commands.ErrStop
	}
	if l.max > 0 {
		n := l.counter.Add(int64(len(p)))
		if n > l.max {
			allowed := int64(len(p)) - (n - l.max)
			if allowed > 0 {
				l.write(p[:allowed])
			}
			l.b.trip(&LimitError{Limit: l.name, Max: l.max})
			return int(max(allowed, 0)), commands.ErrStop
		}
	}
	return l.write(p)
}

func (l *limitWriter) write(p []byte) (int, error) {
	if l.mu != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	if l.closed != nil && *l.closed {
		return 0, commands.ErrStop
	}
	n, err := l.w.Write(p)
	if l.own != nil {
		l.own.Add(int64(n))
	}
	return n, err
}

// callEntry is the entry PC of the interpreter's (*Runner).call, found
// on the first function call: every nested shell function adds one such
// frame to the goroutine's stack.
var callEntry atomic.Uintptr

const runnerCall = "mvdan.cc/sh/v3/interp.(*Runner).call"

// callDepth counts the (*Runner).call frames on the stack, stopping past
// limit. It is only asked for calls that may be shell functions.
func callDepth(limit int) int {
	entry := callEntry.Load()
	if entry == 0 {
		pcs := make([]uintptr, 32)
		n := runtime.Callers(1, pcs)
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			if f.Function == runnerCall {
				entry = f.Entry
				callEntry.Store(entry)
				break
			}
			if !more {
				return 0
			}
		}
	}
	pcs := make([]uintptr, 1024)
	n := runtime.Callers(1, pcs)
	for n == len(pcs) && len(pcs) < (limit+2)*64 {
		pcs = make([]uintptr, len(pcs)*4)
		n = runtime.Callers(1, pcs)
	}
	depth := 0
	for _, pc := range pcs[:n] {
		if fn := runtime.FuncForPC(pc - 1); fn != nil && fn.Entry() == entry {
			depth++
		}
	}
	return depth
}
