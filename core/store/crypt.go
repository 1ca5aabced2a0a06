//go:build !(js && agentfs_workers)

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

// Encryption at rest for every build with SQLite: native builds over the
// operating system's files, the WebAssembly build over its in-memory
// databases and a browser's OPFS files (the Workers build keeps its
// database in the host's SQL storage, which it cannot encrypt:
// crypt_workers.go).

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
		c, err := sniffFile(abs)
		if err != nil {
			return "", err
		}
		if c != "" {
			return "", fmt.Errorf("%w (cipher %s)", ErrNeedKey, c)
		}
		return dsn, nil
	}
	sniffed := ""
	if e.Cipher == "" {
		var err error
		if sniffed, err = sniffFile(abs); err != nil {
			return "", err
		}
	}
	codec, err := codecFor(e, sniffed)
	if err != nil {
		return "", err
	}
	if e.Cipher == "" {
		db.opts.Encryption = &Encryption{Cipher: codec.Cipher().Name, Key: e.Key}
	}
	if err := checkFile(abs, codec); err != nil {
		return "", err
	}
	// The encrypting VFS wraps the one dsn names (the WebAssembly
	// build's memory or host files), or the operating system's.
	base, rest := "", dsn
	if path, query, ok := strings.Cut(dsn, "?"); ok {
		var kept []string
		for _, kv := range strings.Split(query, "&") {
			if v, ok := strings.CutPrefix(kv, "vfs="); ok {
				base = v
			} else {
				kept = append(kept, kv)
			}
		}
		rest = path
		if len(kept) > 0 {
			rest += "?" + strings.Join(kept, "&")
		}
	}
	// Native builds with cgo encrypt in the cgo driver's VFS, over
	// SQLite's own (registerCgoCrypt: the same SQLite as a plain
	// database, and its speed). ncruces' Go VFS stays for the cases that
	// need it: a build without cgo or the WebAssembly build (no C
	// SQLite), a base VFS named by dsn (the WebAssembly build's memory
	// and host files), and a database set up for sync (syncedFile: the
	// sync client reaches it, and its sealed base, through ncruces' VFS).
	// Partially synced databases are refused with a key (setupPartial);
	// Convert's plain-side VFS is ncruces' too.
	name, unregister, err := "", func() {}, error(nil)
	if base == "" && !syncedFile(abs) {
		name, unregister, err = registerCgoCrypt(codec)
		db.cryptCgo = name != ""
	}
	if err == nil && name == "" {
		name, unregister, err = crypt.RegisterOver(base, codec)
	}
	if err != nil {
		return "", err
	}
	db.crypt, db.uncrypt = name, unregister
	sep := "?"
	if strings.Contains(rest, "?") {
		sep = "&"
	}
	return rest + sep + "vfs=" + db.crypt, nil
}

// codecFor is the codec of e, whose cipher, when e names none, is the
// file's (sniffed: "" for a new file) or else, for a new file, AEGIS-256
// (AEGIS-128L for a 16-byte key), Turso's fastest of each key size.
func codecFor(e *Encryption, sniffed string) (*crypt.Codec, error) {
	c := e.Cipher
	if c == "" {
		c = sniffed
	}
	if c == "" {
		c = "aegis256"
		if len(e.Key) == 16 {
			c = "aegis128l"
		}
	}
	return crypt.New(c, e.Key)
}

// connector opens the pool's driver: ncruces' SQLite for a partially
// synced database, and for an encrypted one whose VFS is ncruces' (Go:
// see setupCrypt), this build's driver otherwise (ncruces' too in the
// WebAssembly build).
func (db *DB) connector(dsn string) (driver.Connector, error) {
	if db.crypt != "" && !db.cryptCgo || db.lazy != "" {
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
		r, err := reserveBytes(dc, -1)
		if err != nil {
			return err
		}
		if r == meta {
			return nil
		}
		if _, err := reserveBytes(dc, meta); err != nil {
			return err
		}
		if r, err = reserveBytes(dc, -1); err != nil || r != meta {
			return fmt.Errorf("cannot reserve %d bytes per page for %s (%v)", meta, codec.Cipher().Name, err)
		}
		return nil
	})
}

// reserveBytes is SQLITE_FCNTL_RESERVE_BYTES on the main database of a
// connection of either driver: it sets the bytes reserved per page to n
// (n < 0: only asks) and answers the number before.
func reserveBytes(dc any, n int) (int, error) {
	if c, ok := dc.(interface{ ReserveBytes(int) (int, error) }); ok {
		return c.ReserveBytes(n) // the cgo driver (internal/sqlite)
	}
	rc, ok := dc.(interface{ Raw() *sqlite3.Conn })
	if !ok {
		return 0, errors.New("store: driver connection has no SQLite handle")
	}
	var (
		r   any
		err error
	)
	if n < 0 {
		r, err = rc.Raw().FileControl("main", sqlite3.FCNTL_RESERVE_BYTES)
	} else {
		r, err = rc.Raw().FileControl("main", sqlite3.FCNTL_RESERVE_BYTES, n)
	}
	v, _ := r.(int)
	return v, err
}
