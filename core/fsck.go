package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Problem is one violation of the format's consistency rules.
type Problem struct {
	Rule   string `json:"rule"`   // short name of the rule, e.g. "nlink"
	Detail string `json:"detail"` // what is wrong, with inode numbers
	// Repairable problems are fixed by Fsck with repair=true.
	Repairable bool `json:"repairable"`
}

// FsckReport is the outcome of Fsck.
type FsckReport struct {
	Problems []Problem `json:"problems"`
	Repaired int       `json:"repaired"` // problems fixed (repair mode)
	Inodes   int64     `json:"inodes"`
	Dentries int64     `json:"dentries"`
	Chunks   int64     `json:"chunks"`
}

// Clean reports whether no problem was found.
func (r *FsckReport) Clean() bool { return len(r.Problems) == 0 }

// rule is one consistency check: a query listing violations (first column
// an inode number or id, second a description), and an optional repair
// that fixes all of them at once.
type rule struct {
	name   string
	query  string
	repair []string
	spare  bool // query and repairs take the JSON list of inodes to spare
}

// File-type tests on the mode column of a table alias ("" for none).
func isDir(t string) string { return "(" + t + "mode & 61440) = 16384" }
func isReg(t string) string { return "(" + t + "mode & 61440) = 32768" }
func isLnk(t string) string { return "(" + t + "mode & 61440) = 40960" }

func fsckRules(chunkSize int) []rule {
	cs := fmt.Sprint(chunkSize)
	return []rule{
		{name: "root", query: `SELECT 1, 'root inode 1 is missing or not a directory' WHERE NOT EXISTS (SELECT 1 FROM fs_inode WHERE ino = 1 AND ` + isDir("") + `)`},
		{name: "dentry-parent", query: `SELECT d.id, 'entry ' || d.name || ' (id ' || d.id || ') has missing or non-directory parent ' || d.parent_ino
			FROM fs_dentry d LEFT JOIN fs_inode p ON p.ino = d.parent_ino WHERE p.ino IS NULL OR NOT (` + isDir("p.") + `)`,
			repair: []string{`DELETE FROM fs_dentry WHERE id IN (SELECT d.id FROM fs_dentry d LEFT JOIN fs_inode p ON p.ino = d.parent_ino WHERE p.ino IS NULL OR NOT (` + isDir("p.") + `))`}},
		{name: "dentry-inode", query: `SELECT d.id, 'entry ' || d.name || ' points to missing inode ' || d.ino
			FROM fs_dentry d LEFT JOIN fs_inode i ON i.ino = d.ino WHERE i.ino IS NULL`,
			repair: []string{`DELETE FROM fs_dentry WHERE ino NOT IN (SELECT ino FROM fs_inode)`}},
		{name: "dir-links", query: `SELECT d.ino, 'directory ' || d.ino || ' has ' || COUNT(*) || ' entries (a directory has exactly one)'
			FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino WHERE ` + isDir("i.") + ` GROUP BY d.ino HAVING COUNT(*) > 1`},
		{name: "root-entry", query: `SELECT id, 'the root directory has an entry ' || name FROM fs_dentry WHERE ino = 1`},
		// The staging inodes of atomic writes in progress have no name
		// yet and are no orphans: the query and its repairs take the
		// list of inodes to spare (JSON) as their one argument.
		{name: "orphan", spare: true, query: `SELECT i.ino, 'inode ' || i.ino || ' has no directory entry' FROM fs_inode i
			WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino) AND i.ino NOT IN (SELECT value FROM json_each(?))`,
			repair: []string{
				`DELETE FROM fs_data WHERE ino IN (SELECT ino FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino) AND i.ino NOT IN (SELECT value FROM json_each(?)))`,
				`DELETE FROM fs_symlink WHERE ino IN (SELECT ino FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino) AND i.ino NOT IN (SELECT value FROM json_each(?)))`,
				`DELETE FROM fs_xattr WHERE ino IN (SELECT ino FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino) AND i.ino NOT IN (SELECT value FROM json_each(?)))`,
				`DELETE FROM fs_inode WHERE ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = fs_inode.ino) AND ino NOT IN (SELECT value FROM json_each(?))`,
			}},
		{name: "nlink", query: `SELECT i.ino, 'inode ' || i.ino || ' has nlink ' || i.nlink || ' but ' || COUNT(d.id) || ' entries'
			FROM fs_inode i LEFT JOIN fs_dentry d ON d.ino = i.ino WHERE i.ino <> 1 GROUP BY i.ino HAVING COUNT(d.id) > 0 AND i.nlink <> COUNT(d.id)`,
			repair: []string{`UPDATE fs_inode SET nlink = (SELECT COUNT(*) FROM fs_dentry d WHERE d.ino = fs_inode.ino)
				WHERE ino <> 1 AND nlink <> (SELECT COUNT(*) FROM fs_dentry d WHERE d.ino = fs_inode.ino) AND EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = fs_inode.ino)`}},
		{name: "type", query: `SELECT ino, 'inode ' || ino || ' has unknown file type in mode ' || printf('%o', mode) FROM fs_inode
			WHERE (mode & 61440) NOT IN (4096, 8192, 16384, 24576, 32768, 40960, 49152)`},
		{name: "data-owner", query: `SELECT f.ino, 'data chunk ' || f.chunk_index || ' of inode ' || f.ino || ' belongs to no regular file'
			FROM fs_data f LEFT JOIN fs_inode i ON i.ino = f.ino WHERE i.ino IS NULL OR NOT (` + isReg("i.") + `)`,
			repair: []string{`DELETE FROM fs_data WHERE rowid IN (SELECT f.rowid FROM fs_data f LEFT JOIN fs_inode i ON i.ino = f.ino WHERE i.ino IS NULL OR NOT (` + isReg("i.") + `))`}},
		{name: "chunk-size", query: `SELECT ino, 'chunk ' || chunk_index || ' of inode ' || ino || ' is ' || length(data) || ' bytes, more than the chunk size ` + cs + `'
			FROM fs_data WHERE length(data) > ` + cs},
		{name: "chunk-beyond-size", query: `SELECT f.ino, 'chunk ' || f.chunk_index || ' of inode ' || f.ino || ' lies beyond the file size ' || i.size
			FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE f.chunk_index * ` + cs + ` >= i.size`,
			repair: []string{`DELETE FROM fs_data WHERE rowid IN (SELECT f.rowid FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE f.chunk_index * ` + cs + ` >= i.size)`}},
		{name: "chunk-past-size", query: `SELECT f.ino, 'chunk ' || f.chunk_index || ' of inode ' || f.ino || ' holds bytes past the file size ' || i.size
			FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE f.chunk_index * ` + cs + ` < i.size AND f.chunk_index * ` + cs + ` + length(f.data) > i.size`,
			repair: []string{`UPDATE fs_data SET data = substr(data, 1, (SELECT i.size FROM fs_inode i WHERE i.ino = fs_data.ino) - chunk_index * ` + cs + `)
				WHERE rowid IN (SELECT f.rowid FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE f.chunk_index * ` + cs + ` < i.size AND f.chunk_index * ` + cs + ` + length(f.data) > i.size)`}},
		{name: "chunk-short", query: `SELECT f.ino, 'chunk ' || f.chunk_index || ' of inode ' || f.ino || ' is ' || length(f.data) || ' bytes but is not the last chunk (only the last may be shorter than ` + cs + `)'
			FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE length(f.data) < ` + cs + ` AND f.chunk_index < (i.size - 1) / ` + cs,
			// The bytes after a short chunk read as zeros: padding it with
			// zeros changes no content.
			repair: []string{`UPDATE fs_data SET data = CAST(data || zeroblob(` + cs + ` - length(data)) AS BLOB)
				WHERE rowid IN (SELECT f.rowid FROM fs_data f JOIN fs_inode i ON i.ino = f.ino WHERE length(f.data) < ` + cs + ` AND f.chunk_index < (i.size - 1) / ` + cs + `)`}},
		{name: "name", query: `SELECT id, 'entry ' || quote(name) || ' in directory ' || parent_ino || ' is not a valid name (empty, ".", "..", "/", NUL or over 255 bytes)'
			FROM fs_dentry WHERE name = '' OR name = '.' OR name = '..' OR instr(name, '/') > 0 OR instr(CAST(name AS BLOB), x'00') > 0 OR length(CAST(name AS BLOB)) > 255`},
		{name: "symlink-target", query: `SELECT i.ino, 'symlink inode ' || i.ino || ' has no target' FROM fs_inode i
			WHERE ` + isLnk("i.") + ` AND NOT EXISTS (SELECT 1 FROM fs_symlink s WHERE s.ino = i.ino)`},
		{name: "symlink-owner", query: `SELECT s.ino, 'symlink target row for inode ' || s.ino || ' belongs to no symlink'
			FROM fs_symlink s LEFT JOIN fs_inode i ON i.ino = s.ino WHERE i.ino IS NULL OR NOT (` + isLnk("i.") + `)`,
			repair: []string{`DELETE FROM fs_symlink WHERE ino IN (SELECT s.ino FROM fs_symlink s LEFT JOIN fs_inode i ON i.ino = s.ino WHERE i.ino IS NULL OR NOT (` + isLnk("i.") + `))`}},
		{name: "xattr-owner", query: `SELECT x.ino, 'extended attribute ' || x.name || ' of missing inode ' || x.ino
			FROM fs_xattr x LEFT JOIN fs_inode i ON i.ino = x.ino WHERE i.ino IS NULL`,
			repair: []string{`DELETE FROM fs_xattr WHERE ino NOT IN (SELECT ino FROM fs_inode)`}},
		{name: "overlay-inode-owner", query: `SELECT o.ino, 'overlay record of missing inode ' || o.ino
			FROM agentfs_overlay_inode o LEFT JOIN fs_inode i ON i.ino = o.ino WHERE i.ino IS NULL`,
			repair: []string{`DELETE FROM agentfs_overlay_inode WHERE ino NOT IN (SELECT ino FROM fs_inode)`,
				`DELETE FROM fs_origin WHERE delta_ino NOT IN (SELECT ino FROM fs_inode)`}},
		{name: "unreachable", query: `WITH RECURSIVE reach(ino) AS (SELECT 1 UNION SELECT d.ino FROM fs_dentry d JOIN reach r ON d.parent_ino = r.ino)
			SELECT d.id, 'entry ' || d.name || ' (inode ' || d.ino || ') is not reachable from the root (directory cycle?)'
			FROM fs_dentry d WHERE d.parent_ino NOT IN (SELECT ino FROM reach)`},
		{name: "kv-json", query: `SELECT rowid, 'kv value of ' || key || ' is not valid JSON' FROM kv_store WHERE json_valid(value) = 0`},
		{name: "tool-status", query: `SELECT id, 'tool call ' || id || ' has status ' || quote(status) FROM tool_calls WHERE status NOT IN ('pending', 'success', 'error')`},
		{name: "tool-pending", query: `SELECT id, 'tool call ' || id || ' is pending but has a completion time' FROM tool_calls WHERE status = 'pending' AND completed_at IS NOT NULL`},
		// The layout was detected from the columns at open (a newer
		// recorded version is refused there), so the database must record
		// this build's version; anything else ('abc', '') misleads other
		// readers of the file.
		{name: "schema-version", query: `SELECT 0, 'fs_config.schema_version is ' || quote(value) || ', not ` + schema.AgentFSVersion + `'
			FROM fs_config WHERE key = 'schema_version' AND (typeof(value) != 'text' OR value != '` + schema.AgentFSVersion + `')`,
			repair: []string{`UPDATE fs_config SET value = '` + schema.AgentFSVersion + `' WHERE key = 'schema_version'`}},
		{name: "config", query: `SELECT 0, 'fs_config has no valid chunk_size' WHERE NOT EXISTS (SELECT 1 FROM fs_config WHERE key = 'chunk_size' AND CAST(value AS INTEGER) > 0)`,
			// Without a recorded size, the longest stored chunk is the best
			// evidence of the size the data was written with.
			repair: []string{`INSERT OR REPLACE INTO fs_config (key, value) VALUES ('chunk_size',
				CAST(COALESCE((SELECT MAX(length(data)) FROM fs_data), ` + fmt.Sprint(schema.DefaultChunkSize) + `) AS TEXT))`}},
	}
}

// Fsck checks the database against the format's consistency rules and
// SQLite's own integrity check. With repair, the problems that can be
// fixed without losing reachable data are fixed, in one transaction:
// orphan inodes (no name, not open here) and their data, dangling entries,
// wrong link counts, data of non-files, chunks past the end of a file.
func (a *Agent) Fsck(ctx context.Context, repair bool) (*FsckReport, error) {
	rep := &FsckReport{}
	rules := fsckRules(a.FS.ChunkSize())
	// spare is the JSON list of nameless inodes that are no orphans:
	// live staging inodes, and in repair mode also the files open here
	// (legitimately nameless after an unlink).
	spare := "[]"
	setSpare := func(c *store.Conn, open []int64) error {
		live, err := a.FS.LiveStagingInodes(c)
		if err != nil {
			return err
		}
		// Never "null": json_each would yield one NULL, and NOT IN a
		// list with a NULL is never true.
		b, _ := json.Marshal(append(append([]int64{}, live...), open...))
		spare = string(b)
		return nil
	}
	check := func(c *store.Conn) error {
		rep.Problems = rep.Problems[:0]
		var integ []string
		rows, err := c.Query("PRAGMA quick_check")
		if err != nil {
			return err
		}
		for rows.Next() {
			var s []byte
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return err
			}
			if string(s) != "ok" {
				integ = append(integ, string(s))
			}
		}
		rows.Close()
		for _, s := range integ {
			rep.Problems = append(rep.Problems, Problem{Rule: "sqlite", Detail: s})
		}
		for _, r := range rules {
			var args []any
			if r.spare {
				args = append(args, spare)
			}
			rows, err := c.Query(r.query, args...)
			if err != nil {
				return fmt.Errorf("fsck rule %s: %w", r.name, err)
			}
			for rows.Next() {
				var id int64
				var detail []byte
				if err := rows.Scan(&id, &detail); err != nil {
					rows.Close()
					return err
				}
				rep.Problems = append(rep.Problems, Problem{Rule: r.name, Detail: string(detail), Repairable: len(r.repair) > 0})
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
		return c.QueryRow("SELECT (SELECT COUNT(*) FROM fs_inode), (SELECT COUNT(*) FROM fs_dentry), (SELECT COUNT(*) FROM fs_data)").
			Scan(&rep.Inodes, &rep.Dentries, &rep.Chunks)
	}
	if !repair {
		err := a.DB.Do(ctx, func(c *store.Conn) error {
			if err := setSpare(c, nil); err != nil {
				return err
			}
			return check(c)
		})
		return rep, err
	}
	err := a.DB.Write(ctx, func(c *store.Conn) error {
		if err := setSpare(c, a.FS.OpenInodes()); err != nil {
			return err
		}
		if err := check(c); err != nil {
			return err
		}
		before := len(rep.Problems)
		if before == 0 {
			return nil
		}
		for _, r := range rules {
			for _, q := range r.repair {
				var args []any
				if r.spare {
					args = append(args, spare)
				}
				if _, err := c.Exec(q, args...); err != nil {
					return fmt.Errorf("fsck repair %s: %w", r.name, err)
				}
			}
		}
		if err := check(c); err != nil {
			return err
		}
		rep.Repaired = before - len(rep.Problems)
		return nil
	})
	a.FS.Invalidate()
	return rep, err
}
