// For tests/cloudflare/compat.test.mjs (this package has both SDKs): one
// Durable Object's storage written by agentfs-sdk 0.6.4's cloudflare
// integration (PUT /turso) and then opened by agentfs-sdk/cloudflare
// (GET /ours), which reads it, writes, runs the shell, and 0.6.4 reads
// what ours wrote.
import { DurableObject } from "cloudflare:workers";
import { AgentFS as Ours } from "agentfs-sdk/cloudflare";
import { AgentFS as Turso } from "turso-agentfs/cloudflare";

export class Agent extends DurableObject {
  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/turso") {
      const t = Turso.create(this.ctx.storage);
      await t.writeFile("/dir/from-turso.txt", "written by 0.6.4\n");
      await t.symlink("/dir/from-turso.txt", "/link");
      return new Response(null, { status: 204 });
    }
    if (path !== "/ours") return new Response("PUT /turso, then GET /ours", { status: 404 });
    const o = Ours.create(this.ctx.storage);
    const read = await o.readFile("/dir/from-turso.txt", "utf8");
    const link = await o.readlink("/link");
    await o.writeFile("/dir/from-ours.txt", "written by agentfs-sdk/cloudflare\n");
    const shell = await o.exec("ls /dir; cat /link");
    const back = await Turso.create(this.ctx.storage).readFile("/dir/from-ours.txt", "utf8");
    return Response.json({ read, link, shell, back });
  }
}

export default {
  fetch(request: Request, env: { AGENT: DurableObjectNamespace }): Promise<Response> {
    return env.AGENT.get(env.AGENT.idFromName("compat")).fetch(request);
  },
};
