// The floor of bench/workloads.mjs: an SDK with agentfs-sdk's API
// that stores nothing anywhere (files, keys and tool calls stay in this
// process's maps, written data is kept by reference as if a disk held it
// for free, and reads return fresh copies as any real SDK must). What it
// measures is what Node and the workload itself cost: no SDK that keeps
// its data in a database can start faster or peak lower.
//
//   SDK=$PWD/bench/floor-sdk/index.mjs node ../bench/workloads.mjs
//
// bench/sdk-ts.sh runs it as the "floor" side.

const enoent = (op, p) => Object.assign(new Error(`ENOENT: no such file or directory, ${op} '${p}'`), { code: 'ENOENT' });

class Stats {
  constructor(size, dir) { this.size = size; this.dir = dir; }
  isFile() { return !this.dir; }
  isDirectory() { return this.dir; }
}

class FloorFS {
  files = new Map(); // path -> Buffer (the caller's, as if written out)
  dirs = new Map([['/', new Set()]]); // path -> names
  parent(p) { const i = p.lastIndexOf('/'); return [i === 0 ? '/' : p.slice(0, i), p.slice(i + 1)]; }
  link(p) {
    const [d, n] = this.parent(p);
    const names = this.dirs.get(d);
    if (!names) throw enoent('open', p);
    names.add(n);
  }
  async mkdir(p) { this.link(p); this.dirs.set(p, new Set()); }
  async writeFile(p, data) { this.link(p); this.files.set(p, typeof data === 'string' ? Buffer.from(data) : data); }
  async readFile(p) { const b = this.files.get(p); if (!b) throw enoent('open', p); return Buffer.from(b); }
  async stat(p) {
    const b = this.files.get(p);
    if (b) return new Stats(b.length, false);
    if (this.dirs.has(p)) return new Stats(0, true);
    throw enoent('stat', p);
  }
  async readdir(p) { const d = this.dirs.get(p); if (!d) throw enoent('scandir', p); return [...d]; }
  async readdirPlus(p) {
    const names = await this.readdir(p);
    return Promise.all(names.map(async (name) => ({ name, stats: await this.stat(p === '/' ? '/' + name : p + '/' + name) })));
  }
  async open(p) {
    const b = this.files.get(p);
    if (!b) throw enoent('open', p);
    return { pread: async (off, len) => Buffer.from(b.subarray(off, off + len)), close: async () => {} };
  }
}

class FloorKV {
  m = new Map();
  async set(k, v) { this.m.set(k, JSON.stringify(v)); }
  async get(k) { const v = this.m.get(k); return v === undefined ? undefined : JSON.parse(v); }
  async list(prefix) { return [...this.m].filter(([k]) => k.startsWith(prefix)).map(([key, v]) => ({ key, value: JSON.parse(v) })); }
  async delete(k) { this.m.delete(k); }
}

class FloorTools {
  calls = [];
  async record(name, started_at, completed_at, parameters, result, error) {
    const id = this.calls.length + 1;
    this.calls.push({ id, name, parameters: JSON.stringify(parameters), result: JSON.stringify(result), error,
      status: error ? 'error' : 'success', started_at, completed_at, duration_ms: (completed_at - started_at) * 1000 });
    return id;
  }
  view(c) { return { ...c, parameters: JSON.parse(c.parameters), result: JSON.parse(c.result) }; }
  async get(id) { const c = this.calls[id - 1]; return c && this.view(c); }
  async getByName(name, limit) { return this.calls.filter((c) => c.name === name).reverse().slice(0, limit ?? Infinity).map((c) => this.view(c)); }
  async getRecent(since, limit) { return this.calls.filter((c) => c.started_at > since).reverse().slice(0, limit ?? Infinity).map((c) => this.view(c)); }
  async getStats() {
    const by = new Map();
    for (const c of this.calls) {
      const s = by.get(c.name) ?? { name: c.name, total_calls: 0, successful: 0, failed: 0, avg_duration_ms: 0 };
      s.total_calls++; c.error ? s.failed++ : s.successful++; s.avg_duration_ms += (c.duration_ms - s.avg_duration_ms) / s.total_calls;
      by.set(c.name, s);
    }
    return [...by.values()];
  }
}

export class AgentFS {
  fs = new FloorFS();
  kv = new FloorKV();
  tools = new FloorTools();
  static async open() { return new AgentFS(); }
  async close() {}
}
