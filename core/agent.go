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
	// Encryption keeps the database encrypted at rest in the format of
	// Turso's engine (see store.Encryption); nil for a plain database.
	Encryption *store.Encryption
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
//
// A file that Open refuses is left exactly as it was: options are checked
// before any file is touched, and an existing file is first inspected
// through a read-only connection (a writable open alone would switch a
// foreign SQLite file to WAL mode and give an empty file its first page).
// A new database is built under a temporary name beside path and linked
// into place whole, so a failed Create leaves no file behind.
func Open(ctx context.Context, path string, opts Options) (*Agent, error) {
	if err := CheckOptions(opts); err != nil {
		return nil, err
	}
	if opts.Base != "" {
		abs, err := filepath.Abs(opts.Base)
		if err != nil {
			return nil, err
		}
		opts.Base = abs
	}
	created := false
	if err := store.Stat(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, statError(path, err)
		}
		if !opts.Create || opts.ReadOnly {
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
		}
		if created, err = create(ctx, path, opts); err != nil {
			return nil, err
		}
	}
	var db *store.DB
	var info schema.Info
	if !created {
		// A file this call did not write is inspected before anything
		// opens it for writing. One it has just written holds this
		// build's schema and nothing else: the probe (a read-only
		// connection and an inspection, about 0.5 ms of a cold start)
		// would learn nothing. prepare still inspects it under the
		// writable connection, as it does any file.
		var err error
		if db, info, err = probe(ctx, path, opts); err != nil {
			return nil, err
		}
	}
	if db == nil {
		// Writable: everything that could refuse the file has been
		// checked through the read-only connection.
		var err error
		db, err = store.Open(ctx, path, store.Options{Durability: opts.Durability, PageSize: opts.PageSize, Encryption: opts.Encryption})
		if err != nil {
			return nil, err
		}
	}
	a := &Agent{DB: db, Info: info}
	if !opts.ReadOnly {
		if err := a.prepare(ctx, opts); err != nil {
			db.Close()
			return nil, err
		}
	}
	fsOpts := opts.FS
	fsOpts.Base = ""
	if !opts.ReadOnly {
		// A read-only open shows the delta layer alone: copying base
		// entries up needs to write.
		fsOpts.Base = a.Info.OverlayBase
	}
	a.FS = vfs.New(db, a.Info.ChunkSize, fsOpts)
	if !opts.ReadOnly && !created {
		// Staging inodes of atomic writes whose process was killed are
		// garbage (vfs/atomic.go); a database created by this call has
		// none. One query when there are none; a
		// failure (another writer holding the lock past the busy
		// timeout) leaves them to the next staged write, which reclaims
		// them too, and must not make the agent unusable.
		_, _ = a.FS.ReclaimStaging(ctx)
	}
	a.KV = kv.New(db)
	a.Tools = toolcalls.New(db)
	return a, nil
}

// ErrInvalidOption is returned by Open for an option out of its range;
// nothing has been created or changed.
var ErrInvalidOption = errors.New("invalid option")

// CheckOptions reports an option out of its range (ErrInvalidOption), as
// Open does before touching any file: a caller about to replace a
// database checks first.
func CheckOptions(opts Options) error {
	if ps := opts.PageSize; ps != 0 && (ps < 512 || ps > 65536 || ps&(ps-1) != 0) {
		return fmt.Errorf("%w: page size %d: must be a power of two from 512 to 65536", ErrInvalidOption, ps)
	}
	if cs := opts.ChunkSize; cs != 0 && (cs < schema.MinChunkSize || cs > schema.MaxChunkSize) {
		return fmt.Errorf("%w: chunk size %d: must be from %d to %d bytes", ErrInvalidOption, cs, schema.MinChunkSize, schema.MaxChunkSize)
	}
	return nil
}

// statError keeps the reason a database file cannot be looked at
// (EACCES, ENAMETOOLONG, ENOTDIR...) instead of calling it missing.
func statError(path string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return &fs.PathError{Op: "open", Path: path, Err: errno}
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// create builds a new database at path, atomically: nothing appears at
// path unless the whole schema (and the overlay configuration) was
// written. When another process created path meanwhile, its database is
// the one opened next, and created is false.
func create(ctx context.Context, path string, opts Options) (created bool, err error) {
	err = store.CreateFile(ctx, path, store.Options{Durability: opts.Durability, PageSize: opts.PageSize, Encryption: opts.Encryption}, func(db *store.DB) error {
		return db.Write(ctx, func(c *store.Conn) error {
			if err := schema.Create(c, opts.ChunkSize); err != nil {
				return err
			}
			if opts.Base != "" {
				return vfs.InitOverlay(c, opts.Base)
			}
			return nil
		})
	})
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

// probe inspects the existing database at path through a read-only
// connection and refuses what Open must not open. For a read-only open it
// returns that connection; for a writable one it closes it and returns a
// nil DB, and the caller opens the file for writing.
func probe(ctx context.Context, path string, opts Options) (*store.DB, schema.Info, error) {
	db, err := store.Open(ctx, path, store.Options{ReadOnly: true, Readers: readersOf(opts), Encryption: opts.Encryption})
	if err != nil {
		return nil, schema.Info{}, err
	}
	var info schema.Info
	err = db.Do(ctx, func(c *store.Conn) (err error) {
		info, err = schema.Inspect(c)
		return err
	})
	if err == nil {
		err = refuse(path, info, opts)
	}
	if err != nil || !opts.ReadOnly {
		db.Close()
		return nil, info, err
	}
	return db, info, nil
}

// readersOf sizes the read-only probe's reader pool: a probe that only
// inspects needs one reader; a read-only open keeps the default.
func readersOf(opts Options) int {
	if opts.ReadOnly {
		return 0
	}
	return 1
}

// refuse reports why a database with the layout info cannot be opened
// with opts, or nil. It decides from the read-only inspection alone, so a
// refused file is never opened for writing.
func refuse(path string, info schema.Info, opts Options) error {
	switch {
	case info.AgentFSVersion == "" && info.OtherTables:
		return fmt.Errorf("open %s: %w: it holds another application's tables", path, ErrNotAgentFS)
	case info.AgentFSVersion == "" && (!opts.Create || opts.ReadOnly):
		return fmt.Errorf("open %s: %w: it is empty", path, ErrNotAgentFS)
	case info.AgentFSVersion == "":
		return nil // an empty file filled by a writable open with Create
	case schema.Newer(info.AgentFSVersion):
		return fmt.Errorf("open %s: %w (AgentFS %s); upgrade agentfs", path, schema.ErrTooNew, info.AgentFSVersion)
	case info.FormatVersion > schema.FormatVersion:
		return fmt.Errorf("open %s: %w (format %d); upgrade agentfs", path, schema.ErrTooNew, info.FormatVersion)
	case info.AgentFSVersion != schema.AgentFSVersion:
		return fmt.Errorf("open %s: %w: it has AgentFS layout %s, this build uses %s", path, schema.ErrNeedsMigration, info.AgentFSVersion, schema.AgentFSVersion)
	case opts.Base != "" && info.OverlayBase == "":
		return fmt.Errorf("open %s: %w: it is not an overlay (use a new database for --base)", path, ErrOverlay)
	case opts.Base != "" && info.OverlayBase != opts.Base:
		return fmt.Errorf("open %s: %w: its base directory is %s, not %s", path, ErrOverlay, info.OverlayBase, opts.Base)
	case info.OverlayBase != "" && !opts.ReadOnly:
		if _, err := os.Stat(info.OverlayBase); err != nil {
			return fmt.Errorf("open %s: %w: base directory: %w", path, ErrOverlay, err)
		}
	}
	return nil
}

// prepare finishes a writable open: it fills an empty file (with
// Create), adds this project's tables to an AgentFS 0.4 database made by
// another tool, and completes an overlay's records. It inspects again,
// under the writable connection: the file may have changed since probe.
func (a *Agent) prepare(ctx context.Context, opts Options) error {
	var info schema.Info
	inspect := func() error {
		return a.DB.Do(ctx, func(c *store.Conn) (err error) {
			info, err = schema.Inspect(c)
			return err
		})
	}
	if err := inspect(); err != nil {
		return fmt.Errorf("open %s: %w", a.DB.Path(), err)
	}
	if err := refuse(a.DB.Path(), info, opts); err != nil {
		return err
	}
	switch {
	case info.AgentFSVersion == "":
		err := a.DB.Write(ctx, func(c *store.Conn) error {
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
	case schema.NeedsOnlyExtensions(info):
		// An AgentFS 0.4 database from another tool: adding our own
		// tables is invisible to it, so do it without asking.
		steps, err := schema.Plan(info)
		if err != nil {
			return err
		}
		if err := a.DB.Write(ctx, func(c *store.Conn) error { return schema.Apply(c, steps) }); err != nil {
			return err
		}
	}
	if err := inspect(); err != nil {
		return err
	}
	a.Info = info
	if err := refuse(a.DB.Path(), info, opts); err != nil {
		return err
	}
	if a.Info.OverlayBase != "" {
		// A delta made by another tool lacks this project's records.
		var ok bool
		if err := a.DB.Do(ctx, func(c *store.Conn) (err error) { ok, err = vfs.HasOverlayRoot(c); return err }); err != nil || ok {
			return err
		}
		return a.DB.Write(ctx, func(c *store.Conn) error { return vfs.EnsureOverlayRoot(c, a.Info.OverlayBase) })
	}
	return nil
}

// ErrNotAgentFS is returned for a file that is not an AgentFS database:
// a SQLite file of another application, or an empty file opened without
// Create.
var ErrNotAgentFS = errors.New("not an AgentFS database")

// ErrOverlay is returned when an overlay database does not match the
// base directory asked for, or its base directory is missing.
var ErrOverlay = errors.New("overlay mismatch")

// Close closes the database.
func (a *Agent) Close() error { return a.DB.Close() }

// Path is the database file.
func (a *Agent) Path() string { return a.DB.Path() }

// idChars reports whether s is one or more ASCII letters, digits, '_'
// and '-'. A loop, not a regexp: compiling one at package init is
// startup time for every program (a Worker's cold start among them).
func idChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// MaxIDLength bounds an agent id, so that ID.db and every name made
// from it (ID.db-wal, ID.db.snapshots, ID.db.pre-migrate-TIME.bak, the
// temporary .ID.db.new-XXXX of a creation) fits in a 255-byte file name.
const MaxIDLength = 128

// ErrInvalidID is wrapped by CheckID's errors.
var ErrInvalidID = errors.New("invalid agent id")

// ValidID reports whether s is a valid agent id: 1 to MaxIDLength
// letters, digits, "_" and "-". No ".": an id is a file name in the
// agents' directory (ID.db), so no id can be ".", "..", a hidden file, a
// path, or another id's derived file.
func ValidID(s string) bool { return len(s) <= MaxIDLength && idChars(s) }

// idError is an invalid id that also carries an errno (ENAMETOOLONG).
type idError struct {
	msg   string
	errno syscall.Errno
}

func (e *idError) Error() string   { return e.msg }
func (e *idError) Unwrap() []error { return []error{ErrInvalidID, e.errno} }

// CheckID explains why s is not a valid agent id (nil when it is), the
// same way for every door (CLI, rpc, SDK).
func CheckID(s string) error {
	switch {
	case len(s) > MaxIDLength:
		return &idError{fmt.Sprintf("%v %q...: %d bytes, at most %d (ENAMETOOLONG)", ErrInvalidID, s[:16], len(s), MaxIDLength), syscall.ENAMETOOLONG}
	case s == "":
		return fmt.Errorf("%w: it is empty; use 1 to %d letters, digits, '_' and '-'", ErrInvalidID, MaxIDLength)
	case !idChars(s):
		return fmt.Errorf("%w %q: use letters, digits, '_' and '-' only (no '.', '/' or spaces)", ErrInvalidID, s)
	}
	return nil
}

// DefaultDir is where agent databases live, relative to the working
// directory, as with agentfs-sdk.
const DefaultDir = ".agentfs"

// Version is the engine's version, reported by the CLI and in the stdio
// handshake: the project's one version, from the VERSION file at the
// repository root (tools/cmd/checkversions fails when they differ). Builds
// may still override it with
// -ldflags "-X github.com/agentfs-go/agentfs/core.Version=...".
var Version = "0.7.0"

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
