package cmd

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/rpc"
)

// serveStdio runs the SDK engine on stdin/stdout until the client shuts it
// down or goes away. A refused handshake exits with status 2 (the client
// got the reason in the protocol).
func serveStdio(cmd *cobra.Command) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// SIGPIPE on a vanished client must not kill the engine before it
	// closes the database.
	signal.Ignore(syscall.SIGPIPE)
	err := rpc.ServeStdio(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), Version)
	if errors.Is(err, rpc.ErrHandshake) {
		return exitError{code: 2}
	}
	return err
}
