/**
 * `npm run build` (and `npm start`, which builds first): the Node server as one ES module,
 * `dist/node/node.js` (+ `replica-syncer.js`, the embedded replica's worker thread). Bundling
 * removes per-module resolution at start-up: Node re-reads the nearest package.json for every module
 * it loads, and drizzle-orm's is 180 kB over hundreds of modules — seconds and about 150 MB of a
 * cold start (bench/RESULTS.md, "Start-up"). The sources stay runnable as they are
 * (`node functions/node.ts`, what the tests run); the bundle is the same code.
 *
 * `libsql` (a native addon) stays outside the bundle and is loaded from node_modules.
 */
import { build } from "esbuild";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

export async function buildNode(outdir = join(root, "dist", "node")) {
  await build({
    absWorkingDir: root,
    entryPoints: ["functions/node.ts", "functions/db/replica-syncer.ts"],
    outdir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    // Native addons and their platform packages load from node_modules at run time, and so do the
    // SPDX license texts (5 MB, imported on first use: start-up neither parses nor evaluates them).
    external: ["libsql", "@libsql/linux-*", "@libsql/darwin-*", "@libsql/win32-*", "bufferutil", "utf-8-validate", "spdx-license-list/full.js"],
    // CommonJS dependencies inside an ES module bundle call require().
    banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
    sourcemap: "linked",
    logLevel: "warning",
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await buildNode();
