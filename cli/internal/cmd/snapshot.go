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
	c := &cobra.Command{
		Use:   "snapshot",
		Short: "Create, list and restore consistent copies of an agent database",
		Long: `Snapshots are consistent copies of the whole database (files, kv, tool
calls), taken while other processes keep writing. They are kept in
<database>.snapshots/NAME.db. Restoring replaces the database content in one
transaction.`,
	}
	c.AddCommand(&cobra.Command{
		Use:   "create ID_OR_PATH [NAME]",
		Short: "Save a snapshot (NAME defaults to the current time)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAgent(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			s, err := a.CreateSnapshot(cmd.Context(), name)
			if errors.Is(err, core.ErrSnapshotExists) {
				return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs snapshot list %s, then pick another name", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created snapshot %s (%s) at %s\n", s.Name, humanBytes(s.Size), s.Path)
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "list ID_OR_PATH",
		Short: "List snapshots, oldest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAgent(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Snapshots(cmd.Context())
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "No snapshots. Create one with: agentfs snapshot create %s NAME\n", args[0])
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCREATED\tSIZE")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name, s.CreatedAt.Local().Format(time.DateTime), humanBytes(s.Size))
			}
			return w.Flush()
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "restore ID_OR_PATH NAME",
		Short: "Replace the database content with a snapshot",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAgent(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			err = a.RestoreSnapshot(cmd.Context(), args[1])
			if errors.Is(err, core.ErrSnapshotNotFound) {
				return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs snapshot list %s", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restored %s from snapshot %s\n", a.Path(), args[1])
			return nil
		},
	})
	return c
}

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
