//go:build !js && cgo

package store

import (
	"database/sql/driver"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// DriverName names the SQLite under the engine, for benchmarks and
// diagnostics.
const DriverName = "libsql-cgo"

// openConnector opens the engine's own driver over the SQLite that
// go-libsql links (internal/sqlite).
func openConnector(dsn string) (driver.Connector, error) {
	return sqlite.Driver{}.OpenConnector(dsn)
}
