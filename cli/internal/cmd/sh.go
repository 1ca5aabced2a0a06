package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"golang.org/x/term"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

func init() { register(newShCmd) }

func newShCmd() *cobra.Command {
	var script, profile, cwd string
	var envs, allowNet []string
	var interactive, allowPrivate, print bool
	var pf policyFlags
	c := &cobra.Command{
		Use:   "sh ID_OR_PATH [-c SCRIPT]",
		Short: "Run a shell inside the engine, over the agent's files (no host process, no host file)",
		Long: `Run a POSIX shell whose every file access goes to the agent filesystem and
whose every command (cat, ls, grep, sed, awk, jq, find, xargs, diff...) is
implemented inside agentfs: nothing on the host is started, read or written.
Unknown commands answer "command not found" (exit 127).

With -c, run SCRIPT and exit with its exit status. Without -c, read
commands from a terminal, one line at a time, in one shell whose working
directory, variables and functions persist (type exit or Ctrl-D to leave);
when standard input is not a terminal, it is read as the script.

Network: none by default. --allow-net PREFIX lets curl reach URLs under
PREFIX (repeatable; METHOD[,METHOD]:PREFIX limits the methods). Loopback,
private and link-local addresses stay blocked unless --allow-private.

Files and commands: every path and utility by default. --read and
--write allow path prefixes only (--read alone makes the agent read-only),
--allow lists the utilities that may run and --deny those that may not.
--default-deny makes these allow-lists even when absent: nothing is
readable, writable or runnable (but the shell's builtins) unless listed.
--print-policy prints the effective policy as JSON, every default filled
in, and runs nothing: the same form as the SDKs' policy().

Limits (--profile): normal, or hardened for untrusted scripts. A script
stopped by a limit exits with 124 and says which limit. Every run is
recorded as an "exec" tool call: see agentfs timeline ID.`,
		Example: `  agentfs sh my-agent -c 'grep -rn "func main" /src | head'
  agentfs sh my-agent --profile hardened --env TOKEN=x -c 'env'
  agentfs sh my-agent --cwd /src
  agentfs sh my-agent --allow-net https://api.github.com/ -c 'curl -s https://api.github.com/zen'
  agentfs sh my-agent --allow-net GET:https://example.com/ -c 'curl -sI https://example.com/'
  agentfs sh my-agent --default-deny --read /src --write /out --allow grep --allow cat -c 'grep -rn panic /src > /out/panics'
  agentfs sh my-agent --default-deny --read /src --print-policy`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			limits, err := sandbox.Profile(profile)
			if err != nil {
				return usageError(cmd, "--profile must be normal or hardened, not %q", profile)
			}
			env := map[string]string{}
			for _, kv := range envs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageError(cmd, "--env takes NAME=VALUE, not %q", kv)
				}
				env[k] = v
			}
			rules, err := netRules(allowNet, allowPrivate)
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			opts := sandbox.Options{Policy: sandbox.Policy{Env: env, Net: rules}, Limits: limits}
			if err := pf.apply(cmd, &opts.Policy); err != nil {
				return err
			}
			if print {
				// Auditing needs no agent: the policy is the flags'.
				return printPolicy(cmd, opts, profile)
			}
			return withAgent(cmd, args[0], core.Options{}, func(a *core.Agent) error {
				sb, err := sandbox.New(a, opts)
				if err != nil {
					return err
				}
				sess, err := sb.NewSession(agentPath(cwd))
				if err != nil {
					return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs fs %s ls / (then pick an existing directory for --cwd)", args[0])}
				}
				// Listed by "agentfs ps": the shell and its background
				// jobs run inside this process, so its pid stops them all.
				command := []string{"sh"}
				if cmd.Flags().Changed("command") {
					command = append(command, "-c", script)
				}
				if remove, err := registry.Add(registry.Entry{Kind: registry.KindShell, DB: a.Path(), Dir: agentPath(cwd), Command: command}); err == nil {
					defer remove()
				}
				out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
				if cmd.Flags().Changed("command") {
					return shRun(cmd, sess, script, cmd.InOrStdin(), out, errw)
				}
				if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminalWriter(out) {
					return shTerminal(cmd, sess, f, out)
				}
				if interactive || isTerminalReader(cmd.InOrStdin()) {
					return shInteractive(cmd, sess, cmd.InOrStdin(), out, errw)
				}
				data, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				return shRun(cmd, sess, string(data), nil, out, errw)
			})
		},
	}
	c.Flags().StringVarP(&script, "command", "c", "", "run SCRIPT and exit with its status")
	c.Flags().StringVar(&profile, "profile", "normal", "limits: normal or hardened")
	c.Flags().StringArrayVar(&envs, "env", nil, "set a variable of the shell (repeatable); nothing comes from the host environment")
	c.Flags().StringVar(&cwd, "cwd", "/", "working directory in the agent filesystem")
	c.Flags().BoolVarP(&interactive, "interactive", "i", false, "read commands line by line even when stdin is not a terminal")
	c.Flags().BoolVar(&print, "print-policy", false, "print the effective policy (JSON, defaults filled in) and run nothing")
	addNetFlags(c, &allowNet, &allowPrivate)
	addPolicyFlags(c, &pf)
	return c
}

// addNetFlags adds --allow-net and --allow-private (sh and serve mcp).
func addNetFlags(c *cobra.Command, allowNet *[]string, allowPrivate *bool) {
	c.Flags().StringArrayVar(allowNet, "allow-net", nil, "let curl reach URLs under PREFIX (repeatable; METHOD[,METHOD]:PREFIX for some methods only); no network otherwise")
	c.Flags().BoolVar(allowPrivate, "allow-private", false, "let the --allow-net prefixes reach loopback, private and link-local addresses")
}

// netRules turns the --allow-net values into network rules.
func netRules(allowNet []string, allowPrivate bool) ([]sandbox.NetRule, error) {
	if allowPrivate && len(allowNet) == 0 {
		return nil, fmt.Errorf("--allow-private needs --allow-net")
	}
	var rules []sandbox.NetRule
	for _, v := range allowNet {
		r := sandbox.NetRule{Prefix: v, AllowPrivate: allowPrivate}
		if m, rest, ok := strings.Cut(v, ":"); ok && m != "" && strings.ToUpper(m) == m && !strings.HasPrefix(rest, "//") {
			r.Prefix = rest
			for _, x := range strings.Split(m, ",") {
				if x != "" {
					r.Methods = append(r.Methods, x)
				}
			}
		}
		u, err := url.Parse(r.Prefix)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			return nil, fmt.Errorf("--allow-net takes an http:// or https:// URL prefix (optionally METHOD:PREFIX), not %q", v)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// shRun runs one script and ends the command with its exit status.
func shRun(cmd *cobra.Command, sess *sandbox.Session, script string, stdin io.Reader, out, errw io.Writer) error {
	res, err := sess.Exec(cmd.Context(), script, sandbox.ExecOptions{Stdin: stdin, Stdout: out, Stderr: errw})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return exitError{code: res.ExitCode}
	}
	return nil
}

// shInteractive reads lines, runs each complete command in the session
// and prints the prompt "agentfs:DIR$ ". Commands get no standard input,
// which carries the next lines.
func shInteractive(cmd *cobra.Command, sess *sandbox.Session, in io.Reader, out, errw io.Writer) error {
	r := bufio.NewReader(in)
	last := 0
	for {
		fmt.Fprintf(out, "agentfs:%s$ ", sess.Dir())
		var script string
		for {
			line, err := r.ReadString('\n')
			script += line
			if err != nil {
				if strings.TrimSpace(script) == "" {
					fmt.Fprintln(out)
					return exitStatus(last)
				}
				break
			}
			if !sandbox.Incomplete(script) {
				break
			}
			fmt.Fprint(out, "> ")
		}
		if strings.TrimSpace(script) == "" {
			continue
		}
		res, err := sess.Exec(cmd.Context(), script, sandbox.ExecOptions{Stdout: out, Stderr: errw})
		if err != nil {
			if errors.Is(err, cmd.Context().Err()) && cmd.Context().Err() != nil {
				return exitStatus(130)
			}
			fmt.Fprintln(errw, "agentfs:", describe(err))
			continue
		}
		last = res.ExitCode
		if res.Exited {
			return exitStatus(last)
		}
	}
}

// shTerminal is the interactive shell on a terminal: line editing
// (arrows, Home/End, Ctrl-A/E/K/U/W), history of the session's lines with
// Up/Down, the prompt "agentfs:DIR$ " and "> " for continuation lines.
// Ctrl-D (or Ctrl-C) on the prompt ends the session.
func shTerminal(cmd *cobra.Command, sess *sandbox.Session, in *os.File, out io.Writer) error {
	fd := int(in.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return shInteractive(cmd, sess, in, out, cmd.ErrOrStderr())
	}
	defer term.Restore(fd, old)
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")
	last := 0
	for {
		t.SetPrompt(fmt.Sprintf("agentfs:%s$ ", sess.Dir()))
		var script string
		for {
			line, err := t.ReadLine()
			if err != nil {
				if strings.TrimSpace(script) == "" {
					fmt.Fprint(t, "\n")
					return exitStatus(last)
				}
				break
			}
			script += line + "\n"
			if !sandbox.Incomplete(script) {
				break
			}
			t.SetPrompt("> ")
		}
		if strings.TrimSpace(script) == "" {
			continue
		}
		// The terminal turns "\n" into "\r\n" while the tty is raw.
		res, err := sess.Exec(cmd.Context(), script, sandbox.ExecOptions{Stdout: t, Stderr: t})
		if err != nil {
			if errors.Is(err, cmd.Context().Err()) && cmd.Context().Err() != nil {
				return exitStatus(130)
			}
			fmt.Fprintln(t, "agentfs:", describe(err))
			continue
		}
		last = res.ExitCode
		if res.Exited {
			return exitStatus(last)
		}
	}
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code: code}
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
