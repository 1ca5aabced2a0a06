//go:build linux

// Package mount serves an AgentFS filesystem to the kernel through FUSE
// (github.com/hanwen/go-fuse/v2). It is a thin translation: every request
// becomes one call of the inode-level API of core/vfs (Lookup, CreateAt,
// RenameAt, SetattrIno...), which implements the semantics and runs each
// operation as one transaction. Nothing here keeps file data or names of
// its own.
//
// # Kernel caching and the staleness bound
//
// The kernel caches directory entries, negative lookups and attributes
// for Timeout (10 s by default), directory listings, and file data in its
// page cache, with writeback caching (CAP_WRITEBACK_CACHE): writes are
// gathered in the page cache and sent in requests of up to 1 MiB
// (MaxWrite). Directories are listed without OPENDIR and RELEASEDIR
// (dirs.go).
//
// The database stays usable by other processes while mounted (the SDK,
// the CLI, another mount). A watcher polls the database's data version
// every PollInterval (200 ms); after a foreign commit it compares the
// inodes the kernel knows with the database and invalidates the changed
// ones (their page cache and listing, their attributes and, for regular
// files, whose size and times the kernel trusts over the server's under
// writeback caching, their directory entry so that the next lookup
// instantiates them afresh), and in a changed directory of up to 20,000
// entries the names that appeared, went or moved, negative entries
// included. So changes of other processes show within PollInterval plus
// the time to compare; Timeout is the bound where the watcher does not
// look: names in directories of more than 20,000 entries. One
// exception: the size of a regular file that is held open through the
// mount while another process changes it is the kernel's until the last
// descriptor is closed.
//
// In the other direction, operations through the mount share
// transactions (group commit, Options.CommitDelay, 10 ms by default): a
// commit costs ten times the statements of a small operation, and
// programs such as tar send a dozen operations per file. Each operation
// stays atomic; the group commits at the latest CommitDelay after it
// began, and at once at close(2) and fsync(2) of a file (the kernel sends
// a file's dirty pages first), so what a program closed is in the database
// when close returns. Metadata changes (mkdir, rename, unlink, chmod...)
// thus reach other processes within CommitDelay. File data kept open is
// committed when the kernel flushes its cache: fsync(2), msync(2), or
// after its dirty-page writeback delay (vm.dirty_expire_centisecs). A
// crash of the server loses at most the open group. A group whose COMMIT
// fails (disk full, I/O error) is rolled back whole: the server logs it
// and the next close(2) or fsync(2) through the mount fails with EIO, as
// a failed writeback of a kernel file system is reported.
//
// # Parallelism
//
// go-fuse serves requests concurrently and this package holds no lock of
// its own on the request path. Metadata operations queue on the engine's
// primary connection (SQLite has one writer at a time); reads of 64 KiB and
// more run on the engine's reader connections, in parallel.
package mount

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// opCtx is the context of the engine operations a FUSE request runs: the
// request's, without its cancellation. The kernel sends INTERRUPT for any
// signal the calling thread receives (Go programs get SIGURG, the
// runtime's preemption signal, many times a second), and a cancelled
// operation could only answer EINTR, which few programs retry on open or
// stat. So an operation runs to its end and the kernel takes that reply,
// as FUSE allows; each one is short (a read is bounded by its size).
func opCtx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// Server is a mounted filesystem.
type Server struct {
	fs   *vfs.FS
	dir  string
	opts Options
	srv  *fuse.Server
	root *node

	seen sync.Map // ino -> stamp: what the kernel was last told
	// xattrNeg remembers security.* attributes found missing: the kernel
	// asks for security.capability before writes, once per attribute
	// refresh. Own setxattrs delete entries; the watcher clears it all
	// after a commit of another process.
	xattrNeg sync.Map // xattrKey -> struct{}

	statfsMu   sync.Mutex
	statfsLast vfs.FSStat
	statfsAt   time.Time

	stop     chan struct{}
	stopOnce sync.Once
	watchers sync.WaitGroup
}

// Mount mounts fsys on dir and serves it until Unmount (or an unmount
// from outside, e.g. fusermount3 -u or umount). The mount is ready when
// Mount returns.
func Mount(dir string, fsys *vfs.FS, opts Options) (*Server, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.CommitDelay == 0 {
		opts.CommitDelay = DefaultCommitDelay
	}
	if opts.Logger == nil {
		opts.Logger = log.Default()
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("mount %s: FUSE is not available (%w); load the fuse module or run where /dev/fuse exists", abs, err)
	}
	s := &Server{fs: fsys, dir: abs, opts: opts, stop: make(chan struct{})}
	s.root = &node{s: s, ino: vfs.RootIno}
	timeout := opts.Timeout
	mo := fuse.MountOptions{
		FsName:        opts.FsName,
		Name:          "agentfs",
		AllowOther:    opts.AllowOther,
		MaxWrite:      MaxWrite,
		MaxBackground: 64,
		// As root the mount(2) system call is used directly; otherwise
		// go-fuse falls back to fusermount3 (Debian's fuse3).
		DirectMount: true,
		// The kernel checks permission bits against the attributes
		// (and never sends ACCESS): required with allow_other, and what
		// programs expect of a local filesystem.
		Options: []string{"default_permissions"},
		// Replies carry data from memory: splicing gains nothing, and
		// go-fuse would log a failed attempt for every 1 MiB read (the
		// reply is larger than a pipe).
		DisableSplice: true,
		// Symlink targets never change (a new target is a new inode), so
		// the kernel may keep them: a path through node_modules/.bin no
		// longer costs a READLINK per use. The watcher's invalidation
		// drops them with the rest of a changed inode's cache.
		EnableSymlinkCaching: true,
		Debug:                opts.Debug,
		Logger:               opts.Logger,
		// This server clears set-user-ID and set-group-ID bits itself
		// (killPriv in node.go). Otherwise the kernel asks for the
		// security.capability attribute before every write and chown and
		// for the attributes before every chown: three to four extra
		// round trips for each file that tar or cp -a writes.
		ExtraCapabilities: fuse.CAP_HANDLE_KILLPRIV | fuse.CAP_HANDLE_KILLPRIV_V2,
	}
	if !opts.NoWriteback {
		mo.ExtraCapabilities |= fuse.CAP_WRITEBACK_CACHE
	}
	if opts.FsName == "" {
		mo.FsName = "agentfs"
	}
	fo := &fs.Options{
		MountOptions:    mo,
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		NullPermissions: true, // a mode of 000 is 000
		RootStableAttr:  &fs.StableAttr{Ino: uint64(vfs.RootIno)},
		Logger:          opts.Logger,
	}
	if opts.CommitDelay > 0 {
		// Programs were told the operations of a lost group happened:
		// say so (close and fsync of the next file report it as EIO).
		fsys.OnGroupLost(func(err error) { opts.Logger.Printf("agentfs mount: %v", err) })
		fsys.SetGroupCommit(opts.CommitDelay)
	}
	raw := &rawFS{RawFileSystem: fs.NewNodeFS(s.root, fo), noOpendir: opts.PollInterval > 0}
	srv, err := fuse.NewServer(raw, abs, &fo.MountOptions)
	if err == nil {
		raw.srv = srv
		go srv.Serve()
		err = srv.WaitMount()
	}
	if err != nil {
		fsys.SetGroupCommit(0)
		return nil, fmt.Errorf("mount %s: %w", abs, err)
	}
	s.srv = srv
	raiseReadahead(abs)
	if opts.PollInterval > 0 {
		s.watchers.Add(1)
		go s.watch()
	}
	return s, nil
}

// readaheadKB is the kernel's readahead for the mount: large sequential
// reads then arrive as requests of MaxWrite (1 MiB) instead of the
// default 128 KiB, an eighth of the statements and round trips.
const readaheadKB = MaxWrite >> 10

// raiseReadahead sets the readahead of the mount's backing device
// (/sys/class/bdi/MAJOR:MINOR/read_ahead_kb). The FUSE handshake can only
// lower it; writing the file needs root, so elsewhere this does nothing.
func raiseReadahead(dir string) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return
	}
	dev := uint64(st.Dev)
	major, minor := (dev>>8)&0xfff|(dev>>32)&^0xfff, dev&0xff|(dev>>12)&^0xff
	os.WriteFile(fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", major, minor), []byte(fmt.Sprint(readaheadKB)), 0)
}

// Dir is the mount point.
func (s *Server) Dir() string { return s.dir }

// Wait blocks until the filesystem is unmounted.
func (s *Server) Wait() {
	s.srv.Wait()
	s.stopWatcher()
	s.fs.SetGroupCommit(0) // commits the last group
}

// Unmount unmounts the filesystem; it fails with EBUSY while it is in use.
// Wait returns afterwards.
func (s *Server) Unmount() error {
	err := s.srv.Unmount()
	if err == nil {
		s.stopWatcher()
		s.fs.SetGroupCommit(0)
	}
	return err
}

func (s *Server) stopWatcher() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.watchers.Wait()
}

// errno turns an engine error into the errno of the reply. Errors without
// one (database failures) are logged and answered with EIO.
func (s *Server) errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e := vfs.Errno(err); e != 0 {
		return e
	}
	switch {
	case errors.Is(err, store.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, store.ErrBusy):
		s.opts.Logger.Printf("agentfs mount: %v", err)
		return syscall.EBUSY
	}
	s.opts.Logger.Printf("agentfs mount: %v", err)
	return syscall.EIO
}

type xattrKey struct {
	ino  int64
	name string
}

func (s *Server) noXattr(ino int64, name string) bool {
	_, ok := s.xattrNeg.Load(xattrKey{ino, name})
	return ok
}

// stamp is what identifies a state of an inode for the watcher.
type stamp struct {
	size         int64
	mtime, ctime int64 // nanoseconds
	nlink        uint32
}

func stampOf(st vfs.Stat) stamp {
	return stamp{st.Size, st.Mtime.UnixNano(), st.Ctime.UnixNano(), st.Nlink}
}

// told records the attributes given to the kernel for an inode.
func (s *Server) told(st vfs.Stat) {
	if s.opts.PollInterval > 0 {
		s.seen.Store(st.Ino, stampOf(st))
	}
}

// watch polls for commits of other connections and invalidates what the
// kernel caches of the inodes they changed.
func (s *Server) watch() {
	defer s.watchers.Done()
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	last, err := s.fs.Changes(context.Background())
	if err != nil {
		s.opts.Logger.Printf("agentfs mount: watcher: %v", err)
	}
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		n, err := s.fs.Changes(context.Background())
		if err != nil || n == last {
			continue
		}
		last = n
		s.xattrNeg.Clear()
		s.invalidate()
	}
}

// known is an inode the kernel holds under a name.
type known struct {
	parent, child *fs.Inode
	name          string
}

// invalidate compares every inode the kernel holds with the database and
// drops the kernel's caches of those that changed.
func (s *Server) invalidate() {
	var list []known
	var walk func(dir *fs.Inode, depth int)
	walk = func(dir *fs.Inode, depth int) {
		if depth > vfs.PathMax/2 {
			return
		}
		for name, ch := range dir.Children() {
			list = append(list, known{dir, ch, name})
			if ch.StableAttr().Mode&syscall.S_IFMT == syscall.S_IFDIR {
				walk(ch, depth+1)
			}
		}
	}
	rootInode := s.root.EmbeddedInode()
	walk(rootInode, 0)
	inos := make([]int64, 0, len(list)+1)
	inos = append(inos, vfs.RootIno)
	for _, k := range list {
		inos = append(inos, int64(k.child.StableAttr().Ino))
	}
	cur, err := s.fs.StatInos(context.Background(), inos)
	if err != nil {
		s.opts.Logger.Printf("agentfs mount: watcher: %v", err)
		return
	}
	changed := func(ino int64) (vfs.Stat, bool) {
		st, ok := cur[ino]
		if !ok {
			return st, true
		}
		old, ok := s.seen.Load(ino)
		if !ok || old.(stamp) != stampOf(st) {
			s.seen.Store(ino, stampOf(st))
			return st, true
		}
		return st, false
	}
	var dirs []*fs.Inode // changed directories
	if _, ch := changed(vfs.RootIno); ch {
		rootInode.NotifyContent(0, 0)
		dirs = append(dirs, rootInode)
	}
	done := map[uint64]bool{}
	for _, k := range list {
		ino := int64(k.child.StableAttr().Ino)
		st, exists := cur[ino]
		if !exists {
			// Removed by another process: forget the name.
			k.parent.NotifyEntry(k.name)
			continue
		}
		ch, seen := done[uint64(ino)]
		if !seen {
			_, ch = changed(ino)
			done[uint64(ino)] = ch
			if ch {
				k.child.NotifyContent(0, 0)
				if st.IsDir() {
					dirs = append(dirs, k.child)
				}
			}
		}
		if ch && st.IsRegular() {
			// Under writeback caching the kernel keeps its own size and
			// times of a cached file: drop the entry so that an inode
			// nobody holds open is instantiated afresh.
			k.parent.NotifyEntry(k.name)
		}
	}
	for _, d := range dirs {
		s.syncEntries(d)
	}
}

// maxSyncEntries bounds the listings syncEntries reads; larger directories
// rely on the entry timeouts.
const maxSyncEntries = 20000

// syncEntries drops the kernel's entries of a changed directory that no
// longer match the database: names that appeared (the kernel may cache
// them as absent), names that went or now lead to another inode.
func (s *Server) syncEntries(dir *fs.Inode) {
	if len(dir.Children()) > maxSyncEntries {
		return
	}
	entries, err := s.fs.ReaddirPlusIno(context.Background(), int64(dir.StableAttr().Ino))
	if err != nil || len(entries) > maxSyncEntries {
		return
	}
	known := dir.Children()
	for _, e := range entries {
		ch, ok := known[e.Name]
		if !ok || ch.StableAttr().Ino != uint64(e.Stat.Ino) {
			dir.NotifyEntry(e.Name)
		}
		delete(known, e.Name)
	}
	for name := range known {
		dir.NotifyEntry(name)
	}
}
