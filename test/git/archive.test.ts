/**
 * Source archives against git's own `git archive`: the tar is byte for byte what git writes
 * (directories, executables, links with short and long targets, paths past ustar's 100 and 255
 * bytes, a submodule, a name past ASCII, the commit in the pax global header, git's 10 KiB
 * records), the tar.gz is that tar, the zip holds the same files with the same modes, and the
 * bundle is one `git bundle verify` accepts and `git clone` makes the commit's history from.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, lstatSync, readlinkSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleArchive, tarArchive, tarGzArchive, ZIP_MEMBERS_PER_TURN, zipArchive } from "../../functions/git/repo/archive.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("archive-");
let srv: GitServer;
let src: string;

const bytesOf = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await makeHistory(s, src, { commits: 5, files: 12 });
  const deep = `${"long-directory-name-".repeat(6)}/${"x".repeat(90)}`;
  mkdirSync(join(src, deep), { recursive: true });
  writeFileSync(join(src, deep, "file-with-a-long-name.txt"), "deep\n"); // > 100 bytes: prefix + name
  const deeper = `${"d".repeat(120)}/${"e".repeat(120)}`;
  mkdirSync(join(src, deeper), { recursive: true });
  writeFileSync(join(src, deeper, `${"f".repeat(110)}.txt`), "deeper\n"); // no split fits: a pax path
  writeFileSync(join(src, "run.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(join(src, "run.sh"), 0o755);
  symlinkSync("run.sh", join(src, "link"));
  symlinkSync("t".repeat(150), join(src, "long-link")); // a target past 100 bytes: a pax linkpath
  writeFileSync(join(src, "empty.txt"), "");
  writeFileSync(join(src, "café.txt"), "a name past ASCII\n");
  await s.git(["add", "-A"], { cwd: src });
  // a submodule entry (a gitlink): git archive writes it as an empty directory
  await s.git(["update-index", "--add", "--cacheinfo", `160000,${"a".repeat(40)},vendor/lib`], { cwd: src });
  await s.git(["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "archive cases"], { cwd: src, env: { GIT_COMMITTER_DATE: "1750000000 +0200" } });
  srv.refs.create("ar");
  await s.git(["push", "-q", `${srv.url}/ar.git`, "main"], { cwd: src });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

describe("archives", () => {
  it("commit time rule: a time ustar cannot hold is git's — a negative one wraps as an unsigned 64-bit number, a huge one saturates, both in a pax record; a zip of a time before 1980 is still made", async () => {
    const tree = await s.gitText(["rev-parse", "main^{tree}"], { cwd: src });
    for (const time of ["-5", "99999999999999999999", "0"]) {
      const raw = `tree ${tree}\nauthor A <a@example.com> 1700000000 +0000\ncommitter C <c@example.com> ${time} +0000\n\nat ${time}\n`;
      const commit = (await s.git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], { cwd: src, input: raw })).stdout.toString().trim();
      await s.git(["push", "-q", `${srv.url}/ar.git`, `${commit}:refs/heads/time${time.length}`], { cwd: src });
      const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
      const want = (await s.git(["archive", "--format=tar", "--prefix=ar/", commit], { cwd: src })).stdout;
      expect((await bytesOf(tarArchive(repo, commit, "ar/"))).equals(want), time).toBe(true);
      const zip = s.path(`time${time.length}.zip`);
      writeFileSync(zip, await bytesOf(zipArchive(repo, commit, "ar/")));
      expect(execFileSync("unzip", ["-tq", zip]).toString(), time).toContain("No errors");
    }
  });

  it("tar rule: the tar is byte for byte what `git archive --format=tar --prefix=<repo>/` writes; tar.gz is that tar", async () => {
    const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
    for (const rev of ["main", "main~2"]) {
      const commit = await s.gitText(["rev-parse", rev], { cwd: src });
      const want = (await s.git(["archive", "--format=tar", "--prefix=ar/", commit], { cwd: src })).stdout;
      const got = await bytesOf(tarArchive(repo, commit, "ar/"));
      expect(got.length, rev).toBe(want.length);
      expect(got.equals(want), rev).toBe(true);
      expect(gunzipSync(await bytesOf(tarGzArchive(repo, commit, "ar/"))).equals(want), rev).toBe(true);
    }
  });

  it("zip rule: the zip's comment is the commit id, as in `git archive --format=zip` (unzip -z shows the same), and unzip finds no error", async () => {
    const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
    const commit = await s.gitText(["rev-parse", "main"], { cwd: src });
    const ours = s.path("comment-ours.zip");
    const gits = s.path("comment-git.zip");
    writeFileSync(ours, await bytesOf(zipArchive(repo, commit, "ar/")));
    writeFileSync(gits, (await s.git(["archive", "--format=zip", "--prefix=ar/", commit], { cwd: src })).stdout);
    const comment = (file: string) => execFileSync("unzip", ["-z", file]).toString().split("\n").slice(1).join("\n").trim();
    expect(comment(gits)).toBe(commit);
    expect(comment(ours)).toBe(commit);
    expect(execFileSync("unzip", ["-tq", ours]).toString()).toContain("No errors");
  });

  it("path rule: with paths, the tar is what `git archive <commit> -- <paths>` writes (their directories along, nothing else)", async () => {
    const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
    const commit = await s.gitText(["rev-parse", "main"], { cwd: src });
    for (const paths of [["dir0"], ["dir1/sub0", "run.sh"], ["dir2/sub1/file7.txt", "vendor/lib", "link"]]) {
      const want = (await s.git(["archive", "--format=tar", "--prefix=ar/", commit, "--", ...paths], { cwd: src })).stdout;
      const got = await bytesOf(tarArchive(repo, commit, "ar/", paths));
      expect(got.equals(want), paths.join(" ")).toBe(true);
    }
  });

  it("a zip of thousands of small files gives the event loop a turn every ZIP_MEMBERS_PER_TURN members (other requests never wait for the whole archive)", async () => {
    const many = s.path("many");
    mkdirSync(many, { recursive: true });
    await s.git(["init", "-q", "-b", "main"], { cwd: many });
    for (let i = 0; i < 3000; i++) writeFileSync(join(many, `f${i}.txt`), `${i % 10}`);
    await s.git(["add", "-A"], { cwd: many });
    await s.git(["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "many"], { cwd: many });
    srv.refs.create("many");
    await s.git(["push", "-q", `${srv.url}/many.git`, "main"], { cwd: many });
    const repo = await Repository.open({ repoId: "many", objects: srv.objects, refs: srv.refs });
    const commit = await s.gitText(["rev-parse", "main"], { cwd: many });
    await bytesOf(zipArchive(repo, commit, "m/")); // objects cached: what is left is the archive's own work
    let turns = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const zip = await bytesOf(zipArchive(repo, commit, "m/"));
    spinning = false;
    expect(zip.length).toBeGreaterThan(3000 * 30);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(3000 / ZIP_MEMBERS_PER_TURN) - 1);
  });

  it("zip rule: the zip holds what git's does — every file, directory and link with its mode and content", async () => {
    const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
    const commit = await s.gitText(["rev-parse", "main"], { cwd: src });
    const ours = s.path("ours.zip");
    writeFileSync(ours, await bytesOf(zipArchive(repo, commit, "ar/")));
    const theirs = s.path("theirs.zip");
    writeFileSync(theirs, (await s.git(["archive", "--format=zip", "--prefix=ar/", commit], { cwd: src })).stdout);
    const listing = (zip: string) =>
      execFileSync("unzip", ["-Z", "-l", zip])
        .toString("latin1")
        .split("\n")
        .filter((l) => /^[-dl]r/.test(l))
        .map((l) => {
          const f = l.trim().split(/\s+/);
          return `${f[0]![0]} ${f[3]} ${f.slice(9).join(" ")}`; // kind, size, name (modes: see the unpacked trees)
        })
        .sort();
    expect(listing(ours).filter((l) => /^[\x20-\x7e]*$/.test(l))).toEqual(listing(theirs).filter((l) => /^[\x20-\x7e]*$/.test(l)));
    // members are deflated where that makes them smaller, else stored (empty files, directories, links)
    expect(execFileSync("unzip", ["-tq", ours]).toString()).toContain("No errors");
    const methods = execFileSync("unzip", ["-Z", "-l", ours]).toString("latin1").split("\n").filter((l) => /^[-dl]r/.test(l)).map((l) => l.trim().split(/\s+/));
    expect(methods.some((f) => f[6] === "defN")).toBe(true);
    for (const f of methods) {
      if (f[6] === "defN") expect(Number(f[5]), f.join(" ")).toBeLessThan(Number(f[3]));
      else expect(f[6], f.join(" ")).toBe("stor");
      if (f[3] === "0") expect(f[6], f.join(" ")).toBe("stor");
    }
    const unpack = (zip: string, dir: string) => execFileSync("unzip", ["-q", zip, "-d", dir]);
    unpack(ours, s.path("ours"));
    unpack(theirs, s.path("theirs"));
    const tree = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: "utf8" })
        .sort()
        .map((p) => {
          const full = join(dir, p);
          const st = lstatSync(full);
          const body = st.isSymbolicLink() ? `-> ${readlinkSync(full)}` : st.isFile() ? readFileSync(full).toString("base64") : "dir";
          return `${p} ${(st.mode & 0o777).toString(8)} ${body}`;
        });
    expect(tree(s.path("ours"))).toEqual(tree(s.path("theirs")));
  });

  it("large-file rule: files over 1 MiB stored whole go into the tar and zip as they inflate (never built: the reader's build limit is below their size), the tar still git's byte for byte", async () => {
    const big = s.path("big-src");
    await s.git(["init", "-q", "-b", "main", big]);
    writeFileSync(join(big, "blob.bin"), randomBytes(3 * 1024 * 1024 + 5));
    writeFileSync(join(big, "tool"), randomBytes(2 * 1024 * 1024 + 511));
    chmodSync(join(big, "tool"), 0o755);
    // converted on the way out (CRLF): built whole, as git converts what is under core.bigFileThreshold
    writeFileSync(join(big, "notes.txt"), "a line of text\n".repeat(100_000));
    writeFileSync(join(big, ".gitattributes"), "*.txt text eol=crlf\n");
    writeFileSync(join(big, "small.txt"), "small\n");
    await s.git(["add", "-A"], { cwd: big });
    await s.git(["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "large files"], { cwd: big });
    srv.refs.create("arbig");
    await s.git(["push", "-q", `${srv.url}/arbig.git`, "main"], { cwd: big });
    const commit = await s.gitText(["rev-parse", "main"], { cwd: big });
    const open = () => Repository.open({ repoId: "arbig", objects: srv.objects, refs: srv.refs, reader: { maxObjectBytes: 2 * 1024 * 1024 } });
    await expect((await open()).readBlob(await s.gitText(["rev-parse", "main:blob.bin"], { cwd: big }))).rejects.toThrow(/exceeds the limit/);

    const want = (await s.git(["archive", "--format=tar", "--prefix=big/", commit], { cwd: big })).stdout;
    const got = await bytesOf(tarArchive(await open(), commit, "big/"));
    expect(got.length).toBe(want.length);
    expect(got.equals(want)).toBe(true);
    expect(gunzipSync(await bytesOf(tarGzArchive(await open(), commit, "big/"))).equals(want)).toBe(true);

    const ours = s.path("big-ours.zip");
    writeFileSync(ours, await bytesOf(zipArchive(await open(), commit, "big/")));
    expect(execFileSync("unzip", ["-tq", ours]).toString()).toContain("No errors");
    const theirs = s.path("big-theirs.zip");
    writeFileSync(theirs, (await s.git(["archive", "--format=zip", "--prefix=big/", commit], { cwd: big })).stdout);
    execFileSync("unzip", ["-q", ours, "-d", s.path("big-ours")]);
    execFileSync("unzip", ["-q", theirs, "-d", s.path("big-theirs")]);
    for (const f of ["blob.bin", "tool", "notes.txt", "small.txt", ".gitattributes"]) {
      expect(readFileSync(s.path("big-ours", "big", f)).equals(readFileSync(s.path("big-theirs", "big", f))), f).toBe(true);
      expect(lstatSync(s.path("big-ours", "big", f)).mode & 0o777, f).toBe(lstatSync(s.path("big-theirs", "big", f)).mode & 0o777);
    }
  });

  it("bundle rule: git verifies the bundle, and a clone of it holds exactly the commit's history under refs/heads/bundle", async () => {
    const repo = await Repository.open({ repoId: "ar", objects: srv.objects, refs: srv.refs });
    const commit = await s.gitText(["rev-parse", "main~1"], { cwd: src });
    const file = s.path("main.bundle");
    writeFileSync(file, await bytesOf(bundleArchive(repo, commit)));
    expect((await s.git(["bundle", "list-heads", file])).stdout.toString()).toBe(`${commit} refs/heads/bundle\n${commit} HEAD\n`);
    const dst = s.path("from-bundle");
    await s.git(["clone", "-q", "--bare", file, dst]);
    await s.git(["fsck", "--full", "--strict"], { cwd: dst });
    expect(await s.gitText(["rev-parse", "refs/heads/bundle"], { cwd: dst })).toBe(commit);
    const objects = async (dir: string, rev: string) => (await s.gitText(["rev-list", "--objects", rev], { cwd: dir })).split("\n").sort();
    expect(await objects(dst, "bundle")).toEqual(await objects(src, commit));
  });
});
