/**
 * Push rules over smart HTTP with the real git CLI (and raw request bodies where git cannot be made
 * to send the input): directory/file ref conflicts, ref name length limits and advertisements that
 * stay within git's pkt-line limit, status reports that always frame, ref names that are not UTF-8,
 * and request bodies that claim gzip but are not.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { serveGit } from "../../functions/git/http.ts";
import { FLUSH, MAX_PKT, pkt } from "../../functions/git/pkt-line.ts";
import { commitBarrier, makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("push-rules-");
let srv: GitServer;
let nextRepo = 100;
let src: string;
let tip: string;
let pack: Buffer;

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await makeHistory(s, src, { commits: 4, files: 3 });
  tip = await s.gitText(["rev-parse", "main"], { cwd: src });
  pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

/** A fresh repository id on the server (HEAD → refs/heads/main). */
function newRepo(): { id: string; url: string } {
  const id = String(nextRepo++);
  srv.refs.create(id);
  return { id, url: `${srv.url}/${id}.git` };
}

/** Splits a response body into pkt-line payloads (latin1, newline dropped); checks every length. */
function pktLines(body: Buffer): string[] {
  const text = body.toString("latin1");
  const lines: string[] = [];
  for (let p = 0; p + 4 <= text.length; ) {
    const n = Number.parseInt(text.slice(p, p + 4), 16);
    expect(n).toBeLessThanOrEqual(MAX_PKT);
    if (n < 4) {
      p += 4;
      continue;
    }
    lines.push(text.slice(p + 4, p + n).replace(/\n$/, ""));
    p += n;
  }
  return lines;
}

/** POSTs a raw receive-pack body and returns the report lines. */
async function receive(url: string, body: Uint8Array): Promise<string[]> {
  const res = await fetch(`${url}/git-receive-pack`, { method: "POST", body: body as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/x-git-receive-pack-request" } });
  expect(res.status).toBe(200);
  return pktLines(Buffer.from(await res.arrayBuffer()));
}

/** A receive-pack body: commands (first with `caps`), flush, and the pack when something is written. */
function pushBody(commands: [string | null, string | null, string | Buffer][], caps = "report-status"): Buffer {
  const lines = commands.map(([o, n, name], i) =>
    pkt(Buffer.concat([Buffer.from(`${o ?? ZERO_OID} ${n ?? ZERO_OID} `), Buffer.from(name), Buffer.from(i === 0 ? `\0${caps}\n` : "\n")])),
  );
  return Buffer.concat([...lines, FLUSH, ...(commands.some(([, n]) => n !== null) ? [pack] : [])]);
}

const refNames = async (id: string) => (await srv.refs.read(id)).refs.map((r) => r.name);

describe("D/F rule: a ref cannot be created where another ref is its directory or lies under it", () => {
  it("refuses refs/heads/main/sub while refs/heads/main exists, and the reverse, with git's message; clones still work", async () => {
    const { id, url } = newRepo();
    await s.git(["push", url, "main", "HEAD:refs/heads/x/y"], { cwd: src });
    const under = await s.gitFail(["push", url, "HEAD:refs/heads/main/sub"], { cwd: src });
    expect(under.stderr).toContain("[remote rejected] HEAD -> main/sub (cannot lock ref 'refs/heads/main/sub': 'refs/heads/main' exists; cannot create 'refs/heads/main/sub')");
    const over = await s.gitFail(["push", url, "HEAD:refs/heads/x"], { cwd: src });
    expect(over.stderr).toContain("[remote rejected] HEAD -> x (cannot lock ref 'refs/heads/x': 'refs/heads/x/y' exists; cannot create 'refs/heads/x')");
    expect(await refNames(id)).toEqual(["refs/heads/main", "refs/heads/x/y"]);
    await s.git(["clone", "-q", url, s.path("df-clone")]);
  });

  it("refuses the later of two refs of one push that conflict with each other and applies the rest", async () => {
    const { id, url } = newRepo();
    const r = await s.gitFail(["push", url, "main", "HEAD:refs/tags/v1", "HEAD:refs/tags/v1/x"], { cwd: src });
    expect(r.stderr).toContain("(cannot lock ref 'refs/tags/v1/x': 'refs/tags/v1' exists; cannot create 'refs/tags/v1/x')");
    expect(await refNames(id)).toEqual(["refs/heads/main", "refs/tags/v1"]);
    await s.git(["clone", "-q", url, s.path("df-clone-2")]);
  });

  it("lets a push delete `a` and create `a/b` at once", async () => {
    const { id, url } = newRepo();
    await s.git(["push", url, "main", "HEAD:refs/heads/a"], { cwd: src });
    await s.git(["push", url, ":refs/heads/a", "HEAD:refs/heads/a/b"], { cwd: src });
    expect(await refNames(id)).toEqual(["refs/heads/a/b", "refs/heads/main"]);
  });

  it("lets at most one of two concurrent pushes creating `a` and `a/b` succeed", async () => {
    const { id, url } = newRepo();
    await s.git(["push", url, "main"], { cwd: src });
    const inner = srv.refs;
    srv.setRefStore(commitBarrier(inner));
    try {
      const results = await Promise.allSettled([s.git(["push", url, "HEAD:refs/heads/a"], { cwd: src }), s.git(["push", url, "HEAD:refs/heads/a/b"], { cwd: src })]);
      const lost = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      expect(lost).toHaveLength(1);
      expect(String(lost[0]!.reason.stderr)).toMatch(/cannot lock ref 'refs\/heads\/a(\/b)?': 'refs\/heads\/a(\/b)?' exists; cannot create/);
    } finally {
      srv.setRefStore(inner);
    }
    expect((await refNames(id)).length).toBe(2);
    await s.git(["clone", "-q", url, s.path("df-race-clone")]);
  });
});

describe("ref name length rule: names real git cannot store are refused; stored ones never break the advertisement", () => {
  it("refuses a component over 255 bytes or a name over 4096 bytes as a funny refname, and accepts 255", async () => {
    const { id, url } = newRepo();
    const long = `refs/heads/${"x".repeat(256)}`;
    const deep = `refs/heads/${Array.from({ length: 20 }, () => "y".repeat(250)).join("/")}`;
    const fine = `refs/heads/${"é".repeat(127)}`; // 254 bytes
    const lines = await receive(url, pushBody([[null, tip, "refs/heads/main"], [null, tip, long], [null, tip, deep], [null, tip, fine]]));
    expect(lines).toEqual([
      "unpack ok",
      "ok refs/heads/main",
      `ng ${long} funny refname: a component is longer than 255 bytes`,
      `ng ${deep} funny refname: longer than 4096 bytes`,
      `ok ${Buffer.from(fine).toString("latin1")}`,
    ]);
    expect(await refNames(id)).toEqual(["refs/heads/main", fine]);
    const r = await s.gitFail(["push", url, `HEAD:refs/heads/${"z".repeat(65_000)}`], { cwd: src });
    expect(r.stderr).toMatch(/funny refname/);
    await s.git(["push", url, "HEAD:refs/heads/after"], { cwd: src });
  });

  it("leaves out a stored ref whose advertised line would not fit a pkt-line, so fetch, push and deleting it still work", async () => {
    const { id, url } = newRepo();
    await s.git(["push", url, "main"], { cwd: src });
    const huge = `refs/heads/${"h".repeat(65_419)}`; // as long as a command line after the first allows
    const wide = `refs/tags/${"w".repeat(300)}`;
    // stored before the length rule existed
    expect(await srv.refs.commit(id, { updates: [{ name: huge, old: null, new: tip }, { name: wide, old: null, new: tip }], sizeDelta: 0, empty: false })).toEqual({ ok: true });
    for (const v of ["0", "2"]) {
      const listed = await s.gitText(["-c", `protocol.version=${v}`, "ls-remote", url], { cwd: src });
      expect(listed).toBe(`${tip}\tHEAD\n${tip}\trefs/heads/main\n${tip}\t${wide}`);
    }
    const info = await fetch(`${url}/info/refs?service=git-receive-pack`);
    expect(pktLines(Buffer.from(await info.arrayBuffer())).some((l) => l.includes("hhhh"))).toBe(false);
    await s.git(["push", url, "HEAD:refs/heads/next"], { cwd: src });
    // deleting the stored over-long refs works (the huge one is not advertised: delete it by its id)
    await s.git(["push", url, "--delete", wide], { cwd: src });
    expect(await receive(url, pushBody([[tip, null, "refs/heads/next"], [tip, null, huge]]))).toEqual(["unpack ok", "ok refs/heads/next", `ok ${huge}`]);
    expect(await refNames(id)).toEqual(["refs/heads/main"]);
  });
});

describe("report rule: the status report always frames, even when a reason would not fit a pkt-line", () => {
  it("shortens an over-long reason and still reports the refs that were applied", async () => {
    const { id, url } = newRepo();
    const long = `refs/heads/${"q".repeat(30_000)}`;
    const lines = await receive(url, pushBody([[null, tip, "refs/heads/main"], [tip, null, long]]));
    expect(lines.slice(0, 2)).toEqual(["unpack ok", "ok refs/heads/main"]);
    expect(lines[2]!.startsWith(`ng ${long} cannot lock ref '${long}`)).toBe(true);
    expect(lines).toHaveLength(3);
    expect(await refNames(id)).toEqual(["refs/heads/main"]);
  });
});

describe("UTF-8 rule: a ref name that is not valid UTF-8 is a funny refname and nothing is stored for it", () => {
  it("refuses it by its exact bytes and applies the other refs", async () => {
    const { id, url } = newRepo();
    const bad = Buffer.concat([Buffer.from("refs/heads/lat"), Buffer.from([0xe9])]);
    const lines = await receive(url, pushBody([[null, tip, bad], [null, tip, "refs/heads/main"]]));
    expect(lines).toEqual(["unpack ok", "ng refs/heads/lat\xe9 funny refname", "ok refs/heads/main"]);
    expect(await refNames(id)).toEqual(["refs/heads/main"]);
  });

  it("tells the git CLI so (its report matches the ref it sent)", async () => {
    const { id, url } = newRepo();
    const r = await new Promise<{ code: number | null; stderr: string }>((ok) => {
      const p = spawn("sh", ["-c", `git push "$URL" main "HEAD:refs/heads/lat$(printf '\\351')"`], { cwd: src, env: { ...s.env, URL: url } });
      let stderr = "";
      p.stderr.on("data", (d: Buffer) => (stderr += d.toString("latin1")));
      p.on("close", (code) => ok({ code, stderr }));
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("(funny refname)");
    expect(r.stderr).not.toMatch(/did not receive|no status/);
    expect(await refNames(id)).toEqual(["refs/heads/main"]);
  });
});

describe("gzip rule: a body that claims gzip and is not answers 400 with a plain-text reason", () => {
  for (const service of ["git-upload-pack", "git-receive-pack"]) {
    it(service, async () => {
      const { url } = newRepo();
      const res = await fetch(`${url}/${service}`, {
        method: "POST",
        headers: { "content-encoding": "gzip", "content-type": `application/x-${service}-request` },
        body: "notgzip",
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      // the reason is zlib's (Node's DecompressionStream keeps it in the error's cause)
      expect(await res.text()).toMatch(/not valid gzip \(Content-Encoding: gzip\): \S/);
    });
  }

  it("a gzip stream cut short names its reason too", async () => {
    const { url } = newRepo();
    const { gzipSync } = await import("node:zlib");
    const cut = gzipSync(Buffer.concat([pkt("command=ls-refs\n"), FLUSH])).subarray(0, 14);
    const res = await fetch(`${url}/git-upload-pack`, { method: "POST", headers: { "content-encoding": "gzip", "git-protocol": "version=2", "content-type": "application/x-git-upload-pack-request" }, body: cut });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/not valid gzip \(Content-Encoding: gzip\): \S/);
  });
});

describe("client-gone rule: a request body that fails while it is read (the client went away) is a 400, never an internal error", () => {
  /** A body that sends `first` and then fails as Node's does when the client's socket closes. */
  const failingBody = (first: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(first);
      },
      pull(c) {
        c.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
      },
    });
  for (const [service, first, version] of [
    ["git-upload-pack", pkt(`want ${"1".repeat(40)}\n`), "version=0"],
    ["git-upload-pack", pkt("command=fetch\n"), "version=2"],
    ["git-receive-pack", pkt(`${ZERO_OID} ${"1".repeat(40)} refs/heads/x\0report-status\n`), "version=0"],
  ] as const) {
    it(`${service} (${version})`, async () => {
      const { id } = newRepo();
      const req = new Request(`http://git.test/${id}.git/${service}`, {
        method: "POST",
        headers: { "content-type": `application/x-${service}-request`, "git-protocol": version },
        body: failingBody(first),
        duplex: "half",
      } as RequestInit);
      const res = await serveGit({ repoId: id, objects: srv.objects, refs: srv.refs }, req, `/${service}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toBe("the request body could not be read: aborted\n");
      expect((await srv.refs.read(id)).refs).toEqual([]);
    });
  }
});

describe("a clone receives only objects a wanted ref reaches (as git upload-pack sends)", () => {
  /** A work tree cloned from `url`, with one commit adding `file` = `content` on top; returns the blob id. */
  async function commitFile(dir: string, file: string, content: string): Promise<string> {
    await s.git(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", file], { cwd: dir }).catch(() => {});
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${dir}/${file}`, content);
    await s.git(["add", file], { cwd: dir });
    await s.git(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", `add ${file}`], { cwd: dir });
    return s.gitText(["rev-parse", `HEAD:${file}`], { cwd: dir });
  }
  const has = async (dir: string, oid: string) => (await s.gitFail(["cat-file", "-e", oid], { cwd: dir }).then(() => false, () => true));
  let n = 0;
  const freshClone = async (url: string, args: string[] = []) => {
    const dir = s.path(`reach-clone-${n++}`);
    await s.git(["clone", "-q", ...args, url, dir]);
    await s.git(["fsck", "--full", "--strict", "--no-dangling"], { cwd: dir });
    return dir;
  };

  it("history a force-push replaced, and branches and tags deleted, are not in a fresh clone; the repository is marked", async () => {
    const { id, url } = newRepo();
    const work = s.path(`reach-work-${id}`);
    await s.git(["clone", "-q", src, work]);
    await s.git(["push", "-q", url, "main"], { cwd: work });
    expect((await srv.refs.read(id)).unreachable).toBeFalsy();
    const secret = await commitFile(work, "secret.txt", `AWS_SECRET=${id}-hunter2\n`);
    await s.git(["push", "-q", url, "main"], { cwd: work });
    await s.git(["reset", "-q", "--hard", "HEAD~1"], { cwd: work });
    await s.git(["push", "-q", "-f", url, "main"], { cwd: work });
    await s.git(["checkout", "-q", "-b", "gone"], { cwd: work });
    const onBranch = await commitFile(work, "branch.txt", `only on a deleted branch ${id}\n`);
    await s.git(["push", "-q", url, "gone", "gone:refs/tags/gone-tag"], { cwd: work });
    await s.git(["push", "-q", url, ":gone", ":refs/tags/gone-tag"], { cwd: work });
    expect((await srv.refs.read(id)).unreachable).toBe(true);
    for (const protocol of ["2", "0"]) {
      const dir = await freshClone(url, ["-c", `protocol.version=${protocol}`]);
      expect([await has(dir, secret), await has(dir, onBranch)], `protocol v${protocol}`).toEqual([false, false]);
      expect(await s.gitText(["rev-parse", "HEAD"], { cwd: dir })).toBe(await s.gitText(["rev-parse", "main"], { cwd: work }));
    }
  });

  it("a clone of one branch gets that branch's objects only; a clone of everything in a repository never rewound gets all of it", async () => {
    const { id, url } = newRepo();
    const work = s.path(`reach-one-${id}`);
    await s.git(["clone", "-q", src, work]);
    await s.git(["checkout", "-q", "-b", "side"], { cwd: work });
    const sideOnly = await commitFile(work, "side.txt", `side ${id}\n`);
    await s.git(["push", "-q", url, "main", "side"], { cwd: work });
    expect((await srv.refs.read(id)).unreachable).toBeFalsy();
    const one = await freshClone(url, ["--single-branch", "--branch", "main"]);
    expect(await has(one, sideOnly)).toBe(false);
    const all = await freshClone(url);
    expect(await has(all, sideOnly)).toBe(true);
  });
});

describe("type rule: every link names an object of the type it says (git's connectivity walk), else nothing is applied and no pack is kept", () => {
  /** Writes an object of `type` with exactly these bytes into the scratch repository `dir` (git accepts any with --literally). */
  const literal = async (dir: string, type: string, bytes: Buffer | string) => (await s.git(["hash-object", "-t", type, "--literally", "-w", "--stdin"], { cwd: dir, input: bytes })).stdout.toString().trim();
  const treeEntry = (mode: string, name: string, oid: string) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, "hex")]);
  const packOf = async (dir: string, oids: string[]) => (await s.git(["pack-objects", "--stdout", "-q"], { cwd: dir, input: `${oids.join("\n")}\n` })).stdout;
  const body = (commands: [string | null, string, string][], p: Buffer) =>
    Buffer.concat([...commands.map(([o, n, name], i) => pkt(Buffer.from(`${o ?? ZERO_OID} ${n} ${name}${i === 0 ? "\0report-status" : ""}\n`))), FLUSH, p]);
  const who = "A U Thor <author@example.com> 1700000000 +0000";

  it("refuses a tree entry of the wrong type (a stored blob named as a directory, a tree of the pack named as a file), a tag whose type line lies, a parent that is a tree, and a commit whose tree is a blob", async () => {
    const dir = s.path("typed");
    await s.git(["init", "-q", dir]);
    const blob = await literal(dir, "blob", "x\n");
    const tree = await literal(dir, "tree", treeEntry("100644", "f", blob));
    const good = await literal(dir, "commit", `tree ${tree}\nauthor ${who}\ncommitter ${who}\n\ngood\n`);
    const r = newRepo();
    expect(await receive(r.url, body([[null, good, "refs/heads/main"]], await packOf(dir, [blob, tree, good])))).toEqual(["unpack ok", "ok refs/heads/main"]);
    const packsBefore = (await srv.objects.list(r.id)).length;

    const commitOn = (t: string, extra = "") => literal(dir, "commit", `tree ${t}\n${extra}author ${who}\ncommitter ${who}\n\nbad\n`);
    const blobAsTree = await literal(dir, "tree", treeEntry("40000", "d", blob));
    const newTree = await literal(dir, "tree", treeEntry("100644", "h", await literal(dir, "blob", "h\n")));
    const treeAsBlobInPack = await literal(dir, "tree", treeEntry("100644", "i", newTree)); // names a tree of the same pack as a file
    const cases: { name: string; tip: string; objects: string[] }[] = [];
    const add = async (name: string, t: string, objects: string[], extra = "") => {
      const c = await commitOn(t, extra);
      cases.push({ name, tip: c, objects: [...objects, c] });
    };
    await add("blob named as a directory", blobAsTree, [blobAsTree]);
    await add("tree of the pack named as a file", treeAsBlobInPack, [treeAsBlobInPack, newTree]);
    await add("parent that is a tree", tree, [], `parent ${tree}\n`);
    await add("commit whose tree is a blob", blob, []);
    const tag = await literal(dir, "tag", `object ${blob}\ntype commit\ntag lie\ntagger ${who}\n\nlie\n`);
    cases.push({ name: "tag whose type line lies", tip: tag, objects: [tag] });

    for (const c of cases) {
      const ref = c.name === "tag whose type line lies" ? "refs/tags/lie" : "refs/heads/bad";
      const report = await receive(r.url, body([[null, c.tip, ref]], await packOf(dir, c.objects)));
      expect(report, c.name).toEqual(["unpack ok", `ng ${ref} missing necessary objects`]);
    }
    expect(await refNames(r.id)).toEqual(["refs/heads/main"]);
    expect((await srv.objects.list(r.id)).length).toBe(packsBefore); // no refused pack stays behind
    // the repository still clones, and git's fsck finds it whole
    const clone = s.path("typed-clone");
    await s.git(["clone", "-q", r.url, clone]);
    await s.git(["fsck", "--strict"], { cwd: clone });
  });
});

describe("push section rule: the commands and options before the pack are bounded as a fetch request is (maxRequestBytes): more is a 400, nothing applied", () => {
  for (const [what, body] of [
    ["commands", () => Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/c0\0report-status\n`), ...Array.from({ length: 200 }, (_, i) => pkt(`${ZERO_OID} ${tip} refs/heads/c${i + 1}\n`)), FLUSH, pack])],
    ["push options", () => Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/o\0report-status push-options\n`), FLUSH, ...Array.from({ length: 400 }, (_, i) => pkt(`opt${i}=${"v".repeat(40)}\n`)), FLUSH, pack])],
  ] as const) {
    it(what, async () => {
      const { id, url } = newRepo();
      srv.setLimits({ maxRequestBytes: 8 * 1024 });
      try {
        const res = await fetch(`${url}/git-receive-pack`, { method: "POST", body: body(), headers: { "Content-Type": "application/x-git-receive-pack-request" } });
        expect(res.status).toBe(400);
        expect(await res.text()).toBe(`push commands and options exceed ${8 * 1024} bytes\n`);
      } finally {
        srv.setLimits({});
      }
      expect((await srv.refs.read(id)).refs).toEqual([]);
    });
  }
});

describe("push options rule: at most 100 in one push; more are refused in the push's report, nothing applied", () => {
  it("a push with 100 options applies; with 101 every ref is refused with the reason, which the git CLI shows", async () => {
    const r = newRepo();
    const opts = (n: number) => Array.from({ length: n }, (_, i) => ["-o", `opt${i}`]).flat();
    await s.git(["push", "-q", ...opts(100), r.url, "main:refs/heads/fine"], { cwd: src });
    const refused = await s.gitFail(["push", ...opts(101), r.url, "main:refs/heads/over"], { cwd: src });
    expect(refused.stderr).toContain("too many push options (at most 100)");
    expect(await refNames(r.id)).toEqual(["refs/heads/fine"]);
  });
});

describe("a storage failure while a pack is stored is reported without the server's paths", () => {
  it("a repository whose directory cannot be made (a file in its place, as when it is deleted under a push): `unpack failed` names the error code, not the path", async () => {
    const { id } = newRepo();
    mkdirSync(s.path("data", "git"), { recursive: true });
    writeFileSync(s.path("data", "git", id), "not a directory");
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const body = Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`), FLUSH, pack]);
      const res = await fetch(`${srv.url}/${id}.git/git-receive-pack`, { method: "POST", body, headers: { "Content-Type": "application/x-git-receive-pack-request" } });
      const lines = pktLines(Buffer.from(await res.arrayBuffer()));
      expect(lines[0]).toMatch(/^unpack unpack failed: object storage failed \((ENOTDIR|EEXIST)\)$/);
      expect(lines.join("\n")).not.toContain(s.path("data"));
      expect(lines).toContain("ng refs/heads/main unpacker error");
      expect(errors).toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
    expect((await srv.refs.read(id)).refs).toEqual([]);
  });

  it("a fetch whose pack cannot be read (a directory in its place) reports the error code on the error band, not the path", async () => {
    const { id, url } = newRepo();
    await s.git(["push", "-q", url, "main"], { cwd: src });
    // the index stays readable, the pack is a directory: the failure comes while the pack streams
    const packDir = s.path("data", "git", id, "pack");
    for (const f of readdirSync(packDir).filter((n) => n.endsWith(".pack"))) {
      rmSync(join(packDir, f));
      mkdirSync(join(packDir, f));
    }
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const failed = await s.git(["clone", "-q", url, s.path(`clone-${id}`)]).then(
        () => null,
        (e: { stderr?: string }) => e.stderr ?? "",
      );
      expect(failed).toMatch(/object storage failed \(EISDIR\)/);
      expect(failed).not.toContain(s.path("data"));
    } finally {
      errors.mockRestore();
    }
  });
});

describe("AGit rule: a push to refs/for/<branch> (Gitea opens a pull request, stores no ref) is refused, nothing stored", () => {
  it("the command answers ng with the reason; other refs of the push apply", async () => {
    const { id } = newRepo();
    const body = Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`), pkt(`${ZERO_OID} ${tip} refs/for/main\n`), FLUSH, pack]);
    const res = await fetch(`${srv.url}/${id}.git/git-receive-pack`, { method: "POST", body, headers: { "Content-Type": "application/x-git-receive-pack-request" } });
    const lines = pktLines(Buffer.from(await res.arrayBuffer()));
    expect(lines).toEqual(["unpack ok", "ok refs/heads/main", "ng refs/for/main pull requests (AGit refs/for/...) are not supported by this server"]);
    expect((await srv.refs.read(id)).refs.map((r) => r.name)).toEqual(["refs/heads/main"]);
  });
});

describe("shallow rule: a push from a shallow clone whose history the repository lacks is refused as git's receive-pack refuses it", () => {
  it("with `shallow` lines and missing history: `shallow update not allowed`; without them: `missing necessary objects`; nothing stored", async () => {
    const parent = await s.gitText(["rev-parse", "main~1"], { cwd: src });
    // the tip commit's own objects, not its parent's: what a depth-1 clone has
    const cut = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: `main\n^${parent}\n` })).stdout;
    for (const [shallow, reason] of [[true, "shallow update not allowed"], [false, "missing necessary objects"]] as const) {
      const { id } = newRepo();
      const body = Buffer.concat([...(shallow ? [pkt(`shallow ${parent}\n`)] : []), pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`), FLUSH, cut]);
      const res = await fetch(`${srv.url}/${id}.git/git-receive-pack`, { method: "POST", body, headers: { "Content-Type": "application/x-git-receive-pack-request" } });
      expect(pktLines(Buffer.from(await res.arrayBuffer()))).toEqual(["unpack ok", `ng refs/heads/main ${reason}`]);
      expect((await srv.refs.read(id)).refs).toEqual([]);
    }
  });
});
