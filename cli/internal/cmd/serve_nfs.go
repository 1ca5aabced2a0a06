package cmd

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/nfsserver"
)

func init() { registerServe(newServeNFSCmd) }

func newServeNFSCmd() *cobra.Command {
	var bind string
	var port int
	c := &cobra.Command{
		Use:   "nfs ID_OR_PATH",
		Short: "Serve an agent's filesystem over NFSv3",
		Long: `Serve an agent's filesystem over NFS version 3 (MOUNT and NFS on one TCP
port, no portmapper), until interrupted (Ctrl-C or SIGTERM).

Every directory is exported: a client mounting /dir sees /dir as its
root. There is no authentication (AUTH_NULL) and no locking (NLM): anyone
who can reach the port can read and write the agent's files, so the
default is to listen on 127.0.0.1 only; any other --bind prints a warning.

File handles are valid while the server runs (the most recent 262144
paths); after a restart clients must look paths up again (NFS3ERR_STALE).

With libnfs (Debian libnfs-utils):

  agentfs serve nfs my-agent --port 11111
  nfs-ls  'nfs://127.0.0.1/?version=3&nfsport=11111&mountport=11111&auto-traverse-mounts=0'
  nfs-cat 'nfs://127.0.0.1//notes.md?version=3&nfsport=11111&mountport=11111&auto-traverse-mounts=0'
  nfs-cp  ./local.txt 'nfs://127.0.0.1//local.txt?version=3&nfsport=11111&mountport=11111&auto-traverse-mounts=0'

With a kernel NFS client (Linux):

  mount -t nfs -o vers=3,proto=tcp,port=11111,mountport=11111,mountproto=tcp,nolock 127.0.0.1:/ /mnt`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			if port < 0 || port > 65535 {
				return usageError(cmd, "--port must be from 0 to 65535 (0 picks a free port), not %d", port)
			}
			ctx, stop := serveSignals(cmd.Context(), cmd.ErrOrStderr())
			defer stop()
			return withAgent(cmd, args[0], core.Options{}, func(a *core.Agent) error {
				ln, err := listenTCP(cmd, net.JoinHostPort(bind, strconv.Itoa(port)))
				if err != nil {
					return err
				}
				addr := ln.Addr().(*net.TCPAddr)
				host := addr.IP.String()
				if addr.IP.IsUnspecified() {
					host = "HOST"
				} else if addr.IP.To4() == nil {
					host = "[" + host + "]"
				}
				q := fmt.Sprintf("?version=3&nfsport=%d&mountport=%d&auto-traverse-mounts=0", addr.Port, addr.Port)
				w := cmd.ErrOrStderr()
				fmt.Fprintf(w, "agentfs: serving %s over NFSv3 at %s (Ctrl-C stops)\n", a.Path(), ln.Addr())
				fmt.Fprintf(w, "  libnfs URL:  nfs://%s/%s\n", host, q)
				fmt.Fprintf(w, "  a file:      nfs://%s//FILE%s\n", host, q)
				fmt.Fprintf(w, "  Linux mount: mount -t nfs -o vers=3,proto=tcp,port=%d,mountport=%d,mountproto=tcp,nolock %s:/ DIR\n", addr.Port, addr.Port, host)
				return nfsserver.Serve(ctx, ln, a)
			})
		},
	}
	c.Flags().StringVar(&bind, "bind", "127.0.0.1", "address to listen on; anything but loopback lets other machines read and write, without authentication")
	c.Flags().IntVar(&port, "port", 11111, "TCP port for both MOUNT and NFS (0 picks a free one)")
	return c
}
