//go:build js && !agentfs_workers

package store

import (
	"bytes"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// snapshotFile is a MemFile that copies the database and its journal as
// they are on disk when its nth write begins: what a tab killed at that
// moment leaves in OPFS.
type snapshotFile struct {
	*MemFile
	journal     *MemFile
	writes, nth int
	db, jr      []byte
}

func (s *snapshotFile) WriteAt(b []byte, off int64) (int, error) {
	if s.writes++; s.writes == s.nth {
		s.db, s.jr = bytes.Clone(s.Data), bytes.Clone(s.journal.Data)
	}
	return s.MemFile.WriteAt(b, off)
}

func count(t *testing.T, c *sqlite3.Conn) (n int) {
	t.Helper()
	st, _, err := c.Prepare("SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Step() {
		t.Fatal(st.Err())
	}
	return st.ColumnInt(0)
}

func integrity(t *testing.T, c *sqlite3.Conn) string {
	t.Helper()
	st, _, err := c.Prepare("PRAGMA integrity_check")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Step() {
		t.Fatal(st.Err())
	}
	return st.ColumnText(0)
}

// A commit that overwrites pages in place, cut off at each of its writes
// to the database file: the bytes left on disk with their journal roll
// back to the last committed state, whole.
func TestPageFile_CrashMidCommitRollsBack(t *testing.T) {
	jf := &MemFile{}
	df := &snapshotFile{MemFile: &MemFile{}, journal: jf}
	AttachFiles("/crash/db", df, jf)
	defer DetachFiles("/crash/db")
	c, err := sqlite3.Open("file:/crash/db?vfs=" + pageVFS)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec("CREATE TABLE t(x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50) INSERT INTO t SELECT randomblob(3000) FROM n"); err != nil {
		t.Fatal(err)
	}
	if n, _ := jf.Size(); n != 0 {
		t.Fatalf("journal after a commit: %d bytes, want 0 (emptied)", n)
	}
	// The next commit rewrites every row and adds 50: many pages change.
	df.writes, df.nth = 0, 1<<30
	if err := c.Exec("UPDATE t SET x = randomblob(3000); INSERT INTO t SELECT x FROM t"); err != nil {
		t.Fatal(err)
	}
	total := df.writes
	if total < 20 {
		t.Fatalf("the commit wrote %d pages to the database, want many", total)
	}
	if got := count(t, c); got != 100 {
		t.Fatalf("rows after the second commit = %d, want 100", got)
	}

	// Replay the second commit, dying before each of its database writes.
	for nth := 1; nth <= total; nth += max(1, total/7) {
		jf2 := &MemFile{}
		df2 := &snapshotFile{MemFile: &MemFile{}, journal: jf2, nth: -1}
		AttachFiles("/crash/replay", df2, jf2)
		r, err := sqlite3.Open("file:/crash/replay?vfs=" + pageVFS)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Exec("CREATE TABLE t(x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50) INSERT INTO t SELECT randomblob(3000) FROM n"); err != nil {
			t.Fatal(err)
		}
		df2.writes, df2.nth = 0, nth
		if err := r.Exec("UPDATE t SET x = randomblob(3000); INSERT INTO t SELECT x FROM t"); err != nil {
			t.Fatal(err)
		}
		r.Close()
		DetachFiles("/crash/replay")
		if len(df2.jr) == 0 {
			t.Fatalf("write %d of %d: no journal on disk while the database was being overwritten", nth, total)
		}

		back, err := RollBack(df2.db, df2.jr, nil)
		if err != nil {
			t.Fatalf("write %d of %d: RollBack: %v", nth, total, err)
		}
		AttachFiles("/crash/check", &MemFile{Data: back}, &MemFile{})
		k, err := sqlite3.Open("file:/crash/check?vfs=" + pageVFS)
		if err != nil {
			t.Fatal(err)
		}
		if got := integrity(t, k); got != "ok" {
			t.Errorf("write %d of %d: integrity_check = %q", nth, total, got)
		}
		if got := count(t, k); got != 50 {
			t.Errorf("write %d of %d: rows after rollback = %d, want 50 (the last commit)", nth, total, got)
		}
		k.Close()
		DetachFiles("/crash/check")
	}
}
