package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(newServeCmd) }

// serveCommands makes the subcommands of "agentfs serve", one per protocol;
// each serve_*.go file adds its own with registerServe.
var serveCommands []func() *cobra.Command

func registerServe(f func() *cobra.Command) { serveCommands = append(serveCommands, f) }

func newServeCmd() *cobra.Command {
	var stdio bool
	c := &cobra.Command{
		Use:   "serve PROTOCOL ID_OR_PATH [flags] | serve --stdio",
		Short: "Serve an agent to other programs over a protocol",
		Long: `Serve an agent's database to other programs over a protocol, until
interrupted. Run "agentfs serve PROTOCOL --help" for the options of one.

"agentfs serve --stdio" is the engine of the TypeScript, Python and Rust
SDKs: they start it as a child process and speak the length-prefixed
protocol of spec/PROTOCOL.md on its standard input and output (the
database to open comes in the handshake). It is not meant to be run by
hand.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(c, "unknown protocol %q for %q", args[0], c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if stdio {
				return serveStdio(c)
			}
			return c.Help()
		},
	}
	c.Flags().BoolVar(&stdio, "stdio", false, "speak the SDKs' protocol on stdin/stdout (spec/PROTOCOL.md)")
	for _, f := range serveCommands {
		c.AddCommand(f())
	}
	return c
}

// listenTCP listens on addr (HOST:PORT; port 0 picks a free one) for a
// serve subcommand. A server reachable from other machines gives them the
// agent's data without authentication: binding to anything but a
// loopback address prints a warning on stderr.
func listenTCP(cmd *cobra.Command, addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, usageError(cmd, "bad address %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		fmt.Fprintf(cmd.ErrOrStderr(), "agentfs: warning: listening on %s, which is not a loopback address: anyone who can reach this port can read and write the agent's files, without authentication. Use 127.0.0.1:PORT to serve this machine only.\n", ln.Addr())
	}
	return ln, nil
}

// serveToken is the bearer token of an HTTP server: the content of
// --token-file when given, else $AGENTFS_TOKEN, else none.
func serveToken(cmd *cobra.Command, tokenFile string) (string, error) {
	if tokenFile == "" {
		return os.Getenv("AGENTFS_TOKEN"), nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", userError{msg: fmt.Sprintf("--token-file: %v", err), hint: "write the token into a file readable by this user only (chmod 600)"}
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usageError(cmd, "--token-file %s is empty", tokenFile)
	}
	return token, nil
}

// serveSignals returns a context that ends at the first SIGINT or
// SIGTERM, so that a server stops accepting and cancels the work in
// flight (scripts, queries); a second signal exits the process at once
// (status 130), for a shutdown that hangs. stop releases the signals.
func serveSignals(parent context.Context, w io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		cancel()
		select {
		case <-sig:
			fmt.Fprintln(w, "agentfs: second signal: exiting now")
			os.Exit(130)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// serveUntilDone serves hs on ln until it fails or ctx ends (the signal
// context of serveSignals), then shuts down: requests in flight get grace
// to finish, the rest are cut off (open event streams never end on their
// own). Requests run under ctx, so a signal also cancels their work.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration, onStop func()) error {
	hs.BaseContext = func(net.Listener) context.Context { return ctx }
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if onStop != nil {
		onStop()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// authNote says how a server's callers are checked, for its banner.
func authNote(token string) string {
	if token != "" {
		return "bearer token required"
	}
	return "no token (loopback only)"
}
