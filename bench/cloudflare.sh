#!/usr/bin/env bash
# agentfs-sdk/cloudflare beside agentfs-sdk 0.6.4's cloudflare integration
# in workerd: Worker size vs Cloudflare's limits, cold start, requests/s.
# Prints Markdown. Needs Go and Node 20; installs pinned npm packages
# (examples/cloudflare: workerd; bench/cloudflare: agentfs-sdk 0.6.4).
set -euo pipefail
cd "$(dirname "$0")/.."
go tool task build-wasm-workers >&2
(cd sdk-ts && npm ci --no-audit --no-fund --silent && npm run build --silent) >&2
(cd examples/cloudflare && npm ci --no-audit --no-fund --silent) >&2
cd bench/cloudflare
# npm install, not ci: 0.6.4's @tursodatabase/database lists optional
# platform packages the lockfile lacks, and npm ci refuses such a lockfile
# (as Taskfile's test-cloudflare).
npm install --no-audit --no-fund --silent >&2
for w in ours turso; do
  npx esbuild "$w.ts" --bundle --format=esm --platform=neutral --target=es2022 \
    --external:cloudflare:workers --external:'*.wasm' --outfile="build/$w.js" --log-level=warning
done
cd ../..
node bench/cloudflare.mjs
