package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newFsckCmd) }

func newFsckCmd() *cobra.Command {
	var repair, asJSON bool
	c := &cobra.Command{
		Use:   "fsck ID_OR_PATH",
		Short: "Check the database against the format's consistency rules",
		Long: `fsck runs SQLite's integrity check and the AgentFS consistency rules (every
entry points to an inode, link counts match, no orphan inodes, data only for
regular files and within their size, symlinks have targets, directories
reachable from the root, kv values are JSON, tool-call statuses valid).
--repair fixes what can be fixed without losing reachable data, in one
transaction. Exit status: 0 clean, 1 problems remain.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			open := openForReading // a check only reads (read-only media too)
			if repair {
				open = openAgent
			}
			a, err := open(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			rep, err := a.Fsck(cmd.Context(), repair)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				for _, p := range rep.Problems {
					fix := ""
					if p.Repairable {
						fix = " (repairable)"
					}
					fmt.Fprintf(out, "%s: %s%s\n", p.Rule, p.Detail, fix)
				}
				if rep.Repaired > 0 {
					fmt.Fprintf(out, "repaired %d problem(s)\n", rep.Repaired)
				}
				fmt.Fprintf(out, "%s: %d inodes, %d entries, %d chunks: ", a.Path(), rep.Inodes, rep.Dentries, rep.Chunks)
				if rep.Clean() {
					fmt.Fprintln(out, "clean")
				} else {
					fmt.Fprintf(out, "%d problem(s)\n", len(rep.Problems))
				}
			}
			if !rep.Clean() {
				h := ""
				for _, p := range rep.Problems {
					if p.Repairable && !repair {
						h = fmt.Sprintf("\n  Try: agentfs fsck %s --repair", args[0])
						break
					}
				}
				return exitError{code: 1, msg: fmt.Sprintf("%d problem(s) found%s", len(rep.Problems), h)}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "fix the problems that can be fixed safely")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}
