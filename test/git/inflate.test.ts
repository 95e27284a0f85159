/**
 * Finding where a pack entry's zlib stream ends: Node's native zlib and pako (used under workerd,
 * where the native engines outlive their calls) must agree on every outcome — the data and the
 * compressed length, "more bytes needed" for a cut stream, and a refusal for bad or oversized data.
 */
import { randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GitError } from "../../functions/git/errors.ts";
import { inflatePrefix, inflatePrefixJs, inflatePrefixNative, type Prefix } from "../../functions/git/pack/inflate.ts";

const IMPLEMENTATIONS = { native: inflatePrefixNative, pako: inflatePrefixJs } as const;

/** What a caller of inflatePrefix concludes: the entry, "more", or a refusal (a wrong size is one too). */
function outcome(f: (buf: Uint8Array, size: number) => Prefix, buf: Uint8Array, size: number): string {
  try {
    const r = f(buf, size);
    if (r === null) return "more";
    if (r.data.length !== size) return "wrong size";
    return `ok ${Buffer.from(r.data).toString("hex")} ${r.consumed}`;
  } catch (e) {
    if (e instanceof GitError && e.code === "corrupt") return "corrupt";
    throw e;
  }
}

const text = (n: number) => Buffer.from("tree 1234 parent abcdef author A U Thor <a@example.com>\n".repeat(Math.ceil(n / 56))).subarray(0, n);
const SAMPLES: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["one byte", Uint8Array.of(7)],
  ["a delta-sized entry", randomBytes(23)],
  ["compressible text", text(5_000)],
  ["random bytes larger than zlib's window", randomBytes(70_000)],
  ["compressible text of 300 KB", text(300_000)],
];

describe("inflatePrefix", () => {
  it("is Node's native zlib under Node", () => {
    expect(inflatePrefix).toBe(inflatePrefixNative);
  });

  for (const [name, impl] of Object.entries(IMPLEMENTATIONS)) {
    describe(name, () => {
      it("returns an entry's data and compressed length, ignoring the bytes after it", () => {
        for (const [label, data] of SAMPLES) {
          const z = deflateSync(data);
          const buf = Buffer.concat([z, deflateSync(randomBytes(40)), randomBytes(100)]);
          expect(outcome(impl, buf, data.length), label).toBe(`ok ${Buffer.from(data).toString("hex")} ${z.length}`);
        }
      });

      it("answers 'more bytes needed' for a stream cut anywhere", () => {
        const z = deflateSync(text(600));
        const seen = new Set<string>();
        for (let cut = 1; cut < z.length; cut++) seen.add(outcome(impl, z.subarray(0, cut), 600));
        expect([...seen]).toEqual(["more"]);
      });

      it("refuses bytes that are not a zlib stream as corrupt", () => {
        const z = Buffer.from(deflateSync(text(600)));
        z[0] = 0x00; // not a deflate header
        expect(outcome(impl, z, 600)).toBe("corrupt");
        const body = Buffer.from(deflateSync(randomBytes(600)));
        body.fill(0xff, 10, 40); // an invalid block inside the stream
        expect(outcome(impl, Buffer.concat([body, randomBytes(50)]), 600)).toMatch(/^(corrupt|wrong size)$/);
      });

      it("never accepts a stream whose data is longer or shorter than the entry's header says", () => {
        const data = text(1_000);
        const z = Buffer.concat([deflateSync(data), randomBytes(30)]);
        expect(outcome(impl, z, 999)).toMatch(/^(corrupt|wrong size)$/);
        expect(outcome(impl, z, 1_001)).toBe("wrong size");
        expect(outcome(impl, z, 1_000)).toMatch(/^ok /);
      });

      it("gives the same answers on reuse (no state leaks from one entry to the next)", () => {
        const a = deflateSync(text(2_000));
        const b = deflateSync(randomBytes(300));
        const first = [outcome(impl, a, 2_000), outcome(impl, b, 300)];
        outcome(impl, a.subarray(0, 10), 2_000); // a cut stream in between
        expect([outcome(impl, a, 2_000), outcome(impl, b, 300)]).toEqual(first);
      });
    });
  }
});
