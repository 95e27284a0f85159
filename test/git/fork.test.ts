/**
 * Storage by repository id: a fork shares its base's packs (nothing copied when forking), pushes
 * to the fork land under the fork's id, and deleting the base first copies what the fork still
 * references; deleting a repository deletes exactly its own files.
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyPacks, forkCatalog, sharedPacks } from "../../functions/git/storage/fork.ts";
import { makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("fork-");
let srv: GitServer;
beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

describe("storage reads", () => {
  it("a one-commit push reads the same number of stored files however many packs came before", async () => {
    const src = s.path("reads-src");
    await makeHistory(s, src, { commits: 50, files: 10 });
    srv.refs.create("12");
    await s.git(["push", "-q", `${srv.url}/12.git`, "main"], { cwd: src });
    const gets: number[] = [];
    for (let i = 0; i < 6; i++) {
      writeFileSync(`${src}/new-${i}.txt`, `change ${i}\n`);
      await s.git(["add", "."], { cwd: src });
      await s.git(["commit", "-q", "-m", `change ${i}`], { cwd: src, env: { GIT_COMMITTER_DATE: `${1800000000 + i} +0000` } });
      const before = srv.storeCalls.get ?? 0;
      await s.git(["push", "-q", `${srv.url}/12.git`, "main"], { cwd: src });
      gets.push((srv.storeCalls.get ?? 0) - before);
    }
    expect((await srv.refs.read("12")).packs).toHaveLength(7);
    // the first push after the initial one may load indexes; after that, a constant few reads
    expect(new Set(gets.slice(2)).size).toBe(1);
    expect(gets[5]).toBeLessThanOrEqual(4);
  });
});

describe("forks and deletion", () => {
  it("shares the base's packs, stores the fork's pushes under the fork, survives the base's deletion", async () => {
    const src = s.path("src");
    await makeHistory(s, src, { commits: 30, files: 10 });
    srv.refs.create("10");
    await s.git(["push", `${srv.url}/10.git`, "main"], { cwd: src });
    const baseFiles = await srv.objects.list("10");

    // fork: the catalog rows are the base's, refs copied; no file is copied
    const base = await srv.refs.read("10");
    srv.refs.create("11", "refs/heads/main", forkCatalog(base));
    await srv.refs.commit("11", { updates: base.refs.map((r) => ({ name: r.name, old: null, new: r.oid })), sizeDelta: 0, empty: false });
    expect(await srv.objects.list("11")).toEqual([]);

    const work = s.path("work");
    await s.git(["clone", "-q", `${srv.url}/11.git`, work]);
    await s.git(["commit", "-q", "--allow-empty", "-m", "on the fork"], { cwd: work });
    await s.git(["push", "-q", "origin", "main"], { cwd: work });
    const forkFiles = await srv.objects.list("11");
    expect(forkFiles.map((f) => f.name.replace(/pack-[0-9a-f]+/, "pack-X"))).toEqual(["pack/pack-X.idx", "pack/pack-X.pack", "pack/pack-X.rev"]);
    expect(await srv.objects.list("10")).toEqual(baseFiles);

    // the base goes away: the fork first takes copies of what it still shares
    const fork = await srv.refs.read("11");
    const shared = sharedPacks("11", fork.packs);
    expect(shared.map((p) => p.repoId)).toEqual(["10"]);
    srv.refs.replacePacks("11", await copyPacks(srv.objects, shared, "11"));
    await srv.objects.deleteRepository("10");
    expect(await srv.objects.list("10")).toEqual([]);
    expect(sharedPacks("11", (await srv.refs.read("11")).packs)).toEqual([]);

    const again = s.path("again");
    await s.git(["clone", "-q", `${srv.url}/11.git`, again]);
    await s.git(["fsck", "--full"], { cwd: again });
    expect(await s.gitText(["log", "-1", "--format=%s"], { cwd: again })).toBe("on the fork");
    expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: again })).toBe("31");
  });
});
