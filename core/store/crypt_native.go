//go:build !js

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
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

// CheckEncryption checks a cipher name and the key's length for it (an
// empty cipher takes a 16- or 32-byte key) before any file is opened.
func CheckEncryption(e *Encryption) error {
	if e == nil {
		return nil
	}
	c := e.Cipher
	if c == "" {
		if len(e.Key) != 16 && len(e.Key) != 32 {
			return fmt.Errorf("a key is 16 or 32 bytes, got %d: give a key of that length", len(e.Key))
		}
		return nil
	}
	_, err := crypt.New(c, e.Key)
	return err
}

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
	if e.Cipher == "" {
		// An encrypted file names its cipher; a new one gets AEGIS-256
		// (or AEGIS-128L for a 16-byte key), Turso's fastest of each size.
		c, err := crypt.Sniff(abs)
		if err != nil {
			return "", err
		}
		if c == "" {
			c = "aegis256"
			if len(e.Key) == 16 {
				c = "aegis128l"
			}
		}
		e = &Encryption{Cipher: c, Key: e.Key}
		db.opts.Encryption = e
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

// Convert writes a copy of the database file src, which must not be open,
// to dst (which must not exist) with another encryption: from is src's
// (nil: plain), to is dst's (nil: plain); one of them is set. The copy is
// SQLite's VACUUM INTO through an encrypting VFS that reads or writes the
// plain side in the clear, with the reserved bytes per page of dst's
// cipher (0 for plain).
func Convert(ctx context.Context, src, dst string, from, to *Encryption) error {
	if (from == nil) == (to == nil) {
		return errors.New("store: Convert needs exactly one of from and to")
	}
	var err error
	if src, err = filepath.Abs(src); err != nil {
		return err
	}
	if dst, err = filepath.Abs(dst); err != nil {
		return err
	}
	e, plain := to, src // SQLite names files by absolute path
	if from != nil {
		e, plain = from, dst
	}
	if e.Cipher == "" && from != nil {
		c, err := crypt.Sniff(src)
		if err != nil {
			return err
		}
		e = &Encryption{Cipher: c, Key: e.Key}
	} else if e.Cipher == "" {
		e = &Encryption{Cipher: "aegis256", Key: e.Key}
		if len(e.Key) == 16 {
			e.Cipher = "aegis128l"
		}
	}
	codec, err := crypt.New(e.Cipher, e.Key)
	if err != nil {
		return err
	}
	if from != nil {
		if err := codec.Check(src); err != nil {
			return err
		}
	} else if c, err := crypt.Sniff(src); err != nil {
		return err
	} else if c != "" {
		return fmt.Errorf("%s is already encrypted (cipher %s)", src, c)
	}
	name, unregister := crypt.RegisterConvert(codec, plain)
	defer unregister()
	conn, err := (&sqlitedriver.SQLite{}).OpenConnector("file:" + uriPath(src) + "?vfs=" + name)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	reserve := 0
	if to != nil {
		reserve = codec.Cipher().Meta()
	}
	if err := c.Raw(func(dc any) error {
		rc, ok := dc.(interface{ Raw() *sqlite3.Conn })
		if !ok {
			return errors.New("store: driver connection has no SQLite handle")
		}
		_, err := rc.Raw().FileControl("main", sqlite3.FCNTL_RESERVE_BYTES, reserve)
		return err
	}); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, "VACUUM INTO ?", dst)
	return classify(err)
}
