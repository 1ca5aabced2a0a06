//go:build !js && !cgo

package store

import (
	"database/sql"
	"database/sql/driver"
	"github.com/agentfs-go/agentfs/core/internal/crypt"

	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// DriverName names the SQLite under the engine, for benchmarks and
// diagnostics.
const DriverName = "ncruces-purego"

// openConnector opens SQLite compiled to Go (ncruces/go-sqlite3, the
// same engine as the WebAssembly build) on real files: a build without
// cgo (CGO_ENABLED=0, cross-compiled for darwin or windows) has no C
// SQLite to link. Its VFS locks files with OFD locks (linux, darwin) or
// LockFileEx (windows), as SQLite's own unix and win32 VFSes do, and
// shares the WAL index through mmap'ed -shm files, so WAL mode, reader
// pools and other processes on the same file work as with the cgo
// driver.
func openConnector(dsn string) (driver.Connector, error) {
	return (&sqlitedriver.SQLite{}).OpenConnector(dsn)
}

// The cgo driver registers itself with database/sql as "agentfs-sqlite";
// this build's SQLite answers to the same name, so tools and tests that
// open a file beside the store find the engine's SQLite either way.
func init() { sql.Register("agentfs-sqlite", &sqlitedriver.SQLite{}) }

// registerCgoCrypt: none here (a build without cgo has no C SQLite); encrypted
// databases use ncruces' VFS (crypt.Register).
func registerCgoCrypt(*crypt.Codec) (string, func(), error) { return "", nil, nil }
