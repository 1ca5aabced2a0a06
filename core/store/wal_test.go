//go:build !js

package store_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentfs-go/agentfs/core/internal/rawsql"
	"github.com/agentfs-go/agentfs/core/store"
)

// walPair writes transactions through a connection that never
// checkpoints and returns the bytes of the database file and of its WAL
// after each commit (read while the connection is open, as another
// process would find them), and the rows after each.
func walPair(t *testing.T) (dbs, wals [][]byte, rows [][]int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.db")
	db, err := rawsql.Open("file:" + p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 0",
		"CREATE TABLE t (x INTEGER, pad BLOB)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	var want []int
	snap := func() {
		d, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(p + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		dbs, wals, rows = append(dbs, d), append(wals, w), append(rows, slices.Clone(want))
	}
	snap()
	// Transactions that grow the file (pages only in the WAL), rewrite
	// pages, and delete rows.
	for i := 1; i <= 3; i++ {
		tx, _ := db.Begin()
		for j := 0; j < 200; j++ {
			x := i*1000 + j
			if _, err := tx.Exec("INSERT INTO t VALUES (?, ?)", x, bytes.Repeat([]byte{byte(j)}, 300)); err != nil {
				t.Fatal(err)
			}
			want = append(want, x)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		snap()
	}
	if _, err := db.Exec("DELETE FROM t WHERE x % 2 = 0"); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(x int) bool { return x%2 == 0 })
	snap()
	return dbs, wals, rows
}

// readRows opens the database file content b and lists t, after SQLite's
// own integrity check.
func readRows(t *testing.T, b []byte) []int {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := rawsql.Open("file:" + p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	r, err := db.Query("SELECT x FROM t ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []int
	for r.Next() {
		var x int
		r.Scan(&x)
		out = append(out, x)
	}
	return out
}

// TestApplyWAL: the database file plus its WAL, applied, reads as SQLite
// reads the pair; a torn last frame or a wrong checksum ends the log at
// the commit before it; a WAL of another generation (other salts) or no
// WAL changes nothing.
func TestApplyWAL(t *testing.T) {
	dbs, wals, rows := walPair(t)
	last := len(dbs) - 1
	for i := range dbs {
		got, err := store.ApplyWAL(dbs[i], wals[i])
		if err != nil {
			t.Fatal(err)
		}
		if r := readRows(t, got); !slices.Equal(r, rows[i]) {
			t.Errorf("after commit %d: %d rows, want %d", i, len(r), len(rows[i]))
		}
	}
	db, wal := dbs[last], wals[last]
	pageSize := int(binary.BigEndian.Uint32(wal[8:]))
	frame := 24 + pageSize
	// The last transaction (the DELETE) ends the log; tear its last frame.
	torn, err := store.ApplyWAL(db, wal[:len(wal)-10])
	if err != nil {
		t.Fatal(err)
	}
	if r := readRows(t, torn); !slices.Equal(r, rows[last-1]) {
		t.Errorf("torn last frame: %d rows, want the %d before the last commit", len(r), len(rows[last-1]))
	}
	bad := slices.Clone(wal)
	bad[len(bad)-frame+24+100] ^= 0xff // a byte of the last frame's page
	got, err := store.ApplyWAL(db, bad)
	if err != nil {
		t.Fatal(err)
	}
	if r := readRows(t, got); !slices.Equal(r, rows[last-1]) {
		t.Errorf("bad checksum: %d rows, want %d", len(r), len(rows[last-1]))
	}
	other := slices.Clone(wal)
	binary.BigEndian.PutUint32(other[32+8:], binary.BigEndian.Uint32(other[16:])+1) // first frame's salt-1
	if got, _ := store.ApplyWAL(db, other); !bytes.Equal(got, db) {
		t.Error("frames of another generation were applied")
	}
	if got, _ := store.ApplyWAL(db, nil); !bytes.Equal(got, db) {
		t.Error("no WAL changed the database")
	}
}
