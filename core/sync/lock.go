//go:build cgo

package sync

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes P-sync.lock for one sync operation: two syncs of one agent
// at once would both rewrite the base. The kernel drops the lock when
// the process dies (kill -9 included).
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path+"-sync.lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another sync of %s is running (EBUSY): wait for it to end", path)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
