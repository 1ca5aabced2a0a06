//go:build !js

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// Encryption errors (see internal/crypt): each names the fix.
var (
	ErrNeedKey      = crypt.ErrNeedKey
	ErrWrongKey     = crypt.ErrWrongKey
	ErrNotEncrypted = crypt.ErrNotEncrypted
)

// Ciphers lists the ciphers Options.Encryption takes.
func Ciphers() []string { return crypt.Ciphers() }

// setupCrypt checks, before SQLite reads the file, that it matches
// Options.Encryption (a key for an encrypted file, no key for a plain
// one, the right cipher and key), so a refused open changes nothing, and
// registers the encrypting VFS that dsn then names.
func (db *DB) setupCrypt(abs, dsn string) (string, error) {
	e := db.opts.Encryption
	if e == nil {
		c, err := crypt.Sniff(abs)
		if err != nil {
			return "", err
		}
		if c != "" {
			return "", fmt.Errorf("%w (cipher %s)", ErrNeedKey, c)
		}
		return dsn, nil
	}
	codec, err := crypt.New(e.Cipher, e.Key)
	if err != nil {
		return "", err
	}
	if err := codec.Check(abs); err != nil {
		return "", err
	}
	if err := crypt.CheckWAL(abs+"-wal", codec); err != nil {
		return "", err
	}
	db.crypt, db.uncrypt = crypt.Register(codec)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "vfs=" + db.crypt, nil
}

// connector opens the pool's driver: ncruces' SQLite for an encrypted
// database (the VFS is Go), this build's driver otherwise.
func (db *DB) connector(dsn string) (driver.Connector, error) {
	if db.crypt != "" {
		return (&sqlitedriver.SQLite{}).OpenConnector(dsn)
	}
	return openConnector(dsn)
}

// reserveCrypt makes a new encrypted database keep the cipher's nonce and
// tag bytes free at the end of every page, before its first page is
// written.
func (db *DB) reserveCrypt(ctx context.Context, conn *sql.Conn) error {
	if db.crypt == "" || db.opts.ReadOnly {
		return nil
	}
	codec, _ := crypt.New(db.opts.Encryption.Cipher, db.opts.Encryption.Key)
	meta := codec.Cipher().Meta()
	return conn.Raw(func(dc any) error {
		rc, ok := dc.(interface{ Raw() *sqlite3.Conn })
		if !ok {
			return errors.New("store: driver connection has no SQLite handle")
		}
		c := rc.Raw()
		r, err := c.FileControl("main", sqlite3.FCNTL_RESERVE_BYTES)
		if err != nil {
			return err
		}
		if r == meta {
			return nil
		}
		if _, err := c.FileControl("main", sqlite3.FCNTL_RESERVE_BYTES, meta); err != nil {
			return err
		}
		if r, err = c.FileControl("main", sqlite3.FCNTL_RESERVE_BYTES); err != nil || r != meta {
			return fmt.Errorf("cannot reserve %d bytes per page for %s (%v)", meta, codec.Cipher().Name, err)
		}
		return nil
	})
}
