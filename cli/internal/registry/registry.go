// Package registry is the small runtime registry of running agentfs
// processes (run sessions, mount servers and in-process shells) that "agentfs ps" lists and
// "agentfs prune" cleans.
//
// Each process writes one JSON file, named after its kind and pid, into
// Dir() when it starts and removes it when it ends. A process killed with
// SIGKILL leaves its file behind: an entry is live only while a process
// with its pid exists and started at the recorded time (pids are reused).
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kinds of entries.
const (
	KindRun   = "run"   // agentfs run: Dir is the directory the session overlays
	KindMount = "mount" // a FUSE server: Dir is the mount point
	KindShell = "sh"    // agentfs sh: Dir is its working directory in the agent; its jobs run inside it
)

// Entry is one registered process.
type Entry struct {
	Kind  string `json:"kind"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // start time in clock ticks (/proc/PID/stat)
	// PIDNS names the PID namespace PID belongs to (/proc/self/ns/pid).
	PIDNS   string    `json:"pidns,omitempty"`
	Session string    `json:"session,omitempty"`
	DB      string    `json:"db"`
	Dir     string    `json:"dir"`
	Staging string    `json:"staging,omitempty"` // run: the private mount point of the server
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started"`

	// File is where the entry was read from (not stored).
	File string `json:"-"`
}

// Dir is the registry directory: $AGENTFS_RUNTIME_DIR, else
// $XDG_RUNTIME_DIR/agentfs, else /run/agentfs for root, else
// $TMPDIR/agentfs-UID.
func Dir() string {
	if d := os.Getenv("AGENTFS_RUNTIME_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "agentfs")
	}
	if os.Geteuid() == 0 {
		return "/run/agentfs"
	}
	return filepath.Join(os.TempDir(), "agentfs-"+strconv.Itoa(os.Geteuid()))
}

// Add registers the calling process. The returned function removes the
// entry; call it when the process is done.
func Add(e Entry) (remove func(), err error) {
	e.PID = os.Getpid()
	start, err := startTime(e.PID)
	if err != nil {
		return nil, err
	}
	e.Start = start
	e.PIDNS = pidNS()
	if e.Started.IsZero() {
		e.Started = time.Now()
	}
	dir := Dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.json", e.Kind, e.PID))
	// Written under a temporary name and renamed: a reader never sees
	// half an entry.
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() { os.Remove(name) }, nil
}

// List returns every entry of the registry, live or not, oldest first.
// Files that cannot be read or parsed are skipped.
func List() ([]Entry, error) {
	ents, err := os.ReadDir(Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		p := filepath.Join(Dir(), de.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var e Entry
		if json.Unmarshal(b, &e) != nil || e.PID <= 0 {
			continue
		}
		e.File = p
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// Alive reports whether the process that registered e is still running.
// A process of another PID namespace (the host's, seen from inside the
// sandbox of agentfs run, which has a PID namespace and /proc of its own)
// cannot be looked up: it counts as alive, so that ps there does not call
// it stale and prune does not remove it.
func (e Entry) Alive() bool {
	if ns := pidNS(); e.PIDNS != "" && ns != "" && e.PIDNS != ns {
		return true
	}
	st, err := startTime(e.PID)
	return err == nil && st == e.Start
}

// Remove deletes the entry's file.
func (e Entry) Remove() error {
	if e.File == "" {
		return nil
	}
	err := os.Remove(e.File)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// pidNS names the caller's PID namespace ("pid:[4026531836]"), or "".
func pidNS() string {
	s, _ := os.Readlink("/proc/self/ns/pid")
	return s
}

// startTime reads the start time of pid (field 22 of /proc/PID/stat, in
// clock ticks since boot): with the pid, it names one process for good.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields after it follow the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	if f[0] == "Z" || f[0] == "X" {
		// Dead, not yet reaped by its parent.
		return 0, fs.ErrNotExist
	}
	return strconv.ParseUint(f[19], 10, 64)
}
