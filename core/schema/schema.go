// Package schema creates, recognises and migrates the on-disk format.
//
// The base tables are those of the AgentFS specification 0.4 as written by
// agentfs-sdk 0.6.4, byte for byte in their definitions, so that a database
// made here opens there and the other way round. Everything this project
// adds lives in tables of its own (see spec/SPEC.md).
package schema

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// AgentFSVersion is the AgentFS specification version written to
// fs_config.schema_version.
const AgentFSVersion = "0.4"

// FormatVersion is this project's own schema version, kept in
// agentfs_meta.format_version. It counts changes to the extension tables.
// 2 added agentfs_overlay_inode and agentfs_overlay_whiteout.
const FormatVersion = 2

// DefaultChunkSize is the size of the fs_data chunks of a new database.
const DefaultChunkSize = 4096

// MinChunkSize and MaxChunkSize bound the chunk size of a new database:
// smaller chunks multiply rows per byte, larger ones the bytes rewritten
// by a small write.
const (
	MinChunkSize = 512
	MaxChunkSize = 1 << 20
)

// Mode bits shared by the engine.
const (
	ModeType    = 0o170000
	ModeDir     = 0o040000
	ModeRegular = 0o100000
	ModeSymlink = 0o120000
	ModeFIFO    = 0o010000
	ModeChar    = 0o020000
	ModeBlock   = 0o060000
	ModeSocket  = 0o140000
)

// RootIno is the inode number of "/".
const RootIno = 1

// base is the AgentFS 0.4 layout. The statements match agentfs-sdk 0.6.4 so
// that both tools create identical schemas.
var base = []string{
	`CREATE TABLE IF NOT EXISTS fs_config (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )`,
	`CREATE TABLE IF NOT EXISTS fs_inode (
        ino INTEGER PRIMARY KEY AUTOINCREMENT,
        mode INTEGER NOT NULL,
        nlink INTEGER NOT NULL DEFAULT 0,
        uid INTEGER NOT NULL DEFAULT 0,
        gid INTEGER NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        atime INTEGER NOT NULL,
        mtime INTEGER NOT NULL,
        ctime INTEGER NOT NULL,
        rdev INTEGER NOT NULL DEFAULT 0,
        atime_nsec INTEGER NOT NULL DEFAULT 0,
        mtime_nsec INTEGER NOT NULL DEFAULT 0,
        ctime_nsec INTEGER NOT NULL DEFAULT 0
      )`,
	`CREATE TABLE IF NOT EXISTS fs_dentry (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        parent_ino INTEGER NOT NULL,
        ino INTEGER NOT NULL,
        UNIQUE(parent_ino, name)
      )`,
	`CREATE INDEX IF NOT EXISTS idx_fs_dentry_parent
      ON fs_dentry(parent_ino, name)`,
	`CREATE TABLE IF NOT EXISTS fs_data (
        ino INTEGER NOT NULL,
        chunk_index INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (ino, chunk_index)
      )`,
	`CREATE TABLE IF NOT EXISTS fs_symlink (
        ino INTEGER PRIMARY KEY,
        target TEXT NOT NULL
      )`,
	`CREATE TABLE IF NOT EXISTS kv_store (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        created_at INTEGER DEFAULT (unixepoch()),
        updated_at INTEGER DEFAULT (unixepoch())
      )`,
	`CREATE INDEX IF NOT EXISTS idx_kv_store_created_at
      ON kv_store(created_at)`,
	`CREATE TABLE IF NOT EXISTS tool_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        parameters TEXT,
        result TEXT,
        error TEXT,
        status TEXT NOT NULL DEFAULT 'pending',
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        duration_ms INTEGER
      )`,
	`CREATE INDEX IF NOT EXISTS idx_tool_calls_name
      ON tool_calls(name)`,
	`CREATE INDEX IF NOT EXISTS idx_tool_calls_started_at
      ON tool_calls(started_at)`,
	// Overlay tables (AgentFS 0.4): a delta database above a host directory.
	`CREATE TABLE IF NOT EXISTS fs_whiteout (
        path TEXT PRIMARY KEY,
        parent_path TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
	`CREATE INDEX IF NOT EXISTS idx_fs_whiteout_parent
      ON fs_whiteout(parent_path)`,
	`CREATE TABLE IF NOT EXISTS fs_origin (
        delta_ino INTEGER PRIMARY KEY,
        base_ino INTEGER NOT NULL
      )`,
	`CREATE TABLE IF NOT EXISTS fs_overlay_config (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )`,
}

// extensions are this project's own tables, format version 1.
var extensions = []string{
	`CREATE TABLE IF NOT EXISTS agentfs_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )`,
	`CREATE TABLE IF NOT EXISTS fs_xattr (
        ino INTEGER NOT NULL,
        name TEXT NOT NULL,
        value BLOB NOT NULL,
        PRIMARY KEY (ino, name)
      ) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS agentfs_snapshot (
        name TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        size INTEGER NOT NULL
      )`,
	OverlayInodeSchema,
	OverlayWhiteoutSchema,
}

// OverlayInodeSchema is the table of the delta inodes of an overlay that
// stand for base entries (format 2; empty unless the database is an
// overlay): their base path, what the base file was at copy-up, and the
// range of bytes still read from it. See spec/SPEC.md §4.5.
const OverlayInodeSchema = `CREATE TABLE IF NOT EXISTS agentfs_overlay_inode (
        ino INTEGER PRIMARY KEY,
        path TEXT NOT NULL,
        base_ino INTEGER NOT NULL,
        base_size INTEGER NOT NULL,
        base_mtime_ns INTEGER NOT NULL,
        extent INTEGER NOT NULL DEFAULT 0,
        complete INTEGER NOT NULL DEFAULT 0
      )`

// OverlayWhiteoutSchema records, beside each fs_whiteout row written by
// this engine, what the base entry was when it was removed, so that a
// commit can tell whether the host changed it since (format 2).
const OverlayWhiteoutSchema = `CREATE TABLE IF NOT EXISTS agentfs_overlay_whiteout (
        path TEXT PRIMARY KEY,
        base_ino INTEGER NOT NULL,
        base_size INTEGER NOT NULL,
        base_mtime_ns INTEGER NOT NULL
      )`

// Info describes what a database file holds.
type Info struct {
	// AgentFSVersion is the detected AgentFS layout: "0.0", "0.2", "0.4",
	// or "" for an empty file.
	AgentFSVersion string
	// FormatVersion is this project's extension version (0: none yet).
	FormatVersion int
	ChunkSize     int
	// SchemaVersion is fs_config.schema_version as written ("" if absent).
	SchemaVersion string
	// OverlayBase is fs_overlay_config.base_path: set when the database is
	// the delta layer of an overlay over a host directory.
	OverlayBase string
	// OtherTables reports tables that are not AgentFS's (a foreign file).
	OtherTables bool
}

// Current reports whether the database can be used without migrating.
func (i Info) Current() bool {
	return i.AgentFSVersion == AgentFSVersion && i.FormatVersion == FormatVersion
}

// ErrNeedsMigration is returned when a database has an older layout.
var ErrNeedsMigration = errors.New("database needs migration")

// ErrTooNew is returned for a database written by a newer version.
var ErrTooNew = errors.New("database was written by a newer version of agentfs")

// Inspect detects the layout of the database.
func Inspect(c *store.Conn) (Info, error) {
	var info Info
	tables, err := tableSet(c)
	if err != nil {
		return info, err
	}
	if !tables["fs_inode"] {
		for t := range tables {
			if !strings.HasPrefix(t, "sqlite_") {
				info.OtherTables = true
			}
		}
		return info, nil
	}
	cols, err := columns(c, "fs_inode")
	if err != nil {
		return info, err
	}
	switch {
	case !cols["nlink"]:
		info.AgentFSVersion = "0.0"
	case !cols["rdev"] || !cols["atime_nsec"]:
		info.AgentFSVersion = "0.2"
	default:
		info.AgentFSVersion = AgentFSVersion
	}
	if tables["fs_config"] {
		var v string
		err := c.QueryRow("SELECT CAST(value AS BLOB) FROM fs_config WHERE key = 'chunk_size'").Scan(&v)
		if err == nil {
			info.ChunkSize, _ = strconv.Atoi(v)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return info, err
		}
	}
	if info.ChunkSize <= 0 {
		info.ChunkSize = DefaultChunkSize
	}
	if tables["fs_config"] {
		var v []byte
		err := c.QueryRow("SELECT CAST(value AS BLOB) FROM fs_config WHERE key = 'schema_version'").Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return info, err
		}
		info.SchemaVersion = string(v)
		if newerThan(info.SchemaVersion, AgentFSVersion) {
			// Columns alone cannot tell a future layout apart: trust the
			// version the writer recorded.
			info.AgentFSVersion = info.SchemaVersion
		}
	}
	if tables["fs_overlay_config"] {
		var v []byte
		err := c.QueryRow("SELECT CAST(value AS BLOB) FROM fs_overlay_config WHERE key = 'base_path'").Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return info, err
		}
		info.OverlayBase = string(v)
	}
	if tables["agentfs_meta"] {
		var v string
		err := c.QueryRow("SELECT CAST(value AS BLOB) FROM agentfs_meta WHERE key = 'format_version'").Scan(&v)
		if err == nil {
			info.FormatVersion, _ = strconv.Atoi(v)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return info, err
		}
	}
	return info, nil
}

// newerThan compares dotted versions numerically ("0.10" > "0.4").
func newerThan(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x > y
		}
	}
	return false
}

// Create makes a fresh database: every table, the root directory, the
// configuration. chunkSize 0 means DefaultChunkSize.
func Create(c *store.Conn, chunkSize int) error {
	if chunkSize == 0 {
		chunkSize = DefaultChunkSize
	}
	if chunkSize < MinChunkSize || chunkSize > MaxChunkSize {
		return fmt.Errorf("chunk size %d out of range (%d to %d bytes)", chunkSize, MinChunkSize, MaxChunkSize)
	}
	for _, q := range append(append([]string{}, base...), extensions...) {
		if _, err := c.Exec(q); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := c.Exec("INSERT OR IGNORE INTO fs_config (key, value) VALUES ('chunk_size', ?)", strconv.Itoa(chunkSize)); err != nil {
		return err
	}
	return finish(c)
}

// finish writes the version keys and makes sure the root exists.
func finish(c *store.Conn) error {
	if _, err := c.Exec("INSERT OR REPLACE INTO fs_config (key, value) VALUES ('schema_version', ?)", AgentFSVersion); err != nil {
		return err
	}
	if _, err := c.Exec("INSERT OR REPLACE INTO agentfs_meta (key, value) VALUES ('format_version', ?)", strconv.Itoa(FormatVersion)); err != nil {
		return err
	}
	now := time.Now()
	_, err := c.Exec(`INSERT OR IGNORE INTO fs_inode (ino, mode, nlink, uid, gid, size, atime, mtime, ctime, atime_nsec, mtime_nsec, ctime_nsec)
		VALUES (1, ?, 1, 0, 0, 0, ?, ?, ?, ?, ?, ?)`, ModeDir|0o755,
		now.Unix(), now.Unix(), now.Unix(), now.Nanosecond(), now.Nanosecond(), now.Nanosecond())
	return err
}

// Step is one migration step.
type Step struct {
	From, To    string
	Description string
	run         func(c *store.Conn) error
}

// Plan lists the steps that bring a database at info up to date.
func Plan(info Info) ([]Step, error) {
	var steps []Step
	v := info.AgentFSVersion
	if v == "" {
		return nil, nil
	}
	if v == "0.0" {
		steps = append(steps, Step{From: "0.0", To: "0.2",
			Description: "add fs_inode.nlink, computed from the directory entries",
			run: func(c *store.Conn) error {
				if _, err := c.Exec("ALTER TABLE fs_inode ADD COLUMN nlink INTEGER NOT NULL DEFAULT 0"); err != nil {
					return err
				}
				_, err := c.Exec(`UPDATE fs_inode SET nlink =
					(SELECT COUNT(*) FROM fs_dentry d WHERE d.ino = fs_inode.ino) + (CASE WHEN ino = 1 THEN 1 ELSE 0 END)`)
				return err
			}})
		v = "0.2"
	}
	if v == "0.2" {
		steps = append(steps, Step{From: "0.2", To: "0.4",
			Description: "add fs_inode.rdev and the nanosecond timestamp columns",
			run: func(c *store.Conn) error {
				cols, err := columns(c, "fs_inode")
				if err != nil {
					return err
				}
				for _, col := range []string{"rdev", "atime_nsec", "mtime_nsec", "ctime_nsec"} {
					if cols[col] {
						continue
					}
					if _, err := c.Exec("ALTER TABLE fs_inode ADD COLUMN " + col + " INTEGER NOT NULL DEFAULT 0"); err != nil {
						return err
					}
				}
				return nil
			}})
		v = "0.4"
	}
	if v != AgentFSVersion {
		return nil, fmt.Errorf("%w: unknown AgentFS layout %q", ErrTooNew, v)
	}
	if info.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, this build knows %d", ErrTooNew, info.FormatVersion, FormatVersion)
	}
	if info.FormatVersion < FormatVersion || len(steps) > 0 {
		steps = append(steps, Step{From: fmt.Sprintf("agentfs-go format %d", info.FormatVersion), To: fmt.Sprintf("agentfs-go format %d", FormatVersion),
			Description: "create missing tables (overlay, overlay inodes, extended attributes, snapshots, metadata) and record the versions",
			run: func(c *store.Conn) error {
				for _, q := range append(append([]string{}, base...), extensions...) {
					if _, err := c.Exec(q); err != nil {
						return err
					}
				}
				if _, err := c.Exec("INSERT OR IGNORE INTO fs_config (key, value) VALUES ('chunk_size', ?)", strconv.Itoa(DefaultChunkSize)); err != nil {
					return err
				}
				return finish(c)
			}})
	}
	return steps, nil
}

// Apply runs the steps inside the caller's transaction.
func Apply(c *store.Conn, steps []Step) error {
	for _, s := range steps {
		if err := s.run(c); err != nil {
			return fmt.Errorf("migrate %s -> %s: %w", s.From, s.To, err)
		}
	}
	return nil
}

// NeedsOnlyExtensions reports whether the steps only add this project's
// tables to an AgentFS 0.4 database (for example one made by agentfs-sdk).
// Such a migration is safe to run automatically on open.
func NeedsOnlyExtensions(info Info) bool {
	return info.AgentFSVersion == AgentFSVersion && info.FormatVersion < FormatVersion
}

func tableSet(c *store.Conn) (map[string]bool, error) {
	return stringSet(c, "SELECT CAST(name AS BLOB) FROM sqlite_master WHERE type = 'table'")
}

func columns(c *store.Conn, table string) (map[string]bool, error) {
	return stringSet(c, "SELECT CAST(name AS BLOB) FROM pragma_table_info(?)", table)
}

func stringSet(c *store.Conn, query string, args ...any) (map[string]bool, error) {
	list, err := c.Strings(query, args...)
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m, err
}

// Newer reports whether an AgentFS version is newer than this build's.
func Newer(v string) bool { return newerThan(v, AgentFSVersion) }
