/**
 * `npm run build` (and `npm start`, which builds first): the Node server as one ES module,
 * `dist/node/server.js` (+ `db/replica-syncer.js`, the embedded replica's worker thread), started by
 * `dist/node/node.js`. Bundling removes per-module resolution at start-up: Node re-reads the nearest
 * package.json for every module it loads, and drizzle-orm's is 180 kB over hundreds of modules —
 * seconds and about 150 MB of a cold start (bench/RESULTS.md, "Start-up"). The sources stay runnable
 * as they are (`node functions/node.ts`, what the tests run); the bundle is the same code.
 *
 * `node.js` turns on Node's compile cache (`module.enableCompileCache`) before it imports the bundle:
 * V8 then reads the bundle's compiled code from disk instead of parsing 2.7 MB of JavaScript on every
 * start (about a quarter of the time to the first answer; the cache is made by the first start after
 * a build). It lives where `NODE_COMPILE_CACHE` says, by default in the OS's temporary directory;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 *
 * `libsql` (a native addon) stays outside the bundle and is loaded from node_modules.
 */
import { build } from "esbuild";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

const root = join(import.meta.dirname, "..");

export async function buildNode(outdir = join(root, "dist", "node")) {
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: [
      { in: "functions/node.ts", out: "server" },
      { in: "functions/db/replica-syncer.ts", out: "db/replica-syncer" },
    ],
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
    write: false,
  });
  for (const file of outputFiles) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.path.endsWith(".js") ? asciiOnly(file.text) : file.contents);
  }
  await writeFile(join(outdir, "node.js"), LAUNCHER);
}

/**
 * esbuild escapes non-ASCII characters in strings but leaves them in comments and regular
 * expressions; one "—" makes V8 hold the whole 2.7 MB source as a two-byte string (twice the memory,
 * slower to decode and to scan). `\uXXXX` means the same character in a string, a template and a
 * regular expression, and is inert in a comment; the source map's columns shift on the few lines
 * that had one.
 */
export function asciiOnly(js: string): string {
  return js.replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `dist/node/node.js`: the compile cache first, then the server (see above). */
const LAUNCHER = `// Built by scripts/build.ts: turns on Node's compile cache, then starts the bundled server.
import { enableCompileCache, flushCompileCache } from "node:module";
enableCompileCache();
const { startServer } = await import("./server.js");
await startServer();
// Written now, not at exit: a server that is killed leaves the cache for the next start too.
flushCompileCache();
`;

if (import.meta.url === `file://${process.argv[1]}`) await buildNode();
