package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

// query runs sql on a and returns its columns and rows.
func query(a *core.Agent, lim core.QueryLimits, sql string, args ...any) (cols []string, rows [][]any, err error) {
	err = a.Query(context.Background(), sql, args, lim, func(c []string, row []any) error {
		if row == nil {
			cols = c
			return nil
		}
		rows = append(rows, append([]any{}, row...))
		return nil
	})
	return cols, rows, err
}

func mustQuery(t *testing.T, a *core.Agent, sql string, args ...any) ([]string, [][]any) {
	t.Helper()
	cols, rows, err := query(a, core.QueryLimits{}, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return cols, rows
}

// queryAgent is an agent with a file, two keys and a tool call.
func queryAgent(t *testing.T) *core.Agent {
	t.Helper()
	a := newAgent(t)
	mustWrite(t, a, "/notes/a.txt", "hello")
	ctx := context.Background()
	if err := a.KV.Set(ctx, "user", map[string]any{"name": "ada", "langs": []string{"go", "sql"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.KV.Set(ctx, "when", "2026-01-02 15:04:05"); err != nil {
		t.Fatal(err)
	}
	id, err := a.Tools.Start(ctx, "search", []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Tools.Success(ctx, id, []byte(`{"hits":3}`)); err != nil {
		t.Fatal(err)
	}
	return a
}

// Ordinary reads keep working: tables, parameters of every type, JSON
// functions and tables, recursive CTEs, window functions, introspection
// PRAGMAs; values come back as stored.
func TestQuery_Reads(t *testing.T) {
	a := queryAgent(t)
	for _, c := range []struct {
		sql  string
		args []any
		cols []string
		rows [][]any
	}{
		{"SELECT name FROM fs_dentry WHERE name = ?", []any{"a.txt"}, []string{"name"}, [][]any{{"a.txt"}}},
		{"SELECT size FROM fs_inode WHERE ino = (SELECT ino FROM fs_dentry WHERE name = ?)", []any{"a.txt"}, []string{"size"}, [][]any{{int64(5)}}},
		{"SELECT key FROM kv_store WHERE key >= ? ORDER BY key", []any{"u"}, []string{"key"}, [][]any{{"user"}, {"when"}}},
		{"SELECT json_extract(value, '$.name'), value ->> '$.langs[1]' FROM kv_store WHERE key = 'user'", nil, []string{"json_extract(value, '$.name')", "value ->> '$.langs[1]'"}, [][]any{{"ada", "sql"}}},
		{"SELECT j.value FROM kv_store, json_each(kv_store.value, '$.langs') AS j WHERE kv_store.key = 'user' ORDER BY 1", nil, []string{"value"}, [][]any{{"go"}, {"sql"}}},
		{"SELECT name, status, json_extract(result, '$.hits') FROM tool_calls WHERE name = ? AND status = ?", []any{"search", "success"}, []string{"name", "status", "json_extract(result, '$.hits')"}, [][]any{{"search", "success", int64(3)}}},
		{"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 5) SELECT sum(x), count(*) FROM c", nil, []string{"sum(x)", "count(*)"}, [][]any{{int64(15), int64(5)}}},
		{"SELECT x, row_number() OVER (ORDER BY x DESC) FROM (SELECT 1 AS x UNION ALL SELECT 2)", nil, []string{"x", "row_number() OVER (ORDER BY x DESC)"}, [][]any{{int64(2), int64(1)}, {int64(1), int64(2)}}},
		{"SELECT ?, ?, ?, ?, ?", []any{int64(-7), 2.5, "t", []byte{0, 1}, nil}, []string{"?", "?", "?", "?", "?"}, [][]any{{int64(-7), 2.5, "t", []byte{0, 1}, nil}}},
		{"SELECT json_extract(value, '$') FROM kv_store WHERE key = 'when'", nil, []string{"json_extract(value, '$')"}, [][]any{{"2026-01-02 15:04:05"}}},
		{"SELECT name FROM pragma_table_info('kv_store') WHERE pk", nil, []string{"name"}, [][]any{{"key"}}},
		{"SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table'", nil, []string{"count(*) > 0"}, [][]any{{int64(1)}}},
		{"SELECT key FROM kv_store WHERE 0", nil, []string{"key"}, nil},
		{"SELECT upper(hex(zeroblob(0))), abs(-2), round(2.5), date('2026-01-02')", nil, []string{"upper(hex(zeroblob(0)))", "abs(-2)", "round(2.5)", "date('2026-01-02')"}, [][]any{{"", int64(2), 3.0, "2026-01-02"}}},
		{"SELECT 1; -- a trailing comment is no statement", nil, []string{"1"}, [][]any{{int64(1)}}},
	} {
		cols, rows := mustQuery(t, a, c.sql, c.args...)
		if !reflect.DeepEqual(cols, c.cols) || !reflect.DeepEqual(rows, c.rows) {
			t.Errorf("%s:\n got %q %#v\nwant %q %#v", c.sql, cols, rows, c.cols, c.rows)
		}
	}
	// Table-shaped PRAGMAs run as statements too.
	if _, rows := mustQuery(t, a, "PRAGMA table_info(kv_store)"); len(rows) < 3 {
		t.Errorf("PRAGMA table_info(kv_store) gave %d rows", len(rows))
	}
	if _, rows := mustQuery(t, a, "PRAGMA user_version"); len(rows) != 1 {
		t.Errorf("PRAGMA user_version gave %d rows", len(rows))
	}
	// A bad statement is INVALID, with SQLite's message.
	if _, _, err := query(a, core.QueryLimits{}, "SELEC 1"); !errors.Is(err, core.ErrQueryInvalid) || !strings.Contains(err.Error(), `near "SELEC": syntax error`) {
		t.Errorf("syntax error: %v", err)
	}
	if _, _, err := query(a, core.QueryLimits{}, "SELECT ?", struct{}{}); !errors.Is(err, core.ErrQueryInvalid) {
		t.Errorf("a struct parameter: %v", err)
	}
}

// wantRefused asserts that sql is refused as not allowed, naming what.
func wantRefused(t *testing.T, a *core.Agent, what, sql string, args ...any) {
	t.Helper()
	_, rows, err := query(a, core.QueryLimits{}, sql, args...)
	if !errors.Is(err, core.ErrQueryNotAllowed) {
		t.Errorf("%s: err = %v, rows %v; want not allowed", sql, err, rows)
		return
	}
	if !strings.HasPrefix(err.Error(), "query: not allowed: ") || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "(query reads this agent's database only)") {
		t.Errorf("%s: message %q does not name %q", sql, err, what)
	}
}

// wantRefusedIfPresent is wantRefused for a function or table that a
// build may lack (the WebAssembly build has no file functions): there,
// SQLite's own "no such" error is as good.
func wantRefusedIfPresent(t *testing.T, a *core.Agent, what, sql string, args ...any) {
	t.Helper()
	_, _, err := query(a, core.QueryLimits{}, sql, args...)
	if errors.Is(err, core.ErrQueryInvalid) && (strings.Contains(err.Error(), "no such function") || strings.Contains(err.Error(), "no such table")) {
		return
	}
	wantRefused(t, a, what, sql, args...)
}

func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a refused query (%v)", path, err)
	}
}

// The file functions of the linked SQLite (readfile, writefile, fsdir)
// and other reaches outside the database are refused, and leave no file.
func TestAttack_SQL_HostFileFunctions(t *testing.T) {
	a := queryAgent(t)
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantRefusedIfPresent(t, a, "function writefile()", "SELECT writefile(?, 'pwned')", pwned)
	wantRefusedIfPresent(t, a, "function writefile()", "SELECT 1 FROM kv_store WHERE writefile(?, value) > 0", pwned)
	wantRefusedIfPresent(t, a, "function readfile()", "SELECT readfile(?)", secret)
	wantRefusedIfPresent(t, a, "reading fsdir", "SELECT name FROM fsdir(?)", dir)
	wantRefusedIfPresent(t, a, "reading fsdir", "SELECT count(*) FROM fsdir(?)", dir)
	wantRefusedIfPresent(t, a, "reading fsdir", "SELECT name FROM main.fsdir(?)", dir)
	wantRefusedIfPresent(t, a, "function load_extension()", "SELECT load_extension(?)", filepath.Join(dir, "evil.so"))
	wantRefusedIfPresent(t, a, "reading sqlite_dbpage", "SELECT data FROM sqlite_dbpage")
	wantRefusedIfPresent(t, a, "function sha3_query()", "SELECT sha3_query('SELECT 1')")
	wantRefusedIfPresent(t, a, "function fts3_tokenizer()", "SELECT fts3_tokenizer('simple')")
	wantRefusedIfPresent(t, a, "function sqlite3mc_config()", "SELECT sqlite3mc_config('cipher')")
	// edit() is not in the linked build; whatever the build, it must not run.
	if _, _, err := query(a, core.QueryLimits{}, "SELECT edit('x', ?)", pwned); err == nil {
		t.Error("edit() ran")
	}
	wantAbsent(t, pwned)
	// A writefile hidden in a view of the database is refused too.
	if err := a.DB.Write(context.Background(), func(c *store.Conn) error {
		_, err := c.Exec("CREATE VIEW evil AS SELECT writefile('" + pwned + "', 'x') AS w")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantRefusedIfPresent(t, a, "writefile()", "SELECT * FROM evil")
	wantRefusedIfPresent(t, a, "writefile()", "SELECT count(*) FROM evil")
	wantAbsent(t, pwned)
}

// A virtual table in the database's own schema (a database file from
// elsewhere) cannot be read: its module could reach the host.
func TestAttack_SQL_VirtualTableInSchema(t *testing.T) {
	a := queryAgent(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.Write(context.Background(), func(c *store.Conn) error {
		_, err := c.Exec("CREATE VIRTUAL TABLE hostdir USING fsdir")
		return err
	}); err != nil {
		t.Skipf("this SQLite cannot create an fsdir table: %v", err)
	}
	wantRefused(t, a, "reading hostdir", "SELECT name FROM hostdir WHERE dir = ?", dir)
	wantRefused(t, a, "reading hostdir", "SELECT count(*) FROM hostdir WHERE dir = ?", dir)
}

// ATTACH (and VACUUM INTO, which attaches) is refused, creates no file,
// and nothing stays attached for the next query.
func TestAttack_SQL_Attach(t *testing.T) {
	a := queryAgent(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	wantRefused(t, a, "ATTACH", "ATTACH ? AS other", other)
	wantRefused(t, a, "ATTACH", "ATTACH 'file:"+other+"?mode=rwc' AS other")
	wantRefused(t, a, "a statement that writes", "VACUUM INTO ?", other)
	wantRefused(t, a, "DETACH", "DETACH main")
	wantAbsent(t, other)
	for i := 0; i < 3; i++ { // every connection of the query pool
		_, rows := mustQuery(t, a, "SELECT name FROM pragma_database_list")
		if !reflect.DeepEqual(rows, [][]any{{"main"}}) {
			t.Fatalf("databases after a refused ATTACH: %v", rows)
		}
	}
}

// Writes of any kind are refused and change nothing.
func TestAttack_SQL_Writes(t *testing.T) {
	a := queryAgent(t)
	for _, c := range []struct{ what, sql string }{
		{"DELETE kv_store", "DELETE FROM kv_store"},
		{"INSERT kv_store", "INSERT INTO kv_store (key, value, created_at, updated_at) VALUES ('x', '1', 0, 0) RETURNING key"},
		{"UPDATE kv_store", "UPDATE kv_store SET value = '0'"},
		{"DELETE kv_store", "WITH k AS (SELECT key FROM kv_store) DELETE FROM kv_store WHERE key IN k"},
		{"schema change", "CREATE TABLE t (x)"},
		{"schema change", "CREATE TEMP TABLE t (x)"},
		{"schema change", "CREATE TEMP TABLE t AS SELECT * FROM kv_store"},
		{"schema change", "CREATE TEMP VIEW v AS SELECT 1"},
		{"schema change", "CREATE VIRTUAL TABLE temp.h USING fsdir"},
		{"schema change", "DROP TABLE kv_store"},
		{"ALTER TABLE kv_store", "ALTER TABLE kv_store ADD COLUMN y"},
		{"schema change", "CREATE INDEX i ON kv_store(value)"},
		{"transaction (BEGIN)", "BEGIN"},
		{"SAVEPOINT", "SAVEPOINT s"},
		{"schema change", "ANALYZE"},
		{"REINDEX", "REINDEX"},
	} {
		wantRefused(t, a, c.what, c.sql)
	}
	_, rows := mustQuery(t, a, "SELECT count(*) FROM kv_store")
	if rows[0][0] != int64(2) {
		t.Errorf("kv_store has %v rows after refused writes, want 2", rows[0][0])
	}
}

// PRAGMAs that change settings are refused; the settings stay.
func TestAttack_SQL_PragmaWrites(t *testing.T) {
	a := queryAgent(t)
	journalMode := func() string {
		var mode string
		if err := a.DB.Do(context.Background(), func(c *store.Conn) error {
			return c.QueryRow("PRAGMA journal_mode").Scan(&mode)
		}); err != nil {
			t.Fatal(err)
		}
		return mode
	}
	mode := journalMode() // wal; memory in the WebAssembly build
	for _, sql := range []string{
		"PRAGMA journal_mode = delete",
		"PRAGMA query_only = 0",
		"PRAGMA writable_schema = 1",
		"PRAGMA user_version = 7",
		"PRAGMA main.application_id = 7",
		"PRAGMA trusted_schema = 1",
		"PRAGMA key = 'x'",
		"PRAGMA cipher = 'chacha20'",
		"PRAGMA temp_store_directory = '/tmp'",
		"PRAGMA integrity_check",
		"PRAGMA journal_mode",
	} {
		wantRefused(t, a, "PRAGMA", sql)
	}
	if m := journalMode(); m != mode {
		t.Errorf("journal_mode = %q after refused changes, was %q", m, mode)
	}
	_, rows := mustQuery(t, a, "PRAGMA user_version")
	if rows[0][0] != int64(0) {
		t.Errorf("user_version = %v after refused changes", rows[0][0])
	}
}

// Only one statement runs: a second one is refused, whatever it is.
func TestAttack_SQL_MultipleStatements(t *testing.T) {
	a := queryAgent(t)
	for _, sql := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 1; DELETE FROM kv_store",
		"SELECT 1; ATTACH 'x.db' AS x",
		"SELECT 1 /* c */ ; PRAGMA query_only = 0",
		"SELECT 1;;SELECT 2;",
		"SELECT 1; garbage",
	} {
		wantRefused(t, a, "more than one statement", sql)
	}
	_, rows := mustQuery(t, a, "SELECT count(*) FROM kv_store")
	if rows[0][0] != int64(2) {
		t.Errorf("kv_store has %v rows, want 2", rows[0][0])
	}
}

const endlessCTE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"

// wantAnswers asserts that the agent still answers queries and writes.
func wantAnswers(t *testing.T, a *core.Agent) {
	t.Helper()
	for i := 0; i < 3; i++ { // every connection of the query pool
		if _, rows := mustQuery(t, a, "SELECT count(*) FROM kv_store"); rows[0][0] != int64(2) {
			t.Fatalf("count = %v", rows[0][0])
		}
	}
	if err := a.KV.Set(context.Background(), "after", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.KV.Delete(context.Background(), "after"); err != nil {
		t.Fatal(err)
	}
}

// An endless recursive CTE stops on the step budget; the agent answers
// afterwards.
func TestAttack_SQL_EndlessCTEStepBudget(t *testing.T) {
	a := queryAgent(t)
	_, _, err := query(a, core.QueryLimits{Steps: 200_000}, endlessCTE)
	if !errors.Is(err, core.ErrQueryStopped) || !strings.Contains(err.Error(), "query: stopped: step budget of 200000 steps") {
		t.Fatalf("endless CTE: %v", err)
	}
	// The same with rows streamed to the caller.
	n := 0
	err = a.Query(context.Background(), "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c", nil, core.QueryLimits{Steps: 200_000}, func(_ []string, row []any) error {
		n++
		return nil
	})
	if !errors.Is(err, core.ErrQueryStopped) || n < 2 {
		t.Fatalf("endless CTE streamed: %v after %d rows", err, n)
	}
	wantAnswers(t, a)
}

// An endless query without a budget stops when its context ends: cancelled
// while SQLite is inside one long step, cancelled between rows, or at a
// deadline. The agent answers afterwards.
func TestAttack_SQL_EndlessCTECancel(t *testing.T) {
	a := queryAgent(t)
	noBudget := core.QueryLimits{Steps: -1}

	ctx, cancel := context.WithCancel(context.Background())
	err := a.Query(ctx, endlessCTE, nil, noBudget, func(_ []string, row []any) error {
		if row == nil {
			cancel() // prepared: count(*) now steps until stopped
		}
		return nil
	})
	if !errors.Is(err, core.ErrQueryStopped) || !errors.Is(err, context.Canceled) || err.Error() != "query: stopped: cancelled" {
		t.Fatalf("cancelled inside a step: %v", err)
	}
	wantAnswers(t, a)

	ctx, cancel = context.WithCancel(context.Background())
	n := 0
	err = a.Query(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c", nil, noBudget, func(_ []string, row []any) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled between rows: %v", err)
	}
	wantAnswers(t, a)

	ctx, cancel = context.WithTimeout(context.Background(), 1)
	defer cancel()
	<-ctx.Done()
	err = a.Query(ctx, endlessCTE, nil, noBudget, func([]string, []any) error { return nil })
	if !errors.Is(err, core.ErrQueryStopped) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past its deadline: %v", err)
	}
	wantAnswers(t, a)
}

// Closing the agent stops a query that is running.
func TestAttack_SQL_CloseStopsQuery(t *testing.T) {
	a, err := core.Open(context.Background(), filepath.Join(t.TempDir(), "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- a.Query(context.Background(), endlessCTE, nil, core.QueryLimits{Steps: -1}, func(_ []string, row []any) error {
			close(started)
			return nil
		})
	}()
	<-started
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, core.ErrQueryStopped) || !errors.Is(err, store.ErrClosed) {
		t.Fatalf("query of a closed agent: %v", err)
	}
	if _, _, err := query(a, core.QueryLimits{}, "SELECT 1"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("query after Close: %v", err)
	}
}

// The result bound stops a result that grows past it, naming the limit.
func TestQuery_ResultTooLarge(t *testing.T) {
	a := queryAgent(t)
	_, rows, err := query(a, core.QueryLimits{MaxBytes: 10_000}, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 100000) SELECT x, printf('%050d', x) FROM c")
	if !errors.Is(err, core.ErrQueryTooLarge) || !strings.Contains(err.Error(), "more than 10000 bytes") {
		t.Fatalf("large result: %v", err)
	}
	if len(rows) == 0 || len(rows) > 10_000/58+1 {
		t.Errorf("%d rows passed before the bound", len(rows))
	}
	// A value longer than the length limit fails in SQLite, not in memory.
	if _, _, err := query(a, core.QueryLimits{}, "SELECT length(zeroblob(100000000))"); !errors.Is(err, core.ErrQueryInvalid) || !strings.Contains(err.Error(), "too big") {
		t.Errorf("a GB string: %v", err)
	}
	wantAnswers(t, a)
}

// A read-only agent (agentfs query opens one) queries the same way.
func TestQuery_ReadOnlyAgent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.db")
	a, err := core.Open(context.Background(), p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, a, "/f", "x")
	a.Close()
	ro, err := core.Open(context.Background(), p, core.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, rows := mustQuery(t, ro, "SELECT name FROM fs_dentry WHERE name = 'f'"); len(rows) != 1 {
		t.Fatalf("rows = %v", rows)
	}
	wantRefused(t, ro, "DELETE fs_dentry", "DELETE FROM fs_dentry")
}

// Snapshot restore names columns read from the two database files: a
// column name with a quote and a second statement stays a name.
func TestAttack_SQL_SnapshotColumnNames(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("snapshots are files beside the database; the WebAssembly build keeps databases in memory")
	}
	ctx := context.Background()
	a := queryAgent(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	evil := `x"); SELECT writefile('` + pwned + `', 'pwned'); --`
	if err := a.DB.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec(`ALTER TABLE kv_store ADD COLUMN "` + strings.ReplaceAll(evil, `"`, `""`) + `" DEFAULT 'v'`); err != nil {
			return err
		}
		_, err := c.Exec(`UPDATE kv_store SET "` + strings.ReplaceAll(evil, `"`, `""`) + `" = 'kept'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSnapshot(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := a.KV.Set(ctx, "later", 1); err != nil {
		t.Fatal(err)
	}
	if err := a.RestoreSnapshot(ctx, "s"); err != nil {
		t.Fatalf("restore with a crafted column name: %v", err)
	}
	wantAbsent(t, pwned)
	_, rows := mustQuery(t, a, `SELECT count(*), min("`+strings.ReplaceAll(evil, `"`, `""`)+`") FROM kv_store`)
	if rows[0][0] != int64(2) || rows[0][1] != "kept" {
		t.Errorf("restored kv_store: %v", rows)
	}
}
