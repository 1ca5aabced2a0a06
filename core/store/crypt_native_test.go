//go:build !js

package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core/store"
)

// With cgo, an encrypted database runs on the cgo driver (as a plain one
// does), except one set up for sync, which the sync client opens through
// ncruces' VFS; both open the same file.
func TestCrypt_DriverChoice(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a.db")
	enc := &store.Encryption{Key: bytes.Repeat([]byte{9}, 32)}
	big := bytes.Repeat([]byte("MARKER-driver\n"), 3000)
	open := func() *store.DB {
		db, err := store.Open(ctx, path, store.Options{Encryption: enc})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	if got, want := db.CryptOnCgo(), store.DriverName == "libsql-cgo"; got != want {
		t.Fatalf("encrypted on the cgo driver: %v, want %v (driver %s)", got, want, store.DriverName)
	}
	if err := db.Write(ctx, func(c *store.Conn) error {
		if _, err := c.Exec("CREATE TABLE t (v BLOB)"); err != nil {
			return err
		}
		_, err := c.Exec("INSERT INTO t VALUES (?)", big)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-sync.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	if db.CryptOnCgo() {
		t.Fatal("a database set up for sync is encrypted on the cgo driver; want ncruces' VFS, as the sync client's")
	}
	var got []byte
	if err := db.Do(ctx, func(c *store.Conn) error { return c.QueryRow("SELECT v FROM t").Scan(&got) }); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(big))
	}
}
