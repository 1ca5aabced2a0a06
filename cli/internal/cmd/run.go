package cmd

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/cli/internal/registry"
	"github.com/agentfs-go/agentfs/core"
)

func init() { register(newRunCmd) }

// runConfigEnv carries the runConfig from "agentfs run" to its internal
// stages (the same binary, re-executed inside the namespaces).
const runConfigEnv = "AGENTFS_RUN_CONFIG"

// noRegistryEnv keeps a mount server out of the registry: the server of a
// run lives in the run's private mount namespace and the run's own entry
// stands for it.
const noRegistryEnv = "AGENTFS_NO_REGISTRY"

// runConfig is what the stages of a run need to know.
type runConfig struct {
	Session   string   `json:"session"`
	DB        string   `json:"db"`      // absolute
	Workdir   string   `json:"workdir"` // absolute, symlinks resolved
	Staging   string   `json:"staging"` // where the server mounts the session, inside the namespace
	Allow     []string `json:"allow,omitempty"`
	Command   []string `json:"command"`
	NoNetwork bool     `json:"no_network,omitempty"`
	// Strict: the strict profile (--strict): scrubbed environment,
	// hidden homes, no network, no UNIX sockets, no user namespaces.
	Strict bool `json:"strict,omitempty"`
	// Env are NAME=VALUE pairs for the command (--env).
	Env []string `json:"env,omitempty"`
	// HostSockets are the paths of the host's bound UNIX sockets when
	// the run started (/proc/net/unix of the host's network namespace,
	// which the stages may not share): the sandbox hides them.
	HostSockets []string `json:"host_sockets,omitempty"`
	Durability  string   `json:"durability"`
	// New: this run created the session (removed again if the command
	// never started).
	New bool `json:"new,omitempty"`
	// Job: the command gets the terminal, and the sandbox's init reports
	// its stops on descriptor 4 (job control, run_linux.go).
	Job bool `json:"job,omitempty"`
}

// runStatus is what a stage reports on the status pipe when it fails
// before the command runs (one JSON line).
type runStatus struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	Hint string `json:"hint,omitempty"`
}

func newRunCmd() *cobra.Command {
	var session, stage string
	var allow, env []string
	var noNetwork, strict bool
	c := &cobra.Command{
		Use:   "run [--session S] [--allow PATH]... [--no-network] [--strict] [--env NAME[=VALUE]]... [-- CMD [ARG...]]",
		Short: "Run a command in a sandbox where the current directory is a copy-on-write session (Linux)",
		Long: `Run CMD (default: $SHELL, else /bin/sh) in a sandbox made of Linux user,
mount and PID namespaces:

  - the current directory is an overlay: the host directory below, the
    session's database above; what CMD changes there goes to the database
    and the host directory stays as it was;
  - everything else is read-only (writes fail with EROFS), except the
    --allow paths and a private, empty /tmp (and /dev/shm); .agentfs/ in
    the current directory is the host's, read-only;
  - CMD runs as the calling user (root stays root of the namespace, but
    cannot change mounts);
  - CMD sees only its own processes (/proc is the sandbox's);
  - with --no-network, CMD gets an empty network namespace (no interfaces
    up, no route, none of the host's abstract UNIX sockets);
  - /dev is the sandbox's own: null, zero, full, random, urandom, tty, a
    private pts and shm, the fd links; no /dev/kmsg, no disks, nothing
    else of the host's devices;
  - /run (and /var/run) are private and empty, and the host's UNIX
    sockets elsewhere are hidden (/dev/null over them), so CMD cannot
    talk to the host's daemons (systemd, Docker, D-Bus, agents) through
    them; those below --allow paths stay reachable; on Linux 6.12+ the
    host's abstract UNIX sockets are out of reach too;
  - CMD has its own IPC, UTS (hostname) and cgroup namespaces, and a
    system call filter refuses kernel modules, kexec, BPF, perf, the
    kernel keyring, mount and namespace changes, io_uring, device nodes
    and the like (EPERM);
  - AGENTFS=1, AGENTFS_SANDBOX=linux-namespace and AGENTFS_SESSION are set;
    npm_config_cache=/tmp/.npm and XDG_CACHE_HOME=/tmp/.cache too (unless
    set, or --allow opens ~/.npm or ~/.cache, or a path in them), so that
    package managers, whose caches live in the read-only home, work;
  - --env NAME=VALUE sets a variable for CMD, --env NAME passes the
    host's value (repeatable).

With --strict (the strict profile), on top of that:

  - the environment is scrubbed: only PATH, TERM, LANG, HOME, the AGENTFS
    variables and the --env ones reach CMD;
  - the home directories (/home, /root and $HOME) are empty tmpfs mounts:
    nothing of the user's files (keys, tokens, shell history) is readable;
    HOME is /home/agent, empty and writable, gone after the run;
  - no network, as with --no-network;
  - no UNIX sockets at all (socket(AF_UNIX) fails with EPERM; socketpair
    works), so not even a host socket created after the start is
    reachable; and no new user namespaces.

A session is an agent database .agentfs/S.db in the current directory; a
new run makes one named run-<random hex> unless --session names it, and
--session S continues an existing session with its earlier changes.
Afterwards "agentfs diff S" lists the changes and "agentfs commit S"
applies them to the host directory.

Signals sent to agentfs are passed on to CMD and agentfs exits with CMD's
status (128+N when a signal N ended it).

Works as root, and as another user where the kernel allows unprivileged
user namespaces; inside a container that forbids them, as root with
CAP_SYS_ADMIN (a mount namespace only; AGENTFS_RUN_USERNS=off asks for
that directly). Needs /dev/fuse.`,
		Example: `  agentfs run                                  # a shell in a new session
  agentfs run -- make test
  agentfs run --session fix-tests --allow ~/.cache/go-build -- go test ./...
  agentfs run -- npm install                   # npm's cache: the sandbox's /tmp
  agentfs run --no-network --allow ~/.npm -- npm ci --offline
  agentfs run --strict --env GITHUB_TOKEN -- ./agent.sh
  agentfs diff fix-tests && agentfs commit fix-tests`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch stage {
			case "":
			case "init":
				return runStageInit(cmd)
			case "exec":
				return runStageExec(cmd)
			default:
				return usageError(cmd, "unknown internal stage %q", stage)
			}
			if err := fuseUsable(); err != nil {
				return err
			}
			pairs, err := envPairs(env)
			if err != nil {
				return err
			}
			cfg, err := prepareRun(cmd, session, allow, args)
			if err != nil {
				return err
			}
			cfg.Env = pairs
			cfg.NoNetwork = noNetwork || strict
			cfg.Strict = strict
			return runSession(cmd, cfg)
		},
	}
	// The command's own flags are its own: "agentfs run ls -la" works.
	c.Flags().SetInterspersed(false)
	c.Flags().StringVarP(&session, "session", "s", "", "resume session S (.agentfs/S.db), or start a new session named S")
	c.Flags().StringArrayVar(&allow, "allow", nil, "keep PATH writable (repeatable); everything outside the current directory is read-only otherwise")
	c.Flags().BoolVar(&noNetwork, "no-network", false, "no network: an empty network namespace")
	c.Flags().BoolVar(&strict, "strict", false, "strict profile: scrubbed environment, empty home directories, no network, no UNIX sockets")
	c.Flags().StringArrayVar(&env, "env", nil, "set NAME=VALUE for the command, or pass the host's NAME (repeatable)")
	c.Flags().StringVar(&stage, "internal-stage", "", "internal: a stage of the sandbox")
	c.Flags().MarkHidden("internal-stage")
	return c
}

// prepareRun checks the arguments, names the session and creates its
// database when new.
func prepareRun(cmd *cobra.Command, session string, allow, argv []string) (runConfig, error) {
	var cfg runConfig
	wd, err := os.Getwd()
	if err != nil {
		return cfg, err
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return cfg, err
	}
	if wd == "/" {
		return cfg, userError{msg: "agentfs run overlays the current directory, and it is /", hint: "cd to the project directory first"}
	}
	cfg.Workdir = wd
	cfg.Durability = durability
	if _, err := durabilityOption(); err != nil {
		return cfg, err
	}
	if len(argv) == 0 {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	cfg.Command = argv
	for _, p := range allow {
		abs, err := filepath.Abs(p)
		if err != nil {
			return cfg, err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return cfg, userError{msg: fmt.Sprintf("--allow %s: no such file or directory", p), hint: "mkdir -p " + p}
			}
			return cfg, err
		}
		if real == "/" {
			return cfg, userError{msg: "--allow /: that is no sandbox", hint: "allow the directories the command must write, one by one"}
		}
		cfg.Allow = append(cfg.Allow, real)
	}
	if session == "" {
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return cfg, err
		}
		session = "run-" + hex.EncodeToString(b)
	}
	if !core.ValidID(session) {
		return cfg, userError{msg: fmt.Sprintf("invalid session name %q: use letters, digits, '_' and '-'", session), hint: "agentfs run --session my-task"}
	}
	cfg.Session = session
	cfg.DB = filepath.Join(wd, core.PathForID(session))
	if e, ok := runningSession(cfg.DB); ok {
		return cfg, userError{msg: fmt.Sprintf("session %s is running already (pid %d)", session, e.PID), hint: "agentfs ps; or start another session: agentfs run"}
	}
	if _, err := os.Stat(cfg.DB); err == nil {
		// Resume: the session must be an overlay of this directory.
		a, err := openAgentWith(cmd, cfg.DB, core.Options{Base: wd})
		if errors.Is(err, core.ErrOverlay) {
			b, _ := openAgentWith(cmd, cfg.DB, core.Options{ReadOnly: true})
			if b != nil && b.Info.OverlayBase != "" {
				b.Close()
				return cfg, userError{msg: fmt.Sprintf("session %s is an overlay of %s, not of %s", session, b.Info.OverlayBase, wd),
					hint: fmt.Sprintf("cd %s && agentfs run --session %s", b.Info.OverlayBase, session)}
			}
			if b != nil {
				b.Close()
			}
			return cfg, userError{msg: fmt.Sprintf("%s is an agent database, not a session of agentfs run", cfg.DB),
				hint: "choose another session name: agentfs run --session NAME"}
		}
		if err != nil {
			return cfg, err
		}
		return cfg, a.Close()
	}
	if err := os.MkdirAll(filepath.Dir(cfg.DB), 0o755); err != nil {
		return cfg, err
	}
	// A new session: an overlay database over this directory.
	a, err := openAgentWith(cmd, cfg.DB, core.Options{Create: true, Base: wd})
	if err != nil {
		return cfg, err
	}
	cfg.New = true
	return cfg, a.Close()
}

// envPairs turns --env arguments into NAME=VALUE pairs: NAME alone takes
// the host's value.
func envPairs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		if name == "" || strings.ContainsAny(name, " \t\n\x00") {
			return nil, userError{msg: fmt.Sprintf("--env %q: not a variable name", a), hint: "agentfs run --env NAME=VALUE, or --env NAME to pass the host's value"}
		}
		if !hasValue {
			v, ok := os.LookupEnv(name)
			if !ok {
				return nil, userError{msg: fmt.Sprintf("--env %s: not set here", name), hint: fmt.Sprintf("export %s=... first, or give the value: --env %s=VALUE", name, name)}
			}
			value = v
		}
		out = append(out, name+"="+value)
	}
	return out, nil
}

// removeSession deletes the database of a session that never ran.
func removeSession(cfg runConfig) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(cfg.DB + suffix)
	}
}

// runningSession finds a live run of the session database db.
func runningSession(db string) (registry.Entry, bool) {
	list, _ := registry.List()
	for _, e := range list {
		if e.Kind == registry.KindRun && e.DB == db && e.Alive() {
			return e, true
		}
	}
	return registry.Entry{}, false
}

// printRunHints says how to go on with a session.
func printRunHints(cmd *cobra.Command, cfg runConfig) {
	rel := cfg.DB
	if r, err := filepath.Rel(cfg.Workdir, cfg.DB); err == nil && !strings.HasPrefix(r, "..") {
		rel = r
	}
	fmt.Fprintf(cmd.ErrOrStderr(), `agentfs: session %[1]s keeps its changes in %[2]s, not in %[3]s.
  Resume: agentfs run --session %[1]s
  Review: agentfs diff %[1]s
  Apply:  agentfs commit %[1]s
`, cfg.Session, rel, cfg.Workdir)
}

// readRunConfig reads the configuration a stage was started with.
func readRunConfig() (runConfig, error) {
	var cfg runConfig
	s := os.Getenv(runConfigEnv)
	os.Unsetenv(runConfigEnv)
	if s == "" {
		return cfg, errors.New("--internal-stage is started by agentfs run only")
	}
	err := json.Unmarshal([]byte(s), &cfg)
	return cfg, err
}

// sandboxCaches are the package managers' cache locations under the home
// directory, which is read-only in the sandbox, and where a run points
// them instead: its private /tmp, so that "npm install" or "pip install"
// work without --allow and the host's caches stay untouched.
var sandboxCaches = []struct{ env, home, tmp string }{
	{"npm_config_cache", ".npm", "/tmp/.npm"},
	{"XDG_CACHE_HOME", ".cache", "/tmp/.cache"}, // pip, yarn, go build, ...
}

// cacheDefaults sets the sandbox's cache variables, except those the
// caller set and those whose home location is, contains or lies in an
// --allow path (--allow ~/.cache/go-build: the caller wants the real
// caches there).
func cacheDefaults(allow []string) {
	home, _ := os.UserHomeDir()
	for _, c := range sandboxCaches {
		if _, set := os.LookupEnv(c.env); set {
			continue
		}
		allowed := false
		if home != "" {
			p := filepath.Join(home, c.home)
			for _, a := range allow {
				if a == p || a == "/" || strings.HasPrefix(p, a+"/") || strings.HasPrefix(a, p+"/") {
					allowed = true
				}
			}
		}
		if !allowed {
			os.Setenv(c.env, c.tmp)
		}
	}
}
