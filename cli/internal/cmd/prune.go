package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core/mount"
)

func init() { register(newPruneCmd) }

func newPruneCmd() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "prune [--dry-run]",
		Short: "Remove stale agentfs mounts and registry entries",
		Long: `Remove what dead agentfs processes left behind:

  - agentfs FUSE mounts whose server is gone (they answer "Transport
    endpoint is not connected"): unmounted;
  - registry entries of runs and mount servers that are no longer running
    (see agentfs ps), and the empty private mount points of such runs.

Live mounts and sessions are never touched. With --dry-run, only print
what would be removed.`,
		Example: `  agentfs prune --dry-run
  agentfs prune`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			would := ""
			if dryRun {
				would = "would "
			}
			n := 0
			mounts, err := mount.List()
			if err != nil {
				return err
			}
			for _, m := range mounts {
				if !mountDead(m.Dir) {
					continue
				}
				n++
				fmt.Fprintf(w, "%sunmount %s (%s): its server is gone\n", would, m.Dir, m.Source)
				if dryRun {
					continue
				}
				if err := mount.Unmount(m.Dir, true); err != nil {
					return userError{msg: fmt.Sprintf("unmount %s: %v", m.Dir, err), hint: "umount -l " + m.Dir + " (as root), or fusermount3 -uz " + m.Dir}
				}
			}
			entries, err := registry.List()
			if err != nil {
				return err
			}
			for _, e := range entries {
				if e.Alive() {
					continue
				}
				n++
				what := e.DB
				if e.Session != "" {
					what = "session " + e.Session
				}
				fmt.Fprintf(w, "%sremove the entry of %s pid %d (%s, %s): not running\n", would, e.Kind, e.PID, what, e.Dir)
				if dryRun {
					continue
				}
				if err := e.Remove(); err != nil {
					return err
				}
				if e.Staging != "" {
					// Empty unless something else uses it: Remove
					// leaves a non-empty directory alone.
					os.Remove(e.Staging)
				}
			}
			if n == 0 {
				fmt.Fprintln(w, "Nothing to prune.")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be removed, remove nothing")
	return c
}
