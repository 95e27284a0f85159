/**
 * The RefStore contract (functions/git/storage/ref-store.ts) on every implementation: the
 * in-memory one, and the libSQL one on the embedded file (native driver) and on sqld (the driver
 * the Worker uses, db/hrana.ts). Also: one round trip per read and per commit, the repository row's
 * `is_empty`/`size`/`default_branch`, and concurrent commits of which exactly one wins.
 */
import { createClient } from "@libsql/client";
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metered, newMeter, type Driver } from "../../functions/db/driver.ts";
import { hranaDriver } from "../../functions/db/hrana.ts";
import { migrateDb } from "../../functions/db/migrate.ts";
import { nativeDriver } from "../../functions/db/native.ts";
import { LibsqlRefStore } from "../../functions/db/queries/git-refs.ts";
import { createCommit } from "../../functions/git/repo/commit.ts";
import { MemoryObjectStore } from "../../functions/git/storage/memory-object-store.ts";
import { MemoryRefStore } from "../../functions/git/storage/memory-ref-store.ts";
import type { PackRecord, RefStore } from "../../functions/git/storage/ref-store.ts";
import { startSqld, type Running } from "../../scripts/lib/processes.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const pack = (id: string, repoId: string): PackRecord => ({ id, repoId, objects: 3, size: 100, idxSize: 50, checksum: "d".repeat(40) });

interface Impl {
  store: RefStore;
  /** A new repository (HEAD → refs/heads/main); returns its id. */
  newRepo(): Promise<string>;
  /** is_empty, size and default_branch of the repository row (libSQL only). */
  row?(id: string): Promise<{ empty: boolean; size: number; branch: string }>;
  meter?: { roundTrips: number };
}

const dir = mkdtempSync(join(tmpdir(), "ref-store-"));
let sqld: Running | null = null;
const impls: Record<string, () => Impl> = {};
const closers: (() => void)[] = [];

async function libsqlImpl(driver: Driver, exec: (sql: string, args?: unknown[]) => Promise<unknown[][]>): Promise<Impl> {
  const meter = newMeter();
  const store = new LibsqlRefStore(metered(driver, meter));
  return {
    store,
    meter,
    async newRepo() {
      const name = `r${Math.random().toString(36).slice(2)}`;
      const rows = await exec("INSERT INTO repository (owner_id, owner_name, lower_name, name, default_branch, is_empty) VALUES (1, 'o', ?, ?, 'main', 1) RETURNING id", [name, name]);
      return String(rows[0]![0]);
    },
    async row(id) {
      const [r] = await exec("SELECT is_empty, size, default_branch FROM repository WHERE id = ?", [Number(id)]);
      return { empty: Number(r![0]) === 1, size: Number(r![1]), branch: String(r![2]) };
    },
  };
}

const ready: Record<string, Impl> = {};

beforeAll(async () => {
  const file = join(dir, "native.db");
  const mig = createClient({ url: `file:${file}` });
  await migrateDb(mig);
  mig.close();
  const native = nativeDriver(new Database(file));
  closers.push(() => native.close());
  ready.native = await libsqlImpl(native, async (q, a = []) => native.batch([{ text: q, args: a}], "write").then((r) => r[0]!.map((x) => [...x])));

  sqld = await startSqld();
  const client = createClient({ url: sqld.url });
  await migrateDb(client);
  closers.push(() => client.close());
  const remote = hranaDriver(sqld.url);
  ready.sqld = await libsqlImpl(remote, async (q, a = []) => (await remote.batch([{ text: q, args: a}], "write"))[0]!.map((r) => Array.from({ length: r.length }, (_, i) => r[i])));

  const mem = new MemoryRefStore();
  let n = 0;
  ready.memory = { store: mem, newRepo: async () => { const id = `m${n++}`; mem.create(id); return id; } };
}, 60_000);

afterAll(async () => {
  for (const c of closers) c();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

for (const name of ["memory", "native", "sqld"]) {
  impls[name] = () => ready[name]!;
  describe(`RefStore contract: ${name}`, () => {
    const impl = () => impls[name]!();

    it("reads an empty repository with HEAD and no refs or packs", async () => {
      const id = await impl().newRepo();
      expect(await impl().store.read(id)).toEqual({ head: "refs/heads/main", refs: [], packs: [], unreachable: false });
    });

    it("applies creates, updates, deletes, pack, size and empty in one commit", async () => {
      const { store, row } = impl();
      const id = await impl().newRepo();
      expect(await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/tags/v1", old: null, new: B, peeled: A }], pack: pack("p1", id), sizeDelta: 150, empty: false })).toEqual({ ok: true });
      expect(await store.commit(id, { updates: [{ name: "refs/heads/main", old: A, new: C }, { name: "refs/tags/v1", old: B, new: null }, { name: "refs/heads/z", old: null, new: A }], pack: pack("p2", id), sizeDelta: 150, empty: false })).toEqual({ ok: true });
      const s = await store.read(id);
      expect(s.refs).toEqual([{ name: "refs/heads/main", oid: C, peeled: null }, { name: "refs/heads/z", oid: A, peeled: null }]);
      expect(s.packs.map((p) => p.id)).toEqual(["p1", "p2"]);
      expect(s.packs[0]).toEqual(pack("p1", id));
      if (row) expect(await row(id)).toEqual({ empty: false, size: 300, branch: "main" });
    });

    it("takes a transaction of 20,001 refs (more than SQLite's 32,766 variables would allow as placeholders), and deletes them again", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      const names = Array.from({ length: 20_001 }, (_, i) => `refs/tags/t${String(i).padStart(5, "0")}`);
      expect(await store.commit(id, { updates: names.map((n) => ({ name: n, old: null, new: A, peeled: B })), sizeDelta: 0, empty: false })).toEqual({ ok: true });
      const s = await store.read(id);
      expect(s.refs).toHaveLength(names.length);
      expect(s.refs[20_000]).toEqual({ name: names[20_000], oid: A, peeled: B });
      // a stale expectation among them fails the whole transaction with its actual value
      const stale = await store.commit(id, { updates: names.map((n, i) => ({ name: n, old: i === 7 ? C : A, new: null })), sizeDelta: 0, empty: false });
      expect(stale).toEqual({ ok: false, rejected: [{ name: names[7], actual: A }] });
      expect(await store.commit(id, { updates: names.map((n) => ({ name: n, old: A, new: null })), sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect((await store.read(id)).refs).toEqual([]);
    });

    it("sorts refs by byte order", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      const names = ["refs/heads/b", "refs/heads/B", "refs/heads/a-b", "refs/heads/a/b", "refs/heads/é", "refs/tags/0"];
      await store.commit(id, { updates: names.map((n) => ({ name: n, old: null, new: A })), sizeDelta: 0, empty: false });
      expect((await store.read(id)).refs.map((r) => r.name)).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    });

    it("rule 6: the first applied deletion, or a transaction that says `orphans`, marks the repository unreachable for good; creates and updates do not", async () => {
      const { store } = impl();
      const plain = await impl().newRepo();
      await store.commit(plain, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/heads/x", old: null, new: A }], sizeDelta: 0, empty: false });
      await store.commit(plain, { updates: [{ name: "refs/heads/main", old: A, new: B }], sizeDelta: 0, empty: false });
      expect((await store.read(plain)).unreachable).toBe(false);
      await store.commit(plain, { updates: [{ name: "refs/heads/x", old: A, new: null }], sizeDelta: 0, empty: false });
      expect((await store.read(plain)).unreachable).toBe(true);
      await store.commit(plain, { updates: [{ name: "refs/heads/y", old: null, new: A }], sizeDelta: 0, empty: false });
      expect((await store.read(plain)).unreachable).toBe(true);
      const forced = await impl().newRepo();
      await store.commit(forced, { updates: [{ name: "refs/heads/main", old: null, new: B }], sizeDelta: 0, empty: false });
      await store.commit(forced, { updates: [{ name: "refs/heads/main", old: B, new: A }], sizeDelta: 0, empty: false, orphans: true });
      expect((await store.read(forced)).unreachable).toBe(true);
    });

    it("protectHead: a deletion of HEAD's branch as stored when the commit runs is refused, whatever HEAD was when the caller read it; nothing applies", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/heads/x", old: null, new: A }, { name: "refs/heads/y", old: null, new: A }], sizeDelta: 0, empty: false });
      // The caller read HEAD = main; then another request made x the default branch.
      expect(await store.commit(id, { updates: [], head: "refs/heads/x", sizeDelta: 0, empty: false })).toEqual({ ok: true });
      const r = await store.commit(id, { updates: [{ name: "refs/heads/x", old: A, new: null }, { name: "refs/heads/y", old: A, new: B }], sizeDelta: 0, empty: false, protectHead: true });
      expect(r).toEqual({ ok: false, rejected: [{ name: "refs/heads/x", actual: A, head: true }] });
      expect((await store.read(id)).refs.map((ref) => [ref.name, ref.oid])).toEqual([["refs/heads/main", A], ["refs/heads/x", A], ["refs/heads/y", A]]);
      // The branch HEAD no longer names may go; HEAD's may go when the transaction moves HEAD, or without protectHead.
      expect(await store.commit(id, { updates: [{ name: "refs/heads/main", old: A, new: null }], sizeDelta: 0, empty: false, protectHead: true })).toEqual({ ok: true });
      expect(await store.commit(id, { updates: [{ name: "refs/heads/x", old: A, new: null }], head: "refs/heads/y", sizeDelta: 0, empty: false, protectHead: true })).toEqual({ ok: true });
      expect(await store.commit(id, { updates: [{ name: "refs/heads/y", old: A, new: null }], sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect((await store.read(id)).refs).toEqual([]);
    });

    it("applies nothing when one compare-and-swap fails and reports every failing ref", async () => {
      const { store, row } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/heads/x", old: null, new: A }], sizeDelta: 10, empty: false });
      const r = await store.commit(id, {
        updates: [
          { name: "refs/heads/main", old: B, new: C },
          { name: "refs/heads/x", old: null, new: C },
          { name: "refs/heads/new", old: null, new: C },
          { name: "refs/heads/gone", old: A, new: null },
        ],
        pack: pack("p9", id),
        head: "refs/heads/new",
        sizeDelta: 99,
        empty: false,
      });
      expect(r).toEqual({ ok: false, rejected: [{ name: "refs/heads/main", actual: A }, { name: "refs/heads/x", actual: A }, { name: "refs/heads/gone", actual: null }] });
      const s = await store.read(id);
      // A failed commit (with a deletion in it) marks nothing.
      expect(s).toEqual({ head: "refs/heads/main", refs: [{ name: "refs/heads/main", oid: A, peeled: null }, { name: "refs/heads/x", oid: A, peeled: null }], packs: [], unreachable: false });
      if (row) expect(await row(id)).toEqual({ empty: false, size: 10, branch: "main" });
    });

    it("moves HEAD, and becomes empty again when the last branch goes", async () => {
      const { store, row } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/dev", old: null, new: A }], head: "refs/heads/dev", sizeDelta: 0, empty: false });
      expect((await store.read(id)).head).toBe("refs/heads/dev");
      if (row) expect(await row(id)).toMatchObject({ empty: false, branch: "dev" });
      await store.commit(id, { updates: [{ name: "refs/heads/dev", old: A, new: null }, { name: "refs/tags/t", old: null, new: A }], sizeDelta: 0, empty: true });
      if (row) expect(await row(id)).toMatchObject({ empty: true });
    });

    it("removes compacted packs only when all of them are still in the catalog", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [], pack: pack("p1", id), sizeDelta: 0, empty: true });
      await store.commit(id, { updates: [], pack: pack("p2", id), sizeDelta: 0, empty: true });
      expect(await store.commit(id, { updates: [], pack: pack("p3", id), removePacks: ["p1", "nope"], sizeDelta: 0, empty: true })).toEqual({ ok: false, rejected: [] });
      expect((await store.read(id)).packs.map((p) => p.id)).toEqual(["p1", "p2"]);
      expect(await store.commit(id, { updates: [], pack: pack("p3", id), removePacks: ["p1", "p2"], sizeDelta: 0, empty: true })).toEqual({ ok: true });
      expect((await store.read(id)).packs.map((p) => p.id)).toEqual(["p3"]);
    });

    it("lets exactly one of concurrent commits with the same expectation win", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }], sizeDelta: 0, empty: false });
      const results = await Promise.all([B, C, B, C, B].map((n) => store.commit(id, { updates: [{ name: "refs/heads/main", old: A, new: n }], sizeDelta: 1, empty: false })));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      const winner = (await store.read(id)).refs[0]!.oid;
      for (const r of results.filter((x) => !x.ok)) expect(r).toEqual({ ok: false, rejected: [{ name: "refs/heads/main", actual: winner }] });
    });

    it("D/F rule: refuses creating a ref where a stored ref is its directory or lies under it, and applies nothing", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/tags/v1/x", old: null, new: A }], sizeDelta: 0, empty: false });
      const r = await store.commit(id, {
        updates: [
          { name: "refs/heads/main/sub", old: null, new: B },
          { name: "refs/tags/v1", old: null, new: B },
          { name: "refs/heads/fine", old: null, new: B },
        ],
        pack: pack("p1", id),
        sizeDelta: 5,
        empty: false,
      });
      expect(r).toEqual({
        ok: false,
        rejected: [
          { name: "refs/heads/main/sub", actual: null, conflict: "refs/heads/main" },
          { name: "refs/tags/v1", actual: null, conflict: "refs/tags/v1/x" },
        ],
      });
      expect((await store.read(id)).refs.map((x) => x.name)).toEqual(["refs/heads/main", "refs/tags/v1/x"]);
      expect((await store.read(id)).packs).toEqual([]);
      // updating and deleting a ref never conflicts; creating `a/b` while the same commit deletes `a` does not either
      expect(await store.commit(id, { updates: [{ name: "refs/heads/main", old: A, new: C }], sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect(await store.commit(id, { updates: [{ name: "refs/tags/v1/x", old: A, new: null }, { name: "refs/tags/v1", old: null, new: B }], sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect((await store.read(id)).refs.map((x) => x.name)).toEqual(["refs/heads/main", "refs/tags/v1"]);
    });

    it("D/F rule: refuses two refs of one commit that conflict with each other", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      const r = await store.commit(id, { updates: [{ name: "refs/tags/v1", old: null, new: A }, { name: "refs/tags/v1/x", old: null, new: A }], sizeDelta: 0, empty: false });
      expect(r).toEqual({ ok: false, rejected: [{ name: "refs/tags/v1/x", actual: null, conflict: "refs/tags/v1" }] });
      expect((await store.read(id)).refs).toEqual([]);
    });

    it("D/F rule: of concurrent commits creating `a` and `a/b`, exactly one wins", async () => {
      const { store } = impl();
      for (let round = 0; round < 3; round++) {
        const id = await impl().newRepo();
        const names = round % 2 ? ["refs/heads/a/b", "refs/heads/a", "refs/heads/a/c"] : ["refs/heads/a", "refs/heads/a/b/c", "refs/heads/a/b"];
        const results = await Promise.all(names.map((n) => store.commit(id, { updates: [{ name: n, old: null, new: A }], sizeDelta: 0, empty: false })));
        const stored = (await store.read(id)).refs.map((x) => x.name);
        for (let i = 0; i < stored.length; i++) for (let j = 0; j < stored.length; j++) if (i !== j) expect(stored[j]!.startsWith(`${stored[i]}/`)).toBe(false);
        expect(results.filter((x) => x.ok).length).toBe(stored.length);
        for (const x of results) if (!x.ok) expect(x.rejected[0]!.conflict).toMatch(/^refs\/heads\/a/);
      }
    });

    it("caseUnique: a created ref listed there is refused while a ref differing only in ASCII letter case exists; others and pushes are not held to it", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }, { name: "refs/tags/Rel-1", old: null, new: A }], sizeDelta: 0, empty: false });
      const r = await store.commit(id, { updates: [{ name: "refs/tags/rEL-1", old: null, new: B }], caseUnique: ["refs/tags/rEL-1"], sizeDelta: 0, empty: false });
      expect(r).toEqual({ ok: false, rejected: [{ name: "refs/tags/rEL-1", actual: null, conflict: "refs/tags/Rel-1" }] });
      // a name differing in more than case, and the same name without the rule, are created
      expect(await store.commit(id, { updates: [{ name: "refs/tags/rel-2", old: null, new: B }], caseUnique: ["refs/tags/rel-2"], sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect(await store.commit(id, { updates: [{ name: "refs/tags/REL-1", old: null, new: C }], sizeDelta: 0, empty: false })).toEqual({ ok: true });
      expect((await store.read(id)).refs.map((x) => x.name)).toEqual(["refs/heads/main", "refs/tags/REL-1", "refs/tags/Rel-1", "refs/tags/rel-2"]);
    });

    it("caseUnique: of concurrent commits creating names that differ only in letter case, exactly one wins", async () => {
      const { store } = impl();
      for (let round = 0; round < 3; round++) {
        const id = await impl().newRepo();
        const names = ["refs/tags/v1", "refs/tags/V1", "refs/tags/v1", "refs/tags/V1"];
        const results = await Promise.all(names.map((n) => store.commit(id, { updates: [{ name: n, old: null, new: A }], caseUnique: [n], sizeDelta: 0, empty: false })));
        expect(results.filter((x) => x.ok).length).toBe(1);
        expect((await store.read(id)).refs.length).toBe(1);
      }
    });

    it("D/F rule: createCommit on a new branch under an existing branch fails with a conflict and moves nothing", async () => {
      const { store } = impl();
      const id = await impl().newRepo();
      const objects = new MemoryObjectStore();
      const ada = { name: "Ada", email: "ada@example.com", timestamp: 1700000000, timezone: "+0000" };
      await createCommit({ repoId: id, objects, refs: store }, { branch: "main", message: "init", author: ada, changes: [{ op: "put", path: "a", content: "a\n" }] });
      await expect(createCommit({ repoId: id, objects, refs: store }, { branch: "main/sub", startFrom: "main", message: "x", author: ada, changes: [{ op: "put", path: "b", content: "b\n" }] })).rejects.toMatchObject({ code: "conflict" });
      expect((await store.read(id)).refs.map((x) => x.name)).toEqual(["refs/heads/main"]);
      expect((await store.read(id)).packs).toHaveLength(1);
    });

    if (name !== "memory") {
      it("costs one round trip per read and per commit", async () => {
        const { store, meter } = impl();
        const id = await impl().newRepo();
        const before = meter!.roundTrips;
        await store.read(id);
        await store.commit(id, { updates: [{ name: "refs/heads/main", old: null, new: A }], pack: pack("p", id), sizeDelta: 1, empty: false });
        await store.commit(id, { updates: [{ name: "refs/heads/main", old: B, new: A }], sizeDelta: 1, empty: false });
        expect(meter!.roundTrips - before).toBe(3);
      });
    }
  });
}
