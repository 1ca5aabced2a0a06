package registry

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestAddListAlive(t *testing.T) {
	t.Setenv("AGENTFS_RUNTIME_DIR", filepath.Join(t.TempDir(), "reg"))
	if l, err := List(); err != nil || len(l) != 0 {
		t.Fatalf("empty registry: %v, %v", l, err)
	}
	remove, err := Add(Entry{Kind: KindRun, Session: "s", DB: "/p/.agentfs/s.db", Dir: "/p", Command: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := List()
	if err != nil || len(l) != 1 {
		t.Fatalf("List: %v, %v", l, err)
	}
	e := l[0]
	if e.PID != os.Getpid() || e.Session != "s" || e.Dir != "/p" || e.Started.IsZero() || !e.Alive() {
		t.Errorf("entry %+v (alive %v)", e, e.Alive())
	}
	// Another start time: the pid was reused by another process.
	e.Start++
	if e.Alive() {
		t.Error("an entry with another start time is alive")
	}
	// Of another PID namespace: cannot be checked, counts as alive.
	if e.PIDNS == "" {
		t.Error("the entry does not name its PID namespace")
	}
	e.PIDNS = "pid:[1]"
	if !e.Alive() {
		t.Error("an entry of another PID namespace is not alive")
	}
	remove()
	if l, _ := List(); len(l) != 0 {
		t.Errorf("after remove: %v", l)
	}
	// A process that exited.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true:", err)
	}
	if (Entry{PID: c.Process.Pid, Start: 1}).Alive() {
		t.Error("a process that exited is alive")
	}
	// Junk in the directory is skipped.
	os.WriteFile(filepath.Join(Dir(), "junk.json"), []byte("{"), 0o600)
	if l, err := List(); err != nil || len(l) != 0 {
		t.Errorf("with junk: %v, %v", l, err)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("AGENTFS_RUNTIME_DIR", "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if d := Dir(); d != "/run/user/1000/agentfs" {
		t.Errorf("Dir with XDG_RUNTIME_DIR: %s", d)
	}
	t.Setenv("AGENTFS_RUNTIME_DIR", "/x")
	if d := Dir(); d != "/x" {
		t.Errorf("Dir with AGENTFS_RUNTIME_DIR: %s", d)
	}
}
