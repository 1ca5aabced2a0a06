//go:build !js

package store

import (
	"database/sql/driver"
	"os"
	"path/filepath"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// walMode: native builds keep the database in WAL mode (readers in
// parallel with the writer, other processes on the same file).
const walMode = true

// dataSource resolves path to the absolute path of the database file and
// the driver's name for it, creating the directory for a writable open.
func dataSource(path string, opts Options) (abs, dsn string, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", "", err
		}
	} else if _, err := os.Stat(abs); err != nil {
		return "", "", err
	}
	dsn = "file:" + uriPath(abs)
	return abs, dsn, nil
}

// Stat reports whether the database file path exists: nil, or an error
// (fs.ErrNotExist when it does not).
func Stat(path string) error {
	_, err := os.Stat(path)
	return err
}

// openConnector opens the engine's own driver over the SQLite that
// go-libsql links (internal/sqlite).
func openConnector(dsn string) (driver.Connector, error) {
	return sqlite.Driver{}.OpenConnector(dsn)
}
