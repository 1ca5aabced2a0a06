//go:build !js

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// sniffFile is crypt.Sniff of the database file at abs.
func sniffFile(abs string) (string, error) { return crypt.Sniff(abs) }

// checkFile checks that the database file at abs and its -wal open with
// codec, and adopts a -wal that Turso's engine wrote (crypt.CheckWAL).
func checkFile(abs string, codec *crypt.Codec) error {
	if err := codec.Check(abs); err != nil {
		return err
	}
	return crypt.CheckWAL(abs+"-wal", codec)
}

// Convert writes a copy of the database file src, which must not be open
// in this process, to dst (which must not exist) with another encryption: from is src's
// (nil: plain), to is dst's (nil: plain); one of them is set. The copy is
// SQLite's VACUUM INTO through an encrypting VFS that reads or writes the
// plain side in the clear, with the reserved bytes per page of dst's
// cipher (0 for plain).
//
// The copy holds src locked exclusively (SQLite's EXCLUSIVE lock, which
// no process can take while another has the database open: every
// connection in WAL mode holds a SHARED lock while it is open), so a
// database open elsewhere is refused with ErrInUse, and then, when not
// nil, runs before the lock is let go: a caller that replaces src with
// dst there leaves no moment in which another process could write to src
// after the copy.
func Convert(ctx context.Context, src, dst string, from, to *Encryption, then func() error) error {
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
		if _, err := rc.Raw().FileControl("main", sqlite3.FCNTL_RESERVE_BYTES, reserve); err != nil {
			return err
		}
		// The close must not delete the log by its name: after then, the
		// name is the new file's.
		_, err := rc.Raw().FileControl("main", sqlite3.FCNTL_PERSIST_WAL, true)
		return err
	}); err != nil {
		return err
	}
	// Exclusive locking mode, set before the first read: opening the log
	// takes the EXCLUSIVE lock and keeps it until the connection closes.
	// A second is enough to wait for a process that is only passing by
	// (a short read); one that keeps the database open never lets go.
	for _, pragma := range []string{"PRAGMA locking_mode = EXCLUSIVE", "PRAGMA busy_timeout = 1000", "PRAGMA temp_store = MEMORY"} {
		if _, err := c.ExecContext(ctx, pragma); err != nil {
			return classify(err)
		}
	}
	if _, err = c.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		if isBusy(err) {
			return fmt.Errorf("%w: %s", ErrInUse, src)
		}
		return classify(err)
	}
	if then != nil {
		return then()
	}
	return nil
}

// A partially synced database (core/sync: "agentfs init --sync-remote-url
// URL --sync-partial-*") lacks pages that its sync remote holds; a file
// PATH-sync-missing lists them. Such a file is opened through the VFS
// core/sync registers here, which fetches absent pages when SQLite reads
// them; without it (a program built without the sync client) the open is
// refused rather than reading holes as zeros.
var (
	partialMu  sync.Mutex
	partialVFS func(abs string) (string, error)
)

// SetPartialVFS is called by core/sync: f returns the VFS name for the
// partially synced database abs.
func SetPartialVFS(f func(abs string) (string, error)) {
	partialMu.Lock()
	partialVFS = f
	partialMu.Unlock()
}

func (db *DB) setupPartial(abs, dsn string) (string, error) {
	if _, err := os.Stat(abs + "-sync-missing"); err != nil {
		return dsn, nil
	}
	if db.crypt != "" {
		return "", fmt.Errorf("%s is partially synced and encrypted, which is not supported (ENOTSUP)", abs)
	}
	partialMu.Lock()
	f := partialVFS
	partialMu.Unlock()
	if f == nil {
		return "", fmt.Errorf("%s was bootstrapped partially (pages are fetched from its sync remote when read), and this program has no sync client (ENOTSUP): open it with the agentfs CLI or an SDK engine", abs)
	}
	name, err := f(abs)
	if err != nil {
		return "", err
	}
	db.lazy = name
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "vfs=" + name, nil
}

// syncedFile reports whether the database at abs is set up for sync
// (core/sync keeps its state in PATH-sync.json). Such a database, when
// encrypted, stays on ncruces' SQLite: the sync client opens it with
// ncruces' VFS (it attaches the sealed sync base, whose VFS is Go), and
// two SQLite libraries on one file in one process would release each
// other's POSIX locks when either closes it.
func syncedFile(abs string) bool {
	_, err := os.Stat(abs + "-sync.json")
	return err == nil
}
