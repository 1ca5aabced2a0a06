package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Procs is a process table: scripts started in the background whose
// output is read as it comes, whose stdin is written while they run, and
// which can be waited for, listed and killed by id. It also holds
// persistent shells (Session) whose state survives between the scripts
// run in them. The engine's doors (rpc, sdk-go) keep one table per
// client connection or agent and only translate calls onto it.
//
// A table defends itself against a caller that starts without end or
// never reads: it holds at most MaxProcs processes (running, or ended
// with output or exit status not yet read) and MaxShells shells, and a
// process whose unread output reaches MaxUnread blocks in its next write
// until the caller reads (as a pipe does), so memory stays bounded.
type Procs struct {
	lim ProcLimits

	mu     sync.Mutex
	next   uint64
	procs  map[uint64]*Proc
	shells map[uint64]*Shell
	closed bool
	// retired holds the last processes Stream reaped (at most
	// maxRetired, oldest first in retiredIDs): their client learns of
	// the exit from the stream after the table did, and may still write
	// stdin (EPIPE), close it or kill the process (no-ops) by pid, as if
	// it had not been reaped yet. List does not show them, and the
	// engine's KillProcess treats them as reaped (ESRCH).
	retired    map[uint64]*Proc
	retiredIDs []uint64
}

// maxRetired bounds Procs.retired.
const maxRetired = 64

// ProcLimits bound a process table; zero fields take the defaults.
type ProcLimits struct {
	MaxProcs  int // processes held at once (default 64)
	MaxShells int // persistent shells (default 16)
	MaxUnread int // bytes of output buffered per process (default 1 MiB)
	MaxStdin  int // bytes of stdin buffered per process (default 1 MiB)
}

// DefaultProcLimits are the limits of NewProcs(ProcLimits{}).
var DefaultProcLimits = ProcLimits{MaxProcs: 64, MaxShells: 16, MaxUnread: 1 << 20, MaxStdin: 1 << 20}

// Signals of Kill, by their POSIX numbers (the exit code of a killed
// process is 128 plus the number). The sandbox has no signal handlers:
// every signal stops the script.
const (
	SIGINT  = 2
	SIGKILL = 9
	SIGTERM = 15
)

// ErrNoProc is returned for an id that names no process or shell of the
// table (never started, reaped, or killed).
var ErrNoProc = syscall.ESRCH

// ErrTooMany is returned by Start and OpenShell when the table is full.
var ErrTooMany = syscall.EAGAIN

// NewProcs returns an empty table.
func NewProcs(lim ProcLimits) *Procs {
	d := DefaultProcLimits
	if lim.MaxProcs <= 0 {
		lim.MaxProcs = d.MaxProcs
	}
	if lim.MaxShells <= 0 {
		lim.MaxShells = d.MaxShells
	}
	if lim.MaxUnread <= 0 {
		lim.MaxUnread = d.MaxUnread
	}
	if lim.MaxStdin <= 0 {
		lim.MaxStdin = d.MaxStdin
	}
	return &Procs{lim: lim, procs: map[uint64]*Proc{}, shells: map[uint64]*Shell{}, retired: map[uint64]*Proc{}}
}

// Stream says where a Chunk of output came from.
type Stream int

const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// Chunk is a piece of output in the order the script wrote it.
type Chunk struct {
	Stream Stream
	Data   []byte
}

// Exit is how a process ended.
type Exit struct {
	Code int
	// Signal is the signal of Kill that stopped it (0 when it ended by
	// itself); Code is then 128+Signal, as a shell reports it.
	Signal int
	// Limit is set when a limit of the sandbox stopped it.
	Limit *LimitError
	// Err is set when the run failed outside the script (audit record).
	Err error
}

// StartOptions tune Procs.Start.
type StartOptions struct {
	ExecOptions
	// Shell runs the script in this persistent shell (0: a fresh one).
	Shell uint64
	// KeepStdinOpen leaves stdin open after ExecOptions.Stdin's bytes for
	// Proc.Write; otherwise the script reads those bytes, then EOF.
	KeepStdinOpen bool
	// Timeout kills the process (SIGKILL) when it runs longer; 0: only
	// the sandbox's wall-time limit applies.
	Timeout time.Duration
}

// ProcInfo describes a process for List.
type ProcInfo struct {
	ID      uint64
	Script  string
	Shell   uint64
	Started time.Time
	Running bool
	Exit    Exit // valid when !Running
}

// Proc is one started script.
type Proc struct {
	ID      uint64
	Script  string
	Shell   uint64
	Started time.Time

	t      *Procs
	cancel context.CancelFunc
	done   chan struct{} // closed when the script ended

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change below
	out     []Chunk
	unread  int
	exit    Exit
	exited  bool
	signal  int
	stdin   []byte
	inEOF   bool
	inShut  bool // the script ended: stdin writes fail
	outShut bool // the script ended or was killed: output writes are dropped
}

// Start runs script in sb (or in the table's shell opts.Shell, with
// that shell's sandbox) and returns at once.
func (t *Procs) Start(ctx context.Context, sb *Sandbox, script string, opts StartOptions) (*Proc, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, errors.New("sandbox: the process table is closed")
	}
	if len(t.procs) >= t.lim.MaxProcs {
		t.mu.Unlock()
		return nil, fmt.Errorf("sandbox: %w: %d processes already (the limit; kill some or read their exit status)", ErrTooMany, t.lim.MaxProcs)
	}
	var sh *Shell
	if opts.Shell != 0 {
		sh = t.shells[opts.Shell]
		if sh == nil {
			t.mu.Unlock()
			return nil, fmt.Errorf("sandbox: shell %d: %w", opts.Shell, ErrNoProc)
		}
	}
	if sh != nil {
		sb = sh.s.s
	}
	if sb == nil {
		t.mu.Unlock()
		return nil, errors.New("sandbox: Start needs a sandbox or a shell")
	}
	t.next++
	p := &Proc{ID: t.next, Script: script, Shell: opts.Shell, Started: time.Now(), t: t, done: make(chan struct{}), changed: make(chan struct{})}
	t.procs[p.ID] = p
	t.mu.Unlock()

	// The process outlives the call that started it: only Kill, Close
	// or the timeout stop it, not ctx (a unary call's context).
	// A script blocked writing output that nobody reads does not see the
	// sandbox's own wall-time limit (the interpreter waits for the
	// write), so the table enforces it too, a moment later.
	base := context.WithoutCancel(ctx)
	runCtx, cancel := context.WithCancel(base)
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(base, opts.Timeout)
	} else if w := sb.opts.Limits.WallTime; w > 0 {
		runCtx, cancel = context.WithTimeout(base, w+time.Second)
	}
	p.cancel = cancel
	// When the run ends early (kill, timeout), blocked reads of stdin
	// and writes of output return so the interpreter can stop.
	stop := context.AfterFunc(runCtx, func() {
		p.mu.Lock()
		p.inShut, p.outShut = true, true
		p.notify()
		p.mu.Unlock()
	})
	if opts.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(opts.Stdin, int64(t.lim.MaxStdin)+1))
		if err != nil || len(b) > t.lim.MaxStdin {
			t.remove(p.ID)
			cancel()
			return nil, fmt.Errorf("sandbox: %w: initial stdin above %d bytes (write the rest with Write)", syscall.EFBIG, t.lim.MaxStdin)
		}
		p.stdin = b
	}
	p.inEOF = !opts.KeepStdinOpen
	eo := opts.ExecOptions
	eo.Stdin = procStdin{p}
	eo.Stdout = procOut{p, Stdout}
	eo.Stderr = procOut{p, Stderr}
	go func() {
		defer cancel()
		defer stop()
		var res Result
		var err error
		if sh != nil {
			res, err = sh.s.Exec(runCtx, script, eo)
		} else {
			res, err = sb.Exec(runCtx, script, eo)
		}
		p.finish(res, err, runCtx, opts.Timeout, sb.opts.Limits.WallTime)
	}()
	return p, nil
}

func (p *Proc) finish(res Result, err error, runCtx context.Context, timeout, wall time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exit = Exit{Code: res.ExitCode, Limit: res.Limit}
	switch {
	case p.signal != 0:
		p.exit = Exit{Code: 128 + p.signal, Signal: p.signal}
	case res.Limit != nil:
	case err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) && timeout > 0:
		p.exit = Exit{Code: 128 + SIGKILL, Signal: SIGKILL}
	case err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		// The wall time passed while the script was blocked writing
		// output nobody read (see Start).
		p.exit = Exit{Code: ExitLimit, Limit: &LimitError{Limit: "wall time", Max: int64(wall)}}
	case err != nil:
		p.exit.Err = err
	}
	p.exited, p.inShut, p.outShut = true, true, true
	close(p.done)
	p.notify()
}

// notify wakes everyone waiting on a change; p.mu is held.
func (p *Proc) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// procOut is the script's stdout or stderr: chunks into the process's
// buffer, blocking while MaxUnread bytes wait to be read.
type procOut struct {
	p *Proc
	s Stream
}

func (w procOut) Write(b []byte) (int, error) {
	p, n := w.p, 0
	p.mu.Lock()
	defer p.mu.Unlock()
	for n < len(b) {
		if p.outShut {
			// Killed: the rest is dropped, the script is being stopped.
			return len(b), nil
		}
		room := p.t.lim.MaxUnread - p.unread
		if room <= 0 {
			ch := p.changed
			p.mu.Unlock()
			<-ch
			p.mu.Lock()
			continue
		}
		part := b[n:]
		if len(part) > room {
			part = part[:room]
		}
		if k := len(p.out); k > 0 && p.out[k-1].Stream == w.s {
			p.out[k-1].Data = append(p.out[k-1].Data, part...)
		} else {
			p.out = append(p.out, Chunk{Stream: w.s, Data: append([]byte(nil), part...)})
		}
		p.unread += len(part)
		n += len(part)
		p.notify()
	}
	return n, nil
}

// procStdin is the script's stdin: the bytes of Write, EOF after
// CloseStdin.
type procStdin struct{ p *Proc }

func (r procStdin) Read(b []byte) (int, error) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.stdin) == 0 {
		if p.inEOF || p.inShut || p.outShut {
			return 0, io.EOF
		}
		ch := p.changed
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	n := copy(b, p.stdin)
	p.stdin = p.stdin[n:]
	p.notify()
	return n, nil
}

// Write appends b to the script's stdin, waiting while MaxStdin bytes
// are not yet read. It fails with EPIPE once the script ended or stdin
// was closed.
func (p *Proc) Write(ctx context.Context, b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(b) > 0 {
		if p.inShut || p.inEOF || p.outShut {
			return fmt.Errorf("sandbox: process %d: stdin: %w", p.ID, syscall.EPIPE)
		}
		room := p.t.lim.MaxStdin - len(p.stdin)
		if room <= 0 {
			ch := p.changed
			p.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				p.mu.Lock()
				return ctx.Err()
			}
			p.mu.Lock()
			continue
		}
		k := min(room, len(b))
		p.stdin = append(p.stdin, b[:k]...)
		b = b[k:]
		p.notify()
	}
	return nil
}

// CloseStdin makes the script read EOF after what was written.
func (p *Proc) CloseStdin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inEOF {
		p.inEOF = true
		p.notify()
	}
}

// Read returns the output written since the last Read, up to max bytes
// (0: all), waiting up to wait for some when there is none yet. exit is
// set once the process ended and every byte was read; that Read also
// removes the process from the table (as wait(2) reaps a child).
func (p *Proc) Read(ctx context.Context, max int, wait time.Duration) (chunks []Chunk, exit *Exit, err error) {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	p.mu.Lock()
	for len(p.out) == 0 && !p.exited && wait > 0 {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-timer:
			wait = 0
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		p.mu.Lock()
	}
	total := 0
	for len(p.out) > 0 && (max <= 0 || total < max) {
		c := p.out[0]
		if max > 0 && total+len(c.Data) > max {
			k := max - total
			chunks = append(chunks, Chunk{Stream: c.Stream, Data: c.Data[:k:k]})
			p.out[0].Data = c.Data[k:]
			total += k
			break
		}
		chunks = append(chunks, c)
		p.out = p.out[1:]
		total += len(c.Data)
	}
	p.unread -= total
	if total > 0 {
		p.notify()
	}
	if p.exited && len(p.out) == 0 {
		e := p.exit
		exit = &e
	}
	p.mu.Unlock()
	if exit != nil {
		p.t.remove(p.ID)
	}
	return chunks, exit, nil
}

// Stream sends the process's output to send as the script writes it,
// then returns its exit status and reaps it, as the Read that returns the
// status would. The caller streaming a process owns it: when ctx ends or
// send fails first (the client went away, its deadline passed), Stream
// kills the process (SIGKILL), waits until the script has stopped, reaps
// it and returns that exit with the error.
func (p *Proc) Stream(ctx context.Context, send func([]Chunk) error) (Exit, error) {
	for {
		// The wait is only a bound on one round of the loop: Read returns
		// as soon as output or the exit arrives.
		cs, exit, err := p.Read(ctx, 0, time.Hour)
		if err == nil && len(cs) > 0 {
			err = send(cs)
		}
		if err != nil {
			return p.Abandon(), err
		}
		if exit != nil {
			p.t.retire(p)
			return *exit, nil
		}
	}
}

// Retired reports whether id is a process Stream reaped (Get still
// finds it for a while, see Procs.retired).
func (t *Procs) Retired(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.retired[id] != nil && t.procs[id] == nil
}

// retire keeps a process Stream reaped reachable by Get for a while.
func (t *Procs) retire(p *Proc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.retired[p.ID] = p
	t.retiredIDs = append(t.retiredIDs, p.ID)
	if len(t.retiredIDs) > maxRetired {
		delete(t.retired, t.retiredIDs[0])
		t.retiredIDs = t.retiredIDs[1:]
	}
}

// Abandon kills a process whose reader went away, waits for the script to
// stop and drops it from the table.
func (p *Proc) Abandon() Exit {
	p.Kill(SIGKILL)
	<-p.done
	p.t.remove(p.ID)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// Wait waits for the script to end and returns how; the output stays
// readable. A script blocked on MaxUnread unread bytes ends only when
// they are read, so a caller that wants only the status reads too.
func (p *Proc) Wait(ctx context.Context) (Exit, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return Exit{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit, nil
}

// Done is closed when the script ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Kill stops the script: its context is cancelled (so a running command,
// a network request or a binding call stops) and its exit code becomes
// 128+sig. Output not yet read stays readable. Killing a process that
// ended does nothing.
func (p *Proc) Kill(sig int) {
	if sig <= 0 {
		sig = SIGKILL
	}
	p.mu.Lock()
	if !p.exited && p.signal == 0 {
		p.signal = sig
		p.outShut = true
		p.notify()
	}
	p.mu.Unlock()
	p.cancel()
}

// Info describes the process.
func (p *Proc) Info() ProcInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProcInfo{ID: p.ID, Script: p.Script, Shell: p.Shell, Started: p.Started, Running: !p.exited, Exit: p.exit}
}

// Get returns the process with id.
func (t *Procs) Get(id uint64) (*Proc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.procs[id]; p != nil {
		return p, nil
	}
	if p := t.retired[id]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("sandbox: process %d: %w (never started, or ended and its exit status was read)", id, ErrNoProc)
}

// Remove kills the process and drops it from the table with its unread
// output.
func (t *Procs) Remove(id uint64) error {
	p, err := t.Get(id)
	if err != nil {
		return err
	}
	p.Kill(SIGKILL)
	t.remove(id)
	return nil
}

func (t *Procs) remove(id uint64) {
	t.mu.Lock()
	delete(t.procs, id)
	t.mu.Unlock()
}

// List describes the processes of the table by id.
func (t *Procs) List() []ProcInfo {
	t.mu.Lock()
	ps := make([]*Proc, 0, len(t.procs))
	for _, p := range t.procs {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	out := make([]ProcInfo, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Shell is a persistent shell of the table: working directory,
// variables, functions and options survive between its scripts, which
// run one at a time.
type Shell struct {
	ID uint64
	s  *Session
}

// Dir is the shell's working directory.
func (sh *Shell) Dir() string { return sh.s.Dir() }

// OpenShell starts a persistent shell of sb in dir.
func (t *Procs) OpenShell(sb *Sandbox, dir string) (*Shell, error) {
	se, err := sb.NewSession(dir)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("sandbox: the process table is closed")
	}
	if len(t.shells) >= t.lim.MaxShells {
		return nil, fmt.Errorf("sandbox: %w: %d shells already (the limit; close some)", ErrTooMany, t.lim.MaxShells)
	}
	t.next++
	sh := &Shell{ID: t.next, s: se}
	t.shells[sh.ID] = sh
	return sh, nil
}

// CloseShell kills the shell's processes and forgets it.
func (t *Procs) CloseShell(id uint64) error {
	t.mu.Lock()
	sh := t.shells[id]
	delete(t.shells, id)
	var ps []*Proc
	for _, p := range t.procs {
		if p.Shell == id {
			ps = append(ps, p)
		}
	}
	t.mu.Unlock()
	if sh == nil {
		return fmt.Errorf("sandbox: shell %d: %w", id, ErrNoProc)
	}
	for _, p := range ps {
		p.Kill(SIGKILL)
	}
	return nil
}

// Close kills every process, forgets the shells and refuses new ones;
// it returns when every script has stopped.
func (t *Procs) Close() {
	t.mu.Lock()
	t.closed = true
	ps := make([]*Proc, 0, len(t.procs))
	for _, p := range t.procs {
		ps = append(ps, p)
	}
	t.procs = map[uint64]*Proc{}
	t.shells = map[uint64]*Shell{}
	t.retired, t.retiredIDs = map[uint64]*Proc{}, nil
	t.mu.Unlock()
	for _, p := range ps {
		p.Kill(SIGKILL)
	}
	for _, p := range ps {
		<-p.done
	}
}
