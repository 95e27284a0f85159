/**
 * Compaction: the packs of several pushes and an API commit merge into one pack that git indexes
 * identically; clones before and after are byte for byte the same; the catalog swap is atomic and
 * two racing compactions leave exactly one result.
 */
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCommit } from "../../functions/git/repo/commit.ts";
import { compactPacks, geometricRollup } from "../../functions/git/repo/compact.ts";
import { idxFileName, packFileName, packFileNames } from "../../functions/git/storage/object-store.ts";
import { fastImportStream, makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("compact-");
let srv: GitServer;
beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

async function dump(dir: string): Promise<Buffer> {
  const ids = [...new Set((await s.gitText(["rev-list", "--objects", "--all"], { cwd: dir })).split("\n").map((l) => l.slice(0, 40)))].sort();
  return (await s.git(["cat-file", "--batch"], { cwd: dir, input: `${ids.join("\n")}\n` })).stdout;
}

describe("compaction", () => {
  it("merges the packs of pushes and API commits into one that git indexes the same; clones do not change", async () => {
    const src = s.path("src");
    await makeHistory(s, src, { commits: 80, files: 20 });
    srv.refs.create("20");
    const url = `${srv.url}/20.git`;
    await s.git(["push", "-q", url, "main"], { cwd: src });
    for (let i = 0; i < 2; i++) {
      const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
      await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 5, from: tip, startMark: 1000 + i * 10, seed: 7 + i, time: 1800000000 + i * 1000 }) });
      await s.git(["push", "-q", url, "main"], { cwd: src });
    }
    await s.git(["tag", "-a", "v1", "-m", "v1", "main~3"], { cwd: src });
    await s.git(["push", "-q", url, "v1"], { cwd: src });
    const ada = { name: "Ada", email: "ada@example.com", timestamp: 1900000000, timezone: "+0000" };
    await createCommit({ repoId: "20", objects: srv.objects, refs: srv.refs }, { branch: "main", message: "api", author: ada, changes: [{ op: "put", path: "api.txt", content: "api\n" }] });
    expect((await srv.refs.read("20")).packs).toHaveLength(5);
    const before = s.path("before");
    await s.git(["clone", "-q", "--mirror", url, before]);
    const sizeBefore = srv.refs.stats("20").size;

    const c = (await compactPacks({ repoId: "20", objects: srv.objects, refs: srv.refs }))!;
    expect(c.removed).toHaveLength(5);
    const state = await srv.refs.read("20");
    expect(state.packs).toEqual([c.pack]);
    expect(srv.refs.stats("20").size).toBe(sizeBefore - c.removed.reduce((n, p) => n + p.size + p.idxSize, 0) + c.pack.size + c.pack.idxSize);
    // the old files stay until the caller deletes them (in-flight readers), then only the new pack is left
    await srv.objects.delete("20", c.removed.flatMap((p) => packFileNames(p.id)));
    expect((await srv.objects.list("20")).map((f) => f.name).sort()).toEqual(packFileNames(c.pack.id).sort());

    const dir = s.path("check");
    mkdirSync(dir);
    copyFileSync(srv.objects.path("20", packFileName(c.pack.id)), `${dir}/x.pack`);
    await s.git(["init", "-q", "--bare", `${dir}/r.git`]);
    await s.git(["index-pack", "--strict", "-o", `${dir}/git.idx`, `${dir}/x.pack`], { cwd: `${dir}/r.git` });
    expect(readFileSync(`${dir}/git.idx`).equals(readFileSync(srv.objects.path("20", idxFileName(c.pack.id))))).toBe(true);

    const after = s.path("after");
    await s.git(["clone", "-q", "--mirror", url, after]);
    await s.git(["fsck", "--full"], { cwd: after });
    expect((await dump(after)).equals(await dump(before))).toBe(true);
    expect(await compactPacks({ repoId: "20", objects: srv.objects, refs: srv.refs })).toBeNull();
  });

  it("merges a history however much it expands: a push's expansion bound does not apply to packs already accepted", async () => {
    const src = s.path("expand-src");
    await s.git(["init", "-q", "-b", "main", src]);
    const { writeFileSync } = await import("node:fs");
    srv.refs.create("23");
    const url = `${srv.url}/23.git`;
    // a 1 MiB file of zeros, edited eight times: each push is a few KB, the merged pack expands thousands of times
    for (let i = 0; i < 8; i++) {
      const body = Buffer.alloc(1024 * 1024);
      body.write(`version ${i}\n`, i * 1000);
      writeFileSync(`${src}/zeros.bin`, body);
      await s.git(["add", "-A"], { cwd: src });
      await s.git(["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", `v${i}`], { cwd: src });
      await s.git(["push", "-q", url, "main"], { cwd: src });
    }
    // with one largest object of 1 MiB, a push's bound (at least 2 MiB, 1,024 times the pack) would refuse the merge
    const c = await compactPacks({ repoId: "23", objects: srv.objects, refs: srv.refs }, { limits: { maxObjectBytes: 1024 * 1024 + 1 } });
    expect(c?.removed).toHaveLength(8);
    const dir = s.path("expand-clone");
    await s.git(["clone", "-q", url, dir]);
    expect(readFileSync(`${dir}/zeros.bin`).subarray(7000, 7010).toString()).toBe("version 7\n");
  });

  it("lets one of two racing compactions win; the loser stores nothing", async () => {
    const src = s.path("race");
    await makeHistory(s, src, { commits: 10, files: 5 });
    srv.refs.create("21");
    await s.git(["push", "-q", `${srv.url}/21.git`, "main"], { cwd: src });
    await s.git(["commit", "-q", "--allow-empty", "-m", "two"], { cwd: src });
    await s.git(["push", "-q", `${srv.url}/21.git`, "main"], { cwd: src });
    const ctx = { repoId: "21", objects: srv.objects, refs: srv.refs };
    const results = await Promise.all([compactPacks(ctx), compactPacks(ctx)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const won = results.find(Boolean)!;
    expect((await srv.refs.read("21")).packs).toEqual([won.pack]);
    const files = (await srv.objects.list("21")).map((f) => f.name);
    expect(files.filter((f) => f.endsWith(".pack"))).toHaveLength(3); // the winner's and the two replaced ones
  });

  it("rolls up packs as git's geometric repack (factor 2): what already grows by doubling stays", () => {
    const roll = (counts: number[]) => geometricRollup(counts.map((objects, i) => ({ objects, i }))).map((p) => p.objects);
    expect(roll([])).toEqual([]);
    expect(roll([5])).toEqual([]);
    expect(roll([1, 1])).toEqual([1, 1]);
    expect(roll([8, 1, 4, 2])).toEqual([]);
    expect(roll([100, 3, 3])).toEqual([3, 3]);
    expect(roll([3, 3, 5, 100])).toEqual([3, 3, 5]);
    // the merged size (20) makes the next pack (30 < 2 × 20) join it
    expect(roll([10, 10, 30])).toEqual([10, 10, 30]);
    expect(roll([10, 10, 40])).toEqual([10, 10]);
  });

  it("merges only the geometric roll-up, within maxBytes; the large pack stays, clones do not change", async () => {
    const src = s.path("geo");
    await makeHistory(s, src, { commits: 60, files: 20 });
    srv.refs.create("22");
    const url = `${srv.url}/22.git`;
    await s.git(["push", "-q", url, "main"], { cwd: src });
    for (let i = 0; i < 3; i++) {
      await s.git(["commit", "-q", "--allow-empty", "-m", `small ${i}`], { cwd: src });
      await s.git(["push", "-q", url, "main"], { cwd: src });
    }
    const before = s.path("geo-before");
    await s.git(["clone", "-q", "--mirror", url, before]);
    const packs = (await srv.refs.read("22")).packs;
    const [big, ...small] = packs;
    const ctx = { repoId: "22", objects: srv.objects, refs: srv.refs };
    // room for two of the three small packs only
    const two = small[0]!.size + small[1]!.size;
    const c1 = (await compactPacks(ctx, { plan: "geometric", maxBytes: two }))!;
    expect(c1.removed.map((p) => p.id).sort()).toEqual([small[0]!.id, small[1]!.id].sort());
    // 1, 2 and 598 objects already grow by doubling: nothing more to merge; the large pack stayed
    expect(await compactPacks(ctx, { plan: "geometric" })).toBeNull();
    expect((await srv.refs.read("22")).packs.map((p) => p.id)).toEqual([big!.id, small[2]!.id, c1.pack.id]);
    // not while the repository owns fewer than minOwn packs (3 here)
    expect(await compactPacks(ctx, { minOwn: 4 })).toBeNull();
    const after = s.path("geo-after");
    await s.git(["clone", "-q", "--mirror", url, after]);
    await s.git(["fsck", "--full"], { cwd: after });
    expect((await dump(after)).equals(await dump(before))).toBe(true);
  });
});
