// Package core is the AgentFS engine: one SQLite database file holding an
// agent's filesystem, key-value store and tool-call log.
//
//	a, err := core.Open(ctx, ".agentfs/my-agent.db", core.Options{})
//	defer a.Close()
//	a.FS.WriteFile("/notes.md", []byte("hi"), vfs.WriteOptions{})
//	a.KV.Set(ctx, "step", 3)
//	id, _ := a.Tools.Start(ctx, "search", nil)
package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Options configure Open.
type Options struct {
	// Create makes the database when the file does not exist. Without it,
	// opening a missing file fails with an error wrapping fs.ErrNotExist.
	Create bool
	// ChunkSize of a new database (default 4096, as agentfs-sdk).
	ChunkSize int
	// PageSize of a new database file (SQLite's 4096 when 0; a power of two
	// from 512 to 65536). Larger pages store small files more compactly
	// (8192: database 1.28x the data of 10k 1 KiB files instead of 1.46x)
	// but every commit writes bigger pages (about 40% fewer small writes
	// per second); see docs/BENCHMARKS.md.
	PageSize int
	// Durability of commits (default: atomic, fsync at checkpoints).
	Durability store.Durability
	// ReadOnly opens for queries only.
	ReadOnly bool
	// FS options: owner of new files, umask.
	FS vfs.Options
	// Base makes a NEW database the delta layer of an overlay over this
	// host directory (copy-on-write: reads fall through to it, writes go
	// to the database; see package overlay). An existing overlay database
	// opens as an overlay without it; given for an existing database, it
	// must name the same directory.
	Base string
}

// Agent is an open agent database.
type Agent struct {
	DB    *store.DB
	FS    *vfs.FS
	KV    *kv.Store
	Tools *toolcalls.Log
	Info  schema.Info
}

// ErrNeedsMigration is returned when the database has an older layout.
var ErrNeedsMigration = schema.ErrNeedsMigration

// Open opens the database at path.
func Open(ctx context.Context, path string, opts Options) (*Agent, error) {
	if ps := opts.PageSize; ps != 0 && (ps < 512 || ps > 65536 || ps&(ps-1) != 0) {
		return nil, fmt.Errorf("page size %d: must be a power of two from 512 to 65536", ps)
	}
	statErr := store.Stat(path)
	if statErr != nil {
		if !errors.Is(statErr, fs.ErrNotExist) || !opts.Create || opts.ReadOnly {
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
		}
	}
	db, err := store.Open(ctx, path, store.Options{Durability: opts.Durability, ReadOnly: opts.ReadOnly, PageSize: opts.PageSize})
	if err != nil {
		return nil, err
	}
	a := &Agent{DB: db}
	if opts.Base != "" {
		if opts.Base, err = filepath.Abs(opts.Base); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := a.prepare(ctx, opts); err != nil {
		db.Close()
		return nil, err
	}
	fsOpts := opts.FS
	fsOpts.Base = ""
	if !opts.ReadOnly {
		// A read-only open shows the delta layer alone: copying base
		// entries up needs to write.
		fsOpts.Base = a.Info.OverlayBase
	}
	a.FS = vfs.New(db, a.Info.ChunkSize, fsOpts)
	if !opts.ReadOnly {
		// Staging inodes of atomic writes whose process was killed are
		// garbage (vfs/atomic.go). One query when there are none; a
		// failure (another writer holding the lock past the busy
		// timeout) leaves them to the next staged write, which reclaims
		// them too, and must not make the agent unusable.
		_, _ = a.FS.ReclaimStaging()
	}
	a.KV = kv.New(db)
	a.Tools = toolcalls.New(db)
	return a, nil
}

func (a *Agent) prepare(ctx context.Context, opts Options) error {
	var info schema.Info
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		var err error
		info, err = schema.Inspect(c)
		return err
	})
	if err != nil {
		return fmt.Errorf("open %s: %w", a.DB.Path(), err)
	}
	switch {
	case info.Current():
	case info.AgentFSVersion == "" && info.OtherTables:
		return fmt.Errorf("open %s: %w", a.DB.Path(), ErrNotAgentFS)
	case info.AgentFSVersion == "" && (info.OtherTables || !opts.Create || opts.ReadOnly):
		return fmt.Errorf("open %s: %w", a.DB.Path(), ErrNotAgentFS)
	case info.AgentFSVersion != "" && schema.Newer(info.AgentFSVersion):
		return fmt.Errorf("open %s: %w (AgentFS %s); upgrade agentfs", a.DB.Path(), schema.ErrTooNew, info.AgentFSVersion)
	case info.AgentFSVersion == "":
		err = a.DB.Write(ctx, func(c *store.Conn) error {
			if err := schema.Create(c, opts.ChunkSize); err != nil {
				return err
			}
			if opts.Base != "" {
				return vfs.InitOverlay(c, opts.Base)
			}
			return nil
		})
		if err != nil {
			return err
		}
	case schema.NeedsOnlyExtensions(info) && !opts.ReadOnly:
		// An AgentFS 0.4 database from another tool: adding our own
		// tables is invisible to it, so do it without asking.
		steps, err := schema.Plan(info)
		if err != nil {
			return err
		}
		if err := a.DB.Write(ctx, func(c *store.Conn) error { return schema.Apply(c, steps) }); err != nil {
			return err
		}
	case info.FormatVersion > schema.FormatVersion:
		return fmt.Errorf("open %s: %w (format %d); upgrade agentfs", a.DB.Path(), schema.ErrTooNew, info.FormatVersion)
	case info.AgentFSVersion == schema.AgentFSVersion && opts.ReadOnly:
		// Readable as is.
	default:
		return fmt.Errorf("open %s: %w: it has AgentFS layout %s, this build uses %s", a.DB.Path(), schema.ErrNeedsMigration, info.AgentFSVersion, schema.AgentFSVersion)
	}
	err = a.DB.Do(ctx, func(c *store.Conn) error {
		var err error
		a.Info, err = schema.Inspect(c)
		return err
	})
	if err != nil {
		return err
	}
	if opts.Base != "" && a.Info.OverlayBase != opts.Base {
		if a.Info.OverlayBase == "" {
			return fmt.Errorf("open %s: %w: it is not an overlay (use a new database for --base)", a.DB.Path(), ErrOverlay)
		}
		return fmt.Errorf("open %s: %w: its base directory is %s, not %s", a.DB.Path(), ErrOverlay, a.Info.OverlayBase, opts.Base)
	}
	if a.Info.OverlayBase != "" && !opts.ReadOnly {
		if _, err := os.Stat(a.Info.OverlayBase); err != nil {
			return fmt.Errorf("open %s: %w: base directory: %w", a.DB.Path(), ErrOverlay, err)
		}
		// A delta made by another tool lacks this project's records.
		var ok bool
		if err := a.DB.Do(ctx, func(c *store.Conn) (err error) { ok, err = vfs.HasOverlayRoot(c); return err }); err != nil || ok {
			return err
		}
		return a.DB.Write(ctx, func(c *store.Conn) error { return vfs.EnsureOverlayRoot(c, a.Info.OverlayBase) })
	}
	return nil
}

// ErrNotAgentFS is returned for a file that is not an AgentFS database.
var ErrNotAgentFS = errors.New("not an AgentFS database (it has other tables, or is empty and Create was not set)")

// ErrOverlay is returned when an overlay database does not match the
// base directory asked for, or its base directory is missing.
var ErrOverlay = errors.New("overlay mismatch")

// Close closes the database.
func (a *Agent) Close() error { return a.DB.Close() }

// Path is the database file.
func (a *Agent) Path() string { return a.DB.Path() }

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidID reports whether s is a valid agent id: letters, digits, "_", "-".
func ValidID(s string) bool { return idPattern.MatchString(s) }

// DefaultDir is where agent databases live, relative to the working
// directory, as with agentfs-sdk.
const DefaultDir = ".agentfs"

// Version is the engine's version, reported by the CLI and in the stdio
// handshake. Release builds set it with
// -ldflags "-X github.com/agentfs-go/agentfs/core.Version=...".
var Version = "0.1.0-dev"

// PathForID returns the database path of an agent id.
func PathForID(id string) string { return filepath.Join(DefaultDir, id+".db") }

// ResolveIDOrPath maps a command-line argument to a database path: a valid
// id whose database exists under .agentfs, or else a path. A bare id that
// exists nowhere resolves to its .agentfs path.
func ResolveIDOrPath(s string) string {
	if ValidID(s) {
		p := PathForID(s)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if _, err := os.Stat(s); err == nil {
			return s
		}
		return p
	}
	return s
}

// Checkpoint moves every committed change from the WAL into the database
// file and empties the WAL, so the file can be copied on its own.
func (a *Agent) Checkpoint(ctx context.Context) error { return a.DB.Checkpoint(ctx) }
