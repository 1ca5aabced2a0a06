// A dedicated worker that runs the functions the test page sends it (as
// source text) with the SDK loaded here: the engine in a worker, where
// OPFS files are written in place through synchronous access handles.
import * as sdk from "/dist/browser.js";

// state.ack() resolves at the page's next ack message (a write loop that
// goes on only when the page says so).
let acked;
const state = { ack: () => new Promise((r) => (acked = r)) };
onmessage = async (ev) => {
  if (ev.data.ack) return acked?.();
  const { seq, fn, arg } = ev.data;
  try {
    const f = (0, eval)(`(${fn})`);
    postMessage({ seq, ok: true, value: await f(sdk, arg, state, (note) => postMessage({ seq, note })) });
  } catch (e) {
    postMessage({ seq, ok: false, error: { code: e.code, errno: e.errno, message: String(e.message ?? e) } });
  }
};
