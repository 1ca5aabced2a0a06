//go:build js && !agentfs_workers

package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

var jsCiphers = map[string]int{"aes128gcm": 16, "aes256gcm": 32, "aegis128l": 16, "aegis128x2": 16, "aegis128x4": 16, "aegis256": 32, "aegis256x2": 32, "aegis256x4": 32}

func jsKey(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// fill writes rows of marker (overflow pages too) through db.
func fill(t *testing.T, db *DB, marker string) {
	t.Helper()
	err := db.Write(context.Background(), func(c *Conn) error {
		if _, err := c.Exec("CREATE TABLE IF NOT EXISTS t(x TEXT)"); err != nil {
			return err
		}
		for i := 0; i < 20; i++ {
			if _, err := c.Exec("INSERT INTO t VALUES (?)", strings.Repeat(marker, 1000)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func countRows(t *testing.T, db *DB, marker string) (n int) {
	t.Helper()
	if err := db.Read(context.Background(), func(c *Conn) error {
		return c.QueryRow("SELECT count(*) FROM t WHERE x = ?", strings.Repeat(marker, 1000)).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// The WebAssembly build encrypts its in-memory databases with every
// cipher in Turso's format: the stored bytes (what the SDK writes to the
// file) hold no plaintext, open again from those bytes with the key, and
// refuse no key, a wrong key and a wrong cipher as native builds do,
// with one line, changing nothing.
func TestCryptJS_Memory(t *testing.T) {
	ctx := context.Background()
	for name, n := range jsCiphers {
		t.Run(name, func(t *testing.T) {
			p := "/cryptjs/" + name + ".db"
			defer DropMemory(p)
			enc := &Encryption{Cipher: name, Key: jsKey(n, 0x42)}
			db, err := Open(ctx, p, Options{Encryption: enc})
			if err != nil {
				t.Fatal(err)
			}
			marker := "MARKER-c0ffee-" + name
			fill(t, db, marker)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := RawMemory(p)
			if err != nil {
				t.Fatal(err)
			}
			if c := Ciphers(); len(c) != len(jsCiphers) {
				t.Errorf("Ciphers() = %v", c)
			}
			if !bytes.HasPrefix(raw, []byte("Turso\x00")) || !Encrypted(raw) || !EncryptedMemory(p) {
				t.Fatalf("stored header %q, want Turso's", raw[:16])
			}
			for _, m := range []string{marker, "SQLite format 3", "CREATE TABLE"} {
				if bytes.Contains(raw, []byte(m)) {
					t.Errorf("stored bytes contain %q in the clear", m)
				}
			}

			// The bytes, loaded under another name (as the SDK loads a
			// file), open with the key alone: the file names its cipher.
			q := p + ".copy"
			defer DropMemory(q)
			LoadMemory(q, bytes.Clone(raw))
			db, err = Open(ctx, q, Options{Encryption: &Encryption{Key: enc.Key}})
			if err != nil {
				t.Fatal(err)
			}
			if got := countRows(t, db, marker); got != 20 {
				t.Fatalf("rows = %d, want 20", got)
			}
			if db.Encryption().Cipher != name {
				t.Errorf("cipher %q, want %q", db.Encryption().Cipher, name)
			}
			db.Close()

			other := "aegis256"
			if n == 32 && name == other {
				other = "aes256gcm"
			} else if n == 16 {
				other = "aes128gcm"
				if name == other {
					other = "aegis128l"
				}
			}
			for _, c := range []struct {
				what string
				e    *Encryption
				want error
				text string
			}{
				{"no key", nil, ErrNeedKey, "encrypted"},
				{"wrong key", &Encryption{Cipher: name, Key: jsKey(n, 0x43)}, ErrWrongKey, "wrong key"},
				{"wrong cipher", &Encryption{Cipher: other, Key: enc.Key}, nil, "--cipher " + name},
			} {
				_, err := Open(ctx, q, Options{Encryption: c.e})
				if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: %v, want one line with %q", c.what, err, c.text)
				}
			}
			if now, _ := RawMemory(q); !bytes.Equal(now, raw) {
				t.Errorf("a refused open changed the database")
			}
		})
	}
}

// A plain in-memory database refuses a key.
func TestCryptJS_PlainRefusesKey(t *testing.T) {
	ctx := context.Background()
	p := "/cryptjs/plain.db"
	defer DropMemory(p)
	db, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, "x")
	db.Close()
	if _, err := Open(ctx, p, Options{Encryption: &Encryption{Key: jsKey(32, 1)}}); !errors.Is(err, ErrNotEncrypted) {
		t.Fatalf("key for a plain database: %v, want ErrNotEncrypted", err)
	}
}

// An encrypted database in host files (a browser's OPFS): the file and
// its rollback journal hold no plaintext while a commit overwrites pages
// in place, and a commit cut off at any write rolls back whole with the
// key (RollBack, as a browser page does it).
func TestCryptJS_PageFilesCrashRollsBack(t *testing.T) {
	ctx := context.Background()
	enc := &Encryption{Cipher: "aegis256", Key: jsKey(32, 7)}
	const marker, marker2 = "MARKER-OLD-opfs", "MARKER-NEW-opfs"
	var total int
	for nth := 1; total == 0 || nth <= total; nth += max(1, total/7) {
		jf := &MemFile{}
		df := &snapshotFile{MemFile: &MemFile{}, journal: jf, nth: -1}
		AttachFiles("/cryptjs/opfs", df, jf)
		db, err := Open(ctx, "/cryptjs/opfs", Options{Encryption: enc})
		if err != nil {
			t.Fatal(err)
		}
		fill(t, db, marker)
		df.writes, df.nth = 0, nth
		if err := db.Write(ctx, func(c *Conn) error {
			_, err := c.Exec("UPDATE t SET x = ?", strings.Repeat(marker2, 1000))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if total == 0 {
			total = df.writes
			if total < 10 {
				t.Fatalf("the commit wrote %d pages, want many", total)
			}
		}
		if got := countRows(t, db, marker2); got != 20 {
			t.Fatalf("rows after the commit = %d, want 20", got)
		}
		db.Close()
		DetachFiles("/cryptjs/opfs")
		if len(df.jr) == 0 {
			t.Fatalf("write %d of %d: no journal while the database was overwritten", nth, total)
		}
		for what, b := range map[string][]byte{"database": df.db, "journal": df.jr, "file now": df.Data} {
			for _, m := range []string{marker, marker2, "SQLite format 3"} {
				if bytes.Contains(b, []byte(m)) {
					t.Errorf("write %d of %d: %s holds %q in the clear", nth, total, what, m)
				}
			}
		}
		if _, err := RollBack(df.db, df.jr, nil); !errors.Is(err, ErrNeedKey) {
			t.Errorf("RollBack without the key: %v, want ErrNeedKey", err)
		}
		back, err := RollBack(df.db, df.jr, &Encryption{Key: enc.Key})
		if err != nil {
			t.Fatalf("write %d of %d: RollBack: %v", nth, total, err)
		}
		if !Encrypted(back) {
			t.Fatalf("rolled-back bytes are not encrypted")
		}
		// The rolled-back bytes open in memory (a page's load) with the key.
		LoadMemory("/cryptjs/back", back)
		k, err := Open(ctx, "/cryptjs/back", Options{Encryption: enc})
		if err != nil {
			t.Fatal(err)
		}
		if got := countRows(t, k, marker); got != 20 {
			t.Errorf("write %d of %d: rows after rollback = %d, want 20 (the last commit)", nth, total, got)
		}
		var ok string
		if err := k.Read(ctx, func(c *Conn) error { return c.QueryRow("PRAGMA integrity_check").Scan(&ok) }); err != nil || ok != "ok" {
			t.Errorf("write %d of %d: integrity_check = %q (%v)", nth, total, ok, err)
		}
		k.Close()
		DropMemory("/cryptjs/back")
	}
}

// A -wal left by the native engine (an agent open there, or not
// checkpointed) holds encrypted pages checksummed in the clear (Turso's
// engine: over the stored pages): LoadMemoryWAL keeps it for the open
// with the key, which applies its committed transactions.
func TestCryptJS_LoadWAL(t *testing.T) {
	ctx := context.Background()
	enc := &Encryption{Cipher: "aes256gcm", Key: jsKey(32, 9)}
	p := "/cryptjs/walsrc"
	db, err := Open(ctx, p, Options{Encryption: enc})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, "first")
	before, _ := RawMemory(p)
	fill(t, db, "second")
	db.Close()
	after, _ := RawMemory(p)
	DropMemory(p)
	codec, err := codecFor(enc, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, turso := range []bool{false, true} {
		wal := buildWAL(t, before, after, func(dst, page []byte, pgno int64) error {
			if turso {
				copy(dst, page)
				return nil
			}
			return codec.Decrypt(dst, page, pgno)
		})
		q := "/cryptjs/walload"
		LoadMemoryWAL(q, bytes.Clone(before), wal)
		db, err = Open(ctx, q, Options{Encryption: enc})
		if err != nil {
			t.Fatal(err)
		}
		if got := countRows(t, db, "second"); got != 20 {
			t.Errorf("turso=%v: rows of the log's transaction = %d, want 20", turso, got)
		}
		if got := countRows(t, db, "first"); got != 20 {
			t.Errorf("turso=%v: rows of the file = %d, want 20", turso, got)
		}
		db.Close()
		DropMemory(q)
	}
}

// buildWAL returns a -wal (SQLite's format) that turns the database file
// before into after in one transaction: a frame for each page that
// differs, checksummed over the page that sum gives (the plain page for
// SQLite through the encrypting VFS, the stored one for Turso's engine).
func buildWAL(t *testing.T, before, after []byte, sum func(dst, page []byte, pgno int64) error) []byte {
	t.Helper()
	ps := int(before[16])<<8 | int(before[17])
	if ps == 1 {
		ps = 65536
	}
	var changed []int
	for pg := 1; pg*ps <= len(after); pg++ {
		if pg*ps > len(before) || !bytes.Equal(before[(pg-1)*ps:pg*ps], after[(pg-1)*ps:pg*ps]) {
			changed = append(changed, pg)
		}
	}
	if len(changed) == 0 {
		t.Fatal("no page changed")
	}
	hdr := make([]byte, 32)
	binary.BigEndian.PutUint32(hdr[0:], 0x377f0682) // little-endian checksums
	binary.BigEndian.PutUint32(hdr[4:], 3007000)
	binary.BigEndian.PutUint32(hdr[8:], uint32(ps))
	binary.BigEndian.PutUint32(hdr[16:], 0x11111111)
	binary.BigEndian.PutUint32(hdr[20:], 0x22222222)
	s0, s1 := walChecksum(false, hdr[:24], 0, 0)
	binary.BigEndian.PutUint32(hdr[24:], s0)
	binary.BigEndian.PutUint32(hdr[28:], s1)
	out := hdr
	plain := make([]byte, ps)
	for i, pg := range changed {
		fh := make([]byte, 24)
		binary.BigEndian.PutUint32(fh[0:], uint32(pg))
		if i == len(changed)-1 {
			binary.BigEndian.PutUint32(fh[4:], uint32(len(after)/ps))
		}
		copy(fh[8:16], hdr[16:24])
		page := after[(pg-1)*ps : pg*ps]
		if err := sum(plain, page, int64(pg)); err != nil {
			t.Fatal(err)
		}
		s0, s1 = walChecksum(false, fh[:8], s0, s1)
		s0, s1 = walChecksum(false, plain, s0, s1)
		binary.BigEndian.PutUint32(fh[16:], s0)
		binary.BigEndian.PutUint32(fh[20:], s1)
		out = append(append(out, fh...), page...)
	}
	return out
}
