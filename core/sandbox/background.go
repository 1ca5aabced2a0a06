package sandbox

import (
	"strconv"

	"mvdan.cc/sh/v3/syntax"
)

// The interpreter starts a goroutine for every background job and offers
// no hook to count them, so the sandbox rewrites each "CMD &" of the
// scripts it parses (the script, sh -c, script files, eval) into
//
//	{ agentfs:bg-enter; CMD; agentfs:bg-leave $?; } &
//
// bg-enter counts the job and stops the run past MaxBackground; bg-leave
// gives the slot back and keeps CMD's exit status. A job that leaves by
// "exit" or errexit keeps its slot until the Exec ends: the count errs
// on the side of fewer jobs.
const (
	cmdBgEnter = "agentfs:bg-enter"
	cmdBgLeave = "agentfs:bg-leave"
)

func callStmt(args ...*syntax.Word) *syntax.Stmt {
	return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: args}}
}

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

// countBackground rewrites the background jobs of node; it reports
// whether there was any.
func countBackground(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || !(st.Background || st.Disown) || st.Cmd == nil {
			return true
		}
		if b, ok := st.Cmd.(*syntax.Block); ok && len(b.Stmts) > 0 {
			if c, ok := b.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(c.Args) == 1 && c.Args[0].Lit() == cmdBgEnter {
				return true // rewritten already
			}
		}
		found = true
		status := &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "?"}}}}
		st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{
			callStmt(litWord(cmdBgEnter)),
			{Cmd: st.Cmd},
			callStmt(litWord(cmdBgLeave), status),
		}}
		return true
	})
	return found
}

// background runs bg-enter and bg-leave.
func (st *execState) background(args []string) int {
	b := st.b
	if args[0] == cmdBgLeave {
		b.background.Add(-1)
		if len(args) > 1 {
			if code, err := strconv.Atoi(args[1]); err == nil {
				return code
			}
		}
		return 0
	}
	if n := b.background.Add(1); b.limits.MaxBackground > 0 && n > int64(b.limits.MaxBackground) {
		b.trip(&LimitError{Limit: "background jobs", Max: int64(b.limits.MaxBackground)})
		return ExitLimit
	}
	return 0
}
