// The sandbox policy and bindings through this SDK: the shared conformance
// cases of spec/policy/cases.json (over stdio and a real `agentfs serve
// http`) and spec/bindings/cases.json (stdio: the engine calls back).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { AgentFS, EffectivePolicySchema } from "../dist/index.js";
import { ROOT, failure, serveHttp, tempDir } from "./helpers.mjs";

const policySpec = JSON.parse(readFileSync(join(ROOT, "spec", "policy", "cases.json"), "utf8"));
const bindingSpec = JSON.parse(readFileSync(join(ROOT, "spec", "bindings", "cases.json"), "utf8"));

/** The SDK's options of a case's policy (ExecRequest field names). */
export function policyOptions(c) {
  const p = { ...(c.policy ?? {}) };
  if (c.huge) p[c.huge.field] = Array.from({ length: c.huge.count }, (_, i) => `${c.huge.prefix}${i}`);
  const o = {};
  const camel = (k) => k.replace(/_([a-z])/g, (_, x) => x.toUpperCase());
  for (const [k, v] of Object.entries(p)) {
    switch (k) {
      case "readable": case "writable": case "allow": case "deny": case "env": case "limits": case "default_deny":
        o[camel(k)] = v;
        break;
      case "limit_values":
        o.limitValues = Object.fromEntries(Object.entries(v).map(([lk, lv]) => [camel(lk), lv]));
        break;
      case "net":
        o.net = v.map((r) => ({ prefix: r.prefix, methods: r.methods, headers: r.headers, allowPrivate: r.allow_private }));
        break;
      default:
        throw new Error(`${c.name}: policy field ${k}: add it to the harness`);
    }
  }
  return o;
}

/** got contains want: objects by the keys of want, lists and scalars equal (numbers by value). */
function contains(got, want) {
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => contains(got[i], w));
  if (want !== null && typeof want === "object") return got !== null && typeof got === "object" && Object.entries(want).every(([k, w]) => contains(got[k], w));
  if (typeof want === "number") return String(got) === String(want);
  return got === want;
}

const transports = {
  stdio: async (t) => AgentFS.open({ path: join(tempDir(t), "a.db") }),
  http: async (t) => AgentFS.open({ id: "p", url: await serveHttp(t, { data: tempDir(t) }) }),
};

for (const [name, open] of Object.entries(transports)) {
  test(`${name}: policy conformance cases`, async (t) => {
    const a = await open(t);
    t.after(() => a.close());
    assert.equal((await a.exec(policySpec.setup)).exitCode, 0);
    for (const c of policySpec.cases) {
      const o = policyOptions(c);
      if (c.error) {
        const e = await failure(() => a.exec(c.script, o));
        assert.equal(e.code, c.error, `${c.name}: ${e.message}`);
        assert.match(e.message, /invalid sandbox policy/, c.name);
        assert.equal((await failure(() => a.policy(o))).code, c.error, `${c.name}: policy()`);
        assert.equal((await a.exec(c.after)).stdout, c.after_stdout, `${c.name}: nothing ran`);
      } else if (c.effective) {
        const js = toJson(EffectivePolicySchema, await a.policy(o), { useProtoFieldName: true, alwaysEmitImplicit: true });
        assert.ok(contains(js, c.effective), `${c.name}: policy() = ${JSON.stringify(js)}`);
        for (const s of c.absent_text ?? []) assert.ok(!JSON.stringify(js).includes(s), `${c.name}: shows ${s}`);
      } else {
        const r = await a.exec(c.script, o);
        assert.equal(r.exitCode, c.expect.exit_code, `${c.name}: ${JSON.stringify(r)}`);
        if (c.expect.stdout !== undefined) assert.equal(r.stdout, c.expect.stdout, c.name);
        assert.ok(r.stderr.includes(c.expect.stderr_contains ?? ""), `${c.name}: stderr ${r.stderr}`);
      }
    }
  });
}

/** The host functions the binding cases name by fn. */
const fns = {
  echo: (args) => args,
  fail: (args) => { throw new Error(args.message); },
  sum: (args) => ({ sum: args.a + args.b }),
  null: () => undefined,
};

test("stdio: binding conformance cases", async (t) => {
  const a = await transports.stdio(t);
  t.after(() => a.close());
  for (const c of bindingSpec.cases) {
    const o = policyOptions(c);
    o.bindings = Object.fromEntries(c.bindings.map((b) => [b.name, { description: b.description, schema: b.schema, fn: fns[b.fn] }]));
    const r = await a.exec(c.script, o);
    assert.equal(r.exitCode, c.expect.exit_code, `${c.name}: ${JSON.stringify(r)}`);
    assert.equal(r.stdout, c.expect.stdout, c.name);
    assert.ok(r.stderr.includes(c.expect.stderr_contains), `${c.name}: stderr ${r.stderr}`);
  }
});
