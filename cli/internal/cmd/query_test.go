package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/store"
)

func TestQueryFormats(t *testing.T) {
	newAgent(t)
	mustRun(t, "kv", "t", "set", "a", "1")
	mustRun(t, "kv", "t", "set", "b", `{"x": "y,z"}`)
	mustRun(t, "kv", "t", "set", "c", "multi\nline")
	q := `SELECT key, value, x'00ff10' AS blob, NULL AS missing, 2.5 AS num, length(key) AS n FROM kv_store ORDER BY key`

	checkOut(t, "table", mustRun(t, "query", "t", q), lines(
		`key  value           blob    missing  num  n`,
		`a    1               00ff10  NULL     2.5  1`,
		`b    {"x":"y,z"}     00ff10  NULL     2.5  1`,
		`c    "multi\\nline"  00ff10  NULL     2.5  1`,
	))
	checkOut(t, "csv", mustRun(t, "query", "t", q, "--format", "csv"), lines(
		`key,value,blob,missing,num,n`,
		`a,1,00ff10,,2.5,1`,
		`b,"{""x"":""y,z""}",00ff10,,2.5,1`,
		`c,"""multi\nline""",00ff10,,2.5,1`,
	))
	out := mustRun(t, "query", "t", q, "--format", "json")
	checkOut(t, "json", out, `[
  {"key": "a", "value": "1", "blob": "AP8Q", "missing": null, "num": 2.5, "n": 1},
  {"key": "b", "value": "{\"x\":\"y,z\"}", "blob": "AP8Q", "missing": null, "num": 2.5, "n": 1},
  {"key": "c", "value": "\"multi\\nline\"", "blob": "AP8Q", "missing": null, "num": 2.5, "n": 1}
]
`)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("json output does not parse into 3 rows: %v", err)
	}
	checkOut(t, "json of no rows", mustRun(t, "query", "t", "SELECT key FROM kv_store WHERE 0", "--format", "json"), "[]\n")
	checkOut(t, "table of no rows", mustRun(t, "query", "t", "SELECT key FROM kv_store WHERE 0"), "key\n")
	// Table cells stay on one line: control characters are escaped.
	checkOut(t, "newline and tab in a cell", mustRun(t, "query", "t", "SELECT 'a' || char(10) || 'b' || char(9) || 'c' AS s"), lines("s", `a\nb\tc`))
	checkOut(t, "a date-like text", mustRun(t, "query", "t", "SELECT '2026-01-02 15:04:05' AS d"), lines("d", "2026-01-02 15:04:05"))
}

func TestQueryIsReadOnly(t *testing.T) {
	newAgent(t)
	mustRun(t, "kv", "t", "set", "keep", "1")
	for _, c := range []struct{ sql, what string }{
		{"DELETE FROM kv_store", "DELETE kv_store"},
		{"INSERT INTO kv_store (key, value, created_at, updated_at) VALUES ('x', '1', 0, 0) RETURNING key", "INSERT kv_store"},
		{"CREATE TABLE t (x)", "a schema change"},
		{"DROP TABLE kv_store", "a schema change"},
		{"PRAGMA query_only = 0", "PRAGMA query_only = 0"},
	} {
		wantFail(t, 1, []string{"query", "t", c.sql}, "query: not allowed: "+c.what, "(query reads this agent's database only)", "Try: query runs one SELECT")
	}
	checkOut(t, "data after refused writes", mustRun(t, "kv", "t", "ls"), "keep\t1\n")

	wantFail(t, 1, []string{"query", "t", "SELEC 1"}, `query: near "SELEC": syntax error`, "Try: list the tables")
	wantFail(t, 2, []string{"query", "t", "SELECT 1", "--format", "xml"}, "--format must be table, json or csv")
	wantFail(t, 2, []string{"query", "t", "SELECT 1", "--max-steps", "0"}, "--max-steps must be positive")
	wantFail(t, 2, []string{"query", "t"}, "accepts 2 arg(s)")
	wantFail(t, 2, []string{"query", "t", "SELECT 1", "--bogus"}, "unknown flag: --bogus")
}

// The attack that found the hole: SQLite's file functions wrote and read
// host files from agentfs query. Relative paths would land in the
// working directory, absolute ones anywhere.
func TestAttack_SQL_CLIHostFiles(t *testing.T) {
	newAgent(t)
	dir := t.TempDir()
	for _, c := range []struct{ sql, what string }{
		{"select writefile('pwned', 'pwned')", "function writefile()"},
		{"select writefile('" + filepath.Join(dir, "pwned") + "', 'pwned')", "function writefile()"},
		{"select readfile('/etc/passwd')", "function readfile()"},
		{"select name from fsdir('" + dir + "')", "reading fsdir"},
		{"select load_extension('" + filepath.Join(dir, "x.so") + "')", "function load_extension()"},
		{"attach '" + filepath.Join(dir, "other.db") + "' as o", "ATTACH"},
		{"select 1; attach 'x.db' as x", "more than one statement"},
	} {
		r := wantFail(t, 1, []string{"query", "t", c.sql})
		// The SQLite of CGO-free builds (ncruces) has no writefile,
		// readfile, fsdir or load_extension at all: the query fails as
		// unknown instead of refused, which is as safe.
		if !strings.Contains(r.err, "query: not allowed: "+c.what) && (store.DriverName == "libsql-cgo" || !strings.Contains(r.err, "query: no such ")) {
			t.Errorf("agentfs query t %s: stderr %q, want it to contain %q", c.sql, r.err, "query: not allowed: "+c.what)
		}
	}
	for _, p := range []string{"pwned", filepath.Join(dir, "pwned"), filepath.Join(dir, "other.db"), "x.db"} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after refused queries (%v)", p, err)
		}
	}
	checkOut(t, "databases", mustRun(t, "query", "t", "SELECT name FROM pragma_database_list"), lines("name", "main"))
}

// An endless recursive CTE stops on --max-steps with a hint.
func TestAttack_SQL_CLIEndlessCTE(t *testing.T) {
	newAgent(t)
	wantFail(t, 1, []string{"query", "t", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", "--max-steps", "100000"},
		"query: stopped: step budget of 100000 steps", "Try: narrow the query")
	checkOut(t, "after", mustRun(t, "query", "t", "SELECT 1 AS one"), lines("one", "1"))
}
