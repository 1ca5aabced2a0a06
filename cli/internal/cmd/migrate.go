package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
)

func init() { register(newMigrateCmd) }

func newMigrateCmd() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "migrate ID_OR_PATH",
		Short: "Upgrade a database to the current format",
		Long: `Upgrade a database written in an older AgentFS layout (0.0 without link
counts, 0.2 without nanosecond timestamps) or an older agentfs-go format.
A backup copy is saved next to the database first; the migration runs in one
transaction. An encrypted database needs its key (--key-file, AGENTFS_KEY
or --key, as every command); the backup is encrypted with it too.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := core.ResolveIDOrPath(args[0])
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			res, err := core.Migrate(cmd.Context(), path, core.MigrateOptions{DryRun: dryRun, Encryption: enc})
			if err != nil {
				return openError(args[0], path, err)
			}
			out := cmd.OutOrStdout()
			if len(res.Steps) == 0 {
				fmt.Fprintf(out, "%s is up to date (AgentFS %s)\n", path, res.From.AgentFSVersion)
				return nil
			}
			verb := "Applied"
			if dryRun {
				verb = "Would apply"
			}
			fmt.Fprintf(out, "%s %d step(s) to %s:\n", verb, len(res.Steps), path)
			for _, s := range res.Steps {
				fmt.Fprintf(out, "  %s -> %s: %s\n", s.From, s.To, s.Description)
			}
			if res.Backup != "" {
				fmt.Fprintf(out, "Backup of the previous version: %s\n", res.Backup)
			}
			if dryRun {
				fmt.Fprintf(out, "Nothing changed. Run without --dry-run to migrate.\n")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "show the steps without changing anything")
	return c
}
