package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	var force bool
	var chunkSize, pageSize int
	var command, base string
	c := &cobra.Command{
		Use:   "init [ID] [--base HOSTDIR] [-c CMD]",
		Short: "Create an agent database in .agentfs/ID.db",
		Long: `Create a new agent database. ID may contain letters, digits, "_" and "-";
without it, a random id is chosen. The database is .agentfs/ID.db in the
current directory.

With --base, the database is the delta layer of a copy-on-write overlay over
the host directory HOSTDIR: the filesystem shows HOSTDIR's files, and every
change (writes, deletions, renames, modes) goes to the database while
HOSTDIR stays untouched. "agentfs diff" lists the changes and
"agentfs commit" applies them to HOSTDIR.

With -c, CMD then runs in the new filesystem as "agentfs exec" runs it: the
database is mounted on a temporary directory (the working directory of
"sh -c CMD"), unmounted afterwards, and agentfs exits with CMD's status.`,
		Example: `  agentfs init my-agent
  agentfs init build -c 'git clone https://example.com/repo.git . && make'
  agentfs init try --base . -c 'make && rm -rf docs'  # then: agentfs diff try`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			} else {
				id = randomID()
			}
			if err := core.CheckID(id); err != nil {
				return userError{msg: err.Error(), hint: "agentfs init my-agent"}
			}
			opts := core.Options{Create: true, ChunkSize: chunkSize, PageSize: pageSize, Base: base}
			// Before --force removes anything: a refused option must
			// leave the old database in place.
			if err := core.CheckOptions(opts); err != nil {
				return userError{msg: err.Error(), hint: "agentfs init " + id + " (default --chunk-size 4096, --page-size 4096)"}
			}
			path := core.PathForID(id)
			if _, err := os.Stat(path); err == nil {
				if !force {
					return userError{msg: fmt.Sprintf("agent %q already exists at %s", id, path), hint: fmt.Sprintf("agentfs init %s --force (replaces it)", id)}
				}
				for _, suffix := range []string{"", "-wal", "-shm"} {
					if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
				}
				// Snapshots of the replaced database would restore it
				// over the new one: they go with it.
				if err := os.RemoveAll(path + ".snapshots"); err != nil {
					return err
				}
			}
			if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
				return userError{msg: fmt.Sprintf("%s exists and is not a regular file", path), hint: "remove it, or choose another id"}
			}
			if base != "" {
				st, err := os.Stat(base)
				if err != nil {
					return userError{msg: fmt.Sprintf("base directory %s: %v", base, errors.Unwrap(err)), hint: "agentfs init " + id + " --base EXISTING_DIR"}
				}
				if !st.IsDir() {
					return userError{msg: fmt.Sprintf("base %s is not a directory (ENOTDIR)", base), hint: "agentfs init " + id + " --base EXISTING_DIR"}
				}
			}
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			opts.Encryption = enc
			a, err := core.Open(cmd.Context(), path, opts)
			if err != nil {
				return openError(id, path, err)
			}
			if base != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "Overlay over %s (host files stay unchanged until agentfs commit)\n", a.FS.Base())
			}
			if err := a.Close(); err != nil {
				return err
			}
			if command == "" {
				fmt.Fprintf(cmd.OutOrStdout(), "Created agent filesystem: %s\nAgent ID: %s\n", path, id)
				return nil
			}
			// CMD's output is the command's: the note goes to stderr.
			fmt.Fprintf(cmd.ErrOrStderr(), "Created agent filesystem: %s\nAgent ID: %s\n", path, id)
			return execMounted(cmd, path, []string{"/bin/sh", "-c", command})
		},
	}
	c.Flags().BoolVar(&force, "force", false, "replace an existing database (and its snapshots)")
	c.Flags().StringVar(&base, "base", "", "make the database a copy-on-write overlay over host directory `HOSTDIR`")
	c.Flags().StringVarP(&command, "command", "c", "", "run CMD (sh -c) in the new filesystem mounted on a temporary directory")
	c.Flags().IntVar(&chunkSize, "chunk-size", 4096, "size of file data chunks in bytes")
	c.Flags().IntVar(&pageSize, "page-size", 0, "SQLite page size of the new file (default 4096; 8192 stores small files more compactly, writes slower)")
	return c
}

func randomID() string {
	b := make([]byte, 6)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		f.Read(b)
		f.Close()
	}
	return fmt.Sprintf("agent-%x", b)
}
