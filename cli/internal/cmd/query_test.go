package cmd

import (
	"encoding/json"
	"testing"
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
	for _, sql := range []string{
		"DELETE FROM kv_store",
		"INSERT INTO kv_store (key, value, created_at, updated_at) VALUES ('x', '1', 0, 0) RETURNING key",
		"CREATE TABLE t (x)",
		"DROP TABLE kv_store",
	} {
		wantFail(t, 1, []string{"query", "t", sql}, "query is read-only", "Try:")
	}
	// Turning query_only off does not help: the statement runs in a
	// transaction that is rolled back.
	mustRun(t, "query", "t", "PRAGMA query_only = 0")
	run(t, "", "query", "t", "PRAGMA query_only = 0; DELETE FROM kv_store")
	checkOut(t, "data after refused writes", mustRun(t, "kv", "t", "ls"), "keep\t1\n")

	wantFail(t, 1, []string{"query", "t", "SELEC 1"}, `query: near "SELEC": syntax error`)
	wantFail(t, 2, []string{"query", "t", "SELECT 1", "--format", "xml"}, "--format must be table, json or csv")
	wantFail(t, 2, []string{"query", "t"}, "accepts 2 arg(s)")
	wantFail(t, 2, []string{"query", "t", "SELECT 1", "--bogus"}, "unknown flag: --bogus")
}
