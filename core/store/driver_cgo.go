//go:build !js && cgo

package store

import (
	"database/sql/driver"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
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

// registerCgoCrypt registers the encrypting VFS of this driver
// (internal/sqlite/cryptvfs.c): an encrypted database runs on the same
// SQLite as a plain one, which costs a read a third to a half less CPU
// than ncruces' SQLite compiled to Go (bench/crypt.sh). The page format
// is internal/crypt's either way.
func registerCgoCrypt(codec *crypt.Codec) (string, func(), error) {
	return sqlite.RegisterCrypt(codec)
}
