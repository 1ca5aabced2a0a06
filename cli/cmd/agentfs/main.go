// Command agentfs is the command-line interface of AgentFS: an agent's
// filesystem, key-value store and tool-call log in one SQLite file.
package main

import (
	"os"

	"github.com/agentfs-go/agentfs/cli/internal/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
