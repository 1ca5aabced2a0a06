package cmd

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/httpguard"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

func init() { registerServe(newServeSyncCmd) }

func newServeSyncCmd() *cobra.Command {
	var listen, data, tokenFile string
	var maxBytes int64
	var quiet bool
	var historyMB int64
	c := &cobra.Command{
		Use:   "sync --data DIR",
		Short: "Serve agent databases over Turso's sync protocol (self-hosted sync remote)",
		Long: `Serve the agent databases DIR/ID.db to clients of Turso's database sync
protocol: "agentfs init ID --sync-remote-url URL" and "agentfs sync", and
Turso's own sync clients (@tursodatabase/sync, the turso crate). An agent's
URL is http://HOST:PORT/ID; a database is created at its first request.

Endpoints under /ID: POST /pull-updates (pages, protobuf) and
POST /v2/pipeline (SQL over HTTP, hrana JSON). GET /healthz answers "ok".
The server must be the only program writing DIR's databases while it runs.
See docs/SYNC.md for the protocol and what wins in a conflict.

Authentication: a bearer token (Authorization: Bearer TOKEN) from the
AGENTFS_TOKEN environment variable or --token-file. It is required when
listening on anything but a loopback address; on loopback it is optional.
Clients pass it as TURSO_DB_AUTH_TOKEN. The token never appears in logs.

  AGENTFS_TOKEN=s3cret agentfs serve sync --data ./remote --listen 127.0.0.1:7790
  TURSO_DB_AUTH_TOKEN=s3cret agentfs init laptop --sync-remote-url http://127.0.0.1:7790/laptop`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, err := serveToken(cmd, tokenFile)
			if err != nil {
				return err
			}
			if data == "" {
				return usageError(cmd, "--data DIR is required (the directory of the served databases)")
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return usageError(cmd, "bad --listen address %q: %v (want HOST:PORT, e.g. 127.0.0.1:7790)", listen, err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			defer ln.Close()
			w := cmd.ErrOrStderr()
			if !httpguard.LoopbackAddr(ln.Addr()) {
				if token == "" {
					return usageError(cmd, "listening on %s, which is not a loopback address, needs a token: set AGENTFS_TOKEN or pass --token-file", ln.Addr())
				}
				fmt.Fprintf(w, "agentfs: warning: listening on %s, which is not a loopback address: anyone with the token who can reach this port can read and write every database under %s. Prefer TLS in front (a reverse proxy).\n", ln.Addr(), data)
			}
			srv, err := agentsync.NewServer(data)
			if err != nil {
				return err
			}
			defer srv.Close()
			srv.MaxRequestBytes = maxBytes
			if historyMB <= 0 {
				return usageError(cmd, "--history-mb must be at least 1 (the page history partial clients read at their revision)")
			}
			srv.HistoryBytes = historyMB << 20
			if !quiet {
				srv.Log = log.New(w, "agentfs: ", log.LstdFlags)
			}
			h := httpguard.Wrap(srv.Handler(), httpguard.Options{Token: token, Public: []string{"/healthz"}})
			hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(w, "agentfs: serving sync for the databases of %s at http://%s/ID (%s; Ctrl-C stops)\n", data, ln.Addr(), authNote(token))
			ctx, stop := serveSignals(cmd.Context(), w)
			defer stop()
			return serveUntilDone(ctx, hs, ln, 5*time.Second, func() { fmt.Fprintln(w, "agentfs: shutting down") })
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:7790", "address to listen on (HOST:PORT; port 0 picks one); off loopback a token is required")
	c.Flags().StringVar(&data, "data", "", "directory of the served databases (ID.db)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding the bearer token (default: $AGENTFS_TOKEN)")
	c.Flags().Int64Var(&maxBytes, "max-request-bytes", 256<<20, "largest request body accepted")
	c.Flags().BoolVar(&quiet, "quiet", false, "no access log")
	c.Flags().Int64Var(&historyMB, "history-mb", agentsync.DefaultHistoryBytes>>20, "page history kept per database (MiB) for partial clients reading at an older revision; older revisions are dropped first")
	return c
}
