/**
 * The same engine inside workerd (its `wrangler deploy` bundle under Miniflare, nodejs_compat) with
 * miniflare's local R2 as the ObjectStore: the real git CLI pushes (a pack large enough to stream into R2 as a
 * multipart upload, an incompressible blob inflated as a stream, a thin pack completed from R2
 * range reads) and clones back. The `.idx` written inside workerd must equal git index-pack's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWorkerd, type Running } from "../../scripts/lib/processes.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastImportStream, makeHistory, Scratch } from "./helpers.ts";

const s = new Scratch("workerd-");
const here = fileURLToPath(new URL(".", import.meta.url));
let worker: Running;
let base: string;

beforeAll(async () => {
  worker = await startWorkerd(join(here, "worker", "wrangler.toml"), {}, { persistTo: s.path("state") });
  base = worker.url;
});
afterAll(async () => {
  await worker?.stop();
  s.cleanup();
});

async function objectDump(dir: string, rev: string): Promise<Buffer> {
  const ids = [...new Set((await s.gitText(["rev-list", "--objects", rev], { cwd: dir })).split("\n").map((l) => l.slice(0, 40)))].sort();
  return (await s.git(["cat-file", "--batch"], { cwd: dir, input: `${ids.join("\n")}\n` })).stdout;
}

const files = async (repo: string): Promise<{ name: string; size: number }[]> => (await fetch(`${base}/__files/${repo}`)).json() as Promise<{ name: string; size: number }[]>;

describe("git engine in workerd over R2", () => {
  it("takes a push that streams into R2, indexes it as git does, and serves clones back", async () => {
    const src = s.path("src");
    await makeHistory(s, src, { commits: 200, files: 30 });
    // 9 MiB of incompressible bytes: more than one 8 MiB multipart part, inflated as a stream
    const big = Buffer.alloc(9 * 1024 * 1024);
    let x = 12345;
    for (let i = 0; i < big.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      big[i] = x >>> 16;
    }
    writeFileSync(`${src}/big.bin`, big);
    await s.git(["add", "big.bin"], { cwd: src });
    await s.git(["commit", "-q", "-m", "big"], { cwd: src });
    await s.git(["tag", "-a", "v1", "-m", "v1"], { cwd: src });
    const url = `${base}/7.git`;
    const limits = JSON.stringify({ spoolBytes: 256 * 1024, streamInflateBytes: 64 * 1024 });
    await s.git(["-c", `http.extraHeader=x-git-limits: ${limits}`, "push", url, "main", "v1"], { cwd: src });

    const stored = await files("7");
    expect(stored.map((f) => f.name.replace(/pack-[0-9a-f]+/, "pack-X"))).toEqual(["pack/pack-X.idx", "pack/pack-X.pack", "pack/pack-X.rev"]);
    const packName = stored.find((f) => f.name.endsWith(".pack"))!.name;
    const pack = Buffer.from(await (await fetch(`${base}/__files/7/${packName}`)).arrayBuffer());
    const idx = Buffer.from(await (await fetch(`${base}/__files/7/${packName.replace(".pack", ".idx")}`)).arrayBuffer());
    writeFileSync(s.path("x.pack"), pack);
    await s.git(["init", "-q", "--bare", s.path("check.git")]);
    await s.git(["index-pack", "--strict", "-o", s.path("git.idx"), s.path("x.pack")], { cwd: s.path("check.git") });
    const { readFileSync } = await import("node:fs");
    expect(idx.equals(readFileSync(s.path("git.idx")))).toBe(true);

    for (const proto of ["2", "0"]) {
      const dst = s.path(`clone-v${proto}`);
      await s.git(["-c", `protocol.version=${proto}`, "clone", "--mirror", url, dst]);
      await s.git(["fsck", "--full"], { cwd: dst });
      expect((await objectDump(dst, "--all")).equals(await objectDump(src, "--all"))).toBe(true);
    }

    // an incremental push arrives thin; its bases come back from R2 by range reads
    const before = await s.gitText(["rev-parse", "main"], { cwd: src });
    await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 5, from: before, startMark: 900, seed: 3, time: 1800000000 }) });
    await s.git(["push", url, "main"], { cwd: src });
    expect((await files("7")).filter((f) => f.name.endsWith(".pack"))).toHaveLength(2);
    const work = s.path("clone-v2");
    await s.git(["fetch", "-q", "origin"], { cwd: work });
    await s.git(["fsck", "--full"], { cwd: work });
    expect(await s.gitText(["rev-parse", "main"], { cwd: work })).toBe(await s.gitText(["rev-parse", "main"], { cwd: src }));
    const shallow = s.path("shallow");
    await s.git(["clone", "--depth", "2", url, shallow]);
    await s.git(["fsck", "--full"], { cwd: shallow });
    expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: shallow })).toBe("2");
    const full = s.path("full");
    await s.git(["clone", "-q", url, full]);
    expect((await objectDump(full, "main")).equals(await objectDump(src, "main"))).toBe(true);
  });

  it("rejects a truncated pack inside workerd with nothing left in R2", async () => {
    const src = s.path("trunc-src");
    await makeHistory(s, src, { commits: 10, files: 5 });
    const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
    const pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
    const cmd = `${"0".repeat(40)} ${tip} refs/heads/main\0report-status\n`;
    const body = Buffer.concat([Buffer.from((cmd.length + 4).toString(16).padStart(4, "0") + cmd), Buffer.from("0000"), pack.subarray(0, pack.length - 50)]);
    const res = await fetch(`${base}/8.git/git-receive-pack`, { method: "POST", body: body as Uint8Array<ArrayBuffer> });
    const text = await res.text();
    expect(text).toMatch(/unpack pack truncated/);
    expect(text).toMatch(/ng refs\/heads\/main unpacker error/);
    expect(await files("8")).toEqual([]);
  });
});
