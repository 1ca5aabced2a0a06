package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core/mount"
)

func init() { register(newPsCmd) }

// psRow is one line of "agentfs ps".
type psRow struct {
	PID     int       `json:"pid,omitempty"` // 0: no live process known (a mount only)
	Kind    string    `json:"kind"`
	Session string    `json:"session,omitempty"`
	DB      string    `json:"db"`
	Dir     string    `json:"dir"`
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Stale   bool      `json:"stale,omitempty"` // a mount whose server is gone
}

func newPsCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ps",
		Short: "List running agentfs run sessions, mounts and shells",
		Long: `List the running "agentfs run" sessions, the agentfs FUSE mounts and the
"agentfs sh" shells: pid, session or database, directory (the overlaid
directory of a run, the mount point of a mount, the working directory in
the agent of a shell), command and start time. A shell's background jobs
run inside its process ("jobs" lists them there); its pid stops them all.

Runs, mount servers and shells register in a small runtime registry
($AGENTFS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/agentfs, else /run/agentfs
for root, else $TMPDIR/agentfs-UID); an entry counts only while its
process is alive. Mounts whose server died ("Transport endpoint is not
connected") are shown as stale: "agentfs prune" removes them.`,
		Example: `  agentfs ps
  agentfs ps --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, stale, err := psRows()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if rows == nil {
					rows = []psRow{}
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PID\tKIND\tSESSION/DATABASE\tDIRECTORY\tSTARTED\tCOMMAND")
			for _, r := range rows {
				pid, started, what := "-", "-", r.DB
				if r.PID > 0 {
					pid = strconv.Itoa(r.PID)
				}
				if !r.Started.IsZero() {
					started = r.Started.Local().Format("2006-01-02 15:04:05")
				}
				if r.Session != "" {
					what = r.Session
				}
				kind := r.Kind
				if r.Stale {
					kind += " (stale)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", pid, kind, what, r.Dir, started, strings.Join(r.Command, " "))
			}
			tw.Flush()
			if stale > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: %d stale mount(s) or registry entries\n  Try: agentfs prune\n", stale)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// psRows gathers the live registry entries and the agentfs mounts of
// this mount namespace, and counts what prune would remove.
func psRows() (rows []psRow, stale int, err error) {
	entries, err := registry.List()
	if err != nil {
		return nil, 0, err
	}
	mounts, err := mount.List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, 0, err
	}
	deadMount := map[string]bool{}
	for _, m := range mounts {
		if mountDead(m.Dir) {
			deadMount[m.Dir] = true
			stale++
		}
	}
	served := map[string]bool{}
	for _, e := range entries {
		if !e.Alive() {
			stale++
			continue
		}
		if e.Kind == registry.KindMount {
			served[e.Dir] = true
		}
		rows = append(rows, psRow{PID: e.PID, Kind: e.Kind, Session: e.Session, DB: e.DB, Dir: e.Dir,
			Command: e.Command, Started: e.Started, Stale: e.Kind == registry.KindMount && deadMount[e.Dir]})
	}
	// Mounts without a registered server: started by an older agentfs,
	// or whose server died.
	for _, m := range mounts {
		if !served[m.Dir] {
			rows = append(rows, psRow{Kind: registry.KindMount, DB: m.Source, Dir: m.Dir, Stale: deadMount[m.Dir]})
		}
	}
	return rows, stale, nil
}

// mountDead reports whether the FUSE mount at dir lost its server: the
// kernel then answers ENOTCONN ("Transport endpoint is not connected").
// A server that does not answer within 2 s counts as alive (busy).
func mountDead(dir string) bool {
	ch := make(chan error, 1)
	go func() {
		_, err := os.Stat(dir)
		ch <- err
	}()
	select {
	case err := <-ch:
		return errors.Is(err, syscall.ENOTCONN)
	case <-time.After(2 * time.Second):
		return false
	}
}
