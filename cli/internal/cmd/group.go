package cmd

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
)

// newGroupCmd makes a command of the form "NAME ID_OR_PATH COMMAND [args]",
// with the agent before the subcommand as in Turso's agentfs CLI. Cobra
// cannot take a positional argument before a subcommand, so the outer
// command receives its arguments unparsed and runs an inner command tree
// built for that agent (subs makes its subcommands), whose path reads
// "agentfs NAME ID COMMAND" in usage and error messages.
func newGroupCmd(name, short, long string, subs func(id string) []*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:                name + " ID_OR_PATH COMMAND [args]",
		Short:              short,
		Long:               long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			pre, rest, help, err := splitGlobalFlags(cmd, args)
			switch {
			case err != nil:
				return err
			case help:
				return cmd.Help()
			case len(rest) == 0:
				return usageError(cmd, "missing ID_OR_PATH and command")
			}
			inner := newGroupInner(cmd, name, rest[0], short, long, subs)
			// Never nil: cobra would read os.Args.
			inner.SetArgs(append(append([]string{}, pre...), rest[1:]...))
			return inner.ExecuteContext(cmd.Context())
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if _, rest, _, err := splitGlobalFlags(cmd, args); err == nil {
				args = rest
			}
			if len(args) == 0 {
				return agentIDs(toComplete), cobra.ShellCompDirectiveDefault
			}
			inner := newGroupInner(cmd, name, args[0], short, long, subs)
			if len(args) == 1 {
				var out []cobra.Completion
				for _, s := range inner.Commands() {
					if s.IsAvailableCommand() && strings.HasPrefix(s.Name(), toComplete) {
						out = append(out, cobra.CompletionWithDesc(s.Name(), s.Short))
					}
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveDefault
		},
	}
	c.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		inner := newGroupInner(cmd, name, "ID_OR_PATH", short, long, subs)
		inner.SetOut(cmd.OutOrStdout())
		inner.Help()
	})
	return c
}

// splitGlobalFlags separates the flags of the parent commands (such as
// --durability) that come before ID_OR_PATH from the rest of the
// arguments, which start with ID_OR_PATH. help reports -h or --help there.
func splitGlobalFlags(cmd *cobra.Command, args []string) (pre, rest []string, help bool, err error) {
	global := cmd.InheritedFlags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return pre, args[i+1:], false, nil
		case a == "-h" || a == "--help":
			return pre, args[i+1:], true, nil
		case !strings.HasPrefix(a, "-") || a == "-":
			return pre, args[i:], false, nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := global.Lookup(name)
		if f == nil && !strings.HasPrefix(a, "--") && len(name) == 1 {
			f = global.ShorthandLookup(name)
		}
		if f == nil {
			return nil, nil, false, usageError(cmd, "unknown flag %s before ID_OR_PATH", a)
		}
		pre = append(pre, a)
		if !hasValue && f.NoOptDefVal == "" {
			if i+1 == len(args) {
				return nil, nil, false, usageError(cmd, "flag needs an argument: %s", a)
			}
			i++
			pre = append(pre, args[i])
		}
	}
	return pre, nil, false, nil
}

// newGroupInner builds the command tree of one group for agent id.
func newGroupInner(outer *cobra.Command, name, id, short, long string, subs func(id string) []*cobra.Command) *cobra.Command {
	d := &cobra.Command{
		Use:   name + " COMMAND",
		Short: short,
		Long:  long,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: outer.CommandPath() + " " + id,
		},
		Args:                       cobra.ArbitraryArgs,
		DisableFlagsInUseLine:      true,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError(cmd, "missing command")
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
			}
			return usageError(cmd, "%s", msg)
		},
	}
	d.CompletionOptions.DisableDefaultCmd = true
	// The flags of the parent commands apply inside the group too; they
	// share their variables.
	d.PersistentFlags().AddFlagSet(outer.InheritedFlags())
	d.SetIn(outer.InOrStdin())
	d.SetOut(outer.OutOrStdout())
	d.SetErr(outer.ErrOrStderr())
	d.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(c, "%v", err)
	})
	def := (&cobra.Command{}).UsageTemplate()
	d.SetUsageTemplate(strings.NewReplacer(
		"Usage:{{if .Runnable}}\n  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}\n  {{.CommandPath}} [command]{{end}}",
		"Usage:\n  {{.CommandPath}} COMMAND [args]",
		"{{.CommandPath}} [command] --help", "{{.CommandPath}} COMMAND --help",
	).Replace(def))
	for _, s := range subs(id) {
		s.SetUsageTemplate(def)
		d.AddCommand(s)
	}
	return d
}

// usageError is a mistake in the command line: exit code 2 with a pointer
// to the help of the command.
func usageError(cmd *cobra.Command, format string, a ...any) error {
	return exitError{code: 2, msg: fmt.Sprintf(format, a...) + "\n  Try: " + cmd.CommandPath() + " --help"}
}

// usageArgs makes a failing argument check a usage error (exit code 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, "%v", err)
		}
		return nil
	}
}

// withAgent opens the agent named by idOrPath, runs fn and closes the
// agent, reporting a failure to close when fn succeeded.
func withAgent(cmd *cobra.Command, idOrPath string, opts core.Options, fn func(a *core.Agent) error) (err error) {
	a, err := openAgentWith(cmd, idOrPath, opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := a.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(a)
}

// agentIDs lists the agents in .agentfs/ whose id starts with prefix, for
// shell completion.
func agentIDs(prefix string) []cobra.Completion {
	matches, _ := filepath.Glob(filepath.Join(core.DefaultDir, "*.db"))
	var out []cobra.Completion
	for _, m := range matches {
		id := strings.TrimSuffix(filepath.Base(m), ".db")
		if core.ValidID(id) && strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// completeAgentFirst completes an agent id as the first argument.
func completeAgentFirst(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return agentIDs(toComplete), cobra.ShellCompDirectiveDefault
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
