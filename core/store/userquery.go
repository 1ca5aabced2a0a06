package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// User SQL (agentfs query, AgentService.Query) runs on connections of its
// own, opened read-only and guarded so that a statement can read this
// agent's database and nothing else: an authorizer admits SELECT, reads
// of the database's own tables and views, an allow-list of pure
// functions, recursive CTEs and an allow-list of introspection PRAGMAs,
// and refuses everything else (ATTACH, writes, CREATE TEMP, transactions,
// readfile/writefile/fsdir, load_extension...). Extension loading is
// off, defensive mode on, the schema untrusted. A step budget and the
// caller's context stop a statement that runs too long; the connection
// is clean again for the next query.

// DefaultQuerySteps is the VM step budget of a user query when
// QueryLimits.Steps is 0: a full scan of a few million rows fits, an
// endless recursive CTE stops within seconds.
const DefaultQuerySteps = 100_000_000

// maxQueryValue bounds any string or blob a user query builds
// (SQLITE_LIMIT_LENGTH), so printf('%.*c', 1e9, 'x') cannot take a GiB.
const maxQueryValue = 64 << 20

// queryConns is how many user queries of one database run at once; more
// wait for a connection (or for their context).
const queryConns = 2

// QueryLimits bound a user query.
type QueryLimits struct {
	// Steps is the budget of SQLite virtual-machine steps of the statement
	// (DefaultQuerySteps when 0; negative: no budget).
	Steps int64
	// MaxBytes bounds the result handed to visit: text and blob bytes
	// plus 8 per value (0: no bound, for callers that stream).
	MaxBytes int64
}

// Errors of a user query; each QueryError wraps one of them.
var (
	// ErrQueryNotAllowed: the statement does something besides reading
	// this database.
	ErrQueryNotAllowed = errors.New("query: not allowed")
	// ErrQueryStopped: the step budget ran out or the context ended.
	ErrQueryStopped = errors.New("query: stopped")
	// ErrQueryTooLarge: the result passed QueryLimits.MaxBytes.
	ErrQueryTooLarge = errors.New("query: result too large")
	// ErrQueryInvalid: SQLite rejected the statement (syntax, unknown
	// table, bad argument...).
	ErrQueryInvalid = errors.New("query: invalid statement")
)

// QueryError is why a user query failed.
type QueryError struct {
	Msg   string
	Kind  error // one of the ErrQuery* errors
	Cause error // the context's error for a stop, the driver's otherwise
}

func (e *QueryError) Error() string { return e.Msg }

// Unwrap gives both the kind and the cause to errors.Is: a query
// stopped by a cancelled context is also context.Canceled.
func (e *QueryError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

func notAllowed(what string) error {
	return &QueryError{Msg: "query: not allowed: " + what + " (query reads this agent's database only)", Kind: ErrQueryNotAllowed}
}

// UserQuery runs query, one statement from a user, with args bound to its
// parameters (int64, float64, string, []byte, nil), on a guarded
// read-only connection (see above). It calls visit first with the column
// names and a nil row (also when no row follows), then with each row:
// int64, float64, string, []byte (a copy visit may keep) or nil, exactly
// as stored (no conversion of date-like text). The row slice is reused.
// Errors of the query are *QueryError; visit's own are returned as is.
func (db *DB) UserQuery(ctx context.Context, query string, args []any, lim QueryLimits, visit func(cols []string, row []any) error) error {
	for i, a := range args {
		switch a.(type) {
		case nil, int64, float64, string, []byte:
		default:
			return &QueryError{Msg: fmt.Sprintf("query: parameter %d: a %T cannot be bound (integer, real, text, blob or null)", i+1, a), Kind: ErrQueryInvalid}
		}
	}
	if lim.Steps == 0 {
		lim.Steps = DefaultQuerySteps
	} else if lim.Steps < 0 {
		lim.Steps = 1 << 62
	}
	pool, err := db.queryPool()
	if err != nil {
		return err
	}
	db.flushForReaders()
	conn, err := pool.Conn(ctx)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return stoppedErr(ctx, lim)
		case errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed"):
			return ErrClosed
		}
		return classify(err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		// Close stops the statement through qctx (cause ErrClosed).
		qctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		db.qmu.Lock()
		p := db.qguards[dc]
		if p != nil {
			p.running = cancel
		}
		closed := db.qclosed
		db.qmu.Unlock()
		if p == nil {
			return errors.New("store: query connection is not guarded")
		}
		defer func() {
			db.qmu.Lock()
			p.running = nil
			db.qmu.Unlock()
		}()
		if closed {
			return ErrClosed
		}
		return runGuarded(qctx, dc, p, query, args, lim, visit)
	})
}

// queryPool opens the pool of guarded connections at the first query.
func (db *DB) queryPool() (*sql.DB, error) {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	if db.qclosed {
		return nil, ErrClosed
	}
	if db.qpool != nil {
		return db.qpool, nil
	}
	dsn := db.dsn
	if strings.Contains(dsn, "?") {
		dsn += "&mode=ro"
	} else {
		dsn += "?mode=ro"
	}
	base, err := db.connector(dsn)
	if err != nil {
		return nil, classify(err)
	}
	pragmas := append(db.pragmas(), "PRAGMA query_only = ON")
	p := sql.OpenDB(&connector{base: base, pragmas: pragmas, setup: db.guardNew})
	p.SetMaxOpenConns(queryConns)
	p.SetMaxIdleConns(queryConns)
	p.SetConnMaxLifetime(0)
	db.qpool = p
	return p, nil
}

// guardNew guards a new connection of the query pool.
func (db *DB) guardNew(dc driver.Conn) error {
	p := &policy{}
	if err := guardConn(dc, p); err != nil {
		return err
	}
	db.qmu.Lock()
	if db.qguards == nil {
		db.qguards = map[any]*policy{}
	}
	db.qguards[dc] = p
	db.qmu.Unlock()
	return nil
}

// closeQueryPool closes the guarded connections (DB.Close).
func (db *DB) closeQueryPool() error {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	db.qclosed = true
	for _, p := range db.qguards {
		if p.running != nil {
			p.running(ErrClosed) // its statement stops within 1000 steps
		}
	}
	db.qguards = nil
	if db.qpool == nil {
		return nil
	}
	err := db.qpool.Close()
	db.qpool = nil
	return err
}

// schemaQuery lists the names of the main schema, and which of them a
// query may read: tables and views, not virtual tables (whose module
// could reach outside the database).
const schemaQuery = `SELECT name, type = 'view' OR (type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%') FROM sqlite_schema WHERE type IN ('table', 'view')`

// moduleQuery lists the virtual-table modules of a connection, before it
// is guarded: their names are the eponymous tables (fsdir, sqlite_dbpage,
// carray...) that a statement reaches without naming a schema.
const moduleQuery = `SELECT name FROM pragma_module_list`

// policy is the authorizer of one guarded connection. Its maps are set
// before each statement is prepared, on the goroutine that prepares it
// (the authorizer runs inside prepare and inside pragma functions'
// steps, on that goroutine).
type policy struct {
	modules map[string]bool // virtual-table modules of the connection
	tables  map[string]bool // main schema: name -> readable
	refused string          // the first refusal since the last reset

	running context.CancelCauseFunc // of the query running; guarded by DB.qmu
}

// SQLite's authorizer action codes (sqlite3.h).
const (
	authCreateIndex = iota + 1
	authCreateTable
	authCreateTempIndex
	authCreateTempTable
	authCreateTempTrigger
	authCreateTempView
	authCreateTrigger
	authCreateView
	authDelete
	authDropIndex
	authDropTable
	authDropTempIndex
	authDropTempTable
	authDropTempTrigger
	authDropTempView
	authDropTrigger
	authDropView
	authInsert
	authPragma
	authRead
	authSelect
	authTransaction
	authUpdate
	authAttach
	authDetach
	authAlterTable
	authReindex
	authAnalyze
	authCreateVTable
	authDropVTable
	authFunction
	authSavepoint
	authRecursive
)

var actionNames = [...]string{
	authCreateIndex: "CREATE INDEX", authCreateTable: "CREATE TABLE", authCreateTempIndex: "CREATE TEMP INDEX",
	authCreateTempTable: "CREATE TEMP TABLE", authCreateTempTrigger: "CREATE TEMP TRIGGER", authCreateTempView: "CREATE TEMP VIEW",
	authCreateTrigger: "CREATE TRIGGER", authCreateView: "CREATE VIEW", authDelete: "DELETE", authDropIndex: "DROP INDEX",
	authDropTable: "DROP TABLE", authDropTempIndex: "DROP TEMP INDEX", authDropTempTable: "DROP TEMP TABLE",
	authDropTempTrigger: "DROP TEMP TRIGGER", authDropTempView: "DROP TEMP VIEW", authDropTrigger: "DROP TRIGGER",
	authDropView: "DROP VIEW", authInsert: "INSERT", authPragma: "PRAGMA", authRead: "read", authSelect: "SELECT",
	authTransaction: "transaction", authUpdate: "UPDATE", authAttach: "ATTACH", authDetach: "DETACH",
	authAlterTable: "ALTER TABLE", authReindex: "REINDEX", authAnalyze: "ANALYZE", authCreateVTable: "CREATE VIRTUAL TABLE",
	authDropVTable: "DROP VIRTUAL TABLE", authFunction: "function", authSavepoint: "SAVEPOINT", authRecursive: "recursive CTE",
}

// queryFunctions are the SQL functions a query may call: SQLite's core,
// date, math, aggregate, window and JSON functions, and pure extras of
// the linked builds. Not: readfile, writefile, edit, fsdir, lsmode,
// load_extension, sha3_query (runs SQL), fts3_tokenizer, sqlite_log,
// optimize, the sqlite3mc_* cipher controls, geopoly/rtree/fts helpers,
// or anything added later without review.
var queryFunctions = setOf(
	// core scalar
	"abs", "changes", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif",
	"instr", "last_insert_rowid", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min",
	"nullif", "octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign",
	"soundex", "sqlite_compileoption_get", "sqlite_compileoption_used", "sqlite_offset", "sqlite_source_id",
	"sqlite_version", "substr", "substring", "total_changes", "trim", "typeof", "unhex", "unicode", "unlikely",
	"upper", "zeroblob", "regexp", "regexpi",
	// date and time
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff", "current_date",
	"current_time", "current_timestamp",
	// math
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees",
	"exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh",
	"sqrt", "tan", "tanh", "trunc",
	// aggregate and window
	"avg", "count", "group_concat", "string_agg", "sum", "total", "row_number", "rank", "dense_rank",
	"percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
	"median", "mode", "stdev", "variance", "lower_quartile", "upper_quartile",
	// JSON
	"json", "jsonb", "json_array", "jsonb_array", "json_array_length", "json_error_position", "json_extract",
	"jsonb_extract", "json_insert", "jsonb_insert", "json_object", "jsonb_object", "json_patch", "jsonb_patch",
	"json_pretty", "json_quote", "json_remove", "jsonb_remove", "json_replace", "jsonb_replace", "json_set",
	"jsonb_set", "json_type", "json_valid", "json_group_array", "jsonb_group_array", "json_group_object",
	"jsonb_group_object", "->", "->>",
	// pure extras (libsql, SQLite3 Multiple Ciphers' extension functions)
	"uuid", "uuid_str", "uuid_blob", "sha3", "charindex", "difference", "leftstr", "rightstr", "padl", "padr",
	"padc", "proper", "replicate", "reverse", "square", "strfilter", "cot", "coth", "atn2",
	"vector", "vector32", "vector64", "vector_extract", "vector_distance_cos", "vector_distance_l2",
	// SQLite3 Multiple Ciphers runs SELECT sqlite3mc_config_table() for
	// every PRAGMA; it returns a pointer, which reads as NULL in SQL.
	"sqlite3mc_config_table",
)

// queryPragmas are the PRAGMAs a query may run, with any argument: they
// only describe the schema or the build.
var queryPragmas = setOf(
	"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
	"foreign_key_list", "collation_list", "function_list", "module_list", "pragma_list",
	"compile_options", "database_list",
)

// queryPragmaReads are the PRAGMAs a query may run without an argument
// (with one, they would change a setting).
var queryPragmaReads = setOf(
	"application_id", "user_version", "schema_version", "data_version", "page_size", "page_count",
	"freelist_count", "encoding", "auto_vacuum", "foreign_keys", "max_page_count",
)

// queryVTables are the eponymous virtual tables a query may read: JSON
// walks and integer series (pragma_* tables follow queryPragmas).
var queryVTables = setOf("json_each", "json_tree", "jsonb_each", "jsonb_tree", "generate_series")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// allow is the authorizer: see sqlite3_set_authorizer for what each
// action passes. It records the first refusal for the error message.
func (p *policy) allow(action int, a, b, schema, inner string) bool {
	if p.check(action, a, b, schema) {
		return true
	}
	if p.refused == "" {
		p.refused = describe(action, a, b)
	}
	return false
}

func (p *policy) check(action int, a, b, schema string) bool {
	switch action {
	case authSelect, authRecursive:
		return true
	case authFunction:
		return queryFunctions[strings.ToLower(b)]
	case authRead:
		return p.readable(strings.ToLower(a), b, schema)
	case authPragma:
		if schema != "" && !strings.EqualFold(schema, "main") {
			return false
		}
		name := strings.ToLower(a)
		return queryPragmas[name] || (b == "" && queryPragmaReads[name])
	}
	return false
}

// readable decides a read of table (lower case), column of schema.
func (p *policy) readable(table, column, schema string) bool {
	if schema != "main" && !(schema == "" && column == "") {
		// temp, or an attached database (none can be attached).
		return false
	}
	if ok, known := p.tables[table]; known {
		// The database's own names come first, as in SQLite's lookup.
		return ok
	}
	if table == "sqlite_master" || table == "sqlite_schema" || queryVTables[table] {
		return true
	}
	if name, ok := strings.CutPrefix(table, "pragma_"); ok {
		return queryPragmas[name] || queryPragmaReads[name]
	}
	// SQLite reports a FROM item none of whose columns is used (count(*))
	// with no schema, whether a table, a CTE or a subquery: an unknown
	// name is a CTE unless it is an eponymous virtual table (a module).
	return schema == "" && !p.modules[table]
}

// describe names a refused action for the error message.
func describe(action int, a, b string) string {
	switch action {
	case authFunction:
		return "function " + b + "()"
	case authRead:
		return "reading " + a
	case authPragma:
		if b != "" {
			return "PRAGMA " + a + " = " + b
		}
		return "PRAGMA " + a
	case authAttach:
		return "ATTACH"
	case authDetach:
		return "DETACH"
	case authTransaction:
		return "transaction (" + a + ")"
	case authAlterTable: // a is the schema
		return "ALTER TABLE " + b
	case authInsert, authUpdate, authDelete:
		if t := strings.ToLower(a); t == "sqlite_master" || t == "sqlite_temp_master" {
			// SQLite asks for the schema table first: CREATE, DROP,
			// ALTER, ANALYZE stop here.
			return "a schema change (CREATE, DROP, ALTER, ANALYZE)"
		}
	}
	name := "action " + fmt.Sprint(action)
	if action > 0 && action < len(actionNames) && actionNames[action] != "" {
		name = actionNames[action]
	}
	if a != "" && !strings.HasPrefix(a, "sqlite_") {
		name += " " + a
	}
	return name
}

// load sets the schema names before a statement is prepared.
func (p *policy) load(names []string, readable []bool) {
	p.tables = make(map[string]bool, len(names))
	for i, n := range names {
		p.tables[strings.ToLower(n)] = readable[i]
	}
	p.refused = ""
}

// stoppedErr explains a statement stopped by its context or budget.
func stoppedErr(ctx context.Context, lim QueryLimits) error {
	switch cause := context.Cause(ctx); {
	case cause == nil:
	case errors.Is(cause, context.DeadlineExceeded):
		return &QueryError{Msg: "query: stopped: deadline exceeded", Kind: ErrQueryStopped, Cause: cause}
	case errors.Is(cause, ErrClosed):
		return &QueryError{Msg: "query: stopped: the database was closed", Kind: ErrQueryStopped, Cause: cause}
	default:
		return &QueryError{Msg: "query: stopped: cancelled", Kind: ErrQueryStopped, Cause: cause}
	}
	return &QueryError{Msg: fmt.Sprintf("query: stopped: step budget of %d steps used up (narrow the query: WHERE, LIMIT)", lim.Steps), Kind: ErrQueryStopped}
}

// sizer enforces QueryLimits.MaxBytes over the rows of a result.
type sizer struct {
	max, n int64
}

func (s *sizer) add(row []any) error {
	if s.max <= 0 {
		return nil
	}
	for _, v := range row {
		s.n += 8
		switch v := v.(type) {
		case string:
			s.n += int64(len(v))
		case []byte:
			s.n += int64(len(v))
		}
	}
	if s.n > s.max {
		return &QueryError{Msg: fmt.Sprintf("query: result too large: more than %d bytes (the result limit; select fewer rows or columns: WHERE, LIMIT)", s.max), Kind: ErrQueryTooLarge}
	}
	return nil
}

// finish turns a driver error of a guarded statement into a QueryError.
func finish(ctx context.Context, err error, p *policy, budget, stopped bool, lim QueryLimits) error {
	var qe *QueryError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &qe):
		return err
	case budget || stopped || ctx.Err() != nil && isInterrupt(err):
		return stoppedErr(ctx, lim)
	case p.refused != "":
		return notAllowed(p.refused)
	case strings.Contains(err.Error(), "unsafe use of"):
		// SQLite's own refusal, with the schema untrusted, of a function
		// with side effects inside a view ("unsafe use of writefile()").
		return notAllowed(sqliteMessage(err))
	}
	return &QueryError{Msg: "query: " + sqliteMessage(err), Kind: ErrQueryInvalid, Cause: err}
}

// sqliteMessage is the driver's message without a driver's prefix.
func sqliteMessage(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "sqlite3: ")
	s = strings.TrimPrefix(s, "sqlite: ")
	// ncruces words SQLITE_ERROR's code before the message.
	return strings.TrimPrefix(s, "SQL logic error: ")
}
