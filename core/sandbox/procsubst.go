package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Process substitution, <(CMD) and >(CMD), inside the engine.
//
// The interpreter implements it with a named pipe created in the host's
// temporary directory and offers no hook to do otherwise, so the sandbox
// rewrites every statement that holds one before the interpreter sees it
// (as it does for "CMD &", background.go):
//
//	diff <(A) <(B)
//
// becomes
//
//	{ __agentfs_psub1=$(agentfs:psub in); { A; } >${__agentfs_psub1} &
//	  __agentfs_psub2=$(agentfs:psub in); { B; } >${__agentfs_psub2} &
//	  diff ${__agentfs_psub1} ${__agentfs_psub2}
//	  agentfs:psub-release $? ${__agentfs_psub1} ${__agentfs_psub2}; }
//
// agentfs:psub makes an in-memory pipe of this Exec and prints its name,
// /dev/fd/N (N from 63 up), which the handlers (open, stat) and the
// utilities (through the guarded FS) serve from that pipe: nothing is
// created on the host and no host process runs. CMD runs as a background
// job of the sandbox, so the background-jobs, command, stream and memory
// limits apply to it; the pipes close when the Exec ends or is stopped,
// which ends a CMD blocked on one. After the statement, as bash closes
// its end of the pipe, agentfs:psub-release closes the end nobody opened
// so that a CMD whose output is never read stops (EPIPE) instead of
// waiting, and the name stops resolving.
//
// The names are shell variables of the running shell, visible to "set".
// "$?" inside the statement is 0 (the setup ran before it).
const (
	cmdPsub        = "agentfs:psub"
	cmdPsubRelease = "agentfs:psub-release"
	psubVarPrefix  = "__agentfs_psub"
	// firstPipeFD is the first number of /dev/fd/N handed out, as bash.
	firstPipeFD = 63
	// maxLivePipes bounds the pipes open at once in one Exec.
	maxLivePipes = 256
)

// psubSeq numbers the variables of the rewrites of the whole process, so
// that the rewrite of an eval never reuses a name an enclosing statement
// still needs.
var psubSeq atomic.Int64

// rewriteProcSubst rewrites the process substitutions of node; it reports
// whether there was any.
func rewriteProcSubst(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || st.Cmd == nil {
			return true
		}
		if _, ok := st.Cmd.(*syntax.FuncDecl); ok {
			return true
		}
		words := stmtWords(st)
		if len(words) == 0 {
			return true
		}
		found = true
		var setup []*syntax.Stmt
		release := []*syntax.Word{{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "?"}}}}}
		for _, w := range words {
			for i, part := range w.Parts {
				ps, ok := part.(*syntax.ProcSubst)
				if !ok {
					continue
				}
				name := psubVarPrefix + strconv.FormatInt(psubSeq.Add(1), 10)
				ref := func() *syntax.Word {
					return &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Param: &syntax.Lit{Value: name}}}}
				}
				dir, op := "in", syntax.RdrOut
				if ps.Op == syntax.CmdOut {
					dir, op = "out", syntax.RdrIn
				}
				alloc := &syntax.CmdSubst{Stmts: []*syntax.Stmt{callStmt(litWord(cmdPsub), litWord(dir))}}
				setup = append(setup,
					&syntax.Stmt{Cmd: &syntax.CallExpr{Assigns: []*syntax.Assign{{
						Name:  &syntax.Lit{Value: name},
						Value: &syntax.Word{Parts: []syntax.WordPart{alloc}},
					}}}},
					&syntax.Stmt{
						Cmd:        &syntax.Block{Stmts: ps.Stmts, Last: ps.Last},
						Redirs:     []*syntax.Redirect{{Op: op, Word: ref()}},
						Background: true,
					},
				)
				w.Parts[i] = ref().Parts[0]
				release = append(release, ref())
			}
		}
		orig := &syntax.Stmt{Cmd: st.Cmd, Redirs: st.Redirs, Position: st.Position}
		rel := &syntax.Stmt{Cmd: &syntax.CallExpr{Args: append([]*syntax.Word{litWord(cmdPsubRelease)}, release...)}}
		st.Cmd = &syntax.Block{Stmts: append(append(setup, orig), rel)}
		st.Redirs = nil
		return true
	})
	return found
}

// stmtWords lists the words of st itself (its command and redirections,
// not the statements nested in it) that hold a process substitution.
func stmtWords(st *syntax.Stmt) []*syntax.Word {
	var out []*syntax.Word
	visit := func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			return false // visited on its own by the outer walk
		case *syntax.Word:
			for _, p := range x.Parts {
				if _, ok := p.(*syntax.ProcSubst); ok {
					out = append(out, x)
					break
				}
			}
		}
		return true
	}
	syntax.Walk(st.Cmd, visit)
	for _, r := range st.Redirs {
		syntax.Walk(r, visit)
	}
	return out
}

// rewriteSource applies the sandbox's rewrites (process substitution,
// background jobs) to the text of eval, source or trap: the rewritten
// source, or ok=false when there is nothing to rewrite or it does not
// parse (the interpreter then reports the error itself).
func rewriteSource(src string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return "", false
	}
	if !rewriteScript(f) {
		return "", false
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", false
	}
	return b.String(), true
}

// pipeTable holds the process-substitution pipes of one Exec.
type pipeTable struct {
	mu     sync.Mutex
	next   int
	live   map[int]*procPipe
	dead   map[int]bool // released ids: true when the substituted command writes
	closed bool
	mem    *commands.Mem
	ctx    context.Context
}

// procPipe is one in-memory pipe. writer tells which end the substituted
// command holds: the writing end for <(...), the reading end for >(...).
type procPipe struct {
	id        int
	pr        *io.PipeReader
	pw        *io.PipeWriter
	cmdWrites bool
	rOpen     bool // the reading end was handed out
	wOpen     bool
	rDone     bool // ... and closed
	wDone     bool
	released  bool
}

func newPipeTable(ctx context.Context, mem *commands.Mem) *pipeTable {
	t := &pipeTable{next: firstPipeFD, live: map[int]*procPipe{}, dead: map[int]bool{}, mem: mem, ctx: ctx}
	// A stopped or cancelled Exec closes every pipe, which wakes the
	// readers and writers blocked on them.
	context.AfterFunc(ctx, t.closeAll)
	return t
}

// pipeID parses /dev/fd/N (N above 2: 0, 1 and 2 are the standard streams).
func pipeID(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/dev/fd/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 3 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

func (t *pipeTable) alloc(cmdWrites bool) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, syscall.EPIPE
	}
	if len(t.live) >= maxLivePipes {
		return 0, syscall.EMFILE
	}
	id := t.next
	t.next++
	pr, pw := io.Pipe()
	t.live[id] = &procPipe{id: id, pr: pr, pw: pw, cmdWrites: cmdWrites}
	return id, nil
}

func (t *pipeTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, p := range t.live {
		p.pr.CloseWithError(syscall.EPIPE)
		p.pw.Close()
		t.dead[id] = p.cmdWrites
		delete(t.live, id)
	}
}

// release ends the statement that used id: the end the statement's side
// never opened is closed, and the name no longer resolves once no one
// holds that end.
func (t *pipeTable) release(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.live[id]
	if p == nil {
		return
	}
	p.released = true
	if p.cmdWrites && !p.rOpen {
		p.rOpen, p.rDone = true, true
		p.pr.CloseWithError(syscall.EPIPE)
	}
	if !p.cmdWrites && !p.wOpen {
		p.wOpen, p.wDone = true, true
		p.pw.Close()
	}
	t.settle(p)
}

// settle forgets a released pipe whose statement side is closed; the
// substituted command keeps its own end until it closes it.
func (t *pipeTable) settle(p *procPipe) {
	if !p.released {
		return
	}
	if (p.cmdWrites && p.rDone) || (!p.cmdWrites && p.wDone) {
		t.dead[p.id] = p.cmdWrites
		delete(t.live, p.id)
	}
}

// open serves /dev/fd/N; ok is false for other paths.
func (t *pipeTable) open(p string, flag int) (commands.File, bool, error) {
	id, ok := pipeID(p)
	if !ok || t == nil {
		return nil, false, nil
	}
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	t.mu.Lock()
	defer t.mu.Unlock()
	pp := t.live[id]
	if pp == nil {
		if cmdWrites, was := t.dead[id]; was && cmdWrites == write {
			// The substituted command opening its end after the
			// statement ended: reads see the end, writes EPIPE.
			return deadPipe{}, true, nil
		}
		return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
	}
	if write {
		if pp.wOpen {
			return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.EBUSY}
		}
		pp.wOpen = true
	} else {
		if pp.rOpen {
			return nil, true, &fs.PathError{Op: "open", Path: p, Err: syscall.EBUSY}
		}
		pp.rOpen = true
	}
	return &pipeEnd{t: t, p: pp, write: write}, true, nil
}

// stat answers stat of /dev/fd/N; ok is false for other paths.
func (t *pipeTable) stat(p string) (vfs.Stat, bool, error) {
	id, ok := pipeID(p)
	if !ok || t == nil {
		return vfs.Stat{}, false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live[id] == nil {
		return vfs.Stat{}, true, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOENT}
	}
	return pipeStat(), true, nil
}

func pipeStat() vfs.Stat {
	return vfs.Stat{Mode: syscall.S_IFIFO | 0o600, Nlink: 1, Blksize: 4096, Mtime: time.Unix(0, 0), Atime: time.Unix(0, 0), Ctime: time.Unix(0, 0)}
}

// readFile reads a pipe whole (a script run as "bash <(...)"), counting
// what it holds against the memory budget while it reads.
func (t *pipeTable) readFile(p string) ([]byte, bool, error) {
	f, ok, err := t.open(p, os.O_RDONLY)
	if !ok || err != nil {
		return nil, ok, err
	}
	defer f.Close()
	reader := &commands.Cmd{Ctx: t.ctx, Mem: t.mem}
	data, err := reader.ReadAllFrom(f, 0)
	// The caller keeps the data briefly (parsing a script); the heap
	// watch covers it from here.
	reader.ReleaseAll()
	return data, true, err
}

type pipeEnd struct {
	t     *pipeTable
	p     *procPipe
	write bool
	once  sync.Once
}

func (e *pipeEnd) Read(b []byte) (int, error) {
	if e.write {
		return 0, syscall.EBADF
	}
	return e.p.pr.Read(b)
}

func (e *pipeEnd) Write(b []byte) (int, error) {
	if !e.write {
		return 0, syscall.EBADF
	}
	n, err := e.p.pw.Write(b)
	if err == io.ErrClosedPipe {
		err = syscall.EPIPE
	}
	return n, err
}

func (e *pipeEnd) Close() error {
	e.once.Do(func() {
		e.t.mu.Lock()
		defer e.t.mu.Unlock()
		if e.write {
			e.p.pw.Close()
			e.p.wDone = true
		} else {
			e.p.pr.CloseWithError(syscall.EPIPE)
			e.p.rDone = true
		}
		e.t.settle(e.p)
	})
	return nil
}

func (e *pipeEnd) Stat() (vfs.Stat, error) { return pipeStat(), nil }

type deadPipe struct{}

func (deadPipe) Read([]byte) (int, error)  { return 0, io.EOF }
func (deadPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }
func (deadPipe) Close() error              { return nil }
func (deadPipe) Stat() (vfs.Stat, error)   { return pipeStat(), nil }

func pipeName(id int) string { return "/dev/fd/" + strconv.Itoa(id) }

// psub runs agentfs:psub and agentfs:psub-release.
func (st *execState) psub(args []string, stdout, stderr io.Writer) int {
	t := st.fs.pipes
	if args[0] == cmdPsubRelease {
		for _, a := range args[2:] {
			if id, ok := pipeID(a); ok {
				t.release(id)
			}
		}
		code, _ := strconv.Atoi(args[1])
		return code
	}
	if len(args) != 2 || (args[1] != "in" && args[1] != "out") {
		fmt.Fprintf(stderr, "%s: usage: %s in|out\n", args[0], args[0])
		return 2
	}
	id, err := t.alloc(args[1] == "in")
	if err != nil {
		fmt.Fprintf(stderr, "agentfs-sh: process substitution: %s\n", commands.ErrText(err))
		return 1
	}
	fmt.Fprintln(stdout, pipeName(id))
	return 0
}

func isPipe(p string) bool {
	_, ok := pipeID(p)
	return ok
}
