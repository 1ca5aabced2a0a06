// agentfs-sdk 0.6.4's own cloudflare integration (npm, aliased turso-agentfs).
import { DurableObject } from "cloudflare:workers";
import { AgentFS } from "turso-agentfs/cloudflare";
import { front, serve, type Files } from "./common.js";

export class Agent extends DurableObject {
  private readonly fs = AgentFS.create(this.ctx.storage);
  fetch(request: Request): Promise<Response> {
    return serve(this.fs as unknown as Files, request);
  }
}

export default front;
