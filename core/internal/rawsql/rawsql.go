// Package rawsql opens a plain database/sql handle on a database file with
// the SQLite driver of this build (our cgo driver, or ncruces' SQLite
// compiled to Go when cgo is off), bypassing the store: for tests that
// play another process or damage a file on purpose.
package rawsql

import "database/sql"

// Open opens dsn ("file:PATH?...") with this build's SQLite driver.
func Open(dsn string) (*sql.DB, error) { return sql.Open(driverName, dsn) }
