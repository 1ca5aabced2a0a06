//go:build !linux

package cmd

import "github.com/spf13/cobra"

func runSession(cmd *cobra.Command, cfg runConfig) error {
	return userError{msg: "agentfs run needs Linux (user and mount namespaces)", hint: "agentfs exec ID -- CMD mounts an agent without a sandbox; agentfs sh ID runs the in-process sandbox"}
}

func runStageInit(cmd *cobra.Command) error { return runSession(cmd, runConfig{}) }
func runStageExec(cmd *cobra.Command) error { return runSession(cmd, runConfig{}) }

func fuseUsable() error { return runSession(nil, runConfig{}) }
