package jsnode_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func TestNode_EvalPrintArgs(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `node -e 'console.log(process.argv.slice(1).join("|"))' a 'b c'; node -p '[1,2].map(x => x * 2)'; node -p 'require("path").join("a", "b")'; node --version`)
	want := lines("a|b c", "[ 2, 4 ]", "a/b", "v20.0.0")
	if out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestNode_StdinScriptAndData(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `printf 'x\ny\n' | node -e 'const s = require("fs").readFileSync(0, "utf8"); console.log(s.split("\n").length)'; echo 'console.log("from stdin")' | node`)
	if out != lines("3", "from stdin") {
		t.Fatalf("got %q", out)
	}
}

func TestNode_TypeScript(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	e.write(map[string]string{
		"/app/src/model.ts": `export interface User { name: string; age: number }
export enum Role { Admin = "admin", Guest = "guest" }
export function describe(u: User, r: Role = Role.Guest): string { return ` + "`${u.name} (${u.age}) ${r}`" + `; }`,
		"/app/src/main.ts": `import { describe, Role, type User } from "./model";
import * as fs from "node:fs";
const users: User[] = JSON.parse(fs.readFileSync("users.json", "utf8"));
class Registry<T extends User> {
  private items: T[] = [];
  add(u: T): this { this.items.push(u); return this; }
  get names(): string[] { return this.items.map((u) => u.name); }
}
const r = new Registry<User>();
users.forEach((u) => r.add(u));
console.log(r.names.join(","), describe(users[0], Role.Admin));
const n = users.length as number satisfies number;
console.log(n);`,
		"/app/users.json": `[{"name":"ada","age":36},{"name":"bob","age":7}]`,
	})
	out := e.mustRun("/app", "node src/main.ts")
	if out != lines("ada,bob ada (36) admin", "2") {
		t.Fatalf("got %q", out)
	}
	// A syntax error in TypeScript is reported with its position.
	e.write(map[string]string{"/app/bad.ts": "const x: number = ;\n"})
	res := e.run("/app", "node bad.ts")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "bad.ts:1:") {
		t.Fatalf("bad.ts: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

func TestNode_ExitCodes(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	cases := map[string]int{
		`node -e 'process.exit(42)'`:                                                  42,
		`node -e 'process.exitCode = 9'`:                                              9,
		`node -e 'throw new Error("x")'`:                                              1,
		`node -e 'try { process.exit(3) } finally { console.log("no") }'`:             3,
		`node -e 'setTimeout(() => process.exit(5), 1); setInterval(() => {}, 1000)'`: 5,
		`node -e 'Promise.reject(new Error("r"))'`:                                    1,
		`node missing.js`: 1,
		`node -e 'console.log(1); process.kill(process.pid)'; echo after $?`: 0,
		// A child still waiting for its stdin does not keep the command
		// alive after process.exit.
		`node -e 'require("child_process").spawn("cat"); setTimeout(() => process.exit(4), 5)'`: 4,
	}
	for script, want := range cases {
		res := e.run("/", script)
		if res.ExitCode != want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", script, res.ExitCode, want, res.Stderr)
		}
		if strings.Contains(res.Stdout, "no") {
			t.Errorf("%s: code after process.exit ran: %q", script, res.Stdout)
		}
	}
}

func TestNode_WallTimeStopsInfiniteLoop(t *testing.T) {
	lim := sandbox.Normal
	lim.WallTime = 300 * time.Millisecond
	e := newEnv(t, sandbox.Options{Limits: lim})
	for _, script := range []string{
		`node -e 'for (;;) {}'`,
		`node -e 'const f = () => Promise.resolve().then(f); f()'`,
		`node -e 'setInterval(() => {}, 1)'`,
		`node -e 'while (true) { try { for(;;){} } catch (e) {} finally { continue } }'`,
	} {
		res := e.run("/", script)
		if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "wall time" {
			t.Errorf("%s: exit %d, limit %v, stderr %q", script, res.ExitCode, res.Limit, res.Stderr)
		}
	}
}

func TestNode_CancelStopsScript(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	cctx, cancel := context.WithCancel(ctx)
	started := make(chan struct{})
	var once sync.Once
	w := writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "started") {
			once.Do(func() { close(started) })
		}
		return len(p), nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := e.sb.Exec(cctx, `node -e 'console.log("started"); for (;;) {}'`, sandbox.ExecOptions{Stdout: w, Stderr: io.Discard})
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Exec of a cancelled script returned no error")
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestNode_MemoryBudgetStopsHog(t *testing.T) {
	lim := sandbox.Normal
	lim.MaxMemoryBytes = 32 << 20
	e := newEnv(t, sandbox.Options{Limits: lim})
	for _, script := range []string{
		`node -e 'const a = []; for (;;) a.push(new Array(10000).fill(Math.random()))'`,
		`node -e 'let s = "x"; for (;;) s = s + s'`,
	} {
		res := e.run("/", script)
		if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "memory" {
			t.Errorf("%s: exit %d, limit %v, stderr %q", script, res.ExitCode, res.Limit, res.Stderr)
		}
	}
	// A large file read is refused at once, before it becomes a string.
	e.write(map[string]string{"/big.txt": strings.Repeat("y", 40<<20)})
	res := e.run("/", `node -e 'require("fs").readFileSync("/big.txt")'`)
	if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "memory" {
		t.Errorf("big read: exit %d, limit %v, stderr %q", res.ExitCode, res.Limit, res.Stderr)
	}
}

func TestNode_PermissionsEACCES(t *testing.T) {
	e := newEnv(t, sandbox.Options{Limits: sandbox.Normal, Policy: sandbox.Policy{Readable: []string{"/work"}, Writable: []string{"/work/out"}}})
	e.write(map[string]string{"/work/in.txt": "input", "/secret/key": "s3cr3t"})
	e.a.FS.MkdirAll(ctx, "/work/out", 0o755)
	out := e.mustRun("/work", `node -e '
const fs = require("fs");
const tryIt = (name, f) => { try { f(); console.log(name, "ok"); } catch (e) { console.log(name, e.code); } };
tryIt("read-in", () => fs.readFileSync("in.txt"));
tryIt("read-secret", () => fs.readFileSync("/secret/key"));
tryIt("list-secret", () => fs.readdirSync("/secret"));
tryIt("write-work", () => fs.writeFileSync("x.txt", "x"));
tryIt("write-out", () => fs.writeFileSync("out/x.txt", "x"));
tryIt("escape-dotdot", () => fs.readFileSync("../secret/key"));
tryIt("symlink-out", () => { fs.symlinkSync("/secret/key", "out/l"); fs.readFileSync("out/l"); });
tryIt("require-secret", () => require("/secret/key"));
fs.promises.readFile("/secret/key").catch((e) => console.log("promise", e.code));
'`)
	want := lines("read-in ok", "read-secret EACCES", "list-secret EACCES", "write-work EACCES", "write-out ok",
		"escape-dotdot EACCES", "symlink-out EACCES", "require-secret EACCES", "promise EACCES")
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestNode_ChildProcessUsesSandboxPolicy(t *testing.T) {
	e := newEnv(t, sandbox.Options{Limits: sandbox.Normal, Policy: sandbox.Policy{Deny: []string{"rm"}}})
	e.write(map[string]string{"/d/f": "keep"})
	out := e.mustRun("/d", `node -e '
const cp = require("child_process");
const r = cp.spawnSync("rm", ["f"], { encoding: "utf8" });
console.log(r.status, r.stderr.trim());
console.log(cp.execSync("cat f; echo; ls /d", { encoding: "utf8" }).trim());
const x = cp.spawnSync("/usr/bin/id", [], { encoding: "utf8" });
console.log(x.status);
'`)
	if out != lines("126 rm: command not allowed by the sandbox policy", "keep", "f", "127") {
		t.Fatalf("got %q", out)
	}
}

func TestNode_FetchDeniedByDefault(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	e := newEnv(t, sandboxOpts())
	out := e.mustRun("/", `node -e '
fetch("`+srv.URL+`/x").then(() => console.log("reached"), (e) => console.log(e.name, e.message, e.cause.code, /network policy/.test(e.cause.message)));
'`)
	if out != lines("TypeError fetch failed EACCES true") || hits != 0 {
		t.Fatalf("got %q, server hits %d", out, hits)
	}
}

func TestNode_FetchAllowedRuleInjectsHeaders(t *testing.T) {
	var gotAuth, gotBody, gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotMethod = r.Header.Get("Authorization"), r.Method
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Seen", "1")
		w.WriteHeader(201)
		io.WriteString(w, `{"ok":true,"n":3}`)
	}))
	defer srv.Close()
	pol := sandbox.Policy{Net: []commands.NetRule{{Prefix: srv.URL + "/api/", Methods: []string{"POST"}, Headers: map[string]string{"Authorization": "Bearer host-secret"}, AllowPrivate: true}}}
	e := newEnv(t, sandbox.Options{Limits: sandbox.Normal, Policy: pol})
	out := e.mustRun("/", `node -e '
(async () => {
  const r = await fetch("`+srv.URL+`/api/items", { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer script" }, body: JSON.stringify({ a: 1 }) });
  console.log(r.status, r.ok, r.headers.get("x-seen"), (await r.json()).n);
  await fetch("`+srv.URL+`/api/items").catch((e) => console.log("GET", e.cause.code));
  await fetch("`+srv.URL+`/other", { method: "POST" }).catch((e) => console.log("other", e.cause.code));
})();
'`)
	if out != lines("201 true 1 3", "GET EACCES", "other EACCES") {
		t.Fatalf("got %q", out)
	}
	if gotAuth != "Bearer host-secret" || gotMethod != "POST" || gotBody != `{"a":1}` {
		t.Fatalf("server saw auth %q method %q body %q", gotAuth, gotMethod, gotBody)
	}
}

func TestNode_Audited(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	e.mustRun("/", `node -e 'console.log("audited")'`)
	calls, err := e.a.Tools.List(ctx, toolcalls.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range calls {
		if c.Name == "exec" && strings.Contains(string(c.Parameters), `node -e 'console.log(\"audited\")'`) && strings.Contains(string(c.Result), `"exit_code":0`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no exec record of the node run in %+v", calls)
	}
}

func TestNode_ModulesMore(t *testing.T) {
	e := newEnv(t, sandboxOpts())
	e.write(map[string]string{
		"/m/conf.json":                     `{"name":"conf","list":[1,2]}`,
		"/m/main.mjs":                      "import conf from './conf.json' with { type: 'json' };\nimport legacy from './legacy.cjs';\nimport { sub } from 'pat/feature/x';\nconsole.log(conf.name, conf.list.length, legacy.kind, sub);\n",
		"/m/legacy.cjs":                    "module.exports = { kind: 'cjs' };\n",
		"/m/node_modules/pat/package.json": `{"name":"pat","exports":{"./feature/*":"./lib/*.js"}}`,
		"/m/node_modules/pat/lib/x.js":     "exports.sub = 'pattern';\n",
		"/m/pre.js":                        "globalThis.PRELOADED = 'yes';\n",
		"/m/uses-pre.js":                   "console.log(PRELOADED);\n",
		"/m/node_modules/pat/lib/y.js":     "exports.sub = 'other';\n",
		"/m/node_modules/.bin/ignored":     "",
	})
	out := e.mustRun("/m", "node main.mjs; node -r ./pre.js uses-pre.js; node -c main.mjs && echo syntax-ok")
	if out != lines("conf 2 cjs pattern", "yes", "syntax-ok") {
		t.Fatalf("got %q", out)
	}
}
