package vfs

import (
	"context"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// Remove is rm(1) in one transaction, as node:fs rm and the API's Remove:
// a file, symlink or special file is unlinked; a directory needs
// recursive (EISDIR otherwise) and is removed with everything below it; a
// missing path is an error (ENOENT) unless force.
func (f *FS) Remove(ctx context.Context, path string, recursive, force bool) error {
	return f.write(ctx, func(c *store.Conn) error {
		l, err := f.resolveEntry(c, "rm", path, false, syscall.EINVAL)
		if err != nil {
			if force && errnoOf(err) == syscall.ENOENT {
				return nil
			}
			return err
		}
		if l.ino == 0 {
			if force {
				return nil
			}
			return pathErr("rm", path, syscall.ENOENT)
		}
		now := time.Now()
		if !l.st.IsDir() {
			return f.removeEntry(c, l, now)
		}
		if !recursive {
			return pathErr("rm", path, syscall.EISDIR)
		}
		return f.removeTree(c, l, now)
	})
}
