/**
 * Git over smart HTTP end to end on BOTH targets (Node + embedded file + DATA_DIR; the Worker
 * under workerd + sqld + miniflare's local R2), with the real git CLI: push of branches and tags,
 * clone byte for byte, fetch of only what is new, shallow clone, force-push, delete, a push of
 * thousands of commits, concurrent pushes, `git fsck --full` after every scenario, Gitea's auth
 * rules, the repository row (`empty`, `size`), the activity rows, and the round trips of a push.
 */
import { readdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { createClient } from "@libsql/client";
import { AUTO_PACK_LIMIT } from "../../functions/services/git-maintenance.ts";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";
import { fastImportStream, makeHistory, Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-git-");
afterAll(() => s.cleanup());

/** `git fsck --full` must pass without a single error line. */
async function fsck(dir: string): Promise<void> {
  const r = await s.git(["fsck", "--full", "--no-dangling"], { cwd: dir });
  expect(r.stderr).not.toMatch(/error|missing|broken|bad/i);
}

/** Every object reachable from `revs`, with type and content, sorted by id. */
async function objectDump(dir: string, revs: string[] = ["--all"]): Promise<Buffer> {
  const ids = [...new Set((await s.gitText(["rev-list", "--objects", ...revs], { cwd: dir })).split("\n").filter(Boolean).map((l) => l.slice(0, 40)))].sort();
  return (await s.git(["cat-file", "--batch"], { cwd: dir, input: `${ids.join("\n")}\n` })).stdout;
}

/** A clone URL with credentials in it. */
const r2 = (url: string, user: string, secret: string) => url.replace("://", `://${encodeURIComponent(user)}:${encodeURIComponent(secret)}@`);

const refsOf = (dir: string, pattern = "refs/heads refs/tags") => s.gitText(["for-each-ref", "--format=%(objectname) %(refname)", ...pattern.split(" ")], { cwd: dir });

for (const target of targets()) {
  describe(`git over HTTP on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    const host = target.url.replace(/^http:\/\//, "");

    async function newUser(scopes = ["all"]) {
      const name = uniqName("gu");
      const password = "git-password-1";
      await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password, must_change_password: false } });
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes } });
      const token = (await tok.json()).sha1 as string;
      return { name, password, token, tokenFor: async (sc: string[]) => (await (await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes: sc } })).json()).sha1 as string };
    }
    async function newRepo(owner: { name: string; token: string }, opts: Record<string, unknown> = {}) {
      const name = uniqName("gr");
      const res = await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, ...opts } });
      expect(res.status).toBe(201);
      return { name, full: `${owner.name}/${name}`, url: `http://${host}/${owner.name}/${name}.git`, authed: (user: string, secret: string) => `http://${encodeURIComponent(user)}:${encodeURIComponent(secret)}@${host}/${owner.name}/${name}.git` };
    }
    const repoJson = async (full: string, token: string) => (await call("GET", `/api/v1/repos/${full}`, { headers: tokenAuth(token) })).json();

    it("pushes branches and tags, clones them byte for byte, fetches only what is new, records the push", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const push = r.authed(u.name, u.token);
      const src = s.path(`${target.name}-src`);
      await makeHistory(s, src, { commits: 60, files: 20 });
      await s.git(["branch", "feature", "main~20"], { cwd: src });
      await s.git(["tag", "light", "main~10"], { cwd: src });
      await s.git(["tag", "-a", "v1.0", "-m", "release 1.0", "main~5"], { cwd: src });
      await s.git(["push", push, "main", "feature", "light", "v1.0"], { cwd: src });

      const after = await repoJson(r.full, u.token);
      expect(after.empty).toBe(false);
      expect(after.default_branch).toBe("main");
      expect(after.size).toBeGreaterThan(0);

      const mirror = s.path(`${target.name}-mirror`);
      await s.git(["clone", "--mirror", push, mirror]);
      await fsck(mirror);
      expect(await refsOf(mirror)).toBe(await refsOf(src));
      expect((await objectDump(mirror)).equals(await objectDump(src))).toBe(true);

      // three new commits: the fetch carries exactly the new objects
      const work = s.path(`${target.name}-work`);
      await s.git(["clone", push, work]);
      const before = await s.gitText(["rev-parse", "main"], { cwd: src });
      await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 3, from: before, startMark: 500, seed: 9, time: 1800000000 }) });
      await s.git(["push", push, "main"], { cwd: src });
      const expected = (await s.gitText(["rev-list", "--objects", "main", `^${before}`], { cwd: src })).split("\n").length;
      await s.git(["config", "fetch.unpackLimit", "1"], { cwd: work });
      const packsBefore = new Set(readdirSync(`${work}/.git/objects/pack`));
      await s.git(["fetch", "origin"], { cwd: work });
      const newPack = readdirSync(`${work}/.git/objects/pack`).find((f) => f.endsWith(".idx") && !packsBefore.has(f))!;
      const verify = await s.gitText(["verify-pack", "-v", `.git/objects/pack/${newPack}`], { cwd: work });
      expect(verify.split("\n").filter((l) => /^[0-9a-f]{40} (commit|tree|blob|tag) /.test(l)).length).toBe(expected);
      await fsck(work);

      // Gitea's activity rows: new branch (CreateRef + PushCommits), tags, then the update
      const feeds = (await (await call("GET", `/api/v1/repos/${r.full}/activities/feeds?limit=50`, { headers: tokenAuth(u.token) })).json()) as { op_type: string; ref_name: string; content: string }[];
      const ops = feeds.map((f) => `${f.op_type} ${f.ref_name}`).reverse();
      expect(ops).toEqual([
        "create_repo ",
        "commit_repo refs/heads/main",
        "commit_repo refs/heads/main",
        "commit_repo refs/heads/feature",
        "commit_repo refs/heads/feature",
        "push_tag refs/tags/light",
        "push_tag refs/tags/v1.0",
        "commit_repo refs/heads/main",
      ]);
      // a new tag names its commit as the head, compared from the zero id (Gitea's push.go)
      const tagged = JSON.parse(feeds.find((f) => f.ref_name === "refs/tags/v1.0")!.content);
      const v1 = await s.gitText(["rev-parse", "v1.0"], { cwd: src });
      expect(tagged).toMatchObject({ Commits: [], Len: 0, CompareURL: `${r.full}/compare/${"0".repeat(40)}...${v1}`, HeadCommit: { Sha1: await s.gitText(["rev-parse", "v1.0^{commit}"], { cwd: src }) } });
      const last = JSON.parse(feeds[0]!.content);
      expect(last).toMatchObject({ Len: 3, CompareURL: `${r.full}/compare/${before}...${await s.gitText(["rev-parse", "main"], { cwd: src })}` });
      expect(last.Commits).toHaveLength(3);
      expect(last.HeadCommit.Sha1).toBe(await s.gitText(["rev-parse", "main"], { cwd: src }));
    });

    it("serves shallow clones, force-pushes and deletes (never the default branch)", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const push = r.authed(u.name, u.token);
      const src = s.path(`${target.name}-force`);
      await makeHistory(s, src, { commits: 30, files: 10 });
      await s.git(["branch", "topic"], { cwd: src });
      await s.git(["push", push, "main", "topic"], { cwd: src });

      const shallow = s.path(`${target.name}-shallow`);
      await s.git(["clone", "--depth", "1", r.url, shallow]);
      expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: shallow })).toBe("1");
      await fsck(shallow);
      expect((await objectDump(shallow, ["HEAD^{tree}"])).equals(await objectDump(src, ["main^{tree}"]))).toBe(true);

      await s.git(["reset", "-q", "--hard", "main~2"], { cwd: src });
      await s.git(["commit", "-q", "--allow-empty", "-m", "rewritten"], { cwd: src });
      const refused = await s.gitFail(["push", push, "main"], { cwd: src });
      expect(refused.stderr).toMatch(/\[rejected\].*(non-fast-forward|fetch first)/);
      await s.git(["push", "--force", push, "main"], { cwd: src });
      await s.git(["push", push, "--delete", "topic"], { cwd: src });
      const head = await s.gitFail(["push", push, "--delete", "main"], { cwd: src });
      expect(head.stderr).toMatch(/remote rejected.*main \(branch main is the default branch and cannot be deleted\)/);

      const dst = s.path(`${target.name}-force-dst`);
      await s.git(["clone", r.url, dst]);
      await fsck(dst);
      expect(await s.gitText(["ls-remote", r.url], { cwd: dst })).not.toMatch(/topic/);
      expect((await objectDump(dst, ["HEAD"])).equals(await objectDump(src, ["main"]))).toBe(true);
      const feeds = (await (await call("GET", `/api/v1/repos/${r.full}/activities/feeds`, { headers: tokenAuth(u.token) })).json()) as { op_type: string; ref_name: string }[];
      expect(feeds[0]).toMatchObject({ op_type: "delete_branch", ref_name: "refs/heads/topic" });
    });

    it("compacts a repository's packs after the pushes that bring it to AUTO_PACK_LIMIT packs, off the request path: pushes stay two round trips, clones stay identical, the replaced files wait for their grace period", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const { id } = await repoJson(r.full, u.token);
      const auth = basicAuth(u.name, u.token);
      const src = s.path(`${target.name}-compact`);
      await makeHistory(s, src, { commits: 30, files: 10 });
      await s.git(["push", "-q", r.authed(u.name, u.token), "main"], { cwd: src });
      const db = createClient({ url: target.databaseUrl });
      const ownPacks = async () => Number((await db.execute({ sql: "SELECT COUNT(*) FROM git_pack WHERE catalog_repo_id = ? AND repo_id = catalog_repo_id", args: [id] })).rows[0]![0]);
      try {
        // one commit per push, each its own pack
        for (let i = 1; i < AUTO_PACK_LIMIT; i++) {
          const old = await s.gitText(["rev-parse", "main"], { cwd: src });
          await s.git(["commit", "-q", "--allow-empty", "-m", `step ${i}`], { cwd: src });
          const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
          const pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: `${tip}\n^${old}\n` })).stdout;
          const body = Buffer.concat([pkt(`${old} ${tip} refs/heads/main\0report-status\n`), FLUSH, pack]);
          const res = await fetch(`${target.url}/${r.full}.git/git-receive-pack`, { method: "POST", headers: { ...auth, "Content-Type": "application/x-git-receive-pack-request" }, body });
          expect(await res.text()).toContain("ok refs/heads/main");
          expect(roundTrips(res)).toBe(2);
        }
        // the last push made it due: compacted after the answer (Node in its process, the Worker through its queue)
        const deadline = Date.now() + 60_000;
        while ((await ownPacks()) >= AUTO_PACK_LIMIT && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 200));
        expect(await ownPacks()).toBeLessThan(AUTO_PACK_LIMIT);
        const garbage = Number((await db.execute({ sql: "SELECT COUNT(*) FROM git_pack_garbage WHERE repo_id = ?", args: [id] })).rows[0]![0]);
        expect(garbage).toBeGreaterThanOrEqual(2);
        const dst = s.path(`${target.name}-compact-dst`);
        await s.git(["clone", "-q", "--mirror", r.authed(u.name, u.token), dst]);
        await fsck(dst);
        expect(await refsOf(dst)).toBe(await refsOf(src));
        expect((await objectDump(dst)).equals(await objectDump(src))).toBe(true);
      } finally {
        db.close();
      }
    });

    it("takes a push of 2000 delta-compressed commits and serves it back identically", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const src = s.path(`${target.name}-big`);
      await makeHistory(s, src, { commits: 2000, files: 50 });
      await s.git(["repack", "-adq", "--depth=50", "--window=10"], { cwd: src });
      await s.git(["push", r.authed(u.name, u.token), "main"], { cwd: src });
      const dst = s.path(`${target.name}-big-dst`);
      await s.git(["clone", "--bare", r.url, dst]);
      await fsck(dst);
      expect((await objectDump(dst)).equals(await objectDump(src, ["main"]))).toBe(true);
    });

    it("lets exactly one of two concurrent pushes to the same branch win and tells the other why", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const push = r.authed(u.name, u.token);
      const src = s.path(`${target.name}-race`);
      await makeHistory(s, src, { commits: 5, files: 5 });
      await s.git(["push", push, "main"], { cwd: src });
      const a = s.path(`${target.name}-race-a`);
      const b = s.path(`${target.name}-race-b`);
      await s.git(["clone", "-q", push, a]);
      await s.git(["clone", "-q", push, b]);
      await s.git(["commit", "-q", "--allow-empty", "-m", "from a"], { cwd: a });
      await s.git(["commit", "-q", "--allow-empty", "-m", "from b"], { cwd: b });
      const results = await Promise.allSettled([s.git(["push", "origin", "main"], { cwd: a }), s.git(["push", "origin", "main"], { cwd: b })]);
      expect(results.filter((x) => x.status === "fulfilled")).toHaveLength(1);
      const lost = results.find((x) => x.status === "rejected") as PromiseRejectedResult;
      // the server's compare-and-swap (both read the same tip) or the client's own check (it saw the winner)
      expect(String(lost.reason.stderr)).toMatch(/cannot lock ref 'refs\/heads\/main': is at [0-9a-f]{40} but expected [0-9a-f]{40}|\[rejected\].*fetch first/);
      const tip = (await s.gitText(["ls-remote", r.url, "refs/heads/main"], { cwd: a })).slice(0, 40);
      expect([await s.gitText(["rev-parse", "HEAD"], { cwd: a }), await s.gitText(["rev-parse", "HEAD"], { cwd: b })]).toContain(tip);
      const check = s.path(`${target.name}-race-check`);
      await s.git(["clone", "-q", r.url, check]);
      await fsck(check);
    });

    it("answers with Gitea's auth rules: anonymous, private ≡ missing, token scopes, collaborators, archived, a deactivated owner", async () => {
      const owner = await newUser();
      const other = await newUser();
      const pub = await newRepo(owner);
      const priv = await newRepo(owner, { private: true });
      const src = s.path(`${target.name}-auth`);
      await makeHistory(s, src, { commits: 3, files: 3 });
      await s.git(["push", pub.authed(owner.name, owner.password), "main"], { cwd: src }); // password as basic auth
      await s.git(["push", priv.authed(owner.name, owner.token), "main"], { cwd: src });
      const info = (repo: string, headers: Record<string, string> = {}, service = "git-upload-pack") => fetch(`${target.url}/${repo}.git/info/refs?service=${service}`, { headers });
      const shape = async (res: Response) => ({ status: res.status, challenge: res.headers.get("WWW-Authenticate"), body: await res.text() });

      // anonymous: public fetch works; private and missing are the same 401 challenge
      expect((await info(pub.full)).status).toBe(200);
      const anonPrivate = await shape(await info(priv.full));
      expect(anonPrivate).toEqual({ status: 401, challenge: 'Basic realm="Gitea"', body: "Unauthorized\n" });
      expect(await shape(await info(`${owner.name}/${uniqName("missing")}`))).toEqual(anonPrivate);
      expect(await shape(await info(pub.full, {}, "git-receive-pack"))).toEqual(anonPrivate);
      const anon = await s.gitFail(["ls-remote", priv.url]);
      expect(anon.stderr).toMatch(/could not read Username|Authentication failed/);

      // signed in without access: private ≡ missing (404), both without a challenge
      const stranger = basicAuth(other.name, other.password);
      const hidden = await shape(await info(priv.full, stranger));
      expect(hidden).toEqual({ status: 404, challenge: null, body: "Repository not found\n" });
      expect(await shape(await info(`${owner.name}/${uniqName("missing")}`, stranger))).toEqual(hidden);
      expect((await info(priv.full, basicAuth(other.name, "wrong-password"))).status).toBe(401);

      // tokens: read:repository fetches, not pushes; no repository scope → 403 on public, 404 on private; public-only never sees private
      const reader = await owner.tokenFor(["read:repository"]);
      await s.git(["ls-remote", priv.authed(owner.name, reader)]);
      const readPush = await s.gitFail(["push", priv.authed(owner.name, reader), "main:refs/heads/nope"], { cwd: src });
      expect(readPush.stderr).toMatch(/403/);
      const userOnly = await owner.tokenFor(["read:user"]);
      expect(await shape(await info(pub.full, basicAuth(owner.name, userOnly)))).toMatchObject({ status: 403, body: "Forbidden\n" });
      expect((await info(priv.full, basicAuth(owner.name, userOnly))).status).toBe(404);
      const publicOnly = await owner.tokenFor(["public-only", "write:repository"]);
      expect((await info(priv.full, basicAuth(owner.name, publicOnly))).status).toBe(404);
      expect((await info(pub.full, basicAuth(owner.name, publicOnly))).status).toBe(200);

      // a read-only collaborator clones but cannot push
      expect((await call("PUT", `/api/v1/repos/${priv.full}/collaborators/${other.name}`, { headers: tokenAuth(owner.token), json: { permission: "read" } })).status).toBe(204);
      const collab = s.path(`${target.name}-collab`);
      await s.git(["clone", "-q", priv.authed(other.name, other.token), collab]);
      await fsck(collab);
      await s.git(["commit", "-q", "--allow-empty", "-m", "collab"], { cwd: collab });
      const ro = await s.gitFail(["push", "origin", "main"], { cwd: collab });
      expect(ro.stderr).toMatch(/User permission denied for writing|403/);

      // archived: clone yes, push no
      expect((await call("PATCH", `/api/v1/repos/${pub.full}`, { headers: tokenAuth(owner.token), json: { archived: true } })).status).toBe(200);
      expect(await shape(await info(pub.full, basicAuth(owner.name, owner.token), "git-receive-pack"))).toMatchObject({
        status: 403,
        body: "This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.\n",
      });
      await s.git(["ls-remote", pub.url]);

      // a deactivated owner: every git request to their repositories is refused (Gitea's httpBase),
      // to anyone who may see the repository — a private one still answers as missing to others
      const deact = await call("PATCH", `/api/v1/admin/users/${owner.name}`, { headers: adminHeaders, json: { login_name: owner.name, source_id: 0, active: false } });
      expect(deact.status).toBe(200);
      const inactive = { status: 403, challenge: null, body: "Repository cannot be accessed. You cannot push or open issues/pull-requests.\n" };
      expect(await shape(await info(priv.full, basicAuth(other.name, other.password)))).toEqual(inactive); // the read collaborator
      expect(await shape(await info(priv.full, basicAuth(other.name, other.password), "git-receive-pack"))).toEqual(inactive);
      expect(await shape(await info(pub.full))).toEqual(inactive); // anonymous, public
      expect(await shape(await info(priv.full))).toEqual(anonPrivate); // anonymous, private: as missing
      const third = await newUser();
      expect(await shape(await info(priv.full, basicAuth(third.name, third.password)))).toEqual(hidden);
      // the API still serves the repository (Gitea's API has no such rule)
      expect((await call("GET", `/api/v1/repos/${pub.full}`)).status).toBe(200);
      const react = await call("PATCH", `/api/v1/admin/users/${owner.name}`, { headers: adminHeaders, json: { login_name: owner.name, source_id: 0, active: true } });
      expect(react.status).toBe(200);
      expect((await info(pub.full)).status).toBe(200);
    });

    it("clones an auto-initialised repository: one 'Initial commit' with README, .gitignore and LICENSE", async () => {
      const u = await newUser();
      const res = await call("POST", "/api/v1/user/repos", { headers: tokenAuth(u.token), json: { name: uniqName("ai"), description: "made by auto_init", auto_init: true, gitignores: "Node", license: "MIT" } });
      expect(res.status).toBe(201);
      expect(roundTrips(res)).toBe(2);
      const repo = await res.json();
      expect(repo).toMatchObject({ empty: false, default_branch: "main" });
      const dir = s.path(`${target.name}-autoinit`);
      await s.git(["clone", repo.clone_url, dir]);
      await fsck(dir);
      expect(await s.gitText(["log", "--format=%s|%an|%ae|%P"], { cwd: dir })).toBe(`Initial commit|${u.name}|${u.name}@example.com|`);
      expect(await s.gitText(["ls-files"], { cwd: dir })).toBe(".gitignore\nLICENSE\nREADME.md");
      expect(await s.gitText(["show", "HEAD:README.md"], { cwd: dir })).toBe(`# ${repo.name}\n\nmade by auto_init`);
      expect(await s.gitText(["show", "HEAD:.gitignore"], { cwd: dir })).toMatch(/^# ---> Node\n/);
      expect(await s.gitText(["show", "HEAD:LICENSE"], { cwd: dir })).toContain(`Copyright (c) ${new Date().getUTCFullYear()} ${u.name}`);
      // and it takes a push on top
      await s.git(["commit", "-q", "--allow-empty", "-m", "second"], { cwd: dir });
      await s.git(["push", "-q", r2(repo.clone_url, u.name, u.token), "main"], { cwd: dir });
      expect(await s.gitText(["ls-remote", repo.clone_url, "refs/heads/main"], { cwd: dir })).toMatch(await s.gitText(["rev-parse", "HEAD"], { cwd: dir }));
    });

    it("a fork shares its base's objects, keeps them when the base is deleted, and a deleted repository is gone", async () => {
      const u = await newUser();
      const other = await newUser();
      const base = await newRepo(u);
      const src = s.path(`${target.name}-forkbase`);
      await makeHistory(s, src, { commits: 20, files: 8 });
      await s.git(["tag", "-a", "v1", "-m", "v1"], { cwd: src });
      // a ref outside branches and tags, with a commit of its own: not the fork's (Gitea forks with clone --bare)
      await s.git(["commit", "-q", "--allow-empty", "-m", "only on a pull ref"], { cwd: src });
      await s.git(["push", base.authed(u.name, u.token), "HEAD~1:refs/heads/main", "v1", "HEAD:refs/pull/1/head"], { cwd: src });
      await s.git(["reset", "-q", "--hard", "HEAD~1"], { cwd: src });
      await s.git(["update-ref", "-d", "refs/pull/1/head"], { cwd: src });
      const f = await call("POST", `/api/v1/repos/${base.full}/forks`, { headers: tokenAuth(other.token), json: {} });
      expect(f.status).toBe(202);
      const fork = await f.json();
      expect(fork.empty).toBe(false);
      const del = await call("DELETE", `/api/v1/repos/${base.full}`, { headers: tokenAuth(u.token) });
      expect(del.status).toBe(204);
      expect(roundTrips(del)).toBe(2);
      const dir = s.path(`${target.name}-fork-clone`);
      await s.git(["clone", "--mirror", fork.clone_url, dir]);
      await fsck(dir);
      expect(await refsOf(dir)).toBe(await refsOf(src));
      expect(await refsOf(dir, "refs")).toBe(await refsOf(src)); // no refs/pull/* in the fork
      expect((await objectDump(dir)).equals(await objectDump(src, ["main", "v1"]))).toBe(true); // nor its commit
      expect((await fetch(`${target.url}/${base.full}.git/info/refs?service=git-upload-pack`, { headers: basicAuth(u.name, u.password) })).status).toBe(404);
    });

    it("a secret force-pushed away, or on a branch deleted through the API, reaches no fresh clone — of the repository or of a fork made after, full or partial", async () => {
      const u = await newUser();
      const other = await newUser();
      const r = await newRepo(u, { auto_init: true });
      const push = r.authed(u.name, u.token);
      const work = s.path(`${target.name}-secret-work`);
      await s.git(["clone", "-q", push, work]);
      const { writeFileSync } = await import("node:fs");
      const commitFile = async (file: string, content: string) => {
        writeFileSync(`${work}/${file}`, content);
        await s.git(["add", file], { cwd: work });
        await s.git(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", file], { cwd: work });
        return s.gitText(["rev-parse", `HEAD:${file}`], { cwd: work });
      };
      const secret = await commitFile("secret.txt", `AWS_SECRET=${uniqName("s")}
`);
      await s.git(["push", "-q", push, "main"], { cwd: work });
      await s.git(["reset", "-q", "--hard", "HEAD~1"], { cwd: work });
      await s.git(["push", "-q", "-f", push, "main"], { cwd: work });
      await s.git(["checkout", "-q", "-b", "doomed"], { cwd: work });
      const onBranch = await commitFile("branch.txt", `${uniqName("b")}
`);
      await s.git(["push", "-q", push, "doomed"], { cwd: work });
      expect((await call("DELETE", `/api/v1/repos/${r.full}/branches/doomed`, { headers: tokenAuth(u.token) })).status).toBe(204);
      const f = await call("POST", `/api/v1/repos/${r.full}/forks`, { headers: tokenAuth(other.token), json: {} });
      expect(f.status).toBe(202);
      const fork = await f.json();
      for (const [what, url] of [["repository", push], ["fork", r2(fork.clone_url, other.name, other.token)]] as const) {
        const dir = s.path(`${target.name}-secret-clone-${what}`);
        await s.git(["clone", "-q", url, dir]);
        await fsck(dir);
        const present = async (oid: string) => s.gitFail(["cat-file", "-e", oid], { cwd: dir }).then(() => false, () => true);
        expect([await present(secret), await present(onBranch)], what).toEqual([false, false]);
        // a partial clone gets what it left out on demand, but never what no ref reaches
        const partial = s.path(`${target.name}-secret-partial-${what}`);
        await s.git(["clone", "-q", "--filter=blob:none", url, partial]);
        expect(await s.gitText(["ls-files", "-s"], { cwd: partial }), what).toBe(await s.gitText(["ls-files", "-s"], { cwd: dir }));
        for (const oid of [secret, onBranch]) expect((await s.gitFail(["cat-file", "-p", oid], { cwd: partial })).stderr, what).toMatch(`not our ref ${oid}`);
      }
    });

    it("purging a user deletes its repositories' git files; a fork owned by someone else keeps its objects", async () => {
      const u = await newUser();
      const other = await newUser();
      const base = await newRepo(u);
      const src = s.path(`${target.name}-purgebase`);
      await makeHistory(s, src, { commits: 12, files: 5 });
      await s.git(["push", base.authed(u.name, u.token), "main"], { cwd: src });
      const baseId = (await (await call("GET", `/api/v1/repos/${base.full}`, { headers: tokenAuth(u.token) })).json()).id as number;
      const f = await call("POST", `/api/v1/repos/${base.full}/forks`, { headers: tokenAuth(other.token), json: {} });
      expect(f.status).toBe(202);
      const fork = await f.json();
      // On Node the files are visible under DATA_DIR/git/<repository id> (on the Worker they are R2 objects).
      const storage = target.name === "node" ? `${target.databaseUrl!.replace(/^file:/, "").replace(/\/[^/]+$/, "")}/git/${baseId}` : null;
      if (storage) expect(readdirSync(`${storage}/pack`).length).toBeGreaterThan(0);
      const purge = await call("DELETE", `/api/v1/admin/users/${u.name}?purge=true`, { headers: adminHeaders });
      expect(purge.status).toBe(204);
      expect(roundTrips(purge)).toBe(2);
      if (storage) expect(() => readdirSync(storage)).toThrow(/ENOENT/);
      const dir = s.path(`${target.name}-purge-fork-clone`);
      await s.git(["clone", "--mirror", fork.clone_url, dir]);
      await fsck(dir);
      expect((await objectDump(dir)).equals(await objectDump(src))).toBe(true);
    });

    it("costs one round trip to advertise and two per push, however many objects", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const auth = basicAuth(u.name, u.token);
      const src = s.path(`${target.name}-trips`);
      await makeHistory(s, src, { commits: 40, files: 10 });
      const adv = await fetch(`${target.url}/${r.full}.git/info/refs?service=git-receive-pack`, { headers: auth });
      expect(adv.status).toBe(200);
      await adv.arrayBuffer();
      expect(roundTrips(adv)).toBe(1);
      for (const [branch, rev] of [["one", "main~39"], ["all", "main"]] as const) {
        const tip = await s.gitText(["rev-parse", rev], { cwd: src });
        const pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: `${tip}\n` })).stdout;
        const body = Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/${branch}\0report-status\n`), FLUSH, pack]);
        const res = await fetch(`${target.url}/${r.full}.git/git-receive-pack`, { method: "POST", headers: { ...auth, "Content-Type": "application/x-git-receive-pack-request" }, body });
        expect(await res.text()).toContain(`ok refs/heads/${branch}`);
        expect(roundTrips(res)).toBe(2);
      }
      const clone = await fetch(`${target.url}/${r.full}.git/info/refs?service=git-upload-pack`, { headers: { "Git-Protocol": "version=2" } });
      await clone.arrayBuffer();
      expect(roundTrips(clone)).toBe(1);
    });

    it("archives rule: <ref>.tar.gz is git archive's tar byte for byte, .zip and .bundle hold the same; the API and the web path tags link to; private ≡ missing; one round trip; 304 by tag", async () => {
      const u = await newUser();
      const other = await newUser();
      const r = await newRepo(u, { private: true });
      const src = s.path(`${target.name}-archive-src`);
      await makeHistory(s, src, { commits: 6, files: 8 });
      await s.git(["tag", "-a", "v1", "-m", "v1", "main~2"], { cwd: src });
      await s.git(["branch", "feature/x", "main~1"], { cwd: src });
      await s.git(["push", "-q", r.authed(u.name, u.token), "main", "v1", "feature/x"], { cwd: src });
      const prefix = `--prefix=${r.name.toLowerCase()}/`;
      const api = (archive: string, headers: Record<string, string> = tokenAuth(u.token)) => fetch(`${target.url}/api/v1/repos/${r.full}/archive/${archive}`, { headers });
      const { gunzipSync } = await import("node:zlib");
      const { writeFileSync } = await import("node:fs");
      const tar = await api("main.tar.gz");
      expect(tar.status).toBe(200);
      expect(roundTrips(tar)).toBe(1);
      expect(tar.headers.get("Content-Disposition")).toBe(`attachment; filename=${r.name}-main.tar.gz`);
      // archives rule: Gitea's ServeRepoArchive sets no type, so ServeSetHeaders's default for every format
      expect(tar.headers.get("Content-Type")).toBe("application/octet-stream");
      const main = await s.gitText(["rev-parse", "main"], { cwd: src });
      expect(tar.headers.get("Link")).toBe(`<${target.url}/api/v1/repos/${r.full}/archive/${main}.tar.gz?rev=${main}>; rel="immutable"`);
      const want = (await s.git(["archive", "--format=tar", prefix, "main"], { cwd: src })).stdout;
      expect(gunzipSync(Buffer.from(await tar.arrayBuffer())).equals(want)).toBe(true);
      // the web path a tag's tarball_url names, signed in as git HTTP is (a token as the password)
      const web = await fetch(`${target.url}/${r.full}/archive/v1.tar.gz`, { headers: basicAuth(u.name, u.token) });
      expect([web.status, web.headers.get("Content-Type")]).toEqual([200, "application/octet-stream"]);
      expect(gunzipSync(Buffer.from(await web.arrayBuffer())).equals((await s.git(["archive", "--format=tar", prefix, "v1"], { cwd: src })).stdout)).toBe(true);
      const zip = await api("feature/x.zip");
      expect([zip.status, zip.headers.get("Content-Disposition"), zip.headers.get("Content-Type")]).toEqual([200, `attachment; filename=${r.name}-feature-x.zip`, "application/octet-stream"]);
      const zipFile = s.path(`${target.name}-archive.zip`);
      writeFileSync(zipFile, Buffer.from(await zip.arrayBuffer()));
      const { execFileSync } = await import("node:child_process");
      const names = execFileSync("unzip", ["-Z1", zipFile]).toString().trim().split("\n").sort();
      const gitNames = execFileSync("tar", ["-t"], { input: (await s.git(["archive", "--format=tar", prefix, "feature/x"], { cwd: src })).stdout }).toString().trim().split("\n").filter((n) => n !== "pax_global_header").sort();
      expect(names).toEqual(gitNames);
      const bundle = await api("v1.bundle");
      expect(bundle.headers.get("Content-Type")).toBe("application/octet-stream");
      const bundleFile = s.path(`${target.name}-archive.bundle`);
      writeFileSync(bundleFile, Buffer.from(await bundle.arrayBuffer()));
      const v1 = await s.gitText(["rev-parse", "v1^{commit}"], { cwd: src });
      expect((await s.git(["bundle", "list-heads", bundleFile])).stdout.toString()).toBe(`${v1} refs/heads/bundle\n${v1} HEAD\n`);
      // `path`: parts of the tree, as git archive's pathspecs (once or repeated)
      for (const paths of [["dir0"], ["dir1/sub0", "dir2"]]) {
        const part = await api(`main.tar.gz?${paths.map((p) => `path=${encodeURIComponent(p)}`).join("&")}`);
        expect(part.status, paths.join(" ")).toBe(200);
        expect(gunzipSync(Buffer.from(await part.arrayBuffer())).equals((await s.git(["archive", "--format=tar", prefix, "main", "--", ...paths], { cwd: src })).stdout), paths.join(" ")).toBe(true);
      }
      const noPath = await api("main.zip?path=no/such/dir");
      expect([noPath.status, (await noPath.json()).message]).toEqual([404, "path not found: no/such/dir"]);
      // a client holding the archive gets a 304 without a body
      const again = await api("main.tar.gz", { ...tokenAuth(u.token), "If-None-Match": tar.headers.get("ETag")! });
      expect([again.status, (await again.arrayBuffer()).byteLength]).toEqual([304, 0]);
      // Gitea's refusals, and a private repository answers others exactly as a missing one
      const refuse = async (res: Response, status: number, message: string) => expect([res.status, (await res.json()).message]).toEqual([status, message]);
      await refuse(await api("main.rar"), 400, "unknown format: main.rar");
      await refuse(await api("nope.zip"), 404, "unrecognized repository reference: nope");
      const hidden = await api("main.zip", tokenAuth(other.token));
      const missing = await fetch(`${target.url}/api/v1/repos/${u.name}/no-such-repo/archive/main.zip`, { headers: tokenAuth(other.token) });
      expect([hidden.status, await hidden.json()]).toEqual([missing.status, await missing.json()]);
      expect(hidden.status).toBe(404);
      const webHidden = await fetch(`${target.url}/${r.full}/archive/main.zip`, { headers: basicAuth(other.name, other.token) });
      expect(webHidden.status).toBe(404);
      await webHidden.arrayBuffer();
      const noScope = await api("main.zip", tokenAuth(await u.tokenFor(["read:user"])));
      expect(noScope.status).toBe(403);
      await noScope.arrayBuffer();
    });

    it("archives rule with .gitattributes: export-ignore and export-subst apply as git archive's; an archive whose expansions show refs answers with an ETag that follows them and no immutable Link", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const src = s.path(`${target.name}-archive-attrs`);
      await makeHistory(s, src, { commits: 2, files: 3 });
      const { writeFileSync, mkdirSync } = await import("node:fs");
      const { gunzipSync } = await import("node:zlib");
      writeFileSync(`${src}/.gitattributes`, "tests/ export-ignore\n.git_archival.txt export-subst\n");
      mkdirSync(`${src}/tests`);
      writeFileSync(`${src}/tests/t.txt`, "left out\n");
      writeFileSync(`${src}/.git_archival.txt`, "node: $Format:%H$\nref-names: $Format:%D$\n");
      await s.git(["add", "-A"], { cwd: src });
      await s.git(["commit", "-q", "-m", "attributes"], { cwd: src });
      await s.git(["push", "-q", r.authed(u.name, u.token), "main"], { cwd: src });
      const main = await s.gitText(["rev-parse", "main"], { cwd: src });
      const prefix = `--prefix=${r.name.toLowerCase()}/`;
      const api = (archive: string, headers: Record<string, string> = {}) => fetch(`${target.url}/api/v1/repos/${r.full}/archive/${archive}`, { headers: { ...tokenAuth(u.token), ...headers } });
      // git's own archive of the same commit and refs: a bare mirror, as Gitea's repository
      const mirror = s.path(`${target.name}-archive-attrs.git`);
      const gitArchive = async () => {
        await s.git(["clone", "-q", "--mirror", r.authed(u.name, u.token), mirror]).catch(async () => s.git(["fetch", "-q", "--prune", "origin", "+refs/*:refs/*"], { cwd: mirror }));
        return (await s.git(["archive", "--format=tar", prefix, main], { cwd: mirror })).stdout;
      };
      const first = await api(`${main}.tar.gz`);
      const firstTar = gunzipSync(Buffer.from(await first.arrayBuffer()));
      expect(firstTar.equals(await gitArchive())).toBe(true);
      expect(firstTar.includes(Buffer.from("tests/t.txt"))).toBe(false);
      expect(firstTar.includes(Buffer.from(`node: ${main}\nref-names: HEAD -> main\n`))).toBe(true);
      expect(first.headers.get("Link")).toBeNull();
      // unchanged refs: 304; a tag on the commit changes what %D shows, and so the tag
      const etag = first.headers.get("ETag")!;
      expect((await api(`${main}.tar.gz`, { "If-None-Match": etag })).status).toBe(304);
      await s.git(["tag", "v7", "main"], { cwd: src });
      await s.git(["push", "-q", r.authed(u.name, u.token), "v7"], { cwd: src });
      const after = await api(`${main}.tar.gz`, { "If-None-Match": etag });
      expect(after.status).toBe(200);
      const afterTar = gunzipSync(Buffer.from(await after.arrayBuffer()));
      expect(afterTar.equals(await gitArchive())).toBe(true);
      expect(afterTar.includes(Buffer.from("ref-names: HEAD -> main, tag: v7\n"))).toBe(true);
      // without export-subst files an archive keeps its immutable link
      const plain = await api(`${main}.tar.gz?path=${encodeURIComponent(".gitattributes")}`);
      expect(plain.headers.get("Link")).toContain('rel="immutable"');
      await plain.arrayBuffer();
      // padding can make a small file huge (16 KiB per placeholder, as git allows): past 16 MiB of growth, a clean 413
      writeFileSync(`${src}/.gitattributes`, "*.txt export-subst\n");
      writeFileSync(`${src}/pad.txt`, "$Format:%>(16000)%n$".repeat(1100));
      await s.git(["add", "-A"], { cwd: src });
      await s.git(["commit", "-q", "-m", "padding"], { cwd: src });
      await s.git(["push", "-q", r.authed(u.name, u.token), "main"], { cwd: src });
      const padded = await api("main.tar.gz");
      expect([padded.status, (await padded.json()).message]).toEqual([413, "export-subst expands a file by more than 16777216 bytes"]);
    });
  });
}
