// Our package's public surface against agentfs-sdk 0.6.4's .d.ts files
// (npm, installed in tests/compat), read with the TypeScript compiler:
// every export of theirs (the Node entry, the browser entry, just-bash,
// cloudflare)
// must exist in ours, every public member of their classes and interfaces
// too, and our methods must accept their arguments (no fewer parameters,
// no more required ones). What cannot mean the same is listed in KNOWN,
// with the reason the README gives; a KNOWN entry that is no longer
// missing fails too, so the list stays true.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers.mjs";

const THEIRS = join(ROOT, "tests", "compat", "node_modules", "turso-agentfs", "dist");
const OURS = join(ROOT, "sdk-ts", "dist");
if (!existsSync(THEIRS)) throw new Error(`${THEIRS} missing: run \`go tool task compat-deps\``);

const ENTRIES = [
  ["agentfs-sdk", join(THEIRS, "index_node.d.ts"), join(OURS, "index.d.ts")],
  ["agentfs-sdk (browser)", join(THEIRS, "index_browser.d.ts"), join(OURS, "browser", "index.d.ts")],
  ["agentfs-sdk/just-bash", join(THEIRS, "integrations", "just-bash", "index.d.ts"), join(OURS, "just-bash.d.ts")],
  ["agentfs-sdk/cloudflare", join(THEIRS, "integrations", "cloudflare", "index.d.ts"), join(OURS, "cloudflare", "index.d.ts")],
];

// Missing on purpose; the reasons are in README.md, "Differences from agentfs-sdk 0.6.4".
const KNOWN = {
  "AgentFS#getDatabase": "returns Turso's database object; the engine owns the database (exportDatabase, info.path, rpc.agent.query instead)",
  "Filesystem.fromDatabase": "builds the class over a Turso database object; ours is reached as agent.fs",
  "KvStore.fromDatabase": "same, agent.kv",
  "ToolCalls.fromDatabase": "same, agent.tools",
};

// One program for all eight entries: loading the libraries once.
const program = ts.createProgram(ENTRIES.flatMap(([, t, o]) => [t, o]), { skipLibCheck: true, noEmit: true, types: ["node"], typeRoots: [join(ROOT, "sdk-ts", "node_modules", "@types")] });
const checker = program.getTypeChecker();

/** name -> { kind, members: name -> { min, max } } of a .d.ts entry's exports. */
function surface(file) {
  const mod = checker.getSymbolAtLocation(program.getSourceFile(file));
  const out = {};
  for (let sym of checker.getExportsOfModule(mod)) {
    const name = sym.getName();
    if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    const members = {};
    const add = (prefix, type) => {
      for (const p of type.getProperties()) {
        const decl = p.valueDeclaration ?? p.declarations?.[0];
        const mods = decl ? ts.getCombinedModifierFlags(decl) : 0;
        if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || p.getName().startsWith("#") || p.getName() === "prototype") continue;
        const sigs = checker.getTypeOfSymbol(p).getCallSignatures();
        const max = sigs.length ? Math.max(...sigs.map((s) => (s.hasRestParameter?.() ? Infinity : s.parameters.length))) : -1;
        const min = sigs.length ? Math.min(...sigs.map((s) => s.minArgumentCount)) : -1;
        members[prefix + p.getName()] = { min, max };
      }
    };
    let kind = "value";
    if (sym.flags & ts.SymbolFlags.Class) {
      kind = "class";
      add(".", checker.getTypeOfSymbol(sym)); // statics
      add("#", checker.getDeclaredTypeOfSymbol(sym)); // instance
    } else if (sym.flags & ts.SymbolFlags.Interface) {
      kind = "interface";
      add("#", checker.getDeclaredTypeOfSymbol(sym));
    } else if (sym.flags & ts.SymbolFlags.TypeAlias) {
      kind = "type";
    } else if (sym.flags & ts.SymbolFlags.Function) {
      kind = "function";
      add("", { getProperties: () => [sym] });
    }
    out[name] = { kind, members };
  }
  return out;
}

test("surface: every export, member and parameter list of agentfs-sdk 0.6.4 exists in ours", () => {
  const missing = [];
  const seenKnown = new Set();
  for (const [entry, theirsFile, oursFile] of ENTRIES) {
    const theirs = surface(theirsFile);
    const ours = surface(oursFile);
    assert.ok(Object.keys(theirs).length > 0 && Object.keys(ours).length > 0, `no exports read from ${theirsFile} or ${oursFile}`);
    for (const [name, t] of Object.entries(theirs)) {
      const o = ours[name];
      if (!o) {
        missing.push(`${entry}: export ${name}`);
        continue;
      }
      for (const [m, tm] of Object.entries(t.members)) {
        const key = `${name}${m}`;
        const om = o.members[m];
        if (!om) {
          if (KNOWN[key]) seenKnown.add(key);
          else missing.push(`${entry}: ${key}`);
          continue;
        }
        if (tm.max >= 0 && (om.max < tm.max || om.min > tm.min)) {
          missing.push(`${entry}: ${key} takes ${om.min}..${om.max} arguments, theirs ${tm.min}..${tm.max}`);
        }
      }
    }
  }
  assert.deepEqual(missing, [], "missing from our surface");
  assert.deepEqual(Object.keys(KNOWN).filter((k) => !seenKnown.has(k)), [], "KNOWN entries that are no longer missing");
});
