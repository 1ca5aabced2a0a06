//go:build unix || js || wasip1

package sandbox

import (
	"os"
	"syscall"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func sysStat(st vfs.Stat) any {
	return &syscall.Stat_t{Uid: st.UID, Gid: st.GID}
}

// pipeKey identifies the host pipe behind f (its inode), so that a
// redirected stdin can be matched with the agent file that feeds it.
func pipeKey(f *os.File) (uint64, bool) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}
