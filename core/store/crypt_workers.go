//go:build js && agentfs_workers

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// The Workers build keeps a database in its host's SQL storage (a
// Durable Object's), which answers statements, not pages: there is no
// file for the engine to encrypt.
var (
	ErrNeedKey      = errors.New("the database is encrypted: open it with a build of agentfs that has SQLite (native, Node or browser WebAssembly) and its key")
	ErrWrongKey     = errors.New("wrong key")
	ErrNotEncrypted = errors.New("the database is not encrypted")
)

var errNoCrypt = fmt.Errorf("encryption at rest is not available in the Cloudflare Workers build (the database is the Durable Object's SQL storage, which the engine reaches by statements, not pages; ENOTSUP): rely on the platform's encryption of Durable Object storage, or use the native or WebAssembly engine for a key: %w", errors.ErrUnsupported)

func Ciphers() []string { return nil }

func (db *DB) setupCrypt(abs, dsn string) (string, error) {
	if db.opts.Encryption != nil {
		return "", errNoCrypt
	}
	return dsn, nil
}

func (db *DB) connector(dsn string) (driver.Connector, error) { return openConnector(dsn) }

func (db *DB) reserveCrypt(context.Context, *sql.Conn) error { return nil }

// CheckEncryption refuses every key: see errNoCrypt.
func CheckEncryption(e *Encryption) error {
	if e == nil {
		return nil
	}
	return errNoCrypt
}

// SetPartialVFS: no partial sync in the Workers build (its database is
// the Durable Object's SQL storage, not pages).
func SetPartialVFS(f func(abs string) (string, error)) {}

func (db *DB) setupPartial(abs, dsn string) (string, error) { return dsn, nil }
