// Command agentfs is the command-line interface of AgentFS: an agent's
// filesystem, key-value store and tool-call log in one SQLite file.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/agentfs-go/agentfs/cli/internal/cmd"
)

func main() {
	os.Exit(run())
}

// run is main with a CPU profile of the whole command when
// AGENTFS_CPUPROFILE names a file (for `agentfs mount -f`, written when the
// mount ends): how the benchmarks find where a server's time goes.
func run() int {
	if p := os.Getenv("AGENTFS_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "agentfs: AGENTFS_CPUPROFILE: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "agentfs: AGENTFS_CPUPROFILE: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	return cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
