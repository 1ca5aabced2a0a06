package cmd

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/mount"
)

func init() { register(newUmountCmd) }

func newUmountCmd() *cobra.Command {
	var lazy bool
	c := &cobra.Command{
		Use:   "umount DIR",
		Short: "Unmount an agent filesystem mounted with agentfs mount",
		Long: `Unmount the agentfs mount on DIR. The server that was serving it writes
what remains and exits. A mount in use (an open file, a shell inside it)
is refused unless --lazy, which detaches it at once and ends the server
when the last user is gone.`,
		Example: `  agentfs umount /mnt/agent`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := unmountDir(args[0], lazy)
			switch {
			case errors.Is(err, mount.ErrNotMounted):
				return userError{msg: fmt.Sprintf("%s is not an agentfs mount", args[0]), hint: "list mounts with: agentfs mount"}
			case errors.Is(err, syscall.EBUSY):
				return userError{msg: fmt.Sprintf("%s is in use (EBUSY)", args[0]), hint: fmt.Sprintf("close what uses it (fuser -vm %s), or agentfs umount --lazy %s", args[0], args[0])}
			}
			return err
		},
	}
	c.Flags().BoolVarP(&lazy, "lazy", "l", false, "detach now even if in use")
	return c
}
