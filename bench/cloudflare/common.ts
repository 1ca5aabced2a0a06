// The benchmark Workers of bench/cloudflare.sh, one per implementation
// (ours.ts: agentfs-sdk/cloudflare, the Go engine as WebAssembly;
// turso.ts: agentfs-sdk 0.6.4's own cloudflare integration, TypeScript
// over ctx.storage.sql), each a Durable Object class holding an agent in
// its SQLite storage. Routes /NAME/...:
//
//   PUT w/PATH       writeFile(PATH, body)
//   GET r/PATH       readFile(PATH)
//   GET loop?n=N&size=S   N writeFile then N readFile of S bytes inside the object

export interface Files {
  writeFile(path: string, data: Uint8Array): Promise<void>;
  readFile(path: string): Promise<Uint8Array>;
}

export async function serve(fs: Files, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const [, , op, ...rest] = url.pathname.split("/");
  const path = "/" + rest.join("/");
  if (op === "w") {
    await fs.writeFile(path, new Uint8Array(await request.arrayBuffer()));
    return new Response(null, { status: 204 });
  }
  if (op === "r") return new Response(await fs.readFile(path));
  if (op === "loop") {
    const n = Number(url.searchParams.get("n") ?? 100);
    const data = new Uint8Array(Number(url.searchParams.get("size") ?? 1024)).fill(97);
    for (let i = 0; i < n; i++) await fs.writeFile(`/loop/f${i % 50}`, data);
    let bytes = 0;
    for (let i = 0; i < n; i++) bytes += (await fs.readFile(`/loop/f${i % 50}`)).byteLength;
    return Response.json({ n, bytes });
  }
  return new Response("no such route", { status: 404 });
}


/** The Worker's fetch: /NAME/... goes to the object NAME of env.AGENT. */
export const front = {
  fetch(request: Request, env: { AGENT: DurableObjectNamespace }): Promise<Response> {
    const name = new URL(request.url).pathname.split("/")[1];
    if (!name) return Promise.resolve(new Response("usage: /NAME/w|r/PATH, /NAME/loop?n=N&size=S", { status: 400 }));
    return env.AGENT.get(env.AGENT.idFromName(name)).fetch(request);
  },
};
