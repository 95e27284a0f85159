/**
 * SortedOids (git/reachable.ts): the set the reach caches keep — 20 bytes an id, so the reach of a
 * repository of hundreds of thousands of objects fits a cache that refused it as a Set of strings.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LruCache } from "../../functions/git/pack/reader.ts";
import { SortedOids } from "../../functions/git/reachable.ts";

const oid = (i: number) => createHash("sha1").update(String(i)).digest("hex");

describe("SortedOids", () => {
  it("answers membership as a Set of the same ids does, duplicates once, any order", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => oid(i * 3));
    const set = new SortedOids([...ids, ...ids.slice(0, 100)].reverse());
    expect(set.size).toBe(5000);
    for (let i = 0; i < 15_000; i++) expect(set.has(oid(i)), String(i)).toBe(i % 3 === 0);
    expect(set.has("")).toBe(false);
    expect(set.has("abc")).toBe(false);
    expect(new SortedOids([]).has(oid(0))).toBe(false);
  });

  it("takes 20 bytes an id: the reach of 300,000 objects stays in the 32 MiB cache", () => {
    const set = new SortedOids(Array.from({ length: 300_000 }, (_, i) => oid(i)));
    expect(set.bytes).toBeLessThan(300_000 * 20 + 1024);
    const cache = new LruCache<SortedOids>(32 * 1024 * 1024);
    cache.set("tips", set, set.bytes);
    expect(cache.get("tips")).toBe(set);
  });
});
