//go:build !linux

package cmd

import "github.com/spf13/cobra"

func runSession(cmd *cobra.Command, cfg runConfig) error {
	return userError{msg: "agentfs run needs Linux (user and mount namespaces)", hint: "agentfs sh ID runs commands in the in-process sandbox (any system); agentfs exec ID -- CMD runs them in a mount without a sandbox (Linux, macOS)"}
}

func runStageInit(cmd *cobra.Command) error { return runSession(cmd, runConfig{}) }
func runStageExec(cmd *cobra.Command) error { return runSession(cmd, runConfig{}) }

func fuseUsable() error { return runSession(nil, runConfig{}) }
