// A Worker whose Durable Objects each hold an agent: files, key-value
// store, tool-call log and a shell, all in the object's own SQLite
// storage (agentfs-sdk/cloudflare). Routes, per agent NAME:
//
//   PUT  /NAME/fs/PATH      body -> file          GET /NAME/fs/PATH   file
//   GET  /NAME/ls/PATH      directory listing (JSON)
//   PUT  /NAME/kv/KEY       JSON body -> value     GET /NAME/kv/KEY    value
//   POST /NAME/tools        {name, parameters, result} -> tool call id
//   GET  /NAME/tools        recent tool calls (JSON)
//   POST /NAME/exec         shell script (body) -> {exitCode, stdout, stderr}
//   GET  /NAME/tables       the AgentFS tables in the object's storage

import { DurableObject } from "cloudflare:workers";
import { AgentFS } from "agentfs-sdk/cloudflare";

interface Env {
  AGENT: DurableObjectNamespace<Agent>;
}

export class Agent extends DurableObject<Env> {
  private readonly agent: AgentFS;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.agent = AgentFS.create(ctx.storage);
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const [, , route, ...rest] = url.pathname.split("/");
    const arg = "/" + rest.map(decodeURIComponent).join("/");
    const a = this.agent;
    try {
      switch (`${request.method} ${route}`) {
        case "PUT fs":
          await a.writeFile(arg, new Uint8Array(await request.arrayBuffer()));
          return new Response(null, { status: 204 });
        case "GET fs":
          return new Response(await a.readFile(arg));
        case "GET ls":
          return Response.json(await a.readdir(arg));
        case "PUT kv":
          await a.kv.set(arg.slice(1), await request.json());
          return new Response(null, { status: 204 });
        case "GET kv":
          return Response.json((await a.kv.get(arg.slice(1))) ?? null);
        case "POST tools": {
          const t = (await request.json()) as { name: string; parameters?: unknown; result?: unknown };
          const now = Date.now() / 1000;
          return Response.json(await a.tools.record(t.name, now, now, t.parameters, t.result));
        }
        case "GET tools":
          return Response.json(await a.tools.getRecent(0));
        case "POST exec":
          return Response.json(await a.exec(await request.text()));
        case "GET tables":
          return Response.json(
            this.ctx.storage.sql
              .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name")
              .toArray()
              .map((r) => r.name),
          );
      }
      return new Response("no such route\n", { status: 404 });
    } catch (e) {
      // Errors carry a POSIX code (ENOENT, EISDIR...) as under Node.
      const err = e as Error & { code?: string };
      const status = err.code === "ENOENT" ? 404 : err.code === "EISDIR" || err.code === "ENOTDIR" || err.code === "EINVAL" ? 400 : 500;
      return new Response(`${err.code ?? "error"}: ${err.message}\n`, { status });
    }
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const name = new URL(request.url).pathname.split("/")[1];
    if (!name) return new Response("usage: /AGENT/fs/PATH, /AGENT/exec, ... (see src/index.ts)\n", { status: 400 });
    return env.AGENT.get(env.AGENT.idFromName(name)).fetch(request);
  },
} satisfies ExportedHandler<Env>;
