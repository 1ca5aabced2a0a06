//go:build cgo

package sync

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"

	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/agentfs-go/agentfs/core/internal/sqlite"
	"github.com/agentfs-go/agentfs/core/store"
)

// Sync and encryption at rest. An encrypted local database is read and
// written through the engine's encrypting VFS (Turso's page format, the
// user's key). The remote's pages arrive plain (the protocol carries, and
// the server stores, plain pages, as Turso's sync server does), so the
// base beside the database is kept sealed (internal/crypt: page N in an
// AEAD slot of its own, same key) and read through the same VFS: no
// plaintext of the agent reaches this machine's disk.

func sealedName(name string) bool {
	return strings.HasSuffix(name, "-sync-base") || strings.HasSuffix(name, "-sync-base.tmp")
}

var (
	vfsMu    gosync.Mutex
	vfsByKey = map[string]string{}
)

// cryptVFS is the VFS of one key and cipher, registered once per process.
func cryptVFS(e *store.Encryption) (string, *crypt.Codec, error) {
	codec, err := crypt.New(e.Cipher, e.Key)
	if err != nil {
		return "", nil, err
	}
	h := sha256.Sum256(append([]byte(e.Cipher+"\x00"), e.Key...))
	id := hex.EncodeToString(h[:])
	vfsMu.Lock()
	defer vfsMu.Unlock()
	if name, ok := vfsByKey[id]; ok {
		return name, codec, nil
	}
	name, _ := crypt.RegisterSync(codec, PageSize, sealedName)
	vfsByKey[id] = name
	return name, codec, nil
}

// resolve fills in the cipher of an encrypted local database that names
// none (the file says which), and checks key and cipher against it.
func resolve(path string, e *store.Encryption) (*store.Encryption, error) {
	if e == nil {
		if c, err := crypt.Sniff(path); err == nil && c != "" {
			return nil, fmt.Errorf("%w (cipher %s)", store.ErrNeedKey, c)
		}
		return nil, nil
	}
	c := e.Cipher
	if c == "" {
		s, err := crypt.Sniff(path)
		if err != nil {
			return nil, err
		}
		if s == "" {
			return nil, store.ErrNotEncrypted
		}
		c = s
	}
	codec, err := crypt.New(c, e.Key)
	if err != nil {
		return nil, err
	}
	if err := codec.Check(path); err != nil {
		return nil, err
	}
	return &store.Encryption{Cipher: c, Key: e.Key}, nil
}

// withKey resolves o.Encryption against the local database at path.
func withKey(path string, o Options) (Options, error) {
	e, err := resolve(path, o.Encryption)
	o.Encryption = e
	return o, err
}

func fileURI(path, query string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: query}
	return u.String()
}

// openLocal opens the local database for the sync client's own SQL.
func openLocal(path string, o Options) (*sql.DB, error) {
	e, err := resolve(path, o.Encryption)
	if err != nil {
		return nil, err
	}
	if e == nil && IsPartial(path) {
		// Through the VFS that fetches absent pages and keeps the list of
		// absent pages right when SQLite writes (lazy.go).
		c, err := (&sqlitedriver.SQLite{}).OpenConnector(fileURI(path, "vfs="+partialVFS()))
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(c), nil
	}
	if e == nil {
		return sql.Open(sqlite.DriverName, path)
	}
	name, _, err := cryptVFS(e)
	if err != nil {
		return nil, err
	}
	c, err := (&sqlitedriver.SQLite{}).OpenConnector(fileURI(path, "vfs="+name))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// baseURI names a base file (or its new version) for ATTACH.
func baseURI(path string, o Options) string {
	if o.Encryption == nil {
		return immutableURI(path)
	}
	name, _, err := cryptVFS(o.Encryption)
	if err != nil {
		return immutableURI(path) // openLocal failed on the same key first
	}
	return fileURI(path, "immutable=1&vfs="+name)
}

// openBase opens a base file alone, read-only.
func openBase(path string, o Options) (*sql.DB, error) {
	if agent := strings.TrimSuffix(path, "-sync-base"); o.Encryption == nil && agent != path && IsPartial(agent) {
		c, err := (&sqlitedriver.SQLite{}).OpenConnector(fileURI(path, "immutable=1&vfs="+partialVFS()))
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(c), nil
	}
	if o.Encryption == nil {
		return sql.Open(sqlite.DriverName, immutableURI(path))
	}
	c, err := (&sqlitedriver.SQLite{}).OpenConnector(baseURI(path, o))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// pageWriter writes the pulled pages of a base: plain, or sealed with the
// local key.
type pageWriter struct {
	f     *os.File
	codec *crypt.Codec
}

func newPageWriter(f *os.File, o Options) (*pageWriter, error) {
	w := &pageWriter{f: f}
	if o.Encryption != nil {
		_, codec, err := cryptVFS(o.Encryption)
		if err != nil {
			return nil, err
		}
		w.codec = codec
	}
	return w, nil
}

func (w *pageWriter) slot() int64 {
	if w.codec == nil {
		return PageSize
	}
	return int64(w.codec.SlotSize(PageSize))
}

func (w *pageWriter) write(id uint64, page []byte) error {
	if w.codec != nil {
		s, err := w.codec.SealPage(page, int64(id)+1)
		if err != nil {
			return err
		}
		page = s
	}
	_, err := w.f.WriteAt(page, int64(id)*w.slot())
	return err
}

func (w *pageWriter) truncate(pages uint64) error { return w.f.Truncate(int64(pages) * w.slot()) }

// copyBaseInto makes the database at path a copy of the (sealed) base at
// base, encrypted with the local key: SQLite's VACUUM INTO through the
// VFS that reads the one and encrypts the other, with the cipher's bytes
// reserved on every page.
func copyBaseInto(ctx context.Context, base, path string, e *store.Encryption) error {
	if e.Cipher == "" {
		e = &store.Encryption{Cipher: "aegis256", Key: e.Key}
		if len(e.Key) == 16 {
			e.Cipher = "aegis128l"
		}
	}
	name, codec, err := cryptVFS(e)
	if err != nil {
		return err
	}
	c, err := (&sqlitedriver.SQLite{}).OpenConnector(fileURI(base, "immutable=1&vfs="+name))
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		rc, ok := dc.(interface{ Raw() *sqlite3.Conn })
		if !ok {
			return errors.New("sync: driver connection has no SQLite handle")
		}
		_, err := rc.Raw().FileControl("main", sqlite3.FCNTL_RESERVE_BYTES, codec.Cipher().Meta())
		return err
	}); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "VACUUM INTO ?", path)
	return err
}
