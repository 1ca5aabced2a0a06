package mount

import (
	"log"
	"time"
)

// FSType is the filesystem type of agentfs mounts in /proc/self/mounts.
const FSType = "fuse.agentfs"

// Defaults of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultPollInterval = 200 * time.Millisecond
	DefaultCommitDelay  = 10 * time.Millisecond
	MaxWrite            = 1 << 20
)

// Options configure a mount.
type Options struct {
	// FsName is the source shown in /proc/self/mounts (the database path).
	FsName string
	// UID and GID, when set, are reported as the owner of every file
	// instead of the owner stored in the database. New files are always
	// stored with the caller's uid and gid.
	UID, GID *uint32
	// AllowOther lets other users than the one mounting use the mount
	// (the kernel then checks permission bits: default_permissions).
	AllowOther bool
	// Timeout is how long the kernel caches entries, negative lookups and
	// attributes. The watcher invalidates them when another process
	// changes them; Timeout bounds what it does not check (see the
	// package comment). Default 10 s.
	Timeout time.Duration
	// PollInterval is how often the watcher looks for commits of other
	// processes. Default 200 ms; negative disables the watcher.
	PollInterval time.Duration
	// CommitDelay is the longest time consecutive operations share one
	// transaction before it commits (group commit, see the package
	// comment). Default 10 ms; negative commits every operation on its
	// own.
	CommitDelay time.Duration
	// NoWriteback turns the kernel's writeback cache off: every write(2)
	// is then sent at once.
	NoWriteback bool
	// Debug logs every FUSE request.
	Debug bool
	// Logger receives engine errors that have no errno (they become EIO)
	// and debug output. Default: the standard logger.
	Logger *log.Logger
}
