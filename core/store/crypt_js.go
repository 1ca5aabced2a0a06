//go:build js

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// ErrNeedKey and friends exist in native builds; the WebAssembly build
// keeps databases in memory and has no encryption at rest.
var (
	ErrNeedKey      = errors.New("the database is encrypted: open it with a native build of agentfs and its key")
	ErrWrongKey     = errors.New("wrong key")
	ErrNotEncrypted = errors.New("the database is not encrypted")
)

func Ciphers() []string { return nil }

func (db *DB) setupCrypt(abs, dsn string) (string, error) {
	if db.opts.Encryption != nil {
		return "", fmt.Errorf("encryption at rest is not available in the WebAssembly build (its databases live in memory; ENOTSUP): open encrypted databases with the native engine (transport \"inprocess\" or \"process\"): %w", errors.ErrUnsupported)
	}
	return dsn, nil
}

func (db *DB) connector(dsn string) (driver.Connector, error) { return openConnector(dsn) }

func (db *DB) reserveCrypt(context.Context, *sql.Conn) error { return nil }

// CheckEncryption refuses every key: the WebAssembly build has no
// encryption at rest.
func CheckEncryption(e *Encryption) error {
	if e == nil {
		return nil
	}
	return fmt.Errorf("encryption at rest is not available in the WebAssembly build (its databases live in memory; ENOTSUP): open encrypted databases with the native engine (transport \"inprocess\" or \"process\"): %w", errors.ErrUnsupported)
}
