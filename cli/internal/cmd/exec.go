package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(newExecCmd) }

func newExecCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "exec ID_OR_PATH -- CMD [ARG...]",
		Short: "Run a command inside an agent filesystem mounted on a temporary directory",
		Long: `Mount the agent filesystem on a new temporary directory, run CMD there
(it is the working directory; AGENTFS_MOUNT names it), unmount, and exit
with CMD's exit status (128+N when a signal N ended it). Signals sent to
agentfs are passed on to CMD.`,
		Example: `  agentfs exec my-agent -- ls -la
  agentfs exec my-agent -- sh -c 'make && ./test'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 || c.ArgsLenAtDash() != 1 {
				return usageError(c, "exec takes ID_OR_PATH, then -- and the command (agentfs exec my-agent -- ls)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAgent(cmd, args[0])
			if err != nil {
				return err
			}
			path := a.Path()
			a.Close()
			return execMounted(cmd, path, args[1:])
		},
	}
	return c
}

// execMounted mounts the database at path on a new temporary directory,
// runs argv there, unmounts, and returns CMD's exit status as an
// exitError (nil for 0). It is "agentfs exec" and "agentfs init -c".
func execMounted(cmd *cobra.Command, path string, argv []string) error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return userError{msg: "FUSE is not available: /dev/fuse is missing", hint: "modprobe fuse (in a container: run it with --device /dev/fuse)"}
	}
	// The server runs in "/".
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agentfs-exec-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	srv, err := startMountServer(path, dir, mountFlags{autoUnmount: true, uid: -1, gid: -1})
	if err != nil {
		return err
	}
	code, runErr := runIn(cmd, dir, argv)
	if err := unmountAndWait(dir, srv); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "agentfs: warning:", err)
	}
	if runErr != nil {
		return runErr
	}
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}

// runIn runs argv in dir with the CLI's standard streams and returns its
// exit code; signals sent to agentfs are forwarded.
func runIn(cmd *cobra.Command, dir string, argv []string) (int, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	c.Env = append(os.Environ(), "AGENTFS_MOUNT="+dir)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := c.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 0, exitError{code: 127, msg: fmt.Sprintf("%s: command not found", argv[0])}
		}
		return 0, exitError{code: 126, msg: err.Error()}
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				c.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := c.Wait()
	signal.Stop(sig)
	close(done)
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}

// unmountAndWait unmounts dir, waiting a little for programs that CMD
// left running to let go, and waits for the server to exit. A mount still
// busy after that is detached (the server ends with its last user).
func unmountAndWait(dir string, srv *exec.Cmd) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = unmountDir(dir, false); err == nil || !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if errors.Is(err, syscall.EBUSY) {
		err = unmountDir(dir, true)
		srv.Process.Release()
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	select {
	case werr := <-exited:
		if err == nil && werr != nil {
			err = fmt.Errorf("mount server: %w", werr)
		}
	case <-time.After(30 * time.Second):
		err = errors.New("mount server still running 30 s after unmount")
	}
	return err
}
