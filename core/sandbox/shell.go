package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// runShell is "sh", "bash" and the running of a script file: a nested
// shell with the same handlers, limits and policy, in a fresh state that
// inherits the exported variables. shown is the name to report errors
// with when running a script by path.
func (h *handlers) runShell(ctx context.Context, st *execState, inv commands.Invocation, dir string, env envView, shown string) int {
	args := inv.Args[1:]
	name := inv.Args[0]
	var opts []string
	var script, scriptName string
	haveScript := false
	for len(args) > 0 {
		a := args[0]
		if a == "-c" && len(args) > 1 {
			script, haveScript = args[1], true
			args = args[2:]
			scriptName = name
			if len(args) > 0 {
				scriptName, args = args[0], args[1:]
			}
			break
		}
		if a == "--" {
			args = args[1:]
			break
		}
		if (strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+")) && len(a) > 1 && a != "-" {
			if a == "-o" || a == "+o" {
				if len(args) > 1 {
					opts = append(opts, a, args[1])
					args = args[2:]
					continue
				}
			}
			if strings.Trim(a, "-+euxvfnCabhmBHP") == "" {
				opts = append(opts, a)
				args = args[1:]
				continue
			}
			if a == "--posix" || a == "--norc" || a == "--noprofile" || a == "-l" || a == "--login" || a == "-i" {
				args = args[1:]
				continue
			}
			fmt.Fprintf(inv.Stderr, "%s: %s: invalid option\n", name, a)
			return 2
		}
		break
	}
	if !haveScript {
		if len(args) > 0 {
			file := args[0]
			scriptName = file
			args = args[1:]
			data, err := st.fs.ReadFile(absPath(dir, file))
			if err != nil {
				if shown == "" {
					shown = file
				}
				fmt.Fprintf(inv.Stderr, "%s: %s: %s\n", name, shown, commands.ErrText(err))
				return 127
			}
			script = string(data)
		} else {
			// "yes | sh" must not read without end: the script read
			// from stdin counts against the memory budget.
			reader := &commands.Cmd{Ctx: ctx, Mem: st.b.mem}
			data, err := reader.ReadAllFrom(inv.Stdin, 0)
			reader.ReleaseAll()
			if err != nil {
				return 1
			}
			script = string(data)
			scriptName = name
		}
	}
	if ctx.Err() != nil || st.b.checkParse(script) != nil {
		return ExitLimit
	}
	file, err := parseScript(script, scriptName, name, inv.Stderr)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return 2
	}
	if msg := unsupported(file); msg != "" {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, msg)
		return 2
	}
	rewriteScript(file)
	senv := newEnviron(h.sess.s.pol)
	senv.vars = map[string]expand.Variable{}
	for _, kv := range env.list() {
		k, v, _ := strings.Cut(kv, "=")
		senv.vars[k] = expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	for k, v := range newEnviron(h.sess.s.pol).vars {
		if !v.Exported {
			senv.vars[k] = v
		}
	}
	params := append(append([]string{}, opts...), "--")
	params = append(params, args...)
	r, err := h.newRunner(dir, senv, interp.Params(params...))
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return 2
	}
	stdin := inv.Stdin
	if _, ok := stdin.(eof); ok {
		stdin = nil
	}
	if err := interp.StdIO(stdin, inv.Stdout, inv.Stderr)(r); err != nil {
		return 1
	}
	err = r.Run(ctx, file)
	if err == nil {
		return 0
	}
	var es interp.ExitStatus
	if errors.As(err, &es) {
		return int(es)
	}
	if st.b.tripped.Load() != nil || ctx.Err() != nil {
		return ExitLimit
	}
	fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
	return 1
}

// parseScript parses a script as bash does: a here-document left open at
// the end of the script ends there, with bash's warning on warn, instead
// of failing the whole script.
func parseScript(src, name, prefix string, warn io.Writer) (*syntax.File, error) {
	for range 16 {
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), name)
		var pe syntax.ParseError
		if err == nil || !errors.As(err, &pe) {
			return file, err
		}
		word, ok := strings.CutPrefix(pe.Text, "unclosed here-document ")
		if !ok {
			return file, err
		}
		stop, uerr := strconv.Unquote(word)
		if uerr != nil {
			return file, err
		}
		fmt.Fprintf(warn, "%s: warning: here-document at line %d delimited by end-of-file (wanted `%s')\n", prefix, pe.Pos.Line(), stop)
		if !strings.HasSuffix(src, "\n") {
			src += "\n"
		}
		src += stop + "\n"
	}
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), name)
}
