package sync

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/agentfs-go/agentfs/core"
)

// Prepare readies the database at path for an open that names the sync
// remote rawURL (an SDK's "open with a sync remote"): a missing database
// is bootstrapped from the remote (when opts.Create), an existing one
// must be synced with rawURL already. Every SDK reaches it through the
// engine, so "open with a remote" means the same everywhere.
func Prepare(ctx context.Context, path, rawURL string, o Options, opts core.Options) error {
	if _, err := os.Stat(path); err == nil {
		m, err := ReadMeta(path)
		if err != nil {
			return err
		}
		if m.RemoteURL != rawURL {
			return fmt.Errorf("%s is synced with %s, not %s (EINVAL): a database has one sync remote; open it without a sync URL, or open another path", path, m.RemoteURL, rawURL)
		}
		setPartialToken(path, o.Token)
		return nil
	}
	if !opts.Create {
		return &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	if o.Encryption == nil {
		o.Encryption = opts.Encryption
	}
	return Bootstrap(ctx, path, rawURL, o, opts)
}

// Sync pulls, then pushes (a push pulls again before and after sending).
func Sync(ctx context.Context, path string, o Options) (PullResult, PushResult, error) {
	pr, err := Pull(ctx, path, o)
	if err != nil {
		return pr, PushResult{}, err
	}
	res, err := Push(ctx, path, o)
	return pr, res, err
}
