// A dedicated worker running the SDK: the same API as in the page.
import { AgentFS } from "/dist/browser.js";

onmessage = async (ev) => {
  const { id, text } = ev.data;
  try {
    const a = await AgentFS.open({ id });
    await a.fs.writeFile("/from-worker.txt", text);
    await a.kv.set("where", "worker");
    const ls = await a.fs.readdir("/");
    await a.close();
    postMessage({ ok: true, ls });
  } catch (e) {
    postMessage({ ok: false, code: e.code, message: e.message });
  }
};
