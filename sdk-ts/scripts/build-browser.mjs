// Builds dist/browser.js, the package's "browser" export condition: the
// SDK for pages and workers, one ES module with no node:* import. The
// global Buffer the SDK uses (the API returns Buffers as under Node) comes
// from npm `buffer`, bundled in; the child-process link is replaced by
// src/browser/link.ts (a page has no processes).
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
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

for (const [entry, out] of [["src/browser/index.ts", "dist/browser.js"]]) {
  await build({
    absWorkingDir: pkg,
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    inject: ["src/browser/buffer.ts"],
    plugins: [browserLink],
    logLevel: "warning",
  });
}
