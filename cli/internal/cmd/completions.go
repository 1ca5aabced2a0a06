package cmd

import (
	"github.com/spf13/cobra"
)

func init() { register(newCompletionsCmd) }

func newCompletionsCmd() *cobra.Command {
	return &cobra.Command{
		Use: "completions bash|zsh|fish|powershell",
		// The alias also stands in for cobra's default "completion"
		// command, which is then not added.
		Aliases: []string{"completion"},
		Short:   "Print a shell completion script",
		Long: `Print the completion script of a shell. Agent ids under .agentfs/ and
subcommands complete too. To load completions:

  bash:        source <(agentfs completions bash)
               (or save it in /etc/bash_completion.d/agentfs)
  zsh:         agentfs completions zsh > "${fpath[1]}/_agentfs"
               (compinit must be enabled)
  fish:        agentfs completions fish > ~/.config/fish/completions/agentfs.fish
  powershell:  agentfs completions powershell | Out-String | Invoke-Expression`,
		ValidArgs:             []cobra.Completion{"bash", "zsh", "fish", "powershell"},
		Args:                  usageArgs(cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			default:
				return root.GenPowerShellCompletionWithDesc(w)
			}
		},
	}
}
