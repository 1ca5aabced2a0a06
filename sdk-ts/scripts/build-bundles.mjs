// Builds dist/index.js (the Node entry), and beside it dist/browser.js, the package's
// "browser" export condition (the SDK for pages and workers, one ES module
// with no node:* import), and dist/just-bash.js (agentfs-sdk/just-bash),
// which imports AgentFS from "agentfs-sdk" itself so that it gets the
// Node or the browser build as the app does, and the same classes. The
// global Buffer the SDK uses (the API returns Buffers as under Node) comes
// from npm `buffer`, bundled in; the child-process link is replaced by
// src/browser/link.ts (a page has no processes).
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));

// The generated descriptors of dist/index.js are built at their first use
// (src/lazydesc.ts): the generated files' codegenv2 import resolves to
// src/lazydesc.ts, which wraps the real one. So is protobuf-es' own
// descriptor of descriptor.proto (src/lazyboot.ts): its module's imports
// of boot, messageDesc and enumDesc resolve to src/lazyboot.ts, whose
// import of codegenv2 resolves to those three files.
const codegenv2 = join(pkg, "node_modules", "@bufbuild", "protobuf", "dist", "esm", "codegenv2");
const lazyDescriptors = {
  name: "lazy-descriptors",
  setup(b) {
    b.onResolve({ filter: /^@bufbuild\/protobuf\/codegenv2$/ }, (args) => {
      if (args.importer.startsWith(join(pkg, "src", "gen") + "/")) return { path: join(pkg, "src", "lazydesc.ts") };
      if (args.importer === join(pkg, "src", "lazyboot.ts")) return { path: "codegenv2-parts", namespace: "lazy-descriptors" };
      return undefined;
    });
    b.onLoad({ filter: /^codegenv2-parts$/, namespace: "lazy-descriptors" }, () => ({
      contents: ["boot", "message", "enum"].map((f) => `export * from ${JSON.stringify(join(codegenv2, f + ".js"))};`).join("\n"),
      resolveDir: codegenv2,
    }));
    b.onResolve({ filter: /^\.\.\/\.\.\/\.\.\/codegenv2\/(boot|message|enum)\.js$/ }, (args) =>
      args.importer.endsWith(join("wkt", "google", "protobuf", "descriptor_pb.js")) ? { path: join(pkg, "src", "lazyboot.ts") } : undefined,
    );
  },
};
// Whitespace and syntax minified (names kept, for stack traces): Node
// compiles the whole file at import, and a third less of it is about
// 0.5 ms less of the cold start (node started to the first writeFile
// done), and 86 KB less of young heap, which also puts off the first
// scavenge.
await build({
  absWorkingDir: pkg,
  entryPoints: ["src/index.ts"],
  outfile: "dist/index.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [lazyDescriptors],
  logLevel: "warning",
});
const browserLink = {
  name: "browser-link",
  setup(b) {
    b.onResolve({ filter: /^\.\/link\.js$/ }, (args) =>
      args.importer.endsWith(join("src", "stdio.ts")) ? { path: join(pkg, "src", "browser", "link.ts") } : undefined,
    );
    // Anything else reaching for Node is a mistake in the browser entry's imports.
    b.onResolve({ filter: /^node:/ }, (args) => ({ errors: [{ text: `${args.path} imported by ${args.importer}: the browser build must not use Node modules` }] }));
  },
};

await build({
  absWorkingDir: pkg,
  entryPoints: ["src/browser/index.ts"],
  outfile: "dist/browser.js",
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  inject: ["src/browser/buffer.ts"],
  plugins: [browserLink],
  logLevel: "warning",
});

const selfImport = {
  name: "self-import",
  setup(b) {
    b.onResolve({ filter: /^\.\/(agentfs|errors)\.js$/ }, () => ({ path: "agentfs-sdk", external: true }));
  },
};
await build({
  absWorkingDir: pkg,
  entryPoints: ["src/just-bash.ts"],
  outfile: "dist/just-bash.js",
  bundle: true,
  platform: "neutral",
  format: "esm",
  target: "es2022",
  plugins: [selfImport],
  logLevel: "warning",
});

// dist/cloudflare.js (agentfs-sdk/cloudflare): the SDK inside a Durable
// Object, over the Workers build of the engine. The engine module and Go's
// wasm_exec.js stay imports of the package's ../wasm/ files, which the
// Worker's bundler (wrangler) loads as a compiled WebAssembly module and
// a script.
const workersWasm = {
  name: "workers-wasm",
  setup(b) {
    b.onResolve({ filter: /^agentfs-workers-wasm\// }, (args) => ({ path: args.path.replace(/^agentfs-workers-wasm\//, "../wasm/"), external: true }));
  },
};
await build({
  absWorkingDir: pkg,
  entryPoints: ["src/cloudflare/index.ts"],
  outfile: "dist/cloudflare.js",
  bundle: true,
  platform: "neutral",
  format: "esm",
  target: "es2022",
  inject: ["src/browser/buffer.ts"],
  plugins: [browserLink, workersWasm],
  logLevel: "warning",
});
