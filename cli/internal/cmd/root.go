// Package cmd holds the agentfs subcommands, one file each.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Version is the engine's version (core.Version).
var Version = core.Version

// Main runs the CLI and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "agentfs:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "agentfs:", describe(err))
	if h := hint(err); h != "" {
		fmt.Fprintln(stderr, "  Try:", h)
	}
	return 1
}

// exitError ends the program with a given code (for example 2 for usage).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentfs",
		Short: "An agent's filesystem, key-value store and tool-call log in one SQLite file",
		Long: `agentfs keeps everything an AI agent touches in one SQLite database file:
a POSIX-like filesystem, a key-value store and an append-only log of tool
calls. Databases live in .agentfs/<ID>.db; every command that takes
ID_OR_PATH accepts an agent id or the path of a database file. The format is
compatible with Turso's AgentFS (specification 0.4).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// An unknown command is a usage error (exit 2), not a failure.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exitError{code: 2, msg: fmt.Sprintf("unknown command %q\n  Try: agentfs --help", args[0])}
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitError{code: 2, msg: fmt.Sprintf("%v\n  Try: %s --help", err, c.CommandPath())}
	})
	root.PersistentFlags().StringVar(&durability, "durability", envOr("AGENTFS_DURABILITY", "normal"),
		"commit durability: normal (atomic, survives process crashes) or full (fsync every commit, survives power loss)")
	addKeyFlags(root)
	for _, add := range commands {
		root.AddCommand(add())
	}
	return root
}

// commands is filled by the init functions of the subcommand files.
var commands []func() *cobra.Command

func register(f func() *cobra.Command) { commands = append(commands, f) }

// openAgent opens an existing database named by an id or a path.
func openAgent(cmd *cobra.Command, idOrPath string) (*core.Agent, error) {
	return openAgentWith(cmd, idOrPath, core.Options{})
}

// durability is the value of the global --durability flag.
var durability string

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func durabilityOption() (store.Durability, error) {
	switch durability {
	case "normal", "":
		return store.DurabilityNormal, nil
	case "full":
		return store.DurabilityFull, nil
	}
	return 0, userError{msg: fmt.Sprintf("unknown durability %q", durability), hint: "--durability normal or --durability full"}
}

func openAgentWith(cmd *cobra.Command, idOrPath string, opts core.Options) (*core.Agent, error) {
	d, err := durabilityOption()
	if err != nil {
		return nil, err
	}
	opts.Durability = d
	if opts.Encryption, err = encryptionOption(); err != nil {
		return nil, err
	}
	path := core.ResolveIDOrPath(idOrPath)
	a, err := core.Open(cmd.Context(), path, opts)
	if err != nil {
		return nil, openError(idOrPath, path, err)
	}
	return a, nil
}

// openForReading opens an agent for a command that only reads: through
// SQLite's read-only mode, so a database on read-only media (or one this
// user may only read) works and nothing is written. Two kinds need the
// ordinary open: an overlay (a read-only open shows its delta layer
// alone, without the base directory's files) and an AgentFS 0.4 database
// of another tool that lacks this project's tables (added on open); the
// read-only view is kept for the second if it cannot be opened writable.
func openForReading(cmd *cobra.Command, idOrPath string) (*core.Agent, error) {
	a, err := openAgentWith(cmd, idOrPath, core.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if a.Info.OverlayBase == "" && a.Info.Current() {
		return a, nil
	}
	w, werr := openAgentWith(cmd, idOrPath, core.Options{})
	if werr == nil || a.Info.OverlayBase != "" {
		a.Close()
		return w, werr
	}
	return a, nil
}

// readAgent is withAgent for commands that only read (openForReading).
func readAgent(cmd *cobra.Command, idOrPath string, fn func(a *core.Agent) error) (err error) {
	a, err := openForReading(cmd, idOrPath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := a.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(a)
}

// openError gives a refused open its next step.
func openError(idOrPath, path string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && pe.Path == path:
		if !core.ValidID(idOrPath) && !strings.ContainsAny(idOrPath, "/.") {
			// Neither a file nor an id: say what is wrong with the id.
			return userError{msg: core.CheckID(idOrPath).Error(), hint: "list agents with: ls .agentfs/"}
		}
		return userError{
			msg:  fmt.Sprintf("no agent database %q (looked for %s)", idOrPath, path),
			hint: fmt.Sprintf("agentfs init %s", suggestID(idOrPath)),
		}
	case errors.As(err, &pe) && errors.Is(err, syscall.ENAMETOOLONG) && pe.Path == path:
		return userError{msg: fmt.Sprintf("%s (the name is %d bytes; agent ids have at most %d)", describe(err), len(idOrPath), core.MaxIDLength), hint: "check the id or path"}
	case errors.Is(err, schema.ErrNeedsMigration):
		return userError{msg: err.Error(), hint: fmt.Sprintf("agentfs migrate %s", idOrPath)}
	case errors.Is(err, store.ErrCorrupt):
		return userError{msg: err.Error(), hint: fmt.Sprintf("restore a snapshot: agentfs snapshot %s restore NAME (names: ls %s.snapshots/; if the database no longer opens, copy %s.snapshots/NAME.db over it), or repair what can be: agentfs fsck %s --repair", idOrPath, path, path, idOrPath)}
	case errors.Is(err, store.ErrNeedKey):
		return userError{msg: describe(err), hint: fmt.Sprintf("agentfs --key-file KEYFILE COMMAND %s ... (or AGENTFS_KEY=HEX in the environment)", idOrPath)}
	case errors.Is(err, store.ErrWrongKey):
		return userError{msg: describe(err), hint: "check the key (--key-file, AGENTFS_KEY or --key) and --cipher"}
	case errors.Is(err, store.ErrNotEncrypted):
		return userError{msg: describe(err), hint: fmt.Sprintf("drop --key/--key-file/AGENTFS_KEY, or encrypt it: agentfs encrypt %s --key-file KEYFILE", idOrPath)}
	case errors.Is(err, store.ErrNotADatabase):
		return userError{msg: err.Error(), hint: "check the path; an encrypted database needs its key"}
	case errors.Is(err, core.ErrNotAgentFS):
		return userError{msg: err.Error(), hint: "check the path; agentfs init ID creates a new agent database in .agentfs/ID.db"}
	case errors.Is(err, core.ErrInvalidOption):
		return userError{msg: err.Error(), hint: "see: agentfs init --help"}
	}
	return err
}

func suggestID(s string) string {
	if core.ValidID(s) {
		return s
	}
	return "my-agent"
}

// userError is an error with a next step for the user.
type userError struct {
	msg  string
	hint string
}

func (e userError) Error() string { return e.msg }

// describe turns engine errors into one readable line.
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errno, ok := pe.Err.(syscall.Errno); ok {
			return fmt.Sprintf("%s %s: %s (%s)", pe.Op, pe.Path, errno.Error(), vfs.ErrnoName(errno))
		}
	}
	return err.Error()
}

func hint(err error) string {
	var ue userError
	if errors.As(err, &ue) {
		return ue.hint
	}
	switch {
	case errors.Is(err, store.ErrBusy):
		return "another process holds the write lock; retry, or find it with: fuser <db file>"
	case errors.Is(err, store.ErrNeedKey):
		return "agentfs --key-file KEYFILE COMMAND ID ... (or AGENTFS_KEY=HEX in the environment)"
	case errors.Is(err, store.ErrWrongKey):
		return "check the key (--key-file, AGENTFS_KEY or --key) and --cipher"
	case errors.Is(err, store.ErrNotEncrypted):
		return "drop --key/--key-file/AGENTFS_KEY, or encrypt it: agentfs encrypt ID --key-file KEYFILE"
	case errors.Is(err, store.ErrNotADatabase):
		return "check the path; an encrypted database needs its key"
	case errors.Is(err, store.ErrCorrupt):
		return "restore a snapshot (agentfs snapshot ID restore NAME) or repair what can be: agentfs fsck ID --repair"
	case errors.Is(err, kv.ErrNotFound):
		return "list keys with: agentfs kv ID ls"
	case errors.Is(err, toolcalls.ErrNotFound):
		return "list calls with: agentfs timeline ID"
	}
	switch vfs.Errno(err) {
	case syscall.ENOENT:
		return "list the directory with: agentfs fs ID ls PATH (or create parents with mkdir -p)"
	case syscall.EEXIST:
		return "the path exists; remove it first or choose another name"
	case syscall.ENOTEMPTY:
		return "remove the contents first, or use rm -r"
	case syscall.EISDIR:
		return "the path is a directory; use -r where the command supports it"
	case syscall.ENOTDIR:
		return "a component of the path is not a directory"
	case syscall.ELOOP:
		return "a symbolic link loop; inspect links with: agentfs fs ID ls -l"
	}
	return ""
}

// isTerminal reports whether w is a terminal (for progress output).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// agentPath makes a filesystem path absolute inside the agent filesystem.
func agentPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		return "/" + p
	}
	return p
}
