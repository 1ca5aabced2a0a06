package cmd

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
)

func init() { register(newSnapshotCmd) }

func newSnapshotCmd() *cobra.Command {
	return newGroupCmd("snapshot", "Create, list and restore consistent copies of an agent database",
		`Snapshots are consistent copies of the whole database (files, kv, tool
calls), taken while other processes keep writing. They are kept in
<database>.snapshots/NAME.db. Restoring replaces the database content in one
transaction.

  agentfs snapshot my-agent create before-refactor
  agentfs snapshot my-agent list
  agentfs snapshot my-agent restore before-refactor`,
		func(id string) []*cobra.Command {
			return []*cobra.Command{newSnapshotCreateCmd(id), newSnapshotListCmd(id), newSnapshotRestoreCmd(id)}
		})
}

func newSnapshotCreateCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "create [NAME]",
		Short: "Save a snapshot (NAME defaults to the current time)",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				s, err := a.CreateSnapshot(cmd.Context(), name)
				if errors.Is(err, core.ErrSnapshotExists) {
					return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs snapshot %s list, then pick another name", id)}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Created snapshot %s (%s) at %s\n", s.Name, humanBytes(s.Size), s.Path)
				return nil
			})
		},
	}
}

func newSnapshotListCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List snapshots, oldest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				list, err := a.Snapshots(cmd.Context())
				if err != nil {
					return err
				}
				if len(list) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "No snapshots. Create one with: agentfs snapshot %s create NAME\n", id)
					return nil
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "NAME\tCREATED\tSIZE")
				for _, s := range list {
					// A file copied into the snapshot directory by hand
					// may have any name: quoted as fs ls quotes.
					fmt.Fprintf(w, "%s\t%s\t%s\n", quoteName(s.Name), s.CreatedAt.Local().Format(time.DateTime), humanBytes(s.Size))
				}
				return w.Flush()
			})
		},
	}
}

func newSnapshotRestoreCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "restore NAME",
		Short: "Replace the database content with a snapshot",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				err := a.RestoreSnapshot(cmd.Context(), args[0])
				if errors.Is(err, core.ErrSnapshotNotFound) {
					return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs snapshot %s list", id)}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Restored %s from snapshot %s\n", a.Path(), args[0])
				return nil
			})
		},
	}
}

// humanBytes prints a size with binary units (1.5 KiB).
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
