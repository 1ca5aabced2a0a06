// The Workers build imports the engine as a compiled module (engine.ts);
// the package build points these names at ../wasm/.
declare module "agentfs-workers-wasm/agentfs-workers.wasm" {
  const module: object;
  export default module;
}
declare module "agentfs-workers-wasm/wasm_exec.js";
