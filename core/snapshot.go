package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentfs-go/agentfs/core/store"
)

// Snapshot is a named, consistent copy of an agent database.
type Snapshot struct {
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"created_at"`
	Size      int64     `json:"size"`
}

// ErrSnapshotNotFound is returned for an unknown snapshot name.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// ErrSnapshotExists is returned when creating a snapshot under a used name.
var ErrSnapshotExists = errors.New("snapshot already exists")

// snapshotName is compiled at its first use, not at package init: the
// {0,127} repetition expands into a large program (about 1700
// allocations, over a millisecond), which every process linking core
// (the Node addon's cold start among them) would pay without taking a
// snapshot.
var snapshotName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
})

// ErrInvalidSnapshotName is returned for a name that cannot be a
// snapshot's (it would not be one file name inside the snapshot
// directory): bad input, not a missing snapshot.
var ErrInvalidSnapshotName = errors.New("invalid snapshot name")

func checkSnapshotName(name string) error {
	if snapshotName().MatchString(name) {
		return nil
	}
	return fmt.Errorf("%w %q: 1 to 128 letters, digits, '.', '_' and '-', starting with a letter or digit", ErrInvalidSnapshotName, name)
}

// SnapshotDir is where the snapshots of this database are kept: a
// directory next to the database file.
func (a *Agent) SnapshotDir() string { return a.Path() + ".snapshots" }

// CopyTo writes a consistent copy of the whole database to dest while
// other connections and processes keep writing.
func (a *Agent) CopyTo(ctx context.Context, dest string) error {
	if _, err := os.Stat(dest); err == nil {
		return &fs.PathError{Op: "snapshot", Path: dest, Err: fs.ErrExist}
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return a.DB.CopyTo(ctx, dest)
}

// CreateSnapshot saves a named snapshot. An empty name picks one from the
// current time.
func (a *Agent) CreateSnapshot(ctx context.Context, name string) (Snapshot, error) {
	now := time.Now()
	if name == "" {
		name = now.UTC().Format("20060102T150405.000Z")
	}
	if err := checkSnapshotName(name); err != nil {
		return Snapshot{}, err
	}
	dest := filepath.Join(a.SnapshotDir(), name+".db")
	if _, err := os.Stat(dest); err == nil {
		return Snapshot{}, fmt.Errorf("%w: %s", ErrSnapshotExists, name)
	}
	if err := a.CopyTo(ctx, dest); err != nil {
		return Snapshot{}, err
	}
	st, err := os.Stat(dest)
	if err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{Name: name, Path: dest, CreatedAt: now, Size: st.Size()}
	err = a.DB.Write(ctx, func(c *store.Conn) error {
		_, err := c.Exec("INSERT OR REPLACE INTO agentfs_snapshot (name, path, created_at, size) VALUES (?, ?, ?, ?)",
			name, dest, now.UnixNano(), s.Size)
		return err
	})
	if err != nil {
		os.Remove(dest)
		return Snapshot{}, err
	}
	return s, nil
}

// Snapshots lists the snapshots, oldest first. Files in the snapshot
// directory that the table does not know (copied in by hand) are listed
// too; rows whose file is gone are not.
func (a *Agent) Snapshots(ctx context.Context) ([]Snapshot, error) {
	known := map[string]Snapshot{}
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		rows, err := c.Query("SELECT CAST(name AS BLOB), CAST(path AS BLOB), created_at, size FROM agentfs_snapshot")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, path []byte
			var created, size int64
			if err := rows.Scan(&name, &path, &created, &size); err != nil {
				return err
			}
			known[string(name)] = Snapshot{Name: string(name), Path: string(path), CreatedAt: time.Unix(0, created), Size: size}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(a.SnapshotDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []Snapshot
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".db") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".db")
		info, err := e.Info()
		if err != nil {
			continue
		}
		s, ok := known[name]
		if !ok {
			s = Snapshot{Name: name, CreatedAt: info.ModTime()}
		}
		s.Path, s.Size = filepath.Join(a.SnapshotDir(), e.Name()), info.Size()
		out = append(out, s)
	}
	sortSnapshots(out)
	return out, nil
}

func sortSnapshots(s []Snapshot) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].CreatedAt.Before(s[j-1].CreatedAt); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// restoredTables are copied back by RestoreSnapshot, in this order.
var restoredTables = []string{
	"fs_config", "fs_inode", "fs_dentry", "fs_data", "fs_symlink", "fs_xattr",
	"fs_whiteout", "fs_origin", "fs_overlay_config", "agentfs_overlay_inode", "agentfs_overlay_whiteout", "kv_store", "tool_calls",
}

// RestoreSnapshot replaces the content of the database with the snapshot,
// in one transaction: other processes see the old state or the new one.
// The snapshot list itself is kept.
func (a *Agent) RestoreSnapshot(ctx context.Context, name string) error {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	src := filepath.Join(a.SnapshotDir(), name+".db")
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%w: %s", ErrSnapshotNotFound, name)
	}
	err := a.DB.Raw(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("ATTACH DATABASE ? AS snap", src); err != nil {
			return err
		}
		defer c.Exec("DETACH DATABASE snap")
		var cs int
		if err := c.QueryRow("SELECT CAST(value AS INTEGER) FROM snap.fs_config WHERE key = 'chunk_size'").Scan(&cs); err != nil {
			return fmt.Errorf("snapshot %s is not an AgentFS database: %w", name, err)
		}
		if cs != a.FS.ChunkSize() {
			return fmt.Errorf("snapshot %s has chunk size %d, the database %d: restore it by copying the file instead", name, cs, a.FS.ChunkSize())
		}
		if _, err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			return err
		}
		if err := copyTables(c); err != nil {
			c.Exec("ROLLBACK")
			return err
		}
		_, err := c.Exec("COMMIT")
		if err != nil {
			c.Exec("ROLLBACK")
		}
		return err
	})
	a.FS.Invalidate()
	return err
}

func copyTables(c *store.Conn) error {
	for _, t := range restoredTables {
		cols, err := commonColumns(c, t)
		if err != nil {
			return err
		}
		if _, err := c.Exec("DELETE FROM main." + t); err != nil {
			return err
		}
		if cols == "" {
			continue // the snapshot predates this table
		}
		if _, err := c.Exec("INSERT INTO main." + t + " (" + cols + ") SELECT " + cols + " FROM snap." + t); err != nil {
			return fmt.Errorf("restore %s: %w", t, err)
		}
	}
	// Keep AUTOINCREMENT counters ahead of every restored id.
	_, err := c.Exec(`UPDATE main.sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT s.seq FROM snap.sqlite_sequence s WHERE s.name = main.sqlite_sequence.name), 0))`)
	return err
}

func commonColumns(c *store.Conn, table string) (string, error) {
	names := func(schemaName string) ([]string, error) {
		return c.Strings("SELECT CAST(name AS BLOB) FROM pragma_table_info(?, ?)", table, schemaName)
	}
	mainCols, err := names("main")
	if err != nil {
		return "", err
	}
	snapCols, err := names("snap")
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, n := range snapCols {
		have[n] = true
	}
	var cols []string
	for _, n := range mainCols {
		if have[n] {
			// Names come from the database files, which anyone may have
			// written: quoted as identifiers, a '"' doubled, they cannot
			// end the statement (the Exec below, without arguments, would
			// run a second one).
			cols = append(cols, `"`+strings.ReplaceAll(n, `"`, `""`)+`"`)
		}
	}
	return strings.Join(cols, ", "), nil
}
