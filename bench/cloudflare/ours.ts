// agentfs-sdk/cloudflare (this repository's SDK and Workers engine).
import { DurableObject } from "cloudflare:workers";
import { AgentFS } from "agentfs-sdk/cloudflare";
import { front, serve, type Files } from "./common.js";

export class Agent extends DurableObject {
  private readonly fs = AgentFS.create(this.ctx.storage);
  fetch(request: Request): Promise<Response> {
    return serve(this.fs as unknown as Files, request);
  }
}

export default front;
