//go:build !(unix || js || wasip1)

package sandbox

import (
	"os"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func sysStat(vfs.Stat) any { return nil }

func pipeKey(*os.File) (uint64, bool) { return 0, false }
