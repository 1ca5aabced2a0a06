// A dedicated worker that runs the functions the test page sends it (as
// source text) with the SDK loaded here: the engine in a worker, where
// OPFS files are written in place through synchronous access handles.
import * as sdk from "/dist/browser.js";

const state = {};
onmessage = async (ev) => {
  const { seq, fn, arg } = ev.data;
  try {
    const f = (0, eval)(`(${fn})`);
    postMessage({ seq, ok: true, value: await f(sdk, arg, state, (note) => postMessage({ seq, note })) });
  } catch (e) {
    postMessage({ seq, ok: false, error: { code: e.code, errno: e.errno, message: String(e.message ?? e) } });
  }
};
