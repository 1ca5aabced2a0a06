package cmd

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/httpguard"
	"github.com/agentfs-go/agentfs/core/rpc"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

func init() { registerServe(newServeHTTPCmd) }

func newServeHTTPCmd() *cobra.Command {
	var listen, data, tokenFile, maxLimits string
	var maxBytes, querySteps, queryBytes, memLimit int64
	var quiet bool
	var maxProcs, maxShells int
	c := &cobra.Command{
		Use:   "http",
		Short: "Serve many agents over HTTP (Connect, gRPC and gRPC-Web)",
		Long: `Serve every agent under a data directory (DIR/ID.db) over HTTP with the
API of spec/proto: Connect (application/proto and application/json), gRPC
and gRPC-Web, on one port, until interrupted (Ctrl-C or SIGTERM cancel the
requests in flight, then close the databases).

Exec runs scripts in the in-process sandbox under the limits the caller
asks for ("hardened", "normal"), never above --max-limits (default
normal): a caller asking for more, or for "none", is refused with
PERMISSION_DENIED unless the operator passes --max-limits none. Every
script has a memory budget, and the process a memory limit
(--memory-limit). SIGINT or SIGTERM stops accepting, cancels the scripts
and queries in flight and exits; a second signal exits at once.

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
			token, err := serveToken(cmd, tokenFile)
			if err != nil {
				return err
			}
			if querySteps <= 0 || queryBytes <= 0 {
				return usageError(cmd, "--query-max-steps and --query-max-bytes must be positive")
			}
			ceiling, err := rpc.ParseLimitCeiling(maxLimits)
			if err != nil {
				return usageError(cmd, "--max-limits: %v (or none, which lets callers run scripts without limits)", err)
			}
			if maxProcs <= 0 || maxShells <= 0 {
				return usageError(cmd, "--max-processes and --max-shells must be positive")
			}
			if memLimit < 0 {
				return usageError(cmd, "--memory-limit must be 0 (none) or a number of bytes, not %d", memLimit)
			}
			if memLimit > 0 {
				// The collector works harder near it, and the sandbox
				// stops the running scripts at 90% of it.
				debug.SetMemoryLimit(memLimit)
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return usageError(cmd, "bad --listen address %q: %v (want HOST:PORT, e.g. 127.0.0.1:7777)", listen, err)
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
				fmt.Fprintf(w, "agentfs: warning: listening on %s, which is not a loopback address: anyone with the token who can reach this port can read and write every agent under %s. Prefer TLS in front (a reverse proxy).\n", ln.Addr(), data)
			}
			d, err := durabilityOption()
			if err != nil {
				return err
			}
			// The key, if any, lives only in this process's memory.
			enc, err := encryptionOption()
			if err != nil {
				return err
			}
			dir, err := rpc.NewAgentDir(data, core.Options{Durability: d, Encryption: enc})
			if err != nil {
				return err
			}
			dir.ProcLimits = sandbox.ProcLimits{MaxProcs: maxProcs, MaxShells: maxShells}
			defer dir.Close()
			var access *log.Logger
			if !quiet {
				access = log.New(w, "agentfs: ", log.LstdFlags)
			}
			h := rpc.NewHTTPHandler(dir, rpc.HTTPOptions{Version: Version, Token: token, MaxRequestBytes: maxBytes, AccessLog: access,
				QueryLimits: core.QueryLimits{Steps: querySteps, MaxBytes: queryBytes}, MaxLimits: ceiling})
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			srv.Protocols = new(http.Protocols)
			srv.Protocols.SetHTTP1(true)
			srv.Protocols.SetUnencryptedHTTP2(true) // gRPC over h2c
			fmt.Fprintf(w, "agentfs: serving the agents of %s at http://%s (%s; Ctrl-C stops)\n", data, ln.Addr(), authNote(token))

			// Every request runs under ctx: at the signal the scripts
			// and queries in flight are cancelled and answer at once.
			ctx, stop := serveSignals(cmd.Context(), w)
			defer stop()
			return serveUntilDone(ctx, srv, ln, 5*time.Second, func() { fmt.Fprintln(w, "agentfs: shutting down: cancelling the requests in flight") })
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:7777", "address to listen on (HOST:PORT; port 0 picks one); off loopback a token is required")
	c.Flags().StringVar(&data, "data", core.DefaultDir, "directory of the agent databases (ID.db)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding the bearer token (default: $AGENTFS_TOKEN)")
	c.Flags().Int64Var(&maxBytes, "max-request-bytes", 256<<20, "largest request body accepted")
	c.Flags().Int64Var(&querySteps, "query-max-steps", core.DefaultQuerySteps, "AgentService.Query: stop a statement after this many steps of SQLite's virtual machine")
	c.Flags().Int64Var(&queryBytes, "query-max-bytes", core.DefaultQueryMaxBytes, "AgentService.Query: largest result (text and blob bytes, plus 8 per value)")
	c.Flags().BoolVar(&quiet, "quiet", false, "no access log")
	c.Flags().IntVar(&maxProcs, "max-processes", sandbox.DefaultProcLimits.MaxProcs, "ProcessService: processes one agent may hold at once (running or not yet read to the end); past it StartProcess fails with EAGAIN")
	c.Flags().IntVar(&maxShells, "max-shells", sandbox.DefaultProcLimits.MaxShells, "ProcessService: persistent shells one agent may hold open")
	c.Flags().StringVar(&maxLimits, "max-limits", "normal", "the most a caller may ask of Exec: hardened, normal, or none (callers may then run scripts without limits); above it Exec is refused with PERMISSION_DENIED")
	c.Flags().Int64Var(&memLimit, "memory-limit", 4<<30, "memory limit of the server process in bytes (Go's soft limit; running scripts are stopped at 90% of it); 0: none")
	return c
}
