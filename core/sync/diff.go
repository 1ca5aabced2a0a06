//go:build cgo

package sync

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The logical side of the client: what changed between two versions of
// a database, as rows, found by SQL on one connection with both attached
// (main = the local database, "base" = the server's state at the last
// pull, "nbase" = the server's state now).

// skipTable: SQLite's own tables and the protocol's bookkeeping never
// travel as rows.
func skipTable(name string) bool {
	return strings.HasPrefix(name, "sqlite_") || name == "turso_sync_last_change_id" || strings.HasPrefix(name, "turso_cdc")
}

type table struct {
	name   string
	cols   []string // every column, in order
	keys   []string // primary key columns, or ["rowid"]
	rowid  bool     // keyed by rowid (no declared primary key)
	create string   // CREATE TABLE statement
}

type op struct {
	t    *table
	del  bool
	cols []string
	vals []any
	key  []any
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// tables lists the user tables of schema (main, base, nbase).
func tables(ctx context.Context, c *sql.Conn, schema string) (map[string]*table, []string, error) {
	rows, err := c.QueryContext(ctx, "SELECT name, sql FROM "+schema+".sqlite_master WHERE type='table' ORDER BY rowid")
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*table{}
	var order []string
	for rows.Next() {
		var name string
		var create sql.NullString
		if err := rows.Scan(&name, &create); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if skipTable(name) {
			continue
		}
		out[name] = &table{name: name, create: create.String}
		order = append(order, name)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	for _, name := range order {
		t := out[name]
		r, err := c.QueryContext(ctx, "SELECT name, pk FROM "+schema+".pragma_table_info(?) ORDER BY cid", name)
		if err != nil {
			return nil, nil, err
		}
		pks := map[int]string{}
		for r.Next() {
			var col string
			var pk int
			if err := r.Scan(&col, &pk); err != nil {
				r.Close()
				return nil, nil, err
			}
			t.cols = append(t.cols, col)
			if pk > 0 {
				pks[pk] = col
			}
		}
		if err := r.Close(); err != nil {
			return nil, nil, err
		}
		for i := 1; i <= len(pks); i++ {
			t.keys = append(t.keys, pks[i])
		}
		if len(t.keys) == 0 {
			t.keys, t.rowid = []string{"rowid"}, true
		}
	}
	return out, order, nil
}

// indexSQL lists the CREATE statements of the indexes, triggers and views
// of schema, by name.
func indexSQL(ctx context.Context, c *sql.Conn, schema string) (map[string]string, []string, error) {
	rows, err := c.QueryContext(ctx, "SELECT name, sql, tbl_name FROM "+schema+".sqlite_master WHERE type IN ('index','trigger','view') AND sql IS NOT NULL ORDER BY rowid")
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	var order []string
	for rows.Next() {
		var name, s, tbl string
		if err := rows.Scan(&name, &s, &tbl); err != nil {
			return nil, nil, err
		}
		if skipTable(tbl) {
			continue
		}
		out[name] = s
		order = append(order, name)
	}
	return out, order, rows.Err()
}

// ifNotExists makes a CREATE statement idempotent.
func ifNotExists(s string) string {
	up := strings.ToUpper(s)
	for _, kw := range []string{"CREATE TABLE ", "CREATE UNIQUE INDEX ", "CREATE INDEX ", "CREATE TRIGGER ", "CREATE VIEW "} {
		if strings.HasPrefix(up, kw) && !strings.HasPrefix(up[len(kw):], "IF NOT EXISTS") {
			return s[:len(kw)] + "IF NOT EXISTS " + s[len(kw):]
		}
	}
	return s
}

func (t *table) selectCols() string {
	var b strings.Builder
	if t.rowid {
		b.WriteString("rowid, ")
	}
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c))
	}
	return b.String()
}

func (t *table) keyCols() string {
	if t.rowid {
		return "rowid"
	}
	q := make([]string, len(t.keys))
	for i, k := range t.keys {
		q[i] = quote(k)
	}
	return strings.Join(q, ", ")
}

// diff lists the row changes that turn schema old into schema new for t
// (t as it is in new; old may lack it: then every row is new).
func diff(ctx context.Context, c *sql.Conn, t *table, newS, oldS string, oldHas bool) ([]op, error) {
	var ops []op
	cols := t.cols
	if t.rowid {
		cols = append([]string{"rowid"}, t.cols...)
	}
	q := "SELECT " + t.selectCols() + " FROM " + newS + "." + quote(t.name)
	if oldHas {
		q += " EXCEPT SELECT " + t.selectCols() + " FROM " + oldS + "." + quote(t.name)
		// Deletions first: a row that moved (a rename) must leave its
		// unique key before its new version arrives. A deletion carries
		// the old row, so that its conflict group is known.
		dq := "SELECT " + t.selectCols() + " FROM " + oldS + "." + quote(t.name) + " WHERE (" + t.keyCols() + ") NOT IN (SELECT " + t.keyCols() + " FROM " + newS + "." + quote(t.name) + ")"
		dels, err := query(ctx, c, dq, len(cols))
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.name, err)
		}
		for _, r := range dels {
			ops = append(ops, op{t: t, del: true, cols: cols, vals: r, key: keyOf(t, cols, r)})
		}
	}
	rows, err := query(ctx, c, q, len(cols))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.name, err)
	}
	for _, r := range rows {
		ops = append(ops, op{t: t, cols: cols, vals: r, key: keyOf(t, cols, r)})
	}
	return ops, nil
}

func keyOf(t *table, cols []string, r []any) []any {
	var key []any
	for _, k := range t.keys {
		for i, col := range cols {
			if col == k {
				key = append(key, r[i])
			}
		}
	}
	return key
}

func query(ctx context.Context, c *sql.Conn, q string, n int, args ...any) ([][]any, error) {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// stmt is the SQL and arguments that apply o.
func (o *op) stmt() (string, []any) {
	if o.del {
		w := make([]string, len(o.t.keys))
		for i, k := range o.t.keys {
			if k == "rowid" {
				w[i] = "rowid = ?"
			} else {
				w[i] = quote(k) + " IS ?"
			}
		}
		return "DELETE FROM " + quote(o.t.name) + " WHERE " + strings.Join(w, " AND "), o.key
	}
	q := make([]string, len(o.cols))
	ph := make([]string, len(o.cols))
	for i, c := range o.cols {
		q[i], ph[i] = quote(c), "?"
		if c == "rowid" {
			q[i] = "rowid"
		}
	}
	// OR REPLACE: the row replaces the one with its key, and any other
	// row holding one of its unique values (a path another machine
	// gave to another entry): the version being applied wins.
	return "INSERT OR REPLACE INTO " + quote(o.t.name) + "(" + strings.Join(q, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")", o.vals
}

// inoTables name the column that ties a row to its file: a conflict on
// any row of a file is a conflict on the whole file.
var inoTables = map[string]string{"fs_inode": "ino", "fs_data": "ino", "fs_symlink": "ino", "fs_xattr": "ino",
	"fs_origin": "delta_ino", "agentfs_overlay_inode": "ino"}

// group is what a change belongs to for conflict resolution: a file (all
// its rows), else the row itself.
func (o *op) group() string {
	val := func(col string) any {
		for i, c := range o.cols {
			if c == col {
				return o.vals[i]
			}
		}
		return nil
	}
	if col, ok := inoTables[o.t.name]; ok {
		return fmt.Sprintf("ino:%v", val(col))
	}
	if o.t.name == "fs_dentry" {
		// A name in a directory: two machines that each gave the
		// same path to a file conflict on the path.
		return fmt.Sprintf("dentry:%v/%v", val("parent_ino"), val("name"))
	}
	return fmt.Sprintf("%s:%#v", o.t.name, o.key)
}
