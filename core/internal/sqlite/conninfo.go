package sqlite

/*
typedef struct sqlite3 sqlite3;
typedef long long sqlite3_int64;
int sqlite3_get_autocommit(sqlite3 *db);
sqlite3_int64 sqlite3_total_changes64(sqlite3 *db);
int sqlite3_changes(sqlite3 *db);
sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db);
*/
import "C"

import (
	"errors"
	"unsafe"
)

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
