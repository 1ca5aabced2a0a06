package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/agentfs-go/agentfs/cli/internal/nsrun"
	"github.com/agentfs-go/agentfs/core"
)

// maxHostSockets bounds the list of host sockets a run hides: it travels
// in the environment of the stages (a variable may hold 128 KiB).
const maxHostSockets = 1000

// hostSockets lists the paths of the UNIX sockets bound in this network
// namespace (/proc/net/unix), read before the stages may leave it: those
// the sandbox must not connect to. Sockets in /tmp, /run and /var/run
// are left out: the sandbox's own empty ones replace those directories.
func hostSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the header
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		p := strings.Join(fields[7:], " ")
		if !strings.HasPrefix(p, "/") || seen[p] {
			continue // unbound, abstract (@...) or listed already
		}
		seen[p] = true
		if underAny(p, "/tmp", "/run", "/var/run") {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) > maxHostSockets {
		out = out[:maxHostSockets]
	}
	return out
}

// underAny reports whether p is one of dirs or below one.
func underAny(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// sandboxLayout is the mount table of a run and the command's home in
// the strict profile ("" otherwise). It is computed inside the
// sandbox's mount namespace before Setup, which still shows the host's
// files.
func sandboxLayout(cfg runConfig) (nsrun.Layout, string) {
	l := nsrun.Layout{
		Workdir: cfg.Workdir, Overlay: cfg.Staging, Allow: cfg.Allow,
		Host:        []string{filepath.Join(cfg.Workdir, core.DefaultDir)},
		PrivateDirs: []string{"/tmp", "/dev/shm"},
		Dev:         true,
		Mask:        cfg.HostSockets,
	}
	// /run holds the sockets of the host's daemons (systemd's private
	// one answers root, Docker's gives root): empty in the sandbox.
	// /var/run is mostly a link to it; a directory of its own is
	// hidden too.
	l.Hidden = []string{"/run"}
	if st, err := os.Lstat("/var/run"); err == nil && st.IsDir() {
		l.Hidden = append(l.Hidden, "/var/run")
	}
	home := ""
	if cfg.Strict {
		l.Hidden = append(l.Hidden, "/home", "/root")
		if h := os.Getenv("HOME"); filepath.IsAbs(h) && h != "/" {
			l.Hidden = append(l.Hidden, filepath.Clean(h))
		}
		home = "/home/agent"
		if st, err := os.Stat("/home"); err != nil || !st.IsDir() {
			home = "/tmp/agent-home"
		}
		l.Dirs = append(l.Dirs, home)
	} else if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) && underAny(d, l.Hidden...) {
		// Programs expect it to exist (empty is fine).
		l.Dirs = append(l.Dirs, d)
	}
	// DNS: /etc/resolv.conf often links into /run (systemd-resolved,
	// NetworkManager); its target comes back read-only.
	if t, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && underAny(t, l.Hidden...) {
		l.Keep = append(l.Keep, t)
	}
	return l, home
}

// maskedProc are files of the sandbox's /proc that /dev/null covers, as
// container runtimes do: kernel memory, the keys the caller can see
// (their descriptions), timers and scheduler internals of the host.
var maskedProc = []string{"kcore", "keys", "key-users", "timer_list", "sched_debug"}

// maskProc covers maskedProc in the freshly mounted /proc.
func maskProc() error {
	for _, n := range maskedProc {
		p := "/proc/" + n
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := syscall.Mount("/dev/null", p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	return nil
}

// strictEnvKeep are the host's variables the strict profile passes on.
var strictEnvKeep = []string{"PATH", "TERM", "LANG"}

// defaultPath is the strict profile's PATH when the host has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// commandEnv is the environment the command starts with: this process's
// (the caller's) with the sandbox's variables, or in the strict profile
// only strictEnvKeep, HOME and those; --env pairs last, so they win.
func commandEnv(cfg runConfig, home string) []string {
	sandbox := []string{"AGENTFS=1", "AGENTFS_SANDBOX=linux-namespace", "AGENTFS_SESSION=" + cfg.Session}
	var env []string
	if cfg.Strict {
		for _, k := range strictEnvKeep {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		if _, ok := os.LookupEnv("PATH"); !ok {
			env = append(env, "PATH="+defaultPath)
		}
		env = append(env, "HOME="+home)
		env = append(env, sandbox...)
	} else {
		for _, kv := range sandbox {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		cacheDefaults(cfg.Allow)
		env = os.Environ()
	}
	return mergeEnv(env, cfg.Env)
}

// mergeEnv sets each NAME=VALUE of pairs in env, replacing an earlier
// value.
func mergeEnv(env, pairs []string) []string {
	for _, kv := range pairs {
		k, _, _ := strings.Cut(kv, "=")
		out := env[:0:0]
		for _, e := range env {
			if ek, _, _ := strings.Cut(e, "="); ek != k {
				out = append(out, e)
			}
		}
		env = append(out, kv)
	}
	return env
}

// envValue is NAME's value in env ("" when unset).
func envValue(env []string, name string) string {
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok && k == name {
			return v
		}
	}
	return ""
}
