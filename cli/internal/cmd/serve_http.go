package cmd

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
)

func init() { registerServe(newServeHTTPCmd) }

func newServeHTTPCmd() *cobra.Command {
	var listen, data, tokenFile string
	var maxBytes, querySteps, queryBytes int64
	var quiet bool
	c := &cobra.Command{
		Use:   "http",
		Short: "Serve many agents over HTTP (Connect, gRPC and gRPC-Web)",
		Long: `Serve every agent under a data directory (DIR/ID.db) over HTTP with the
API of spec/proto: Connect (application/proto and application/json), gRPC
and gRPC-Web, on one port, until interrupted (Ctrl-C or SIGTERM finish the
requests in flight, then close the databases).

Each call names its agent with the Agentfs-Agent header; AgentService's
CreateAgent and ListAgents manage the directory. GET /healthz answers "ok".

Authentication: a bearer token (Authorization: Bearer TOKEN) from the
AGENTFS_TOKEN environment variable or --token-file. It is required when
listening on anything but a loopback address; on loopback it is optional.
The token never appears in logs.

  AGENTFS_TOKEN=s3cret agentfs serve http --listen 0.0.0.0:7777 --data ./agents
  curl -s -X POST localhost:7777/agentfs.v1.AgentService/ListAgents \
    -H 'Content-Type: application/json' -H 'Authorization: Bearer s3cret' -d '{}'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			token := os.Getenv("AGENTFS_TOKEN")
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return err
				}
				token = strings.TrimSpace(string(b))
				if token == "" {
					return usageError(cmd, "--token-file %s is empty", tokenFile)
				}
			}
			if querySteps <= 0 || queryBytes <= 0 {
				return usageError(cmd, "--query-max-steps and --query-max-bytes must be positive")
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return usageError(cmd, "bad --listen address %q: %v (want HOST:PORT, e.g. 127.0.0.1:7777)", listen, err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			defer ln.Close()
			loopback := false
			if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
				loopback = true
			}
			w := cmd.ErrOrStderr()
			if !loopback {
				if token == "" {
					return usageError(cmd, "listening on %s, which is not a loopback address, needs a token: set AGENTFS_TOKEN or pass --token-file", ln.Addr())
				}
				fmt.Fprintf(w, "agentfs: warning: listening on %s, which is not a loopback address: anyone with the token who can reach this port can read and write every agent under %s. Prefer TLS in front (a reverse proxy).\n", ln.Addr(), data)
			}
			d, err := durabilityOption()
			if err != nil {
				return err
			}
			dir, err := rpc.NewAgentDir(data, core.Options{Durability: d})
			if err != nil {
				return err
			}
			defer dir.Close()
			var access *log.Logger
			if !quiet {
				access = log.New(w, "agentfs: ", log.LstdFlags)
			}
			h := rpc.NewHTTPHandler(dir, rpc.HTTPOptions{Version: Version, Token: token, MaxRequestBytes: maxBytes, AccessLog: access,
				QueryLimits: core.QueryLimits{Steps: querySteps, MaxBytes: queryBytes}})
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			srv.Protocols = new(http.Protocols)
			srv.Protocols.SetHTTP1(true)
			srv.Protocols.SetUnencryptedHTTP2(true) // gRPC over h2c
			auth := "no token (loopback only)"
			if token != "" {
				auth = "bearer token required"
			}
			fmt.Fprintf(w, "agentfs: serving the agents of %s at http://%s (%s; Ctrl-C stops)\n", data, ln.Addr(), auth)

			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			fmt.Fprintln(w, "agentfs: shutting down: finishing the requests in flight")
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:7777", "address to listen on (HOST:PORT; port 0 picks one); off loopback a token is required")
	c.Flags().StringVar(&data, "data", core.DefaultDir, "directory of the agent databases (ID.db)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding the bearer token (default: $AGENTFS_TOKEN)")
	c.Flags().Int64Var(&maxBytes, "max-request-bytes", 256<<20, "largest request body accepted")
	c.Flags().Int64Var(&querySteps, "query-max-steps", core.DefaultQuerySteps, "AgentService.Query: stop a statement after this many steps of SQLite's virtual machine")
	c.Flags().Int64Var(&queryBytes, "query-max-bytes", core.DefaultQueryMaxBytes, "AgentService.Query: largest result (text and blob bytes, plus 8 per value)")
	c.Flags().BoolVar(&quiet, "quiet", false, "no access log")
	return c
}
