package cmd

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/schema"
)

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of agentfs and of the format it writes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "agentfs %s (AgentFS format %s, agentfs-go format %d, %s %s/%s)\n",
				Version, schema.AgentFSVersion, schema.FormatVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
