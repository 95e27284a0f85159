/**
 * Pack compaction after writes (services/git-maintenance.ts): a write that leaves a repository with
 * AUTO_PACK_LIMIT packs of its own and a geometric roll-up to make names it for the runtime, in the
 * write's own round trips; the compaction merges the small packs, keeps every object readable, the
 * repository's `updated_at` and its clones' content, and records the replaced files; the files go
 * only after the grace period and only when no catalog (a fork's) lists them. In-process on the
 * embedded file and a directory store.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LibsqlRefStore } from "../../functions/db/queries/git-refs.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { packFileNames } from "../../functions/git/storage/object-store.ts";
import { AUTO_PACK_LIMIT, collectPackGarbage, compactionDue, compactRepository, PACK_GRACE_S } from "../../functions/services/git-maintenance.ts";
import { nowUnix } from "../../functions/services/common.ts";
import { roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
/** Repository deletions the store refuses next (storage that fails while a delete runs). */
let refuseDeletes = 0;
let owner: SeededUser;
let tok: string;
const named: number[][] = [];

beforeAll(async () => {
  t = await testApp(
    {},
    {
      compactGit: (ids) => named.push(ids),
      wrapObjects: (o) =>
        Object.assign(Object.create(o) as typeof o, {
          deleteRepository: (id: string) => (refuseDeletes-- > 0 ? Promise.reject(new Error("storage refused")) : o.deleteRepository(id)),
        }),
    },
  );
  owner = await seedUser(t.db);
  tok = await owner.token();
});
afterAll(() => t.close());

const deps = () => ({ driver: t.driver, objects: t.objects, settings: t.settings });
const packsOf = async (id: number) => (await t.client.execute({ sql: "SELECT id, repo_id, objects FROM git_pack WHERE catalog_repo_id = ? ORDER BY seq", args: [id] })).rows.map((r) => ({ id: String(r[0]), repoId: Number(r[1]), objects: Number(r[2]) }));
const garbageOf = async (id: number) => (await t.client.execute({ sql: "SELECT pack_id FROM git_pack_garbage WHERE repo_id = ? ORDER BY pack_id", args: [id] })).rows.map((r) => String(r[0]));
const files = async (id: number) => (await t.objects.list(String(id))).map((f) => f.name).sort();

/** A repository with `n` packs of its own: auto_init, then `n - 1` files added through the contents API. */
async function repoWithPacks(n: number): Promise<{ id: number; name: string; writes: Response[] }> {
  const name = uniq("gm");
  const res = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name, auto_init: true } });
  expect(res.status).toBe(201);
  const { id } = await res.json();
  const writes: Response[] = [];
  for (let i = 1; i < n; i++) {
    const w = await t.request(`/api/v1/repos/${owner.name}/${name}/contents/f${i}.txt`, { method: "POST", headers: token(tok), json: { content: Buffer.from(`file ${i}\n`).toString("base64"), message: `add ${i}` } });
    expect(w.status).toBe(201);
    writes.push(w);
  }
  expect(await packsOf(id)).toHaveLength(n);
  return { id, name, writes };
}

const contentOf = async (name: string, path: string) => {
  const res = await t.request(`/api/v1/repos/${owner.name}/${name}/raw/${path}`, { headers: token(tok) });
  return res.status === 200 ? res.text() : `status ${res.status}`;
};

describe("pack compaction after writes", () => {
  it("is due at AUTO_PACK_LIMIT own packs when the geometric roll-up has two or more packs to merge", () => {
    const small = (n: number) => Array.from({ length: n }, () => ({ objects: 3, size: 300 }));
    expect(compactionDue(small(AUTO_PACK_LIMIT - 1))).toBe(false);
    expect(compactionDue(small(AUTO_PACK_LIMIT))).toBe(true);
    // already a progression (each pack at least twice the one below): nothing to merge
    const progression = Array.from({ length: AUTO_PACK_LIMIT + 2 }, (_, i) => ({ objects: 2 ** i, size: 100 * 2 ** i }));
    expect(compactionDue(progression)).toBe(false);
  });

  it("names the repository after the write that brings it to AUTO_PACK_LIMIT packs, in that write's own round trips", async () => {
    named.length = 0;
    const { id, writes } = await repoWithPacks(AUTO_PACK_LIMIT);
    // only the last write named it; every write cost the same round trips
    expect(named).toEqual([[id]]);
    expect(new Set(writes.map(roundTrips)).size).toBe(1);
  });

  it("merges the small packs, keeps every file readable, the repository's updated_at, and records the replaced files", async () => {
    const { id, name } = await repoWithPacks(AUTO_PACK_LIMIT);
    // last updated well before now, so that a compaction touching it would show
    await t.client.execute({ sql: "UPDATE repository SET updated_unix = updated_unix - 1000 WHERE id = ?", args: [id] });
    const before = await (await t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) })).json();
    const packsBefore = await packsOf(id);
    const filesBefore = await files(id);

    const c = await compactRepository(deps(), id);
    expect(c).not.toBeNull();
    const after = await packsOf(id);
    expect(after.length).toBeLessThan(packsBefore.length);
    expect(after.map((p) => p.id)).toContain(c!.pack.id);
    // the removed packs are those the roll-up chose; the rest stayed
    expect(new Set([...after.map((p) => p.id).filter((x) => x !== c!.pack.id), ...c!.removed.map((p) => p.id)])).toEqual(new Set(packsBefore.map((p) => p.id)));
    for (let i = 1; i < AUTO_PACK_LIMIT; i++) expect(await contentOf(name, `f${i}.txt`)).toBe(`file ${i}\n`);
    const repo = await Repository.open({ repoId: String(id), objects: t.objects, refs: new LibsqlRefStore(t.driver) });
    const head = await repo.resolve("HEAD");
    expect((await repo.readCommit(head!.oid)).message).toBe(`add ${AUTO_PACK_LIMIT - 1}\n`);

    const got = await (await t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) })).json();
    expect(got.updated_at).toBe(before.updated_at);
    expect(await garbageOf(id)).toEqual(c!.removed.map((p) => p.id).sort());
    // the old files stay for requests that read the old catalog
    expect(await files(id)).toEqual([...filesBefore, ...packFileNames(c!.pack.id)].sort());
    // done: not due again
    expect(await compactRepository(deps(), id)).toBeNull();
  });

  it("deletes replaced files only after the grace period, and only once no catalog lists them", async () => {
    // garbage of the tests before goes first, so that the counts below are this repository's
    await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1);
    const base = await repoWithPacks(AUTO_PACK_LIMIT);
    // another user's fork: its catalog lists the base's packs as they are now
    const other = await seedUser(t.db);
    const otherTok = await other.token();
    const fork = await t.request(`/api/v1/repos/${owner.name}/${base.name}/forks`, { method: "POST", headers: token(otherTok), json: {} });
    expect(fork.status).toBe(202);
    const forkBody = await fork.json();
    const c = (await compactRepository(deps(), base.id))!;
    const removed = c.removed.map((p) => p.id).sort();
    const oldFiles = c.removed.flatMap((p) => packFileNames(p.id));

    // within the grace period: nothing goes (other repositories' garbage may)
    await collectPackGarbage(deps(), nowUnix());
    expect(await garbageOf(base.id)).toEqual(removed);
    // past it, but the fork still reads them: nothing goes either
    await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1);
    expect(await garbageOf(base.id)).toEqual(removed);
    for (const f of oldFiles) expect(await files(base.id)).toContain(f);
    const forkRaw = await t.request(`/api/v1/repos/${other.name}/${forkBody.name}/raw/f1.txt`, { headers: token(otherTok) });
    expect(await forkRaw.text()).toBe("file 1\n");

    // the fork deleted: its copies of the shared packs went with it, the base's old files go now
    // (and the fork's namespace, which its delete recorded, is swept once more)
    expect((await t.request(`/api/v1/repos/${other.name}/${forkBody.name}`, { method: "DELETE", headers: token(otherTok) })).status).toBe(204);
    expect(await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1)).toBe(removed.length + 1);
    expect(await garbageOf(base.id)).toEqual([]);
    expect(await files(base.id)).toEqual((await packsOf(base.id)).flatMap((p) => packFileNames(p.id)).sort());
    for (let i = 1; i < AUTO_PACK_LIMIT; i++) expect(await contentOf(base.name, `f${i}.txt`)).toBe(`file ${i}\n`);
  });

  it("namespace rule: what a repository's delete failed to remove is swept after the grace period, by the row its delete batch wrote", async () => {
    await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1);
    const { id, name } = await repoWithPacks(2);
    const left = await files(id);
    expect(left.length).toBeGreaterThan(0);
    refuseDeletes = 1;
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect((await t.request(`/api/v1/repos/${owner.name}/${name}`, { method: "DELETE", headers: token(tok) })).status).toBe(204);
      expect(errors).toHaveBeenCalled();
    } finally {
      errors.mockRestore();
      refuseDeletes = 0;
    }
    expect(await files(id)).toEqual(left);
    expect(await garbageOf(id)).toEqual([""]);
    // within the grace period (a push racing the delete may still be writing there): kept
    expect(await collectPackGarbage(deps(), nowUnix())).toBe(0);
    expect(await files(id)).toEqual(left);
    expect(await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1)).toBe(1);
    expect(await files(id)).toEqual([]);
    expect(await garbageOf(id)).toEqual([]);
  });

  it("namespace rule: a namespace another catalog still reads is not swept", async () => {
    await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1);
    const { id } = await repoWithPacks(2);
    // a row as a delete writes it, while a catalog (a fork not re-pointed) still names the namespace
    await t.client.execute({ sql: "INSERT INTO git_pack_garbage (repo_id, pack_id) VALUES (?, '')", args: [id] });
    expect(await collectPackGarbage(deps(), nowUnix() + PACK_GRACE_S + 1)).toBe(0);
    expect((await files(id)).length).toBeGreaterThan(0);
    expect(await garbageOf(id)).toEqual([""]);
    await t.client.execute({ sql: "DELETE FROM git_pack_garbage WHERE repo_id = ?", args: [id] });
  });

  it("leaves a repository deleted meanwhile alone", async () => {
    const { id, name } = await repoWithPacks(AUTO_PACK_LIMIT);
    expect((await t.request(`/api/v1/repos/${owner.name}/${name}`, { method: "DELETE", headers: token(tok) })).status).toBe(204);
    expect(await compactRepository(deps(), id)).toBeNull();
    expect(await files(id)).toEqual([]);
  });
});
