package cmd

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

func init() {
	register(func() *cobra.Command { return convertCmd(true) })
	register(func() *cobra.Command { return convertCmd(false) })
}

// convertCmd is "agentfs encrypt" (encrypt true) or "agentfs decrypt":
// a converted copy is written beside the database under a temporary
// name, checked, then renamed over it, so the database is whole before
// and after, never half-converted.
func convertCmd(encrypt bool) *cobra.Command {
	use, short := "decrypt ID_OR_PATH", "Decrypt an encrypted agent database in place (new file, then atomic rename)"
	if encrypt {
		use, short = "encrypt ID_OR_PATH", "Encrypt an agent database in place (new file, then atomic rename)"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `

The key comes from --key-file FILE, AGENTFS_KEY or --key (` + keyHelpWarning + `);
encrypt takes --cipher (default aegis256 for a 32-byte key, aegis128l for a
16-byte one). The database must not be open in another process (a mount,
a server, a shell): it is refused then, unchanged. Snapshots in ID.snapshots/
are left as they were.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			if enc == nil {
				return userError{msg: cmd.Name() + " needs the key", hint: "agentfs " + cmd.Name() + " " + args[0] + " --key-file KEYFILE (or AGENTFS_KEY=HEX); make a key with: openssl rand -hex 32 > KEYFILE"}
			}
			path := core.ResolveIDOrPath(args[0])
			if _, err := os.Stat(path); err != nil {
				return openError(args[0], path, err)
			}
			var from, to *store.Encryption
			if encrypt {
				to = enc
			} else {
				from = enc
			}
			// Open once as it is: checks the key (or plainness), and the
			// close checkpoints the WAL into the file, which Convert copies.
			a, err := core.Open(cmd.Context(), path, core.Options{Encryption: from})
			if err != nil {
				return openError(args[0], path, err)
			}
			if err := a.Close(); err != nil {
				return err
			}
			var b [6]byte
			rand.Read(b[:])
			tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".convert-"+hex.EncodeToString(b[:]))
			defer func() {
				for _, s := range []string{"", "-wal", "-shm", "-journal"} {
					os.Remove(tmp + s)
				}
			}()
			// The copy replaces the original while the original is still
			// locked (store.Convert): no other process can have written to
			// it since it was copied.
			replace := func() error {
				// The copy must open as an agent database with its new key
				// (or none) before it replaces the original.
				c, err := core.Open(cmd.Context(), tmp, core.Options{Encryption: to, ReadOnly: true})
				if err != nil {
					return fmt.Errorf("the converted copy does not open: %w", err)
				}
				c.Close()
				if err := syncPath(tmp); err != nil {
					return err
				}
				// The original's log and index go with it: what the log
				// held is in the copy, and no other process can be using
				// them while the original is locked.
				for _, s := range []string{"-wal", "-shm"} {
					if err := os.Remove(path + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
				}
				return os.Rename(tmp, path)
			}
			if err := store.Convert(cmd.Context(), path, tmp, from, to, replace); err != nil {
				if errors.Is(err, store.ErrInUse) {
					return inUseError(cmd.Name(), args[0], path)
				}
				return fmt.Errorf("%s: %w (the database is unchanged)", cmd.Name(), err)
			}
			if err := syncPath(filepath.Dir(path)); err != nil {
				return err
			}
			what := "decrypted"
			if encrypt {
				what = "encrypted"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s %s\n", what, path)
			if st, err := os.Stat(path + ".snapshots"); err == nil && st.IsDir() {
				fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: note: snapshots in %s.snapshots/ were not converted\n", path)
			}
			return nil
		},
	}
}

// inUseError says that the command refused the database at path, which
// another process has open, and how to find that process.
func inUseError(command, idOrPath, path string) error {
	who := "another process"
	if pid, ok := databaseUser(path); ok && pid > 0 {
		who = fmt.Sprintf("another process (pid %d)", pid)
	}
	return userError{msg: fmt.Sprintf("%s: %s is open in %s (EBUSY); the database is unchanged", command, idOrPath, who),
		hint: "close it there first (agentfs ps lists agentfs mounts, servers and shells; fuser " + path + " lists every process), then run agentfs " + command + " " + idOrPath + " again"}
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
