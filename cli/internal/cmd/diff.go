package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/overlay"
)

func init() { register(newDiffCmd) }

func newDiffCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "diff ID_OR_PATH",
		Short: "List what an overlay (init --base, run) changed in its host directory",
		Long: `diff compares an overlay database with its base directory and prints one
line per changed path, sorted by path:

  A file /new.txt       added (the host directory has nothing there)
  M file /src/main.go   modified (content, type, mode, owner or mtime)
  D dir  /build         deleted (with everything below it)

A rename shows as D of the old path and A of the new one. Types: file, dir,
symlink, fifo, socket, char, block. Nothing is written, not even to the
database. "agentfs commit" applies the changes.`,
		Example: `  agentfs diff my-session
  agentfs diff my-session --json | jq -r '.[] | select(.op == "A") | .path'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openOverlay(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			changes, err := overlay.Diff(cmd.Context(), a)
			if err != nil {
				return err
			}
			if asJSON {
				if changes == nil {
					changes = []overlay.Change{}
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(changes)
			}
			printChanges(cmd.OutOrStdout(), changes)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"op", "type", "path"}`)
	return c
}

func printChanges(w io.Writer, changes []overlay.Change) {
	for _, ch := range changes {
		// Quoted as fs ls quotes (a newline in a path would forge a
		// change line); --json has the exact paths.
		fmt.Fprintf(w, "%s %-7s %s\n", ch.Op, ch.Type, quoteName(ch.Path))
	}
}

// openOverlay opens an agent that must be an overlay.
func openOverlay(cmd *cobra.Command, idOrPath string) (*core.Agent, error) {
	a, err := openAgent(cmd, idOrPath)
	if err != nil {
		if errors.Is(err, core.ErrOverlay) {
			return nil, userError{msg: err.Error(), hint: "the base directory must exist at the path recorded at agentfs init --base"}
		}
		return nil, err
	}
	if a.FS.Base() == "" {
		a.Close()
		return nil, userError{msg: fmt.Sprintf("%s is not an overlay: it has no base directory", idOrPath),
			hint: "create one over a host directory: agentfs init ID --base DIR (or agentfs run)"}
	}
	return a, nil
}
