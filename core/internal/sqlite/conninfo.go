package sqlite

/*
typedef struct sqlite3 sqlite3;
typedef long long sqlite3_int64;
int sqlite3_get_autocommit(sqlite3 *db);
sqlite3_int64 sqlite3_total_changes64(sqlite3 *db);
int sqlite3_changes(sqlite3 *db);
sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db);
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail);
int sqlite3_finalize(sqlite3_stmt *s);
int sqlite3_column_count(sqlite3_stmt *s);
const char *sqlite3_column_name(sqlite3_stmt *s, int i);
const char *sqlite3_column_decltype(sqlite3_stmt *s, int i);
int sqlite3_bind_parameter_count(sqlite3_stmt *s);
const char *sqlite3_bind_parameter_name(sqlite3_stmt *s, int i);
int sqlite3_stmt_readonly(sqlite3_stmt *s);
int sqlite3_stmt_isexplain(sqlite3_stmt *s);
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Description is what SQL-over-HTTP's "describe" reports of a statement
// without running it.
type Description struct {
	Params    []string // names ("" for a plain ?)
	Cols      []string
	Decltypes []string // "" where SQLite knows none
	ReadOnly  bool
	Explain   bool
}

// Describe prepares the first statement of query on dc (from
// sql.Conn.Raw) and describes it.
func Describe(dc any, query string) (Description, error) {
	c, ok := dc.(*conn)
	if !ok || c.db == nil {
		return Description{}, errors.New("sqlite: not a connection of this driver")
	}
	db := (*C.sqlite3)(unsafe.Pointer(c.db))
	cs := C.CString(query)
	defer C.free(unsafe.Pointer(cs))
	var s *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(db, cs, -1, &s, nil); rc != 0 {
		return Description{}, c.err(rc)
	}
	if s == nil {
		return Description{}, errors.New("sqlite: no statement in the text")
	}
	defer C.sqlite3_finalize(s)
	var d Description
	for i := 1; i <= int(C.sqlite3_bind_parameter_count(s)); i++ {
		d.Params = append(d.Params, C.GoString(C.sqlite3_bind_parameter_name(s, C.int(i))))
	}
	for i := 0; i < int(C.sqlite3_column_count(s)); i++ {
		d.Cols = append(d.Cols, C.GoString(C.sqlite3_column_name(s, C.int(i))))
		d.Decltypes = append(d.Decltypes, C.GoString(C.sqlite3_column_decltype(s, C.int(i))))
	}
	d.ReadOnly = C.sqlite3_stmt_readonly(s) != 0
	d.Explain = C.sqlite3_stmt_isexplain(s) != 0
	return d, nil
}

// ConnInfo is what SQL-over-HTTP servers (core/sync) report after each
// statement: whether a transaction is open, and the rows the statement
// changed. Read through sql.Conn.Raw on this driver's connection.
type ConnInfo struct {
	Autocommit   bool
	TotalChanges int64
	Changes      int64
	LastInsertID int64
}

// Info reads ConnInfo from dc, the value sql.Conn.Raw passes.
func Info(dc any) (ConnInfo, error) {
	c, ok := dc.(*conn)
	if !ok || c.db == nil {
		return ConnInfo{}, errors.New("sqlite: not a connection of this driver")
	}
	db := (*C.sqlite3)(unsafe.Pointer(c.db))
	return ConnInfo{
		Autocommit:   C.sqlite3_get_autocommit(db) != 0,
		TotalChanges: int64(C.sqlite3_total_changes64(db)),
		Changes:      int64(C.sqlite3_changes(db)),
		LastInsertID: int64(C.sqlite3_last_insert_rowid(db)),
	}, nil
}
