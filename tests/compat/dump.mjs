#!/usr/bin/env node
// Usage: node dump.mjs DBPATH
// Opens an existing AgentFS database with the real agentfs-sdk (0.6.4) and
// prints ONE canonical JSON document describing everything readable through
// the SDK. Byte-equal dumps <=> equal contents.
//
// Canonical form: object keys sorted recursively; arrays of files/kv sorted by
// path/key comparing UTF-8 bytes; JSON.stringify escaping (non-ASCII written
// as raw UTF-8, no HTML escaping), 2-space indent, trailing newline.
// Fields whose SDK value is undefined (SQL NULL) are omitted.
// NOTE: opening a db with the SDK writes to it (fs_config schema_version,
// atime updates in readFile), so dump a copy if the bytes matter.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { isAbsolute } from "node:path";

// AGENTFS_SDK picks another package with agentfs-sdk's API (a name, or the
// path of its entry file): tests/xlang runs these scripts on this
// project's TypeScript SDK too.
const sdk = process.env.AGENTFS_SDK || "turso-agentfs";
const { AgentFS } = await import(isAbsolute(sdk) ? pathToFileURL(sdk).href : sdk);

const S_IFMT = 0o170000, S_IFREG = 0o100000, S_IFDIR = 0o040000, S_IFLNK = 0o120000;

const dbPath = process.argv[2];
if (!dbPath) {
  console.error("usage: node dump.mjs DBPATH");
  process.exit(2);
}
if (!existsSync(dbPath)) {
  console.error(`dump.mjs: ${dbPath} does not exist`);
  process.exit(2);
}

const byUtf8 = (a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort(byUtf8)) {
      if (v[k] !== undefined) out[k] = canonical(v[k]);
    }
    return out;
  }
  return v;
}

const agent = await AgentFS.open({ path: dbPath });
try {
  // ---- files: walk from "/" with readdir + lstat (symlinks are not followed)
  const files = [];
  async function walk(dir) {
    for (const name of await agent.fs.readdir(dir)) {
      const path = dir === "/" ? `/${name}` : `${dir}/${name}`;
      const st = await agent.fs.lstat(path);
      const entry = { path, mode: st.mode & 0o7777 };
      switch (st.mode & S_IFMT) {
        case S_IFDIR:
          entry.type = "dir";
          files.push(entry);
          await walk(path);
          break;
        case S_IFREG: {
          entry.type = "file";
          const data = await agent.fs.readFile(path);
          entry.size = st.size;
          entry.sha256 = createHash("sha256").update(data).digest("hex");
          if (data.length !== st.size) entry.content_length = data.length; // only on inconsistency
          files.push(entry);
          break;
        }
        case S_IFLNK:
          entry.type = "symlink";
          entry.target = await agent.fs.readlink(path);
          files.push(entry);
          break;
        default:
          entry.type = "other";
          entry.raw_mode = st.mode;
          files.push(entry);
      }
    }
  }
  await walk("/");
  files.sort((a, b) => byUtf8(a.path, b.path));

  // ---- kv
  const kv = (await agent.kv.list(""))
    .map(({ key, value }) => ({ key, value }))
    .sort((a, b) => byUtf8(a.key, b.key));
  const kvPrefixUser = (await agent.kv.list("user:")).map((r) => r.key).sort(byUtf8);

  // ---- tool calls: getRecent(since) has `WHERE started_at > since` and no
  // LIMIT when limit is undefined, so this returns every row; order by id.
  const tools = (await agent.tools.getRecent(Number.MIN_SAFE_INTEGER))
    .sort((a, b) => a.id - b.id)
    .map((t) => ({
      id: t.id,
      name: t.name,
      parameters: t.parameters,
      result: t.result,
      error: t.error,
      status: t.status,
    }));

  const doc = canonical({ files, kv, kv_prefix_user: kvPrefixUser, tools });
  process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
} finally {
  await agent.close();
}
