package sandbox

import (
	"fmt"
	"io"
	"strconv"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// The "time" keyword: the interpreter prints its report on standard
// output (where "x=$(time cmd)" and "time cmd > f" would catch it) and
// with zero user and sys times. The sandbox rewrites
//
//	time [-p] STMT
//
// into
//
//	{ __agentfs_timeN=$(agentfs:time-start); STMT; agentfs:time-end $? ${__agentfs_timeN} [-p]; }
//
// which reports on standard error in bash's format and keeps STMT's
// status.
const (
	cmdTimeStart = "agentfs:time-start"
	cmdTimeEnd   = "agentfs:time-end"
)

// rewriteScript applies every rewrite of the sandbox to a parsed script:
// process substitution, the time keyword, background-job counting (last,
// as the others add background jobs). It reports whether any applied.
func rewriteScript(node syntax.Node) bool {
	ps := rewriteProcSubst(node)
	tk := rewriteTime(node)
	bg := countBackground(node)
	return ps || tk || bg
}

func rewriteTime(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		tc, ok := st.Cmd.(*syntax.TimeClause)
		if !ok {
			return true
		}
		found = true
		name := "__agentfs_time" + strconv.FormatInt(psubSeq.Add(1), 10)
		ref := &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Param: &syntax.Lit{Value: name}}}}
		status := &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "?"}}}}
		end := []*syntax.Word{litWord(cmdTimeEnd), status, ref}
		if tc.PosixFormat {
			end = append(end, litWord("-p"))
		}
		stmts := []*syntax.Stmt{{Cmd: &syntax.CallExpr{Assigns: []*syntax.Assign{{
			Name:  &syntax.Lit{Value: name},
			Value: &syntax.Word{Parts: []syntax.WordPart{&syntax.CmdSubst{Stmts: []*syntax.Stmt{callStmt(litWord(cmdTimeStart))}}}},
		}}}}}
		if tc.Stmt != nil {
			stmts = append(stmts, tc.Stmt)
		}
		stmts = append(stmts, &syntax.Stmt{Cmd: &syntax.CallExpr{Args: end}})
		st.Cmd = &syntax.Block{Stmts: stmts}
		return true
	})
	return found
}

// timeCmd runs agentfs:time-start and agentfs:time-end.
func timeCmd(args []string, stdout, stderr io.Writer) int {
	if args[0] == cmdTimeStart {
		t := commands.StartTimes()
		fmt.Fprintln(stdout, t.Token())
		return 0
	}
	if len(args) < 3 {
		return 2
	}
	code, _ := strconv.Atoi(args[1])
	t, ok := commands.TimesFromToken(args[2])
	if !ok {
		return code
	}
	t.Stop()
	fmt.Fprint(stderr, t.Format(len(args) > 3 && args[3] == "-p"))
	return code
}
