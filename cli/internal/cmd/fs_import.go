package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/hostcopy"
)

// fs import and fs export: flag parsing and a progress line over
// core/hostcopy, which does the copying.

func newFSImportCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "import HOSTDIR [PATH]",
		Short: "Copy a host directory tree into the agent filesystem",
		Long: `Copy the contents of the host directory HOSTDIR into PATH (default /),
creating PATH if needed, as "cp -a HOSTDIR/. PATH" would: permission bits,
symbolic links (stored as they are, not followed) and access and
modification times, with nanoseconds, are kept. Existing files are
replaced, each at once (old content or new, never a mix); directories
are merged. A new PATH is built in a hidden directory next to it and
renamed into place at the end: a failed import leaves nothing, and one
killed midway leaves a hidden .agentfs-tmp-* directory that the next
import or cp -r into the same directory removes. Large files are
streamed, not held in memory.
Special files (FIFOs, devices, sockets) and the agent's own database are
skipped with a warning. HOSTDIR may also be a single file.`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dst := "/"
			if len(args) == 2 {
				dst = agentPath(args[1])
			}
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				prog := newProgress(cmd.ErrOrStderr(), "importing")
				stats, err := hostcopy.Import(cmd.Context(), a.FS, args[0], dst, prog.options(a.Path()))
				prog.clear()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "imported %s\n", stats)
				return err
			})
		},
	}
}

// progress keeps a one-line status of an import or export on a
// terminal, and is silent otherwise; skipped entries are warned about on
// the same stream.
type progress struct {
	w     io.Writer
	verb  string
	on    bool
	shown bool
	last  time.Time
}

func newProgress(w io.Writer, verb string) *progress {
	return &progress{w: w, verb: verb, on: isTerminal(w)}
}

// options are the hostcopy options that report to this progress line.
func (p *progress) options(dbPath string) hostcopy.Options {
	return hostcopy.Options{
		DBPath: dbPath,
		Warn: func(msg string) {
			p.clear()
			fmt.Fprintf(p.w, "agentfs: %s\n", msg)
		},
		Progress: p.tick,
	}
}

func (p *progress) tick(s hostcopy.Stats) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r%s: %d files, %d dirs, %d symlinks, %s\x1b[K", p.verb, s.Files, s.Dirs, s.Symlinks, humanBytes(s.Bytes))
	p.shown = true
}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func newFSExportCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "export PATH HOSTDIR",
		Short: "Copy a tree of the agent filesystem to a host directory",
		Long: `Copy the contents of PATH into the host directory HOSTDIR, creating it if
needed: permission bits, symbolic links and access and modification
times, with nanoseconds, are kept. Existing host files and symlinks in
the way are replaced (never written through); directories are merged.
Special files are skipped with a warning. PATH may also be a single file.`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				prog := newProgress(cmd.ErrOrStderr(), "exporting")
				stats, err := hostcopy.Export(cmd.Context(), a.FS, agentPath(args[0]), args[1], prog.options(a.Path()))
				prog.clear()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "exported %s\n", stats)
				return err
			})
		},
	}
}
