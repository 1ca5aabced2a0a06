package nfsserver

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	nfs "github.com/willscott/go-nfs"
	"github.com/willscott/go-nfs/helpers"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// HandleLimit is how many NFS file handles the server remembers. go-nfs
// names a file by path; its caching handler hands out a random handle per
// path and keeps the mapping in an LRU of this size. A handle stays valid
// while the server runs and the path is among the HandleLimit most
// recently used; an older one, or any handle after a restart, answers
// NFS3ERR_STALE and the client looks the path up again.
const HandleLimit = 1 << 18

// Options tune Serve.
type Options struct {
	// HandleLimit overrides the package's HandleLimit when > 0.
	HandleLimit int
}

// Serve serves the agent's filesystem over NFSv3 (MOUNT and NFS on the
// same port) on ln until ctx ends, then closes ln and returns nil.
// Connections in progress end with the process.
func Serve(ctx context.Context, ln net.Listener, a *core.Agent) error {
	return ServeFS(ctx, ln, a.FS, Options{})
}

// ServeFS is Serve for an engine filesystem.
func ServeFS(ctx context.Context, ln net.Listener, fsys *vfs.FS, opts Options) error {
	quietLogs()
	limit := opts.HandleLimit
	if limit <= 0 {
		limit = HandleLimit
	}
	h := helpers.NewCachingHandler(&handler{fs: NewFS(fsys), vfs: fsys}, limit)
	srv := &nfs.Server{Handler: h, Context: ctx}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	err := srv.Serve(ln)
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

var logOnce sync.Once

// quietLogs keeps go-nfs's logger to errors that matter: at its default
// level it reports every lookup of a missing name. AGENTFS_NFS_DEBUG=1
// shows everything.
func quietLogs() {
	logOnce.Do(func() {
		if os.Getenv("AGENTFS_NFS_DEBUG") != "" {
			nfs.Log.SetLevel(nfs.TraceLevel)
			return
		}
		nfs.Log.SetLevel(nfs.FatalLevel)
	})
}

// handler answers every MOUNT request with the whole filesystem, without
// authentication (AUTH_NULL), as go-nfs's NullAuthHandler, and reports the
// engine's statfs.
type handler struct {
	fs  *FS
	vfs *vfs.FS
}

// Mount exports every directory: the client's mount path (libnfs takes
// the directory part of its URL) becomes the root of what it sees.
func (h *handler) Mount(_ context.Context, _ net.Conn, req nfs.MountRequest) (nfs.MountStatus, billy.Filesystem, []nfs.AuthFlavor) {
	auth := []nfs.AuthFlavor{nfs.AuthFlavorNull}
	dir := path.Clean("/" + string(req.Dirpath))
	if dir == "/" {
		return nfs.MountStatusOk, h.fs, auth
	}
	sub, err := h.fs.Chroot(dir)
	switch {
	case err == nil:
		return nfs.MountStatusOk, sub, auth
	case errors.Is(err, fs.ErrNotExist):
		return nfs.MountStatusErrNoEnt, nil, nil
	case vfs.Errno(err) == syscall.ENOTDIR:
		return nfs.MountStatusErrNotDir, nil, nil
	case errors.Is(err, fs.ErrPermission):
		return nfs.MountStatusErrAcces, nil, nil
	}
	return nfs.MountStatusErrIO, nil, nil
}

// Change returns the filesystem itself: without a billy.Change go-nfs
// serves the export read-only.
func (h *handler) Change(fs billy.Filesystem) billy.Change {
	if c, ok := fs.(billy.Change); ok {
		return c
	}
	return nil
}

func (h *handler) FSStat(_ context.Context, _ billy.Filesystem, s *nfs.FSStat) error {
	st, err := h.vfs.Statfs(context.Background())
	if err != nil {
		return err
	}
	bs := uint64(max(st.BlockSize, 1))
	s.TotalSize = uint64(max(st.Blocks, 0)) * bs
	s.FreeSize = uint64(max(st.BlocksFree, 0)) * bs
	s.AvailableSize = s.FreeSize
	s.TotalFiles = uint64(max(st.Files+st.FilesFree, 0))
	s.FreeFiles = uint64(max(st.FilesFree, 0))
	s.AvailableFiles = s.FreeFiles
	// Other processes may change the database: ask clients not to trust
	// attributes for long.
	s.CacheHint = time.Second
	return nil
}

// Handles are the caching handler's (it wraps this one).
func (h *handler) ToHandle(billy.Filesystem, []string) []byte            { return nil }
func (h *handler) FromHandle([]byte) (billy.Filesystem, []string, error) { return nil, nil, nil }
func (h *handler) InvalidateHandle(billy.Filesystem, []byte) error       { return nil }
func (h *handler) HandleLimit() int                                      { return -1 }
