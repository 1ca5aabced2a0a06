package jsnode_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// Escape probes: what a script tries in order to reach the host, or to
// take the process down. Each must be refused inside the sandbox.

func TestAttack_Node_HostFilesUnreachable(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	e.write(map[string]string{"/etc/motd": "agent file"})
	out := e.mustRun("/", `node -e '
const fs = require("fs");
const t = (n, f) => { try { console.log(n, JSON.stringify(f())); } catch (e) { console.log(n, e.code); } };
t("passwd", () => fs.readFileSync("/etc/passwd", "utf8"));
t("environ", () => fs.readFileSync("/proc/self/environ", "utf8"));
t("motd", () => fs.readFileSync("/etc/motd", "utf8"));
t("dotdot", () => fs.readFileSync("../../../../etc/passwd", "utf8"));
t("url", () => fs.readFileSync(new URL("file:///etc/passwd"), "utf8"));
t("require", () => require("/etc/passwd"));
t("root", () => fs.readdirSync("/").sort());
t("realpath", () => fs.realpathSync("/proc/self/exe"));
'`)
	want := lines(`passwd ENOENT`, `environ ENOENT`, `motd "agent file"`, `dotdot ENOENT`, `url ENOENT`, `require MODULE_NOT_FOUND`, `root ["etc"]`, `realpath ENOENT`)
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestAttack_Node_NoHostProcessOrNativeCode(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `node -e '
const cp = require("child_process");
const t = (n, f) => { try { console.log(n, f()); } catch (e) { console.log(n, e.code || e.message); } };
t("id", () => cp.spawnSync("/usr/bin/id").status);
t("sh-id", () => cp.spawnSync("sh", ["-c", "id; echo $?"], { encoding: "utf8" }).stdout.trim());
t("bin-sh", () => cp.spawnSync("/bin/sh", ["-c", "/usr/bin/whoami"], { encoding: "utf8" }).stdout.trim());
t("binding", () => process.binding("spawn_sync"));
t("dlopen", () => process.dlopen({}, "/lib/x.so"));
for (const m of ["vm", "net", "http", "https", "dgram", "tls", "cluster", "inspector", "v8"]) t(m, () => typeof require(m));
t("fork", () => cp.fork("x.js"));
t("native-global", () => typeof globalThis.N + typeof globalThis.__native);
t("kill", () => process.kill(1, "SIGKILL"));
'`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, val, _ := strings.Cut(line, " ")
		switch name {
		case "bin-sh":
			// The sandbox's sh and whoami, not the host's.
			if val != "agent" {
				t.Errorf("%s: %s", name, val)
			}
		case "id":
			if val != "127" {
				t.Errorf("%s: %s", name, val)
			}
		case "sh-id":
			if !strings.Contains(val, "command not found") && !strings.HasSuffix(val, "127") {
				t.Errorf("%s: %s", name, val)
			}
		case "native-global":
			if val != "undefinedundefined" {
				t.Errorf("%s: %s", name, val)
			}
		default:
			if val == "object" || val == "function" || val == "undefined" {
				t.Errorf("%s reachable: %s", name, val)
			}
		}
	}
}

func TestAttack_Node_HugeAllocationsRefused(t *testing.T) {
	lim := sandbox.Normal
	lim.MaxMemoryBytes = 64 << 20
	e := newEnv(t, sandbox.Options{Limits: lim})
	out := e.mustRun("/", `node -e '
const t = (n, f) => { try { f(); console.log(n, "allocated"); } catch (e) { console.log(n, e.name); } };
t("arraybuffer", () => new ArrayBuffer(8e9));
t("uint8array", () => new Uint8Array(3e9));
t("float64array", () => new Float64Array(1e9));
t("buffer", () => Buffer.alloc(2 ** 31));
t("buffer-unsafe", () => Buffer.allocUnsafe(2 ** 31));
t("repeat", () => "x".repeat(2 ** 30));
t("padEnd", () => "x".padEnd(2 ** 30));
t("small", () => new Uint8Array(1024));
'`)
	want := lines("arraybuffer RangeError", "uint8array RangeError", "float64array RangeError", "buffer RangeError", "buffer-unsafe RangeError", "repeat RangeError", "padEnd RangeError", "small allocated")
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	// A huge array is sparse, as in V8; a bulk operation over it (a
	// loop inside the interpreter that no interrupt reaches) is refused
	// up front.
	out = e.mustRun("/", `node -e '
const t = (n, f) => { try { f(); console.log(n, "ran"); } catch (e) { console.log(n, e.name); } };
const a = new Array(1e9);
t("fill", () => a.fill(0));
t("join", () => a.join(","));
t("map", () => a.map((x) => x));
t("generic", () => Array.prototype.fill.call({ length: 1e9 }, 0));
t("from", () => Array.from({ length: 1e9 }));
t("apply", () => Math.max.apply(null, { length: 1e9 }));
t("shift", () => a.shift());
const big = "x".repeat(4e6);
t("split-chars", () => big.split(""));
t("from-string", () => Array.from(big));
t("split-lines", () => big.split("\\n").length);
t("small", () => [3, 1, 2].sort().map((x) => x * 2).join());
'`)
	if out != lines("fill RangeError", "join RangeError", "map RangeError", "generic RangeError", "from RangeError", "apply RangeError", "shift RangeError", "split-chars RangeError", "from-string RangeError", "split-lines ran", "small ran") {
		t.Fatalf("bulk operations:\n%s", out)
	}
}

func TestAttack_Node_DeepNestingNoCrash(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `node -e '
const t = (n, f) => { try { f(); console.log(n, "ok"); } catch (e) { console.log(n, e.name); } };
t("json", () => JSON.parse("[".repeat(1e6)));
t("json-valid", () => JSON.parse("[".repeat(1e4) + "]".repeat(1e4)));
t("eval-parens", () => eval("(".repeat(1e5) + "1" + ")".repeat(1e5)));
t("stringify-cycle", () => { const a = []; a.push(a); JSON.stringify(a); });
'`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(l, " ok") && !strings.HasPrefix(l, "json-valid") && !strings.HasPrefix(l, "eval-parens") {
			t.Errorf("expected an error: %s", l)
		}
	}
	// Unbounded recursion ends the script with a RangeError (goja's is
	// not catchable), never the process.
	res := e.run("/", `node -e 'const f = (n) => f(n + 1) + 1; f(0)'`)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "Maximum call stack size exceeded") {
		t.Errorf("recursion: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

func TestAttack_Node_RegexpBacktrackingStopped(t *testing.T) {
	lim := sandbox.Normal
	lim.WallTime = 500 * time.Millisecond
	e := newEnv(t, sandbox.Options{Limits: lim})
	res := e.run("/", `node -e 'console.log(/^(a+)+(?=b)\1$/.test("a".repeat(40) + "!"))'`)
	if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "wall time" {
		t.Fatalf("exit %d, limit %v, stdout %q stderr %q", res.ExitCode, res.Limit, res.Stdout, res.Stderr)
	}
}

func TestAttack_Node_FetchPrivateAddressRefused(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	// The rule allows the URL but not private addresses: loopback stays
	// closed, as it does for curl.
	pol := sandbox.Policy{Net: []commands.NetRule{{Prefix: srv.URL + "/"}}}
	e := newEnv(t, sandbox.Options{Limits: sandbox.Normal, Policy: pol})
	out := e.mustRun("/", `node -e 'fetch("`+srv.URL+`/x").then(() => console.log("reached"), (e) => console.log(e.message, /private|loopback/.test(e.cause.message)))'`)
	if out != lines("fetch failed true") || hits != 0 {
		t.Fatalf("got %q, hits %d", out, hits)
	}
}

func TestAttack_Node_HostEnvironmentInvisible(t *testing.T) {
	t.Setenv("AGENTFS_HOST_SECRET", "leak")
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `node -e 'console.log(JSON.stringify(process.env).includes("leak"), process.env.AGENTFS_HOST_SECRET)'`)
	if out != lines("false undefined") {
		t.Fatalf("got %q", out)
	}
	if os.Getenv("AGENTFS_HOST_SECRET") != "leak" {
		t.Fatal("setenv")
	}
}
