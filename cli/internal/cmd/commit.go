package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/overlay"
)

func init() { register(newCommitCmd) }

func newCommitCmd() *cobra.Command {
	var dryRun, force, asJSON bool
	c := &cobra.Command{
		Use:   "commit ID_OR_PATH [--dry-run] [--force]",
		Short: "Apply an overlay's changes to its host directory",
		Long: `commit applies what an overlay (agentfs init --base, agentfs run) changed to
its base directory on the host: new and changed files, directories and
symlinks with their modes, owners (as root) and modification times;
deletions; renames. Each file is written to a staging directory inside the
base first and renamed into place, so no reader sees a half-written file.
Afterwards the overlay's delta is empty: it shows the host directory, which
now holds the changes.

A path whose host version changed since the overlay copied it up (or,
for a deletion, since the overlay removed it) is a conflict: commit then
changes nothing and lists the paths, unless --force (the overlay's version
wins). --dry-run prints what would be done.`,
		Example: `  agentfs commit my-session --dry-run
  agentfs commit my-session`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openOverlay(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			res, err := overlay.Commit(cmd.Context(), a, overlay.CommitOptions{DryRun: dryRun, Force: force})
			var ce *overlay.ConflictError
			if errors.As(err, &ce) {
				return userError{
					msg: fmt.Sprintf("nothing committed: the host changed %d path(s) in %s since the overlay copied them up (ESTALE):\n  %s",
						len(ce.Paths), a.FS.Base(), strings.Join(ce.Paths, "\n  ")),
					hint: fmt.Sprintf("compare with: agentfs diff %s; overwrite the host's versions with: agentfs commit %s --force", args[0], args[0]),
				}
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if res.Changes == nil {
					res.Changes = []overlay.Change{}
				}
				return enc.Encode(res)
			}
			printChanges(out, res.Changes)
			switch {
			case len(res.Changes) == 0:
				fmt.Fprintf(out, "nothing to commit: the overlay matches %s\n", a.FS.Base())
			case dryRun:
				fmt.Fprintf(out, "dry run: %d change(s) would be applied to %s\n", len(res.Changes), a.FS.Base())
			default:
				fmt.Fprintf(out, "committed %d change(s) to %s; the overlay's delta is now empty\n", len(res.Changes), a.FS.Base())
			}
			if len(res.Conflicts) > 0 {
				fmt.Fprintf(out, "overwrote host changes (--force): %s\n", strings.Join(res.Conflicts, ", "))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done, change nothing")
	c.Flags().BoolVar(&force, "force", false, "apply files whose host version changed since the copy-up (the overlay wins)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}
