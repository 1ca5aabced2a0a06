// A Durable Object for tests/cloudflare/statements.test.mjs: its agent runs
// over the object's real SQLite storage through a wrapper that logs each
// statement and each transactionSync the engine asks for.
import { DurableObject } from "cloudflare:workers";
// The package as built (sdk-ts/dist), as an app gets agentfs-sdk/cloudflare.
import { AgentFS } from "../../sdk-ts/dist/cloudflare.js";

export class Agent extends DurableObject {
  private log: string[] = [];
  private readonly agent = AgentFS.create({
    sql: {
      exec: (query: string, ...args: unknown[]) => {
        this.log.push(query.replace(/\s+/g, " ").trim());
        return this.ctx.storage.sql.exec(query, ...args);
      },
      get databaseSize() {
        return 0;
      },
    },
    transactionSync: (fn) => {
      this.log.push("transactionSync");
      return this.ctx.storage.transactionSync(fn);
    },
  });

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.searchParams.get("path") ?? "/f";
    this.log = [];
    try {
      if (request.method === "PUT") await this.agent.writeFile(path, new Uint8Array(await request.arrayBuffer()));
      else await this.agent.readFile(path);
      return Response.json(this.log);
    } catch (e) {
      return new Response(`${(e as { code?: string }).code ?? "error"}: ${(e as Error).message}`, { status: 500 });
    }
  }
}

export default {
  fetch(request: Request, env: { AGENT: DurableObjectNamespace }): Promise<Response> {
    return env.AGENT.get(env.AGENT.idFromName("t")).fetch(request);
  },
};
