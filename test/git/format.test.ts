/**
 * The small formats against the real git CLI: pkt-line framing, ref name rules
 * (`git check-ref-format`), object ids (`git hash-object`), tree/commit round trips, deltas.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ByteReader, utf8 } from "../../functions/git/bytes.ts";
import { parseCommit, serializeCommit, splitTagSignature, stripspace } from "../../functions/git/objects/commit.ts";
import { hashObject } from "../../functions/git/objects/object.ts";
import { entryNamed, parseTree, serializeTree, type TreeEntry } from "../../functions/git/objects/tree.ts";
import { applyDelta } from "../../functions/git/pack/delta.ts";
import { FLUSH, pkt, PktReader } from "../../functions/git/pkt-line.ts";
import { refNameProblem } from "../../functions/git/refname.ts";
import { Scratch } from "./helpers.ts";

const s = new Scratch();
afterAll(() => s.cleanup());

const streamOf = (bytes: Uint8Array, chunk = 3) =>
  new ReadableStream<Uint8Array>({
    start(ctl) {
      for (let i = 0; i < bytes.length; i += chunk) ctl.enqueue(bytes.slice(i, i + chunk));
      ctl.close();
    },
  });

describe("entryNamed", () => {
  it("finds an entry of a small or large tree as a scan would, the first of two with one name, none for a missing name", () => {
    for (const size of [3, 31, 32, 5000]) {
      const entries: TreeEntry[] = Array.from({ length: size }, (_, i) => ({ mode: i % 7 ? "100644" : "40000", name: `n${i}`, oid: i.toString(16).padStart(40, "0") }));
      entries.push({ mode: "100755", name: "n1", oid: "f".repeat(40) });
      for (const name of ["n0", "n1", `n${size - 1}`, "missing", ""]) expect(entryNamed(entries, name), `${size} ${name}`).toBe(entries.find((e) => e.name === name));
    }
  });
});

describe("pkt-line", () => {
  it("frames and reads lines, flush, delim and response-end across arbitrary chunking", async () => {
    const bytes = new Uint8Array([...pkt("want abc\n"), ...pkt(""), ...FLUSH, ...utf8("0001"), ...utf8("0002"), ...pkt(new Uint8Array([1, 2, 3]))]);
    expect(new TextDecoder().decode(pkt("want abc\n"))).toBe("000dwant abc\n");
    const r = new PktReader(new ByteReader(streamOf(bytes)));
    expect(await r.line()).toBe("want abc");
    expect(await r.line()).toBe("");
    expect(await r.line()).toBe("flush");
    expect(await r.line()).toBe("delim");
    expect(await r.line()).toBe("end");
    const last = await r.next();
    expect(last).toEqual({ kind: "data", data: new Uint8Array([1, 2, 3]) });
    expect(await r.next()).toBeNull();
  });

  it("rejects a bad length and a line cut short", async () => {
    await expect(new PktReader(new ByteReader(streamOf(utf8("00zzabc")))).next()).rejects.toThrow(/bad line length/);
    await expect(new PktReader(new ByteReader(streamOf(utf8("0010abc")))).next()).rejects.toThrow(/ended inside a pkt-line/);
    await expect(new PktReader(new ByteReader(streamOf(utf8("0003")))).next()).rejects.toThrow(/bad line length 3/);
  });
});

describe("ref names", () => {
  const names = [
    "refs/heads/main", "refs/heads/feature/x", "refs/tags/v1.0", "refs/heads/a..b", "refs/heads/.hidden", "refs/heads/x.lock",
    "refs/heads/x.lock/y", "refs/heads/a b", "refs/heads/a~1", "refs/heads/a^", "refs/heads/a:b", "refs/heads/a?", "refs/heads/a*",
    "refs/heads/a[", "refs/heads/a\\b", "refs/heads/a@{1}", "refs/heads/@", "@", "refs/heads//x", "refs/heads/x/", "refs/heads/x.",
    "main", "refs/heads/ünïcödé", "refs/heads/a\tb", "refs/heads/a\u007f", "/refs/heads/x", "refs/heads/-dash", "refs/heads/a.b.c",
    "refs/heads/a@b", "refs/heads/..", "refs/heads/.", "refs/heads/x.lock.y",
  ];
  it.each(names)("%j is judged as git check-ref-format judges it", async (name) => {
    const gitSays = await s.git(["check-ref-format", name]).then(
      () => true,
      () => false,
    );
    expect(refNameProblem(name) === null).toBe(gitSays);
  });
});

describe("objects", () => {
  it("hashes blobs, trees and commits exactly as git hash-object", async () => {
    const blob = utf8("hello\nworld\n");
    const viaGit = (await s.git(["hash-object", "--stdin"], { input: blob })).stdout.toString().trim();
    expect(hashObject("blob", blob)).toBe(viaGit);

    const tree = serializeTree([
      { mode: "100644", name: "b.txt", oid: viaGit },
      { mode: "40000", name: "a", oid: "4b825dc642cb6eb9a060e54bf8d69288fbee4904" },
      { mode: "100644", name: "a.txt", oid: viaGit },
      { mode: "100755", name: "a-", oid: viaGit },
    ]);
    await s.git(["init", "-q", "--bare", "objs.git"]);
    const treeId = (await s.git(["hash-object", "-t", "tree", "--stdin", "--literally"], { cwd: s.path("objs.git"), input: tree })).stdout.toString().trim();
    expect(hashObject("tree", tree)).toBe(treeId);
    // git's order: "a-" < "a.txt" < "a/" (0x2d < 0x2e < 0x2f), then "b.txt"
    expect(parseTree(tree).map((e) => e.name)).toEqual(["a-", "a.txt", "a", "b.txt"]);

    const commit = serializeCommit({
      tree: treeId,
      parents: [],
      author: { name: "Ada", email: "ada@example.com", timestamp: 1700000000, timezone: "+0100" },
      committer: { name: "Ada", email: "ada@example.com", timestamp: 1700000001, timezone: "-0230" },
      message: "subject\n\nbody\n",
    });
    const commitId = (await s.git(["hash-object", "-t", "commit", "--stdin"], { cwd: s.path("objs.git"), input: commit })).stdout.toString().trim();
    expect(hashObject("commit", commit)).toBe(commitId);
    const parsed = parseCommit(commit);
    expect(parsed.committer).toEqual({ name: "Ada", email: "ada@example.com", timestamp: 1700000001, timezone: "-0230" });
    expect(parsed.message).toBe("subject\n\nbody\n");
  });

  it("keeps extra headers (gpgsig) byte for byte", () => {
    const raw = utf8(
      "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nmsg\n",
    );
    const c = parseCommit(raw);
    expect(c.extraHeaders[0]![0]).toBe("gpgsig");
    expect(Buffer.from(serializeCommit(c)).equals(Buffer.from(raw))).toBe(true);
  });

  it("rejects a commit without a tree and a tree with a cut entry", () => {
    expect(() => parseCommit(utf8("author A <a@x> 1 +0000\n\nmsg"))).toThrow(/tree/);
    expect(() => parseTree(utf8("100644 a\0abc"))).toThrow(/truncated/);
  });
});

describe("messages", () => {
  it("stripspace rule: a message cleaned as `git stripspace` cleans it, with and without comment lines (`-s`: git tag -m's default cleanup)", async () => {
    const messages = [
      "",
      "one line",
      "one line\n",
      "\n\n\nleading blank lines\n",
      "trailing blank lines\n\n\n",
      "a\n\n\n\nb\n",
      "spaces at ends   \n\ttabs\t\t\nCR\r\n",
      "# a comment\nkept\n#another\n  # indented: not a comment\n",
      "#only comments\n#\n",
      "\v vertical tab and \f form feed are not git's space\f\n",
      "blank line  \n \t \nwith only whitespace between\n",
      "no newline at the end #",
      "ünïcødé  \n\n\n€\n",
    ];
    for (const m of messages) {
      for (const comments of [false, true]) {
        const want = (await s.git(["stripspace", ...(comments ? ["-s"] : [])], { input: m })).stdout.toString();
        expect(stripspace(m, comments ? "#" : undefined), JSON.stringify({ m, comments })).toBe(want);
      }
    }
  });

  it("a tag's message is shown without its signature block, as Gitea's parsePayloadSignature splits it (the last BEGIN … SIGNATURE line an END line follows; the line break before it goes too)", () => {
    const sig = "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----";
    expect(splitTagSignature(`release\n${sig}\n`)).toEqual({ message: "release", signature: sig });
    expect(splitTagSignature(`${sig}\n`)).toEqual({ message: "", signature: sig });
    const ssh = "-----BEGIN SSH SIGNATURE-----\nx\n-----END SSH SIGNATURE-----";
    expect(splitTagSignature(`notes\n\n${ssh}\n`)).toEqual({ message: "notes\n", signature: ssh });
    // an armour line without its END, or one that is not a signature's, stays in the message
    expect(splitTagSignature("quote:\n-----BEGIN PGP SIGNATURE-----\nmore\n").signature).toBeNull();
    expect(splitTagSignature("-----BEGIN SIGNED MESSAGE-----\nx\n-----END SIGNED MESSAGE-----\n").signature).toBeNull();
    expect(splitTagSignature("plain\n")).toEqual({ message: "plain\n", signature: null });
  });
});

describe("delta", () => {
  it("a delta whose ops do not make the size its header claims is refused before the result is allocated", () => {
    const varint = (n: number) => {
      const out: number[] = [];
      do {
        let b = n & 0x7f;
        n = Math.floor(n / 128);
        if (n > 0) b |= 0x80;
        out.push(b);
      } while (n > 0);
      return out;
    };
    const claims = 500 * 1024 * 1024;
    const delta = new Uint8Array([...varint(4), ...varint(claims), 0x01, 0x41]); // one inserted byte
    const before = process.memoryUsage().arrayBuffers;
    expect(() => applyDelta(new Uint8Array(4), delta)).toThrow(`delta produced 1 bytes, expected ${claims}`);
    // copies of 16 MiB each out of a 10-byte base, adding up to what the header claims
    const copies = new Uint8Array([...varint(10), ...varint(32 * 0xffffff), ...Array.from({ length: 32 }, () => [0xf0, 0xff, 0xff, 0xff]).flat()]);
    expect(() => applyDelta(new Uint8Array(10), copies)).toThrow("delta copy out of bounds");
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("applies copy and insert opcodes and refuses out-of-bounds copies", () => {
    const base = utf8("0123456789");
    // src 10, dst 7: copy offset 2 len 3, insert "xyz", copy offset 0 len 1
    const delta = new Uint8Array([10, 7, 0x91, 2, 3, 3, 120, 121, 122, 0x90, 1]);
    expect(new TextDecoder().decode(applyDelta(base, delta))).toBe("234xyz0");
    expect(() => applyDelta(base, new Uint8Array([10, 5, 0x91, 8, 5]))).toThrow(/out of bounds/);
    expect(() => applyDelta(utf8("short"), delta)).toThrow(/base size/);
    expect(() => applyDelta(base, new Uint8Array([10, 1, 0]))).toThrow(/reserved/);
  });
});
