//go:build !(unix || js || wasip1)

package sandbox

import "github.com/agentfs-go/agentfs/core/vfs"

func sysStat(vfs.Stat) any { return nil }
