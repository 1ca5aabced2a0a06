//go:build cgo

package sqlite_test

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
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

// A checkpoint writes every page, page 1 included, into the database
// file as the log stores it (sealed once, not opened and sealed again),
// and the file reads back, through this VFS and through ncruces' SQLite
// with crypt's Go VFS.
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
	if latest[1] == nil {
		t.Fatal("page 1 is not in the log")
	}
	for pgno, page := range latest {
		if at := (pgno - 1) * ps; at+ps > len(file) || !bytes.Equal(file[at:at+ps], page) {
			t.Fatalf("page %d in the file differs from its frame in the log", pgno)
		}
	}
	db.Close()
	var ok string
	db = cryptOpen(t, path, codec)
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q (%v)", ok, err)
	}
	db.Close()
	// A copy: two SQLite libraries on one file in one process would
	// release each other's POSIX locks.
	if file, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "b.db")
	if err := os.WriteFile(cp, file, 0o644); err != nil {
		t.Fatal(err)
	}
	name, unregister := crypt.Register(codec)
	defer unregister()
	nc, err := (&sqlitedriver.SQLite{}).OpenConnector("file:" + cp + "?vfs=" + name)
	if err != nil {
		t.Fatal(err)
	}
	ndb := sql.OpenDB(nc)
	defer ndb.Close()
	var n int
	if err := ndb.QueryRow("SELECT count(*) FROM t WHERE length(v) = 10000").Scan(&n); err != nil || n != 10 {
		t.Fatalf("ncruces: %d rows (%v), want 10", n, err)
	}
}

// Pages of the database file are opened from the root VFS's mapping of
// it, which this VFS maps again when the file has grown: a connection that
// mapped the file small reads pages another connection's checkpoint added
// beyond it, whole and in part (direct reads of overflow pages), and its
// mapping covers them (Linux: /proc/self/maps).
func TestCryptVFS_ReadsGrownFileMapped(t *testing.T) {
	codec, err := crypt.New("aegis256", bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.db")
	db := cryptOpen(t, path, codec)
	mustExec(t, db, "PRAGMA journal_mode = WAL")
	mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	mustExec(t, db, "PRAGMA cache_size = 2")
	mustExec(t, db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, db, "INSERT INTO t VALUES (0, 'small')")
	var busy, logged, done int
	checkpoint := func(db *sql.DB) {
		t.Helper()
		if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: busy %d (%v)", busy, err)
		}
	}
	checkpoint(db)
	// Read from the file (the log is empty): mapped at its size now.
	var v string
	if err := db.QueryRow("SELECT v FROM t WHERE k = 0").Scan(&v); err != nil || v != "small" {
		t.Fatalf("read %q (%v)", v, err)
	}
	// Another connection grows the file (its checkpoint maps the file
	// it writes: it is closed before the mappings are looked at).
	other := cryptOpen(t, path, codec)
	row := func(i int) string { return strings.Repeat(string(rune('a'+i%26)), 9000+i) }
	for i := 1; i <= 300; i++ {
		mustExec(t, other, "INSERT INTO t VALUES (?, ?)", i, row(i))
	}
	checkpoint(other)
	other.Close()
	st, err := os.Stat(path)
	if err != nil || st.Size() < 300*9000 {
		t.Fatalf("database file: %v (%v)", st, err)
	}
	rows, err := db.Query("SELECT k, v FROM t WHERE k > 0 ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var k int
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if v != row(k) {
			t.Fatalf("row %d: %d bytes, not as written", k, len(v))
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 300 {
		t.Fatalf("%d rows (%v), want 300", n, err)
	}
	if largest := mappedBytes(t, path); largest < st.Size()-65536 {
		t.Fatalf("the database file is mapped %d bytes of %d", largest, st.Size())
	}
}

// mappedBytes is the length of the largest mapping of path in this
// process (Linux: /proc/self/maps); the test skips where there is none.
func mappedBytes(t *testing.T, path string) int64 {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps to check the mapping:", err)
	}
	largest := int64(0)
	for _, l := range strings.Split(string(maps), "\n") {
		if !strings.HasSuffix(l, " "+path) {
			continue
		}
		var lo, hi int64
		if _, err := fmt.Sscanf(l, "%x-%x", &lo, &hi); err == nil {
			largest = max(largest, hi-lo)
		}
	}
	return largest
}

// Pages of the log are opened from this VFS's mapping of it: a reader's
// pages, and the whole frames SQLite reads back at the commit of a
// transaction that rewrote a spilled page's frame (to recompute the log's
// checksums, which must match the plain pages: a copy of the files then
// recovers every row).
func TestCryptVFS_LogMapped(t *testing.T) {
	codec, err := crypt.New("aes256gcm", bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db := cryptOpen(t, path, codec)
	mustExec(t, db, "PRAGMA journal_mode = WAL")
	mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	mustExec(t, db, "PRAGMA cache_size = 2")
	mustExec(t, db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	row := func(i, gen int) string { return strings.Repeat(fmt.Sprintf("%d.%d;", i, gen), 700) }
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?)", i, row(i, 0)); err != nil {
			t.Fatal(err)
		}
	}
	// Rows written early again: their pages were spilled to the log.
	for i := range 20 {
		if _, err := tx.Exec("UPDATE t SET v = ? WHERE k = ?", row(i, 1), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil || len(wal) < 200*4096 {
		t.Fatalf("log: %d bytes (%v)", len(wal), err)
	}
	if m := mappedBytes(t, path+"-wal"); m < int64(len(wal))/2 {
		t.Fatalf("the log is mapped %d bytes of %d", m, len(wal))
	}
	check := func(db *sql.DB) {
		t.Helper()
		rows, err := db.Query("SELECT k, v FROM t ORDER BY k")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var k int
			var v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			gen := 0
			if k < 20 {
				gen = 1
			}
			if v != row(k, gen) {
				t.Fatalf("row %d is not as written", k)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 200 {
			t.Fatalf("%d rows (%v), want 200", n, err)
		}
	}
	check(db)
	// A copy of the database and its log recovers every committed frame.
	check(cryptOpen(t, copyWithWAL(t, path), codec))
}

// walChain checks a log's frame checksums as SQLite computes them, over
// each frame's plain page (crypt/wal.go): it answers how many frames,
// from the first, chain correctly, and how many frames the file holds.
func walChain(t *testing.T, codec *crypt.Codec, wal []byte) (valid, frames int) {
	t.Helper()
	ps := int(binary.BigEndian.Uint32(wal[8:12]))
	be := wal[3]&1 == 1
	word := func(b []byte) uint32 {
		if be {
			return binary.BigEndian.Uint32(b)
		}
		return binary.LittleEndian.Uint32(b)
	}
	sum := func(b []byte, s1, s2 uint32) (uint32, uint32) {
		for i := 0; i+8 <= len(b); i += 8 {
			s1 += word(b[i:]) + s2
			s2 += word(b[i+4:]) + s1
		}
		return s1, s2
	}
	s1, s2 := binary.BigEndian.Uint32(wal[24:28]), binary.BigEndian.Uint32(wal[28:32])
	page := make([]byte, ps)
	frames = (len(wal) - 32) / (24 + ps)
	for i := range frames {
		off := 32 + i*(24+ps)
		h := wal[off : off+24]
		if !bytes.Equal(h[8:16], wal[16:24]) {
			return i, frames
		}
		if err := codec.Decrypt(page, wal[off+24:off+24+ps], int64(binary.BigEndian.Uint32(h[0:4]))); err != nil {
			return i, frames
		}
		s1, s2 = sum(h[:8], s1, s2)
		s1, s2 = sum(page, s1, s2)
		if s1 != binary.BigEndian.Uint32(h[16:20]) || s2 != binary.BigEndian.Uint32(h[20:24]) {
			return i, frames
		}
	}
	return frames, frames
}

// A transaction that changes pages it had already spilled to the log
// makes SQLite recompute the checksums of its frames at commit, reading
// each frame whole; the VFS answers those reads from what it noted when
// it wrote the frames instead of decrypting them (cryptvfs.c's
// frameNote). The checksums SQLite writes must be exactly those of the
// plain pages: every frame of the log chains, a copy of the log recovers
// every committed row, and the notes were used. Each cipher's nonce
// length (12 and 32 bytes), several transactions (the first frame of each
// chains from the last one's), a savepoint rolled back (frames written
// again), and a second connection writing between them.
func TestCryptVFS_RewrittenChecksumsFromNotes(t *testing.T) {
	for _, cipher := range []string{"aes256gcm", "aegis256"} {
		t.Run(cipher, func(t *testing.T) {
			codec, err := crypt.New(cipher, bytes.Repeat([]byte{5}, 32))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "a.db")
			db := cryptOpen(t, path, codec)
			db.SetMaxOpenConns(2)
			mustExec(t, db, "PRAGMA journal_mode = WAL")
			mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
			mustExec(t, db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT, w TEXT)")
			mustExec(t, db, "CREATE INDEX t_w ON t (w)")
			row := func(k, gen int) string { return strings.Repeat(fmt.Sprintf("%d.%d;", k, gen), 90) }
			want := map[int]string{}
			before := sqlite.CryptNoteHits()
			for txn := range 3 {
				conn, err := db.Conn(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				exec := func(q string, args ...any) {
					t.Helper()
					if _, err := conn.ExecContext(t.Context(), q, args...); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				exec("PRAGMA cache_size = 3")
				exec("BEGIN IMMEDIATE")
				base := txn * 1000
				for k := base; k < base+300; k++ {
					exec("INSERT INTO t VALUES (?, ?, ?)", k, row(k, 0), row(k, 0)[:40])
					want[k] = row(k, 0)
				}
				exec("SAVEPOINT s")
				for k := base; k < base+100; k++ {
					exec("UPDATE t SET v = ? WHERE k = ?", row(k, 9), k)
				}
				exec("ROLLBACK TO s")
				exec("RELEASE s")
				// Rows written early again: their pages were spilled.
				for k := base; k < base+50; k++ {
					exec("UPDATE t SET v = ?, w = ? WHERE k = ?", row(k, 1), row(k, 1)[:40], k)
					want[k] = row(k, 1)
				}
				exec("COMMIT")
				conn.Close()
				// Another connection's small transaction between ours.
				mustExec(t, db, "INSERT INTO t VALUES (?, ?, ?)", base+999, "x", "x")
				want[base+999] = "x"
			}
			if sqlite.CryptNoteHits() == before {
				t.Fatal("no frame was answered from the VFS's notes: the test does not reach the path it checks")
			}
			wal, err := os.ReadFile(path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			if valid, frames := walChain(t, codec, wal); valid != frames || frames < 100 {
				t.Fatalf("%d of %d frames of the log chain", valid, frames)
			}
			// A copy of the database and its log recovers every row.
			cp := cryptOpen(t, copyWithWAL(t, path), codec)
			got := map[int]string{}
			rows, err := cp.Query("SELECT k, v FROM t")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k int
				var v string
				if err := rows.Scan(&k, &v); err != nil {
					t.Fatal(err)
				}
				got[k] = v
			}
			rows.Close()
			if len(got) != len(want) {
				t.Fatalf("the copy has %d rows, want %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("row %d of the copy is not as committed", k)
				}
			}
			var ok string
			if err := cp.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("integrity_check of the copy: %q (%v)", ok, err)
			}
		})
	}
}
