// Package sqlite is a database/sql driver over SQLite's C API, the copy of
// SQLite that go-libsql links into every binary (its static library
// exports the whole sqlite3_* API).
//
// Why not go-libsql's own driver: it prepares every statement again on
// each execution, copies each bound blob twice, and fetches each column
// of each row with calls of its own through its Rust layer. The engine
// runs a handful of short statements per operation, so that was about
// half of the CPU of a FUSE request. Here each connection keeps its
// prepared statements (by SQL text), binds blobs in place (pinned Go
// memory, SQLITE_STATIC), and reads a whole row per cgo call.
//
// Values: INTEGER is int64, REAL float64, TEXT string, BLOB []byte (in
// SQLite's memory until the next row: database/sql copies it except into
// *sql.RawBytes), NULL nil (no conversion of text that looks like a date).
package sqlite

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef int64_t sqlite3_int64;

int sqlite3_threadsafe(void);
int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int sqlite3_close_v2(sqlite3 *db);
int sqlite3_extended_result_codes(sqlite3 *db, int onoff);
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail);
int sqlite3_step(sqlite3_stmt *s);
int sqlite3_reset(sqlite3_stmt *s);
int sqlite3_clear_bindings(sqlite3_stmt *s);
int sqlite3_finalize(sqlite3_stmt *s);
int sqlite3_bind_parameter_count(sqlite3_stmt *s);
int sqlite3_bind_int64(sqlite3_stmt *s, int i, sqlite3_int64 v);
int sqlite3_bind_double(sqlite3_stmt *s, int i, double v);
int sqlite3_bind_null(sqlite3_stmt *s, int i);
int sqlite3_bind_text(sqlite3_stmt *s, int i, const char *p, int n, void (*d)(void *));
int sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *p, int n, void (*d)(void *));
int sqlite3_bind_zeroblob(sqlite3_stmt *s, int i, int n);
int sqlite3_column_count(sqlite3_stmt *s);
const char *sqlite3_column_name(sqlite3_stmt *s, int i);
int sqlite3_column_type(sqlite3_stmt *s, int i);
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *s, int i);
double sqlite3_column_double(sqlite3_stmt *s, int i);
const void *sqlite3_column_blob(sqlite3_stmt *s, int i);
const unsigned char *sqlite3_column_text(sqlite3_stmt *s, int i);
int sqlite3_column_bytes(sqlite3_stmt *s, int i);
const char *sqlite3_errmsg(sqlite3 *db);
const char *sqlite3_errstr(int rc);
int sqlite3_extended_errcode(sqlite3 *db);
sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db);
int sqlite3_changes(sqlite3 *db);
int sqlite3_stmt_readonly(sqlite3_stmt *s);
int sqlite3_file_control(sqlite3 *db, const char *name, int op, void *arg);

// Bindings whose destructor argument is one of SQLite's two special
// values, which Go cannot spell. The memory is passed as an integer: the
// Go side keeps it alive and in place (pinned for a blob SQLite keeps),
// and cgo's pointer check would otherwise inspect whatever allocation a
// caller's slice happens to alias.
static int bind_blob(sqlite3_stmt *s, int i, uintptr_t p, int n) {
	if (n == 0) return sqlite3_bind_zeroblob(s, i, 0);
	return sqlite3_bind_blob(s, i, (const void *)p, n, (void (*)(void *))0);
}
static int bind_text(sqlite3_stmt *s, int i, uintptr_t p, int n) {
	return sqlite3_bind_text(s, i, n ? (const char *)p : "", n, (void (*)(void *))-1);
}

// A column of the current row, as step_row reads it.
typedef struct {
	int type, n;
	sqlite3_int64 i;
	double f;
	const void *p;
} column;

// step_row steps s and, when it has a row, reads its n columns into cols:
// one cgo call per row.
static int step_row(sqlite3_stmt *s, column *cols, int n) {
	int rc = sqlite3_step(s);
	if (rc != 100) return rc; // SQLITE_ROW
	for (int k = 0; k < n; k++) {
		column *c = &cols[k];
		c->type = sqlite3_column_type(s, k);
		c->n = 0;
		c->p = 0;
		switch (c->type) {
		case 1: c->i = sqlite3_column_int64(s, k); break;
		case 2: c->f = sqlite3_column_double(s, k); break;
		case 3: c->p = sqlite3_column_text(s, k); c->n = sqlite3_column_bytes(s, k); break;
		case 4: c->p = sqlite3_column_blob(s, k); c->n = sqlite3_column_bytes(s, k); break;
		}
	}
	return rc;
}

// The WAL hook of WALFrames: SQLite calls it after each commit of the
// connection with the number of frames in the log.
int sqlite3_wal_hook(sqlite3 *db, int (*cb)(void *, sqlite3 *, const char *, int), void *arg);
static int wal_frames_cb(void *p, sqlite3 *db, const char *name, int n) {
	*(sqlite3_int64 *)p = n;
	return 0; // SQLITE_OK
}
static void wal_frames(sqlite3 *db, sqlite3_int64 *p) { sqlite3_wal_hook(db, p ? wal_frames_cb : 0, p); }

// step_done steps s to its end (a write, or rows nobody reads).
static int step_done(sqlite3_stmt *s) {
	int rc;
	while ((rc = sqlite3_step(s)) == 100) {}
	return rc;
}
*/
import "C"

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	// Links the static library whose sqlite3_* functions this package
	// calls (its own driver is not used).
	_ "github.com/tursodatabase/go-libsql"
)

// DriverName is the name the driver is registered under.
const DriverName = "agentfs-sqlite"

func init() { sql.Register(DriverName, Driver{}) }

const (
	sqliteOK   = 0
	sqliteRow  = 100
	sqliteDone = 101

	openReadWrite = 0x00000002
	openCreate    = 0x00000004
	openURI       = 0x00000040
	openFullMutex = 0x00010000

	// maxCached prepared statements per connection; past it the cache is
	// emptied (statements built with a varying number of rows would
	// otherwise pile up).
	maxCached = 256
)

// Error is an error reported by SQLite.
type Error struct {
	Code int // extended result code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Primary is the primary result code (SQLITE_BUSY is 5, ...).
func (e *Error) Primary() int { return e.Code & 0xff }

func (c *conn) err(rc C.int) error {
	msg := C.GoString(C.sqlite3_errmsg(c.db))
	code := int(C.sqlite3_extended_errcode(c.db))
	if code&0xff != int(rc)&0xff {
		// The connection's last error is not this one (a misuse code).
		code, msg = int(rc), C.GoString(C.sqlite3_errstr(rc))
	}
	return &Error{Code: code, Msg: msg}
}

// Driver opens connections; the name is a file name or a file: URI.
type Driver struct{}

func (Driver) Open(name string) (driver.Conn, error) { return open(name) }

func (Driver) OpenConnector(name string) (driver.Connector, error) {
	return &connector{name: name}, nil
}

type connector struct{ name string }

func (c *connector) Connect(context.Context) (driver.Conn, error) { return open(c.name) }
func (c *connector) Driver() driver.Driver                        { return Driver{} }

// libsqlReady lets go-libsql configure the shared SQLite library first:
// it asserts that its own sqlite3_config call succeeds, which SQLite
// refuses once a connection has been opened, so a process that opened
// ours first would abort at its first go-libsql connection.
var libsqlReady = sync.OnceFunc(func() {
	if db, err := sql.Open("libsql", "file::memory:"); err == nil {
		db.Ping()
		db.Close()
	}
})

func open(name string) (*conn, error) {
	libsqlReady()
	if C.sqlite3_threadsafe() == 0 {
		return nil, errors.New("sqlite: the linked SQLite is built without thread safety")
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var db *C.sqlite3
	rc := C.sqlite3_open_v2(cname, &db, openReadWrite|openCreate|openURI|openFullMutex, walVFS())
	if rc != sqliteOK {
		var err error = &Error{Code: int(rc), Msg: C.GoString(C.sqlite3_errstr(rc))}
		if db != nil {
			err = (&conn{db: db}).err(rc)
			C.sqlite3_close_v2(db)
		}
		return nil, err
	}
	C.sqlite3_extended_result_codes(db, 1)
	return &conn{db: db, cache: map[string]*stmt{}}, nil
}

// conn is one SQLite connection. database/sql uses it from one goroutine
// at a time; Rows may stay open while other statements run on it.
type conn struct {
	db    *C.sqlite3
	cache map[string]*stmt // idle prepared statements by SQL text
	guard *guard           // set by Guard (guard.go)
	// frames is where the WAL hook of WALFrames writes (C memory), nil
	// without one.
	frames *C.sqlite3_int64
}

// WALFrames makes SQLite report, after each commit of this connection,
// how many frames its write-ahead log holds (its mxFrame, other
// processes' frames included), and returns a function that takes the
// report: ok is false when there was no report since the last call (no
// commit, or one SQLite does not report: a statement whose commit happens
// at its reset, as INSERT ... RETURNING's, is not reported; nor are
// checkpoints) and after Close. The store reads it after every commit,
// where reading the -shm file cost a pread. The hook replaces the one
// PRAGMA wal_autocheckpoint sets, and that pragma replaces it: call it
// after the pragma. Use the function where the connection is used (not
// concurrently with its statements).
func (c *conn) WALFrames() func() (n int64, ok bool) {
	if c.db == nil {
		return func() (int64, bool) { return 0, false }
	}
	if c.frames == nil {
		c.frames = (*C.sqlite3_int64)(C.malloc(C.size_t(unsafe.Sizeof(C.sqlite3_int64(0)))))
		*c.frames = -1
	}
	C.wal_frames(c.db, c.frames)
	return func() (int64, bool) {
		if c.frames == nil || *c.frames < 0 {
			return 0, false
		}
		n := int64(*c.frames)
		*c.frames = -1
		return n, true
	}
}

// ReserveBytes is SQLITE_FCNTL_RESERVE_BYTES on the main database: it
// sets the bytes kept free at the end of every page to n (which takes
// effect while the file is empty; n < 0 changes nothing) and answers the
// number requested before. Encrypted databases keep their cipher's nonce
// and tag there.
func (c *conn) ReserveBytes(n int) (int, error) {
	main := C.CString("main")
	defer C.free(unsafe.Pointer(main))
	v := C.int(n)
	if rc := C.sqlite3_file_control(c.db, main, 38, unsafe.Pointer(&v)); rc != sqliteOK {
		return 0, c.err(rc)
	}
	return int(v), nil
}

func (c *conn) Close() error {
	for _, s := range c.cache {
		s.finalize()
	}
	c.cache = nil
	if c.db == nil {
		return nil
	}
	if c.frames != nil {
		C.wal_frames(c.db, nil) // nothing writes to it past here
	}
	rc := C.sqlite3_close_v2(c.db)
	c.db = nil
	if c.frames != nil {
		C.free(unsafe.Pointer(c.frames))
		c.frames = nil
	}
	if c.guard != nil {
		c.guard.free() // the connection, which used it, is gone
		c.guard = nil
	}
	if rc != sqliteOK {
		return &Error{Code: int(rc), Msg: C.GoString(C.sqlite3_errstr(rc))}
	}
	return nil
}

// IsValid tells database/sql whether to keep the connection.
func (c *conn) IsValid() bool { return c.db != nil }

func (c *conn) Begin() (driver.Tx, error) { return c.BeginTx(context.Background(), driver.TxOptions{}) }

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if _, err := c.ExecContext(ctx, "BEGIN", nil); err != nil {
		return nil, err
	}
	return tx{c}, nil
}

type tx struct{ c *conn }

func (t tx) Commit() error {
	_, err := t.c.ExecContext(context.Background(), "COMMIT", nil)
	return err
}
func (t tx) Rollback() error {
	_, err := t.c.ExecContext(context.Background(), "ROLLBACK", nil)
	return err
}

// Prepare is for database/sql's Stmt: the statement is prepared when it
// runs (from the cache).
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	s, err := c.take(query)
	if err != nil {
		return nil, err
	}
	n := s.nparam
	c.release(s)
	return &prepared{c: c, query: query, n: n}, nil
}

type prepared struct {
	c     *conn
	query string
	n     int
}

func (p *prepared) Close() error  { return nil }
func (p *prepared) NumInput() int { return p.n }
func (p *prepared) Exec(args []driver.Value) (driver.Result, error) {
	return p.c.ExecContext(context.Background(), p.query, named(args))
}
func (p *prepared) Query(args []driver.Value) (driver.Rows, error) {
	return p.c.QueryContext(context.Background(), p.query, named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// stmt is a prepared statement with its column buffer.
type stmt struct {
	s      *C.sqlite3_stmt
	query  string
	cols   *C.column // C memory: ncol entries
	ncol   int
	nparam int // parameters it takes: arguments past them are ignored, as go-libsql did
	names  []string
	pin    runtime.Pinner
}

func (s *stmt) finalize() {
	if s.s != nil {
		C.sqlite3_finalize(s.s)
		s.s = nil
	}
	if s.cols != nil {
		C.free(unsafe.Pointer(s.cols))
		s.cols = nil
	}
}

// take returns the statement for query: the cached one if idle, else a
// new one (query must be a single statement).
func (c *conn) take(query string) (*stmt, error) {
	if c.db == nil {
		return nil, driver.ErrBadConn
	}
	if s, ok := c.cache[query]; ok {
		delete(c.cache, query) // in use: a nested query of the same text prepares its own
		return s, nil
	}
	cq := C.CString(query)
	defer C.free(unsafe.Pointer(cq))
	var s *C.sqlite3_stmt
	var tail *C.char
	if rc := C.sqlite3_prepare_v2(c.db, cq, C.int(len(query)+1), &s, &tail); rc != sqliteOK {
		return nil, c.err(rc)
	}
	if s == nil {
		return nil, errors.New("sqlite: empty statement")
	}
	if !c.blank(tail) {
		C.sqlite3_finalize(s)
		return nil, fmt.Errorf("%w, with arguments (%q follows)", ErrMultipleStatements, C.GoString(tail))
	}
	if c.guard != nil && C.sqlite3_stmt_readonly(s) == 0 {
		// What the authorizer has no action code for (REINDEX, ...).
		C.sqlite3_finalize(s)
		return nil, ErrNotReadOnly
	}
	st := &stmt{s: s, query: query, ncol: int(C.sqlite3_column_count(s)), nparam: int(C.sqlite3_bind_parameter_count(s))}
	if st.ncol > 0 {
		st.cols = (*C.column)(C.calloc(C.size_t(st.ncol), C.size_t(unsafe.Sizeof(C.column{}))))
		st.names = make([]string, st.ncol)
		for i := range st.names {
			st.names[i] = C.GoString(C.sqlite3_column_name(s, C.int(i)))
		}
	}
	return st, nil
}

// ErrMultipleStatements: a query held more than one statement, where one
// runs at a time (only the first would have been prepared).
var ErrMultipleStatements = errors.New("sqlite: one statement at a time")

// ErrNotReadOnly: a guarded connection refused a statement that SQLite
// says may write (sqlite3_stmt_readonly).
var ErrNotReadOnly = errors.New("sqlite: statement may write the database")

// blank reports whether the SQL text at p holds no statement: only
// semicolons, white space and comments, as SQLite's own tokenizer reads
// them (preparing text without a statement yields no statement and runs
// nothing, not even the authorizer).
func (c *conn) blank(p *C.char) bool {
	for *p != 0 {
		if rest := C.GoString(p); strings.Trim(rest, "; \t\r\n") == "" {
			return true
		}
		var s *C.sqlite3_stmt
		var tail *C.char
		rc := C.sqlite3_prepare_v2(c.db, p, -1, &s, &tail)
		if s != nil {
			C.sqlite3_finalize(s)
		}
		if rc != sqliteOK || s != nil || tail == p {
			return false
		}
		p = tail
	}
	return true
}

// release resets s and puts it back in the cache (or finalizes it).
func (c *conn) release(s *stmt) {
	if s.s != nil {
		C.sqlite3_reset(s.s)
		C.sqlite3_clear_bindings(s.s)
	}
	s.pin.Unpin() // SQLite no longer points into the bound blobs
	// A guarded connection prepares every statement anew, so each one
	// passes its authorizer as things are now.
	if c.cache == nil || s.s == nil || c.guard != nil {
		s.finalize()
		return
	}
	if old, ok := c.cache[s.query]; ok {
		old.finalize()
	}
	if len(c.cache) >= maxCached {
		for q, o := range c.cache {
			o.finalize()
			delete(c.cache, q)
		}
	}
	c.cache[s.query] = s
}

// bind binds args to s. Blobs are bound in place: pinned until release.
func (c *conn) bind(s *stmt, args []driver.NamedValue) error {
	for i, a := range args {
		if a.Name != "" {
			return fmt.Errorf("sqlite: named parameter %q not supported", a.Name)
		}
		idx := C.int(a.Ordinal)
		if a.Ordinal == 0 {
			idx = C.int(i + 1)
		}
		if int(idx) > s.nparam {
			continue
		}
		var rc C.int
		switch v := a.Value.(type) {
		case nil:
			rc = C.sqlite3_bind_null(s.s, idx)
		case int64:
			rc = C.sqlite3_bind_int64(s.s, idx, C.sqlite3_int64(v))
		case float64:
			rc = C.sqlite3_bind_double(s.s, idx, C.double(v))
		case bool:
			b := 0
			if v {
				b = 1
			}
			rc = C.sqlite3_bind_int64(s.s, idx, C.sqlite3_int64(b))
		case []byte:
			if v == nil {
				rc = C.sqlite3_bind_null(s.s, idx)
				break
			}
			var p uintptr
			if len(v) > 0 {
				s.pin.Pin(&v[0]) // SQLite reads it until release
				p = uintptr(unsafe.Pointer(&v[0]))
			}
			rc = C.bind_blob(s.s, idx, C.uintptr_t(p), C.int(len(v)))
		case string:
			rc = C.bind_text(s.s, idx, C.uintptr_t(uintptr(unsafe.Pointer(unsafe.StringData(v)))), C.int(len(v)))
			runtime.KeepAlive(v) // copied by SQLite during the call
		case time.Time:
			t := v.Format(time.RFC3339Nano)
			rc = C.bind_text(s.s, idx, C.uintptr_t(uintptr(unsafe.Pointer(unsafe.StringData(t)))), C.int(len(t)))
			runtime.KeepAlive(t)
		default:
			return fmt.Errorf("sqlite: cannot bind a %T", a.Value)
		}
		if rc != sqliteOK {
			return c.err(rc)
		}
	}
	return nil
}

// ExecContext runs query to its end. Without arguments, query may hold
// several statements separated by semicolons.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if len(args) == 0 {
		if _, ok := c.cache[query]; !ok && strings.Contains(query, ";") {
			return c.execScript(query)
		}
	}
	s, err := c.take(query)
	if err != nil {
		return nil, err
	}
	defer c.release(s)
	if err := c.bind(s, args); err != nil {
		return nil, err
	}
	if rc := C.step_done(s.s); rc != sqliteDone {
		return nil, c.err(rc)
	}
	return result{int64(C.sqlite3_last_insert_rowid(c.db)), int64(C.sqlite3_changes(c.db))}, nil
}

// execScript runs every statement of a script (none cached).
func (c *conn) execScript(script string) (driver.Result, error) {
	if c.db == nil {
		return nil, driver.ErrBadConn
	}
	cs := C.CString(script)
	defer C.free(unsafe.Pointer(cs))
	next := cs
	for *next != 0 {
		var s *C.sqlite3_stmt
		var tail *C.char
		if rc := C.sqlite3_prepare_v2(c.db, next, -1, &s, &tail); rc != sqliteOK {
			return nil, c.err(rc)
		}
		next = tail
		if s == nil { // whitespace or a comment
			continue
		}
		rc := C.step_done(s)
		C.sqlite3_finalize(s)
		if rc != sqliteDone {
			return nil, c.err(rc)
		}
	}
	return result{int64(C.sqlite3_last_insert_rowid(c.db)), int64(C.sqlite3_changes(c.db))}, nil
}

type result struct{ id, changes int64 }

func (r result) LastInsertId() (int64, error) { return r.id, nil }
func (r result) RowsAffected() (int64, error) { return r.changes, nil }

// QueryContext runs query; its rows are read by Next.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.take(query)
	if err != nil {
		return nil, err
	}
	if err := c.bind(s, args); err != nil {
		c.release(s)
		return nil, err
	}
	return &rows{c: c, s: s}, nil
}

type rows struct {
	c    *conn
	s    *stmt
	done bool
}

func (r *rows) Columns() []string { return r.s.names }

func (r *rows) Close() error {
	if r.s != nil {
		r.c.release(r.s)
		r.s = nil
	}
	return nil
}

func (r *rows) Next(dest []driver.Value) error {
	if r.done || r.s == nil {
		return io.EOF
	}
	rc := C.step_row(r.s.s, r.s.cols, C.int(r.s.ncol))
	switch rc {
	case sqliteRow:
	case sqliteDone:
		r.done = true
		return io.EOF
	default:
		r.done = true
		return r.c.err(rc)
	}
	cols := unsafe.Slice(r.s.cols, r.s.ncol)
	for i := range dest {
		col := &cols[i]
		switch col._type {
		case 1:
			dest[i] = int64(col.i)
		case 2:
			dest[i] = float64(col.f)
		case 3:
			dest[i] = C.GoStringN((*C.char)(col.p), col.n)
		case 4:
			// SQLite's own memory, valid until the next step or reset,
			// which only Next and Close do: database/sql copies it for
			// every destination but *sql.RawBytes, whose contract is the
			// same (valid until the next Next). File data is read this
			// way without an allocation and a copy per chunk.
			if col.n == 0 {
				dest[i] = []byte{}
			} else {
				dest[i] = unsafe.Slice((*byte)(col.p), int(col.n))
			}
		default:
			dest[i] = nil
		}
	}
	return nil
}

var (
	_ driver.DriverContext  = Driver{}
	_ driver.ConnBeginTx    = (*conn)(nil)
	_ driver.ExecerContext  = (*conn)(nil)
	_ driver.QueryerContext = (*conn)(nil)
	_ driver.Validator      = (*conn)(nil)
)
