//go:build unix || js || wasip1

package sandbox

import (
	"syscall"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func sysStat(st vfs.Stat) any {
	return &syscall.Stat_t{Uid: st.UID, Gid: st.GID}
}
