//go:build cgo

package sqlite_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/agentfs-go/agentfs/core/internal/sqlite"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// cryptOpen opens path through the cgo driver's encrypting VFS, with
// the cipher's bytes reserved on every page.
func cryptOpen(t *testing.T, path string, codec *crypt.Codec) *sql.DB {
	t.Helper()
	name, unregister, err := sqlite.RegisterCrypt(codec)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(sqlite.DriverName, "file:"+path+"?vfs="+name)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close(); unregister() })
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Raw(func(dc any) error {
		_, err := dc.(interface{ ReserveBytes(int) (int, error) }).ReserveBytes(codec.Cipher().Meta())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func noMarker(t *testing.T, marker string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty: nothing was checked", f)
		}
		for _, m := range []string{marker, "SQLite format 3"} {
			if bytes.Contains(b, []byte(m)) {
				t.Fatalf("%s holds %q in the clear", f, m)
			}
		}
	}
}

// Every file SQLite writes through the VFS (database, WAL, rollback
// journal) holds pages encrypted, SQLite reads them back (whole pages,
// direct reads of overflow pages, a rollback from the journal), and
// ncruces' SQLite reads the same files through crypt's Go VFS: one format.
func TestCryptVFS_RoundTripAndInterop(t *testing.T) {
	for _, cipher := range crypt.Ciphers() {
		t.Run(cipher, func(t *testing.T) {
			n := 32
			if strings.HasPrefix(cipher, "aegis128") || cipher == "aes128gcm" {
				n = 16
			}
			codec, err := crypt.New(cipher, bytes.Repeat([]byte{7}, n))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "a.db")
			marker := "MARKER-cgo-" + cipher
			big := strings.Repeat(marker+"\n", 5000) // overflow pages

			// Rollback journal, kept (PERSIST), with a cache small enough
			// that a transaction spills pages to the file: its ROLLBACK
			// plays the journal back.
			db := cryptOpen(t, path, codec)
			mustExec(t, db, "PRAGMA journal_mode = PERSIST")
			mustExec(t, db, "PRAGMA cache_size = 2")
			mustExec(t, db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
			for i := range 20 {
				mustExec(t, db, "INSERT INTO t VALUES (?, ?)", i, big)
			}
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("UPDATE t SET v = 'gone'"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			noMarker(t, marker, path, path+"-journal")

			// WAL: the latest rows stay in the log while a copy is taken.
			mustExec(t, db, "PRAGMA journal_mode = WAL")
			mustExec(t, db, "PRAGMA cache_size = -2000")
			mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
			mustExec(t, db, "INSERT INTO t VALUES (100, ?)", big)
			mustExec(t, db, "UPDATE t SET v = v || 'x' WHERE k = 3")
			noMarker(t, marker, path, path+"-wal")
			var got string
			var count int
			if err := db.QueryRow("SELECT count(*), group_concat(length(v)) FROM t WHERE v LIKE 'MARKER%'").Scan(&count, &got); err != nil || count != 21 {
				t.Fatalf("read back %d rows (%v), want 21", count, err)
			}
			copyDir := t.TempDir()
			for _, s := range []string{"", "-wal"} {
				b, err := os.ReadFile(path + s)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(copyDir, "a.db"+s), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// The copy, log included, through ncruces' SQLite and crypt's
			// Go VFS.
			name, unregister := crypt.Register(codec)
			defer unregister()
			nc, err := (&sqlitedriver.SQLite{}).OpenConnector("file:" + filepath.Join(copyDir, "a.db") + "?vfs=" + name)
			if err != nil {
				t.Fatal(err)
			}
			ndb := sql.OpenDB(nc)
			defer ndb.Close()
			var v string
			if err := ndb.QueryRow("SELECT count(*) FROM t").Scan(&count); err != nil || count != 21 {
				t.Fatalf("ncruces: %d rows (%v), want 21", count, err)
			}
			if err := ndb.QueryRow("SELECT v FROM t WHERE k = 3").Scan(&v); err != nil || v != big+"x" {
				t.Fatalf("ncruces: row 3 is %d bytes (%v), want %d", len(v), err, len(big)+1)
			}
			// And back: ncruces writes to its log, the cgo VFS reads it.
			if _, err := ndb.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
				t.Fatal(err)
			}
			if _, err := ndb.Exec("INSERT INTO t VALUES (200, ?)", big+"y"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(copyDir, "a.db-wal"))
			if err != nil {
				t.Fatal(err)
			}
			back := filepath.Join(t.TempDir(), "b.db")
			os.WriteFile(back+"-wal", b, 0o644)
			if b, err = os.ReadFile(filepath.Join(copyDir, "a.db")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(back, b, 0o644)
			cdb := cryptOpen(t, back, codec)
			if err := cdb.QueryRow("SELECT v FROM t WHERE k = 200").Scan(&v); err != nil || v != big+"y" {
				t.Fatalf("cgo: row 200 is %d bytes (%v), want %d", len(v), err, len(big)+1)
			}
		})
	}
}

// A wrong key reads as "not a database" rather than garbage.
func TestCryptVFS_WrongKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	good, _ := crypt.New("aegis256", bytes.Repeat([]byte{1}, 32))
	bad, _ := crypt.New("aegis256", bytes.Repeat([]byte{2}, 32))
	db := cryptOpen(t, path, good)
	mustExec(t, db, "CREATE TABLE t (x)")
	db.Close()
	var n int
	err := cryptOpen(t, path, bad).QueryRow("SELECT count(*) FROM t").Scan(&n)
	if err == nil {
		t.Fatal("read with the wrong key succeeded")
	}
}

// A checkpoint writes a page into the database file as the log stores it
// (sealed once, not opened and sealed again), and the file reads back.
func TestCryptVFS_CheckpointKeepsSealedPages(t *testing.T) {
	codec, err := crypt.New("aes256gcm", bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.db")
	db := cryptOpen(t, path, codec)
	mustExec(t, db, "PRAGMA journal_mode = WAL")
	mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	mustExec(t, db, "CREATE TABLE t (v TEXT)")
	for i := range 10 {
		mustExec(t, db, "INSERT INTO t VALUES (?)", strings.Repeat(string(rune('a'+i)), 10000))
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	var busy, logged, done int
	if err := db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &done); err != nil || busy != 0 || done != logged {
		t.Fatalf("checkpoint: busy %d, %d of %d frames (%v)", busy, done, logged, err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(uint32(wal[8])<<24 | uint32(wal[9])<<16 | uint32(wal[10])<<8 | uint32(wal[11]))
	latest := map[int][]byte{} // page number: its last frame's page as stored
	for off := 32; off+24+ps <= len(wal); off += 24 + ps {
		pgno := int(uint32(wal[off])<<24 | uint32(wal[off+1])<<16 | uint32(wal[off+2])<<8 | uint32(wal[off+3]))
		latest[pgno] = wal[off+24 : off+24+ps]
	}
	if len(latest) < 10 {
		t.Fatalf("%d pages in the log, want at least 10", len(latest))
	}
	for pgno, page := range latest {
		if pgno == 1 {
			continue // sealed again: its header is associated data
		}
		if at := (pgno - 1) * ps; at+ps > len(file) || !bytes.Equal(file[at:at+ps], page) {
			t.Fatalf("page %d in the file differs from its frame in the log", pgno)
		}
	}
	db.Close()
	var ok string
	if err := cryptOpen(t, path, codec).QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q (%v)", ok, err)
	}
}
