// A Durable Object for tests/cloudflare/transactions.test.mjs: its agent
// runs over the object's real SQLite storage, except that storage.sql.exec
// fails on the statement the request names (the Nth statement matching
// a pattern), as a full disk or a refused statement would. The engine's
// operation then fails half-way through its writes, and the object's
// transactionSync must have undone every one of them.
import { DurableObject } from "cloudflare:workers";
// The package as built (sdk-ts/dist), as an app gets agentfs-sdk/cloudflare.
import { AgentFS } from "../../sdk-ts/dist/cloudflare.js";

export class Agent extends DurableObject {
  private fail: { pattern: RegExp; nth: number } | undefined;
  private readonly agent = AgentFS.create({
    sql: {
      exec: (query: string, ...args: unknown[]) => {
        if (this.fail?.pattern.test(query) && --this.fail.nth === 0) {
          this.fail = undefined;
          throw new Error("injected failure: disk full");
        }
        return this.ctx.storage.sql.exec(query, ...args);
      },
      get databaseSize() {
        return 0;
      },
    },
    transactionSync: (fn) => this.ctx.storage.transactionSync(fn),
  });

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.searchParams.get("path") ?? "/f";
    const fail = url.searchParams.get("fail");
    this.fail = fail ? { pattern: new RegExp(fail), nth: Number(url.searchParams.get("nth") ?? 1) } : undefined;
    try {
      if (request.method === "PUT") await this.agent.writeFile(path, new Uint8Array(await request.arrayBuffer()));
      else if (request.method === "GET" && url.pathname === "/rows") {
        const count = (t: string) => (this.ctx.storage.sql.exec(`SELECT count(*) AS n FROM ${t}`).one() as { n: number }).n;
        return Response.json({ inodes: count("fs_inode"), dentries: count("fs_dentry"), chunks: count("fs_data") });
      } else return new Response(await this.agent.readFile(path));
      return new Response(null, { status: 204 });
    } catch (e) {
      return new Response(`${(e as { code?: string }).code ?? "error"}: ${(e as Error).message}`, { status: 500 });
    } finally {
      this.fail = undefined;
    }
  }
}

export default {
  fetch(request: Request, env: { AGENT: DurableObjectNamespace }): Promise<Response> {
    return env.AGENT.get(env.AGENT.idFromName("t")).fetch(request);
  },
};
