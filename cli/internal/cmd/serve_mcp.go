package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/httpguard"
	"github.com/agentfs-go/agentfs/core/mcpserver"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

func init() { registerServe(newServeMCPCmd) }

func newServeMCPCmd() *cobra.Command {
	var tools []string
	var httpAddr, tokenFile string
	var readOnly bool
	var profile string
	var env []string
	var allowNet []string
	var allowPrivate bool
	var pf policyFlags
	c := &cobra.Command{
		Use:   "mcp ID_OR_PATH",
		Short: "Serve an agent as a Model Context Protocol server (stdio or streamable HTTP)",
		Long: `Serve an agent as a Model Context Protocol (MCP) server, so that an MCP
client (an AI assistant, an IDE, an agent framework) can use its
filesystem, key-value store and tool-call log.

Tools: ` + strings.Join(mcpserver.ToolNames(), ", ") + `.
Each has input and output JSON schemas. Errors name the POSIX code and
the path ("ENOENT: open /a.txt: no such file or directory"). exec runs
shell scripts in the in-engine sandbox (no host program, no host file)
under the limits of --profile. Files are also resources: agentfs:///path.
Every call is recorded in the agent's tool-call log as mcp:<tool>: see
them with "agentfs timeline ID_OR_PATH".

By default the server speaks MCP on stdin and stdout, for a client that
starts it as a subprocess. With --http it serves the streamable HTTP
transport at http://HOST:PORT/mcp until interrupted. With a token
(AGENTFS_TOKEN or --token-file) every request needs "Authorization:
Bearer TOKEN"; without one the server listens on loopback only and
answers only requests to 127.0.0.1, [::1] or localhost (a web page cannot
reach it by DNS rebinding). Browsers' cross-origin requests are refused.

  agentfs serve mcp my-agent
  agentfs serve mcp my-agent --http 127.0.0.1:8808
  agentfs serve mcp my-agent --tools read_file,readdir,stat --read-only
  agentfs serve mcp my-agent --profile hardened --env LANG=C.UTF-8
  agentfs serve mcp my-agent --default-deny --read /src --write /out --allow grep --allow cat

exec's policy takes the flags of agentfs sh: --read, --write, --allow,
--deny, --default-deny, --allow-net, --env (see agentfs sh --help).

An MCP client configuration (Claude Desktop and others):

  {"mcpServers": {"agentfs": {"command": "agentfs", "args": ["serve", "mcp", "/abs/path/agent.db"]}}}`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := mcpserver.Options{
				Tools:    cleanList(tools),
				ReadOnly: readOnly,
				Version:  Version,
				Logger:   slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})),
			}
			limits, err := sandbox.Profile(profile)
			if err != nil {
				return usageError(cmd, "--profile must be normal or hardened, not %q", profile)
			}
			opts.Sandbox.Limits = limits
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageError(cmd, "--env wants NAME=VALUE, not %q", kv)
				}
				if opts.Sandbox.Policy.Env == nil {
					opts.Sandbox.Policy.Env = map[string]string{}
				}
				opts.Sandbox.Policy.Env[k] = v
			}
			if opts.Sandbox.Policy.Net, err = netRules(allowNet, allowPrivate); err != nil {
				return usageError(cmd, "%v", err)
			}
			if err := pf.apply(cmd, &opts.Sandbox.Policy); err != nil {
				return err
			}
			if opts.HTTPToken, err = serveToken(cmd, tokenFile); err != nil {
				return err
			}
			if err := opts.Check(); err != nil {
				return usageError(cmd, "--tools: %v", err)
			}
			if cmd.Flags().Changed("tools") && len(opts.Tools) == 0 {
				return usageError(cmd, "--tools is empty")
			}
			ctx, stop := serveSignals(cmd.Context(), cmd.ErrOrStderr())
			defer stop()
			return withAgent(cmd, args[0], core.Options{}, func(a *core.Agent) error {
				srv := mcpserver.New(a, opts)
				if httpAddr == "" {
					return serveMCPStdio(ctx, cmd, srv)
				}
				return serveMCPHTTP(ctx, cmd, srv, a, httpAddr, opts.HTTPToken != "")
			})
		},
	}
	c.Flags().StringSliceVar(&tools, "tools", nil, "serve only these tools, comma-separated (default: all)")
	c.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8808) instead of stdio")
	c.Flags().StringVar(&tokenFile, "token-file", "", "with --http: file holding the bearer token every request must carry (default: $AGENTFS_TOKEN; required off loopback)")
	c.Flags().BoolVar(&readOnly, "read-only", false, "serve only the tools that do not change the agent (no exec)")
	c.Flags().StringVar(&profile, "profile", "normal", "limits of the scripts run by exec: normal or hardened")
	c.Flags().StringArrayVar(&env, "env", nil, "environment variable NAME=VALUE of the scripts run by exec (repeatable; nothing comes from the host)")
	addNetFlags(c, &allowNet, &allowPrivate)
	addPolicyFlags(c, &pf)
	c.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions([]cobra.Completion{"normal", "hardened"}, cobra.ShellCompDirectiveNoFileComp))
	c.RegisterFlagCompletionFunc("tools", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, _ := cutLast(toComplete, ",")
		var out []cobra.Completion
		for _, n := range mcpserver.ToolNames() {
			if done == "" {
				out = append(out, n)
			} else {
				out = append(out, done+","+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	return c
}

// cutLast splits s around the last sep: "a,b,c" gives "a,b" and "c".
func cutLast(s, sep string) (before, after string) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):]
	}
	return "", s
}

// cleanList trims the names of a comma-separated flag and drops empty ones.
func cleanList(v []string) []string {
	var out []string
	for _, s := range v {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// serveMCPStdio serves one session on the command's stdin and stdout, until
// the client closes stdin or the process is interrupted.
func serveMCPStdio(ctx context.Context, cmd *cobra.Command, srv *mcpserver.Server) error {
	err := srv.Run(ctx, &mcp.IOTransport{
		Reader: io.NopCloser(cmd.InOrStdin()),
		Writer: nopWriteCloser{cmd.OutOrStdout()},
		// One message carries a whole file for write_file: allow what
		// the HTTP transport allows.
		MaxLineLength: 64 << 20,
	})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveMCPHTTP serves the streamable HTTP transport until interrupted.
func serveMCPHTTP(ctx context.Context, cmd *cobra.Command, srv *mcpserver.Server, a *core.Agent, addr string, withToken bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usageError(cmd, "bad address %q for --http: %v (want HOST:PORT, e.g. 127.0.0.1:8808)", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if !httpguard.LoopbackAddr(ln.Addr()) {
		if !withToken {
			ln.Close()
			return usageError(cmd, "serving MCP on %s, which is not a loopback address, needs a token: set AGENTFS_TOKEN or pass --token-file", ln.Addr())
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: warning: listening on %s, which is not a loopback address: anyone with the token who can reach this port can read and write the agent. Prefer TLS in front (a reverse proxy).\n", ln.Addr())
	}
	// Requests run under ctx: a signal cancels the scripts in flight.
	hs := &http.Server{Handler: srv.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: serving %s over MCP at http://%s/mcp (streamable HTTP; Ctrl-C stops)\n", a.Path(), ln.Addr())
	return serveUntilDone(ctx, hs, ln, 2*time.Second, nil)
}
