/**
 * The pack indexer and reader against git: packs made by `git pack-objects` are indexed by the
 * streaming indexer into the directory ObjectStore; the `.idx` must equal the one `git index-pack`
 * writes, byte for byte; thin packs are completed so `git index-pack` accepts the stored pack alone;
 * corrupt and truncated packs leave nothing stored; the reader returns what `git cat-file` does.
 */
import { createHash, randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ByteReader } from "../../functions/git/bytes.ts";
import { type IndexLimits, indexPack } from "../../functions/git/pack/indexer.ts";
import { ObjectReader } from "../../functions/git/pack/reader.ts";
import { DirectoryObjectStore } from "../../functions/git/storage/fs-store.ts";
import { MemoryObjectStore } from "../../functions/git/storage/memory-object-store.ts";
import { idxFileName, type ObjectStore, packFileName, revFileName } from "../../functions/git/storage/object-store.ts";
import { R2_MIN_PART, type R2BucketLike, R2ObjectStore } from "../../functions/git/storage/r2-store.ts";
import type { PackRecord } from "../../functions/git/storage/ref-store.ts";
import { makeHistory, Scratch } from "./helpers.ts";

const s = new Scratch();
const store = new DirectoryObjectStore(s.path("data"));
let repo: string;

afterAll(() => s.cleanup());
beforeAll(async () => {
  repo = s.path("src");
  await makeHistory(s, repo, { commits: 60, files: 30 });
  // a big incompressible blob and an annotated tag, so every object type and the streaming path appear
  const big = Buffer.alloc(300_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919 + (i >> 7)) & 0xff;
  const { writeFileSync } = await import("node:fs");
  writeFileSync(s.path("src", "big.bin"), big);
  await s.git(["add", "big.bin"], { cwd: repo });
  await s.git(["commit", "-q", "-m", "big blob"], { cwd: repo });
  await s.git(["tag", "-a", "v1", "-m", "release v1"], { cwd: repo });
});

/** `p`, or a rejection after `ms` (a test of a hang fails instead of hanging). */
const within = <T>(p: Promise<T>, ms = 20_000): Promise<T> =>
  Promise.race([p, new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`still waiting after ${ms} ms`)), ms).unref())]);

/** Streams bytes in fixed chunks (like a request body). */
function chunked(bytes: Uint8Array, chunk = 7001): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(ctl) {
      if (i >= bytes.length) return ctl.close();
      ctl.enqueue(bytes.slice(i, i + chunk));
      i += chunk;
    },
  });
}

async function packOf(revs: string, extra: string[] = []): Promise<Buffer> {
  const args = revs === "--all" ? ["--all"] : [];
  return (await s.git(["pack-objects", "--stdout", "--revs", "-q", ...args, ...extra], { cwd: repo, input: revs === "--all" ? "" : `${revs}\n` })).stdout;
}

async function index(repoId: string, pack: Uint8Array, packs: PackRecord[] = [], limits: Partial<IndexLimits> = {}, chunk?: number) {
  const existing = await ObjectReader.open(store, packs);
  return indexPack(new ByteReader(chunked(pack, chunk)), { repoId, store, existing, limits });
}

/** Copies a stored pack + idx under git's names and returns git's own idx for the pack. */
async function gitIndexOf(repoId: string, rec: PackRecord, strict = true): Promise<{ ours: Buffer; theirs: Buffer; dir: string; oursRev: Buffer; theirsRev: Buffer }> {
  const dir = s.path(`check-${rec.id}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(store.path(repoId, packFileName(rec.id)), `${dir}/x.pack`);
  // inside a repository: --strict also checks that everything the pack references is in it
  await s.git(["init", "-q", "--bare", `${dir}/repo.git`]);
  await s.git(["index-pack", "--rev-index", ...(strict ? ["--strict"] : []), "-o", `${dir}/git.idx`, `${dir}/x.pack`], { cwd: `${dir}/repo.git` });
  return {
    ours: readFileSync(store.path(repoId, idxFileName(rec.id))),
    theirs: readFileSync(`${dir}/git.idx`),
    oursRev: readFileSync(store.path(repoId, revFileName(rec.id))),
    theirsRev: readFileSync(`${dir}/git.rev`),
    dir,
  };
}

/** Every object reachable from `rev` with type and content, from git cat-file --batch. */
async function catAll(rev: string): Promise<Map<string, { type: string; body: Buffer }>> {
  const list = (await s.gitText(["rev-list", "--objects", rev], { cwd: repo })).split("\n").map((l) => l.slice(0, 40));
  const batch = (await s.git(["cat-file", "--batch"], { cwd: repo, input: `${list.join("\n")}\n` })).stdout;
  const out = new Map<string, { type: string; body: Buffer }>();
  let p = 0;
  while (p < batch.length) {
    const nl = batch.indexOf(10, p);
    const [oid, type, size] = batch.toString("latin1", p, nl).split(" ");
    out.set(oid!, { type: type!, body: batch.subarray(nl + 1, nl + 1 + Number(size)) });
    p = nl + 1 + Number(size) + 1;
  }
  return out;
}

/** A pack of raw entries (type, bytes; an OFS delta names its base entry), as git lays one out. */
function rawPack(entries: { type: number; data: Uint8Array; base?: number }[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 12;
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  parts.push(head);
  entries.forEach((e, i) => {
    offsets.push(at);
    const h: number[] = [];
    let size = e.data.length;
    let b = (e.type << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      h.push(b | 0x80);
      b = size & 0x7f;
      size = Math.floor(size / 128);
    }
    h.push(b);
    if (e.type === 6) {
      // OFS_DELTA: the distance back to the base, git's offset encoding
      let d = at - offsets[e.base!]!;
      const o = [d & 0x7f];
      for (d >>= 7; d > 0; d >>= 7) {
        d -= 1;
        o.unshift(0x80 | (d & 0x7f));
      }
      h.push(...o);
    }
    const z = deflateSync(e.data);
    parts.push(Buffer.from(h), z);
    at += h.length + z.length;
    void i;
  });
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}

describe("indexer", () => {
  it("refuses a pack that expands past maxExpansion times its size (at least one largest object): a few hundred bytes of chained deltas never build gigabytes", async () => {
    const MiB = 1024 * 1024;
    const base = Buffer.alloc(64 * 1024, 0x61);
    // each delta: source size, target size 4 MiB + 4, 4 bytes of its own (insert), then 64 copies of
    // the base's first 64 KiB (opcode 0x80)
    const varint = (n: number) => {
      const out: number[] = [];
      do {
        out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
        n = Math.floor(n / 128);
      } while (n > 0);
      return Buffer.from(out);
    };
    const delta = (src: number, i: number) => Buffer.concat([varint(src), varint(4 * MiB + 4), Buffer.from([4, 0, 0, i >> 8, i & 0xff]), Buffer.alloc(64, 0x80)]);
    const chain = (n: number) => rawPack([{ type: 3, data: base }, ...Array.from({ length: n }, (_, i) => ({ type: 6, base: i, data: delta(i === 0 ? base.length : 4 * MiB + 4, i) }))]);
    const limits = { maxObjectBytes: 8 * MiB, maxExpansion: 1024 };
    // three deltas: 64 KiB + 12 MiB, within two largest objects (16 MiB)
    expect(await index("exp-3", chain(3), [], limits)).not.toBeNull();
    const bomb = chain(8);
    expect(bomb.length).toBeLessThan(2_000);
    await expect(index("exp-8", bomb, [], limits)).rejects.toThrow(/pack expands to more than 16777216 bytes \(1024 times its size\)/);
    expect(await store.list("exp-8")).toEqual([]);
    // the same chain within a limit that allows its expansion: every link resolved, one held at a time
    expect(await index("exp-8b", bomb, [], { maxObjectBytes: 8 * MiB, maxExpansion: 1_000_000 })).not.toBeNull();
    // a tree of deltas (each with two children, five levels deep) holds a base per level: past two
    // largest objects' worth at once it is refused, however much expansion is allowed
    const tree: { type: number; data: Uint8Array; base?: number }[] = [{ type: 3, data: base }];
    let level = [0];
    for (let d = 0; d < 5; d++) {
      const next: number[] = [];
      for (const parent of level) {
        for (let k = 0; k < 2; k++) {
          tree.push({ type: 6, base: parent, data: delta(parent === 0 ? base.length : 4 * MiB + 4, tree.length) });
          next.push(tree.length - 1);
        }
      }
      level = next;
    }
    await expect(index("exp-tree", rawPack(tree), [], { maxObjectBytes: 8 * MiB, maxBuiltBytes: 8 * MiB, maxExpansion: 1_000_000 })).rejects.toThrow(/pack's deltas hold more than 16777216 bytes of bases at once/);
    // built-object rule (the Worker's 48 MiB): a delta's result, a delta's base, and a commit, tree
    // or tag held whole are bounded by maxBuiltBytes; a blob stored whole only by maxObjectBytes
    const built = { maxObjectBytes: 8 * MiB, maxBuiltBytes: 2 * MiB, maxExpansion: 1_000_000 };
    await expect(index("built-result", chain(1), [], built)).rejects.toThrow(`object of ${4 * MiB + 4} bytes exceeds the limit of ${2 * MiB}`);
    const bigBase = Buffer.alloc(3 * MiB, 0x62);
    const onBig = Buffer.concat([varint(bigBase.length), varint(4), Buffer.from([4, 1, 2, 3, 4])]);
    await expect(index("built-base", rawPack([{ type: 3, data: bigBase }, { type: 6, base: 0, data: onBig }]), [], built)).rejects.toThrow(`delta base of ${3 * MiB} bytes exceeds the limit of ${2 * MiB}`);
    await expect(index("built-tree", rawPack([{ type: 2, data: Buffer.alloc(3 * MiB) }]), [], built)).rejects.toThrow(`tree of ${3 * MiB} bytes exceeds the limit of ${2 * MiB}`);
    expect(await index("built-blob", rawPack([{ type: 3, data: bigBase }]), [], built)).not.toBeNull();
    for (const id of ["built-result", "built-base", "built-tree"]) expect(await store.list(id)).toEqual([]);
  });

  it("indexes a full pack exactly as git index-pack does (idx and rev byte for byte)", async () => {
    const pack = await packOf("--all");
    const r = (await index("1", pack))!;
    expect(r.missing).toEqual([]);
    expect(r.thinBases).toBe(0);
    const { ours, theirs, oursRev, theirsRev } = await gitIndexOf("1", r.record);
    expect(ours.equals(theirs)).toBe(true);
    expect(oursRev.equals(theirsRev)).toBe(true);
    expect(r.record.size).toBe(pack.length);
    expect(readFileSync(store.path("1", packFileName(r.record.id))).equals(pack)).toBe(true);
  });

  it("gives the same idx through the streaming paths (tiny spool, streamed inflate, 1-byte chunks for the header)", async () => {
    const pack = await packOf("--all");
    const r = (await index("2", pack, [], { spoolBytes: 32 * 1024, streamInflateBytes: 2000 }, 4093))!;
    const { ours, theirs } = await gitIndexOf("2", r.record);
    expect(ours.equals(theirs)).toBe(true);
  });

  it("completes a thin pack with bases from the repository's packs so the stored pack stands alone", async () => {
    const base = (await index("3", await packOf("main~20")))!;
    const thin = await packOf("main\n^main~20", ["--thin"]);
    const out = await s.git(["index-pack", "--stdin"], { cwd: s.path(), input: thin }).catch((e: { stderr: string }) => e);
    expect(String((out as { stderr: string }).stderr)).toMatch(/unresolved deltas|fatal/); // really thin
    for (const limits of [{}, { spoolBytes: 4096 }]) {
      const r = (await index("3", thin, [base.record], limits))!;
      expect(r.thinBases).toBeGreaterThan(0);
      expect(r.missing).toEqual([]);
      // not --strict: the pack is self-contained for deltas, but its commits' parents live in the base pack
      const { ours, theirs, oursRev, theirsRev } = await gitIndexOf("3", r.record, false);
      expect(ours.equals(theirs)).toBe(true);
      expect(oursRev.equals(theirsRev)).toBe(true);
      // every object of main is now readable from the two packs
      const reader = await ObjectReader.open(store, [base.record, r.record]);
      const all = await catAll("main");
      for (const [oid, { type, body }] of all) {
        const o = await reader.mustRead(oid);
        expect(o.type).toBe(type);
        expect(Buffer.from(o.data).equals(body)).toBe(true);
      }
    }
  });

  describe("source rule: an object stored whole above the threshold is inflated as it is read, never built", () => {
    let record: PackRecord;
    let big: string;
    let bytes: Buffer;
    beforeAll(async () => {
      record = (await index("31", await packOf("main")))!.record;
      big = await s.gitText(["rev-parse", "main:big.bin"], { cwd: repo });
      bytes = (await s.git(["cat-file", "blob", big], { cwd: repo })).stdout;
    });
    const read = (stream: ReadableStream<Uint8Array>) => new Response(stream).arrayBuffer().then((b) => Buffer.from(b));

    it("whole and in ranges, with git's bytes, by a reader that could not build it (maxObjectBytes below its size)", async () => {
      const reader = await ObjectReader.open(store, [record], { maxObjectBytes: 1000 });
      await expect(reader.read(big)).rejects.toThrow(/exceeds the limit/);
      const src = (await reader.source(big, 100_000))!;
      expect({ type: src.type, size: src.size, data: src.data }).toEqual({ type: "blob", size: bytes.length, data: null });
      expect((await read(src.range(0, src.size))).equals(bytes)).toBe(true);
      expect((await read(src.range(123_457, 5_000))).equals(bytes.subarray(123_457, 128_457))).toBe(true);
      expect((await read(src.range(bytes.length - 3, 3))).equals(bytes.subarray(-3))).toBe(true);
    });

    it("a range at the start stops reading the stored bytes once it is sent", async () => {
      let pulled = 0;
      const counting: ObjectStore = Object.assign(Object.create(store) as DirectoryObjectStore, {
        stream: async (id: string, name: string, range?: { offset: number; length: number }) =>
          (await store.stream(id, name, range))!.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, ctl) {
                pulled += chunk.length;
                ctl.enqueue(chunk);
              },
            }),
          ),
      });
      const src = (await (await ObjectReader.open(counting, [record])).source(big, 100_000))!;
      expect((await read(src.range(0, 100))).equals(bytes.subarray(0, 100))).toBe(true);
      expect(pulled).toBeGreaterThan(0);
      expect(pulled).toBeLessThan(bytes.length / 2);
    });

    it("a range nobody reads opens no storage (a HEAD's body); a cancel while storage opens cancels what it opened", async () => {
      let opened = 0;
      let cancelled = 0;
      let release = () => {};
      const slow: ObjectStore = Object.assign(Object.create(store) as DirectoryObjectStore, {
        stream: async (id: string, name: string, range?: { offset: number; length: number }) => {
          opened++;
          await new Promise<void>((ok) => {
            release = ok;
          });
          const inner = (await store.stream(id, name, range))!.getReader();
          return new ReadableStream<Uint8Array>({
            pull: async (c) => {
              const { done, value } = await inner.read();
              if (done) c.close();
              else c.enqueue(value);
            },
            cancel: async (why) => {
              cancelled++;
              await inner.cancel(why);
            },
          });
        },
      });
      const src = (await (await ObjectReader.open(slow, [record])).source(big, 100_000))!;
      src.range(bytes.length - 1, 1);
      await new Promise((ok) => setTimeout(ok, 20));
      expect(opened).toBe(0);
      const reader = src.range(0, src.size).getReader();
      const first = reader.read();
      await new Promise((ok) => setTimeout(ok, 20));
      expect(opened).toBe(1);
      const stopped = reader.cancel("client gone");
      release();
      await stopped;
      await first.catch(() => {});
      await new Promise((ok) => setTimeout(ok, 20));
      expect(cancelled).toBe(1);
    });

    it("below the threshold, or stored as a delta, the object is built as read() builds it", async () => {
      const reader = await ObjectReader.open(store, [record]);
      const small = (await reader.source(big, bytes.length))!;
      expect(Buffer.from(small.data!).equals(bytes)).toBe(true);
      expect((await read(small.range(10, 20))).equals(bytes.subarray(10, 30))).toBe(true);
      expect(await reader.source("0".repeat(40))).toBeNull();
    });

    it("stored bytes that end early fail the stream (corrupt), never a short answer that looks whole", async () => {
      const cut: ObjectStore = Object.assign(Object.create(store) as DirectoryObjectStore, {
        stream: (id: string, name: string, range?: { offset: number; length: number }) => store.stream(id, name, range && { offset: range.offset, length: Math.floor(range.length / 2) }),
      });
      const src = (await (await ObjectReader.open(cut, [record])).source(big, 100_000))!;
      await expect(read(src.range(0, src.size))).rejects.toThrow();
    });
  });

  it("reports objects that are neither in the pack nor in the repository (connectivity)", async () => {
    const pack = await packOf("main\n^main~5"); // not thin: full objects, but parents are absent
    const r = (await index("4", pack))!;
    expect(r.missing.length).toBeGreaterThan(0);
  });

  it("a pack header claiming millions of objects allocates for what arrives, not for the claim", async () => {
    const header = Buffer.concat([Buffer.from("PACK"), Buffer.from([0, 0, 0, 2]), Buffer.from([0x02, 0xfa, 0xf0, 0x80])]); // 50,000,000 objects
    const before = process.memoryUsage().arrayBuffers;
    await expect(index("51", header)).rejects.toThrow(/pack truncated at byte 12 \(entry 0 of 50000000\)/);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("returns null for an empty pack and stores nothing", async () => {
    const empty = await packOf("main\n^main");
    expect(await index("5", empty)).toBeNull();
    expect(await store.list("5")).toEqual([]);
  });

  it.each([
    ["a flipped byte inside an entry", (p: Buffer) => {
      const c = Buffer.from(p);
      c[Math.floor(c.length / 2)]! ^= 0xff;
      return c;
    }],
    ["a wrong trailing checksum", (p: Buffer) => {
      const c = Buffer.from(p);
      c[c.length - 1]! ^= 1;
      return c;
    }],
    ["a truncated pack", (p: Buffer) => p.subarray(0, Math.floor(p.length * 0.7))],
    ["a pack cut in its trailer", (p: Buffer) => p.subarray(0, p.length - 5)],
    ["junk after the pack", (p: Buffer) => Buffer.concat([p, Buffer.from("junk")])],
    ["a bad header", (p: Buffer) => Buffer.concat([Buffer.from("PACX"), p.subarray(4)])],
    ["an object count larger than the entries", (p: Buffer) => {
      const c = Buffer.from(p);
      c.writeUInt32BE(c.readUInt32BE(8) + 1, 8);
      return c;
    }],
  ])("rejects %s and leaves nothing stored", async (_name, mutate) => {
    const pack = await packOf("--all");
    for (const limits of [{}, { spoolBytes: 16 * 1024 }]) {
      await expect(index("6", mutate(pack), [], limits)).rejects.toThrow();
      expect(await store.list("6")).toEqual([]);
    }
  });

  it("fails a pack streaming into storage when the storage fails midway, instead of waiting for ever", async () => {
    // more than one R2 part of incompressible bytes, so the pack streams to storage in parts
    const src = s.path("big-src");
    await s.git(["init", "-q", src]);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${src}/noise.bin`, randomBytes(R2_MIN_PART + 1024 * 1024));
    await s.git(["add", "noise.bin"], { cwd: src });
    await s.git(["commit", "-q", "-m", "noise"], { cwd: src });
    const pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q", "--all"], { cwd: src, input: "" })).stdout;
    const limits = { spoolBytes: 64 * 1024 };
    const push = (into: ObjectStore) => indexPack(new ByteReader(chunked(pack, 64 * 1024)), { repoId: "9", store: into, existing: empty, limits });
    const empty = await ObjectReader.open(store, []);

    // a store that stops reading the body and fails without cancelling it (the indexer's own guard)
    const memory = new MemoryObjectStore();
    const walkaway: ObjectStore = Object.assign(Object.create(memory) as MemoryObjectStore, {
      put: async (repoId: string, name: string, body: ReadableStream<Uint8Array> | Uint8Array) => {
        if (body instanceof Uint8Array) return memory.put(repoId, name, body);
        await body.getReader().read();
        throw new Error("storage went away");
      },
    });
    await expect(within(push(walkaway))).rejects.toThrow(/storage went away/);

    // R2: the second part's upload fails; the multipart upload is aborted and nothing stays
    const calls: string[] = [];
    const bucket: R2BucketLike = {
      put: async () => calls.push("put"),
      get: async () => null,
      head: async () => null,
      list: async () => ({ objects: [], truncated: false }),
      delete: async () => {
        calls.push("delete");
      },
      createMultipartUpload: async () => ({
        uploadPart: async (part: number) => {
          calls.push(`part ${part}`);
          if (part === 2) throw new Error("R2 part upload failed");
          return { partNumber: part, etag: `e${part}` };
        },
        complete: async () => calls.push("complete"),
        abort: async () => {
          calls.push("abort");
        },
      }),
    };
    await expect(within(push(new R2ObjectStore(bucket, R2_MIN_PART)))).rejects.toThrow(/R2 part upload failed/);
    expect(calls).toEqual(["part 1", "part 2", "abort", "delete"]);
  });

  it("refuses a pack over the size limit with the limit in the message and stores nothing", async () => {
    const pack = await packOf("--all");
    await expect(index("7", pack, [], { maxPackBytes: 50_000, spoolBytes: 16 * 1024 })).rejects.toThrow(/pack exceeds maximum allowed size \(50000 bytes\)/);
    expect(await store.list("7")).toEqual([]);
  });
});

describe("reader", () => {
  it("reads every object of a repository as git cat-file does, through small caches", async () => {
    const r = (await index("8", await packOf("--all")))!;
    const reader = await ObjectReader.open(store, [r.record], { blockBytes: 4096, blockCacheBytes: 64 * 1024, objectCacheBytes: 64 * 1024 });
    let n = 0;
    for (const [oid, { type, body }] of await catAll("--all")) {
      const o = await reader.mustRead(oid);
      expect(o.type).toBe(type);
      expect(Buffer.from(o.data).equals(body)).toBe(true);
      expect(await reader.typeOf(oid)).toBe(type);
      n++;
    }
    expect(n).toBe(r.record.objects);
    expect(await reader.read("0".repeat(40))).toBeNull();
    const some = reader.packs[0]!.idx.oidHex(3);
    expect(reader.findPrefix(some.slice(0, 10))).toEqual([some]);
  });
});
