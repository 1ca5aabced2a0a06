package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

func init() { register(newSyncCmd) }

// syncToken is the sync server's token: --sync-token-file, else
// TURSO_DB_AUTH_TOKEN (the variable Turso's AgentFS reads).
func syncToken(tokenFile string) (string, error) {
	if tokenFile == "" {
		return os.Getenv("TURSO_DB_AUTH_TOKEN"), nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", userError{msg: fmt.Sprintf("--sync-token-file: %v", err), hint: "write the token into a file readable by this user only (chmod 600), or set TURSO_DB_AUTH_TOKEN"}
	}
	return strings.TrimSpace(string(b)), nil
}

func syncError(id string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, store.ErrNeedKey), errors.Is(err, store.ErrWrongKey), errors.Is(err, store.ErrNotEncrypted):
		// The key is checked before any request: nothing was sent.
		return openError(id, core.ResolveIDOrPath(id), err)
	case strings.Contains(msg, "EACCES"):
		return userError{msg: msg, hint: "export TURSO_DB_AUTH_TOKEN=... (the token the server was started with)"}
	case strings.Contains(msg, "EHOSTUNREACH"):
		return userError{msg: msg + "; the local database is unchanged", hint: "start the server (agentfs serve sync --data DIR) or fix the URL in .agentfs/" + id + ".db-sync.json"}
	case strings.Contains(msg, "not set up for sync"):
		return userError{msg: msg, hint: "agentfs init " + id + " --sync-remote-url http://HOST:PORT/" + id}
	}
	return userError{msg: msg + "; the local database is unchanged, and the next sync starts over", hint: "retry: agentfs sync " + id + " pull"}
}

func newSyncCmd() *cobra.Command {
	var tokenFile string
	c := &cobra.Command{
		Use:   "sync ID pull|push|checkpoint|stats",
		Short: "Synchronize an agent with its sync remote (Turso's sync protocol)",
		Long: `Synchronize an agent database created with "agentfs init ID --sync-remote-url
URL" with its remote (agentfs serve sync, or any server of Turso's sync
protocol):

  pull        bring the remote's changes here
  push        send the local changes (after merging the remote's)
  checkpoint  copy the local WAL into the database file
  stats       print the sync state as JSON

A change made on both sides keeps this side's version when pulled (a file
as a whole); tool calls both sides recorded are all kept. See
docs/SYNC.md. The token comes from TURSO_DB_AUTH_TOKEN or --sync-token-file.
An encrypted agent needs its key (--key-file or AGENTFS_KEY); the copy of
the remote kept beside it is encrypted with the same key, while the wire
and the server carry plain pages (use https off loopback).`,
		Example: `  agentfs sync my-agent pull
  TURSO_DB_AUTH_TOKEN=s3cret agentfs sync my-agent push
  agentfs sync my-agent stats`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, op := args[0], args[1]
			path := core.ResolveIDOrPath(id)
			if _, err := os.Stat(path); err != nil {
				return openError(id, path, err)
			}
			token, err := syncToken(tokenFile)
			if err != nil {
				return err
			}
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			o := agentsync.Options{Token: token, Encryption: enc}
			ctx := cmd.Context()
			w, ew := cmd.OutOrStdout(), cmd.ErrOrStderr()
			switch op {
			case "pull":
				res, err := agentsync.Pull(ctx, path, o)
				if err != nil {
					return syncError(id, err)
				}
				if res.Kept > 0 {
					fmt.Fprintf(ew, "kept the local version of %d changed rows the remote also changed\n", res.Kept)
				}
				fmt.Fprintf(ew, "Remote data pulled to local db successfully (%d rows applied, revision %s)\n", res.Applied, res.Revision)
			case "push":
				res, err := agentsync.Push(ctx, path, o)
				if err != nil {
					return syncError(id, err)
				}
				fmt.Fprintf(ew, "Local data pushed to remote db successfully (%d rows, revision %s)\n", res.Rows, res.Revision)
			case "checkpoint":
				if err := agentsync.Checkpoint(ctx, path, o); err != nil {
					return syncError(id, err)
				}
				fmt.Fprintln(ew, "Local db checkpointed successfully")
			case "stats":
				st, err := agentsync.GetStats(ctx, path, o)
				if err != nil {
					return syncError(id, err)
				}
				b, _ := json.Marshal(st)
				fmt.Fprintln(w, string(b))
			default:
				return usageError(cmd, "unknown sync operation %q (want pull, push, checkpoint or stats)", op)
			}
			return nil
		},
	}
	c.Flags().StringVar(&tokenFile, "sync-token-file", "", "file holding the sync server's token (default: $TURSO_DB_AUTH_TOKEN)")
	return c
}
