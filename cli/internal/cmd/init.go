package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	var force bool
	var chunkSize, pageSize int
	var command, base, syncURL, syncTokenFile string
	var partialPrefetch bool
	var partialSegment, partialLength int
	var partialQuery string
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
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			opts.Encryption = enc
			path := core.PathForID(id)
			// Every check comes before --force touches anything: a refused
			// option or base leaves the old database in place.
			if base != "" {
				st, err := os.Stat(base)
				if err != nil {
					return userError{msg: fmt.Sprintf("base directory %s: %v", base, errors.Unwrap(err)), hint: "agentfs init " + id + " --base EXISTING_DIR"}
				}
				if !st.IsDir() {
					return userError{msg: fmt.Sprintf("base %s is not a directory (ENOTDIR)", base), hint: "agentfs init " + id + " --base EXISTING_DIR"}
				}
			}
			if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
				return userError{msg: fmt.Sprintf("%s exists and is not a regular file", path), hint: "remove it, or choose another id"}
			}
			replacing := false
			if _, err := os.Stat(path); err == nil {
				if !force {
					return userError{msg: fmt.Sprintf("agent %q already exists at %s", id, path), hint: fmt.Sprintf("agentfs init %s --force (replaces it)", id)}
				}
				// A process that has it open would go on writing to the
				// replaced file and lose what it writes.
				if _, inUse := databaseUser(path); inUse {
					return inUseError("init --force", id, path)
				}
				replacing = true
			}
			target := path
			if replacing {
				// The new database is made beside the old one and swapped
				// in only once it is complete (replaceDatabase).
				target = fmt.Sprintf("%s.init-%d.tmp", path, os.Getpid())
				defer removeDatabaseFiles(target)
			}
			if syncURL != "" {
				var partial *agentsync.Partial
				if partialLength != 0 || partialQuery != "" || partialSegment != 0 || partialPrefetch {
					partial = &agentsync.Partial{BootstrapLength: int64(partialLength), BootstrapQuery: partialQuery, SegmentSize: partialSegment, Prefetch: partialPrefetch}
					if err := partial.Check(); err != nil {
						return userError{msg: err.Error(), hint: "agentfs init " + id + " --sync-remote-url " + syncURL + " --sync-partial-bootstrap-length BYTES (or --sync-partial-bootstrap-query SQL)"}
					}
				}
				if base != "" {
					return userError{msg: "--base and --sync-remote-url together are not supported (EINVAL): an overlay's base directory stays on this machine", hint: "agentfs init " + id + " --sync-remote-url " + syncURL}
				}
				token, err := syncToken(syncTokenFile)
				if err != nil {
					return err
				}
				d, err := durabilityOption()
				if err != nil {
					return err
				}
				opts.Durability = d
				if err := agentsync.Bootstrap(cmd.Context(), target, syncURL, agentsync.Options{Token: token, Partial: partial}, opts); err != nil {
					return syncError(id, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "Synced with %s (push sends local changes: agentfs sync %s push)\n", syncURL, id)
			}
			a, err := core.Open(cmd.Context(), target, opts)
			if err != nil {
				return openError(id, path, err)
			}
			if base != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "Overlay over %s (host files stay unchanged until agentfs commit)\n", a.FS.Base())
			}
			if err := a.Close(); err != nil {
				return err
			}
			if replacing {
				if err := replaceDatabase(target, path); err != nil {
					return err
				}
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
	c.Flags().StringVar(&syncURL, "sync-remote-url", "", "bootstrap from and sync with this remote (http://HOST:PORT/ID of agentfs serve sync, or a server of Turso's sync protocol); token from $TURSO_DB_AUTH_TOKEN")
	c.Flags().StringVar(&syncTokenFile, "sync-token-file", "", "file holding the sync server's token (default: $TURSO_DB_AUTH_TOKEN)")
	c.Flags().BoolVar(&partialPrefetch, "sync-partial-prefetch", false, "partial sync: with a fetched interior b-tree page, also fetch the pages it points to")
	c.Flags().IntVar(&partialSegment, "sync-partial-segment-size", 0, "partial sync: fetch absent pages in aligned segments of this many bytes (default 131072)")
	c.Flags().StringVar(&partialQuery, "sync-partial-bootstrap-query", "", "partial sync: bootstrap only the pages the server reads to run this SQL query; the rest are fetched when read")
	c.Flags().IntVar(&partialLength, "sync-partial-bootstrap-length", 0, "partial sync: bootstrap only the first BYTES of the database; the rest is fetched when read")
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

// replaceDatabase puts the complete database fresh in place of the one at
// path, so that no crash loses the old one before the new one is there:
// the old database (with its WAL, which may hold committed transactions)
// is first renamed aside in one piece, then fresh takes its name, and only
// then are the old files and its snapshots (which would restore it over
// the new one) removed. A crash in between leaves the old database whole
// under path.replaced-PID.
func replaceDatabase(fresh, path string) error {
	aside := fmt.Sprintf("%s.replaced-%d", path, os.Getpid())
	for _, suffix := range append(syncSuffixes, "-wal", "-shm", "") { // the main file last
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("replace %s: %w", path, err)
		}
	}
	// A synced agent's state (remote copy, revision) moves with it.
	for _, suffix := range syncSuffixes {
		if err := os.Rename(fresh+suffix, path+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("replace %s: %w (the old database is at %s)", path, err, aside)
		}
	}
	if err := os.Rename(fresh, path); err != nil {
		return fmt.Errorf("replace %s: %w (the old database is at %s)", path, err, aside)
	}
	removeDatabaseFiles(aside)
	return os.RemoveAll(path + ".snapshots")
}

// syncSuffixes name the files a synced agent keeps beside its database
// (core/sync): its sync state, the remote copy and the sync lock.
var syncSuffixes = []string{"-sync.json", "-sync-base", "-sync.lock", "-sync-base-missing", "-sync-fetch.lock", "-sync-missing"}

// removeDatabaseFiles removes a database file with its WAL and shared
// memory files, if they exist.
func removeDatabaseFiles(path string) {
	for _, suffix := range append(syncSuffixes, "", "-wal", "-shm") {
		_ = os.Remove(path + suffix)
	}
}
