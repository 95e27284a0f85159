/**
 * Branches, refs and commits through the REST API on BOTH targets, cross-checked with the real git
 * CLI on the pushed repository: branch lists and tips (for-each-ref), refs with their object types,
 * commit lists (`git log`, `rev-list --count`, `-- path`, `^not`), a commit's files and line
 * stats (`diff-tree --name-status`, `diff --numstat`); branch create/delete as pushes (the clone
 * sees them, the feed records them); Gitea's refusals; the JSON against Gitea's own definitions;
 * the round trips of each answer.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { giteaShapeErrors } from "../fixtures/gitea-schema.ts";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";
import { makeHistory, Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-git-api-");
afterAll(() => s.cleanup());

const NOT_FOUND = "The target couldn't be found.";
type Json = Record<string, any>;

/** Gitea leaves a branch commit's file lists nil (`null`); its document says arrays. */
const branchShape = (b: Json) => giteaShapeErrors("Branch", { ...b, commit: { ...b.commit, added: [], removed: [], modified: [], verification: unsigned(b.commit.verification) } });
/** Gitea's verification of an unsigned commit has no signer (a nil pointer: `null`). */
const NO_SIGNER = { name: "", email: "nobody@example.com", username: "" };
const unsigned = (v: Json | null) => v && { ...v, signer: v.signer ?? NO_SIGNER };

for (const target of targets()) {
  describe(`branches, refs and commits through the API on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    const host = target.url.replace(/^http:\/\//, "");
    let owner: { name: string; email: string; token: string };
    let other: { name: string; email: string; token: string };
    let hidden: { name: string; email: string };
    let full: string;
    let src: string;
    const api = (path: string, token?: string, init: { method?: string; json?: unknown } = {}) =>
      call(init.method ?? "GET", `/api/v1/repos/${full}${path}`, { headers: token ? tokenAuth(token) : {}, json: init.json });
    const git = (args: string[]) => s.gitText(args, { cwd: src });

    async function newUser(opts: Json = {}) {
      const name = uniqName("ga");
      const password = "git-api-password-1";
      const email = `${name}@example.com`;
      const res = await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email, password, must_change_password: false, ...opts } });
      expect(res.status).toBe(201);
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes: ["all"] } });
      return { name, email, token: (await tok.json()).sha1 as string };
    }

    beforeAll(async () => {
      owner = await newUser();
      other = await newUser();
      hidden = await newUser({ visibility: "private" });
      const repo = uniqName("gar");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name: repo } })).status).toBe(201);
      full = `${owner.name}/${repo}`;
      src = s.path(`${target.name}-src`);
      await makeHistory(s, src, { commits: 25, files: 8 });
      const commitAs = async (who: { name: string; email: string }, file: string, body: string, msg: string) => {
        const { writeFileSync } = await import("node:fs");
        writeFileSync(`${src}/${file}`, body);
        await git(["add", file]);
        const env = { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email };
        await s.git(["commit", "-q", "-m", msg], { cwd: src, env: { ...env, GIT_COMMITTER_DATE: "1800000000 +0200", GIT_AUTHOR_DATE: "1800000000 +0200" } });
      };
      await git(["checkout", "-q", "-b", "feature/x", "main~5"]);
      await commitAs(other, "feature.txt", "one\ntwo\nthree\n", "feature work");
      await git(["checkout", "-q", "main"]);
      await git(["merge", "-q", "--no-ff", "-m", "merge feature", "feature/x"]);
      await commitAs(hidden, "dir0/sub0/file0.txt", "rewritten\nby hidden\n", "hidden edit");
      await commitAs(other, "bin.dat", "a\0b", "binary");
      await git(["tag", "light", "main~3"]);
      await git(["tag", "-a", "v1.0", "-m", "release", "main~2"]);
      await git(["tag", "v10", "main~1"]);
      await git(["branch", "topic", "main~10"]);
      await git(["tag", "topic", "main~1"]); // a tag named as a branch: git rev-parse (and Gitea's commits API) reads the tag
      await s.git(["push", `http://${owner.name}:${owner.token}@${host}/${full}.git`, "main", "feature/x", "refs/heads/topic:refs/heads/topic", "refs/tags/topic:refs/tags/topic", "light", "v1.0", "v10"], { cwd: src });
    }, 120_000);

    it("lists branches as git has them: newest tip first, paged, filtered, in Gitea's JSON", async () => {
      const res = await api("/branches?limit=2", owner.token);
      expect(res.status).toBe(200);
      expect(roundTrips(res)).toBe(1);
      expect(res.headers.get("X-Total-Count")).toBe("3");
      expect(res.headers.get("Link")).toMatch(/rel="next"/);
      const page1 = (await res.json()) as Json[];
      const page2 = (await (await api("/branches?limit=2&page=2", owner.token)).json()) as Json[];
      const got = [...page1, ...page2].map((b) => `${b.commit.id} ${b.name}`);
      // Gitea's order: tip commit time newest first, then name
      const want = (await git(["for-each-ref", "--sort=-committerdate", "--sort=refname", "--format=%(objectname) %(refname:strip=2)", "refs/heads"])).split("\n");
      expect(new Set(got)).toEqual(new Set(want));
      const times = await Promise.all([...page1, ...page2].map(async (b) => Number(await git(["log", "-1", "--format=%ct", b.commit.id]))));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      for (const b of page1) expect(branchShape(b)).toEqual([]);
      const main = [...page1, ...page2].find((b) => b.name === "main")!;
      expect(main).toMatchObject({ protected: false, user_can_push: true, user_can_merge: true, status_check_contexts: [], effective_branch_protection_name: "" });
      expect(main.commit).toMatchObject({ message: `${await git(["log", "-1", "--format=%B", "main"])}\n`, url: `${target.url}/${full}/commit/${main.commit.id}`, added: null });
      expect(main.commit.verification).toMatchObject({ verified: false, reason: "gpg.error.not_signed_commit" });
      // the anonymous reader of a public repository may not push
      const anon = (await (await api("/branches")).json()) as Json[];
      expect(anon.every((b) => !b.user_can_push && !b.user_can_merge)).toBe(true);
      const filtered = (await (await api("/branches?q=FEAT", owner.token)).json()) as Json[];
      expect(filtered.map((b) => b.name)).toEqual(["feature/x"]);
    });

    it("gets a branch whose name has a slash; a missing branch is 404 in one round trip", async () => {
      for (const path of ["/branches/feature/x", "/branches/feature%2Fx"]) {
        const res = await api(path, owner.token);
        expect(res.status, path).toBe(200);
        expect(roundTrips(res), path).toBe(1);
        const b = await res.json();
        expect(b.name).toBe("feature/x");
        expect(b.commit.id).toBe(await git(["rev-parse", "feature/x"]));
        // the author's account is named only when the caller may see it
        expect(b.commit.author).toEqual({ name: other.name, email: other.email, username: other.name });
      }
      const missing = await api("/branches/nope/nothing", owner.token);
      expect(missing.status).toBe(404);
      expect((await missing.json()).message).toBe(NOT_FOUND);
      expect(roundTrips(missing)).toBe(1);
    });

    it("lists refs with their object types; {ref} is a prefix; one exact match is an object; none is 404", async () => {
      const res = await api("/git/refs", owner.token);
      expect(res.status).toBe(200);
      expect(roundTrips(res)).toBe(1);
      const all = (await res.json()) as Json[];
      const want = await git(["for-each-ref", "--format=%(refname) %(objectname) %(objecttype)", "refs/heads", "refs/tags"]);
      expect(all.map((r) => `${r.ref} ${r.object.sha} ${r.object.type}`).join("\n")).toBe(want);
      for (const r of all) expect(giteaShapeErrors("Reference", r)).toEqual([]);
      const tag = all.find((r) => r.ref === "refs/tags/v1.0")!;
      expect(tag.object.url).toBe(`${target.url}/api/v1/repos/${full}/git/tags/${tag.object.sha}`);
      expect(tag.url).toBe(`${target.url}/api/v1/repos/${full}/git/refs/tags/v1.0`);
      const heads = (await (await api("/git/refs/heads", owner.token)).json()) as Json[];
      expect(heads.map((r) => r.ref)).toEqual(["refs/heads/feature/x", "refs/heads/main", "refs/heads/topic"]);
      const v1 = (await (await api("/git/refs/tags/v1", owner.token)).json()) as Json[];
      expect(v1.map((r) => r.ref)).toEqual(["refs/tags/v1.0", "refs/tags/v10"]);
      const one = await (await api("/git/refs/heads/feature/x", owner.token)).json();
      expect(one).toMatchObject({ ref: "refs/heads/feature/x", object: { type: "commit", sha: await git(["rev-parse", "feature/x"]) } });
      const none = await api("/git/refs/heads/zzz", owner.token);
      expect(none.status).toBe(404);
      expect(roundTrips(none)).toBe(1);
    });

    it("refs exact-match rule: a ref named exactly refs/<filter> is answered alone, as an object, even when siblings share the prefix (newest Gitea)", async () => {
      const name = uniqName("refs");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, auto_init: true } })).status).toBe(201);
      const at = (path: string) => call("GET", `/api/v1/repos/${owner.name}/${name}${path}`, { headers: tokenAuth(owner.token) });
      for (const b of ["b1", "b1x"]) expect((await call("POST", `/api/v1/repos/${owner.name}/${name}/branches`, { headers: tokenAuth(owner.token), json: { new_branch_name: b } })).status).toBe(201);
      const exact = await at("/git/refs/heads/b1");
      expect([exact.status, roundTrips(exact)]).toEqual([200, 1]);
      expect(await exact.json()).toMatchObject({ ref: "refs/heads/b1", object: { type: "commit" } });
      // no exact match: the list, whatever its length
      expect(((await (await at("/git/refs/heads/b")).json()) as Json[]).map((r) => r.ref)).toEqual(["refs/heads/b1", "refs/heads/b1x"]);
      expect(((await (await at("/git/refs/heads/b1x")).json()) as Json).ref).toBe("refs/heads/b1x");
    });

    it("lists commits as git log does: pages, totals, sha, path and not", async () => {
      const total = Number(await git(["rev-list", "--count", "main"]));
      const log = (await git(["log", "--format=%H", "main"])).split("\n");
      const p1 = await api("/commits?limit=10&stat=false&files=false&verification=false", owner.token);
      expect(p1.status).toBe(200);
      expect(roundTrips(p1)).toBe(1);
      expect(p1.headers.get("X-Total-Count")).toBe(String(total));
      expect(p1.headers.get("X-HasMore")).toBe("true");
      expect(p1.headers.get("X-PageCount")).toBe(String(Math.ceil(total / 10)));
      const b1 = (await p1.json()) as Json[];
      const b2 = (await (await api("/commits?limit=10&page=2&stat=0", owner.token)).json()) as Json[];
      expect([...b1, ...b2].map((c) => c.sha)).toEqual(log.slice(0, 20));
      expect(b1[0]!.stats).toBeNull();
      expect(b1[0]!.files).toBeNull();
      expect(b1[0]!.commit.verification).toBeNull();
      const feature = (await (await api("/commits?sha=feature/x&limit=50&stat=false", owner.token)).json()) as Json[];
      expect(feature.map((c) => c.sha)).toEqual((await git(["log", "--format=%H", "feature/x"])).split("\n"));
      for (const path of ["dir0/sub0/file0.txt", "dir1", "feature.txt"]) {
        const res = await api(`/commits?path=${encodeURIComponent(path)}&stat=false&files=false`, owner.token);
        const want = (await git(["log", "--format=%H", "main", "--", path])).split("\n");
        expect((await res.json()).map((c: Json) => c.sha), path).toEqual(want.slice(0, 50));
        expect(res.headers.get("X-Total-Count"), path).toBe(String(want.length));
      }
      const nothing = await api("/commits?path=no/such/file", owner.token);
      expect(nothing.status).toBe(404);
      const not = (await (await api("/commits?not=main~5&limit=50&stat=false", owner.token)).json()) as Json[];
      expect(not.map((c) => c.sha)).toEqual((await git(["log", "--format=%H", "main", "^main~5"])).split("\n"));
      // `topic` is a branch and a tag: sha and not read it as git rev-parse does (the tag)
      const topic = (await (await api("/commits?sha=topic&limit=50&stat=false", owner.token)).json()) as Json[];
      expect(topic.map((c) => c.sha)).toEqual((await git(["log", "--format=%H", "refs/tags/topic"])).split("\n").slice(0, 50));
      const notTopic = (await (await api("/commits?not=topic&limit=50&stat=false", owner.token)).json()) as Json[];
      expect(notTopic.map((c) => c.sha)).toEqual((await git(["log", "--format=%H", "main", "^refs/tags/topic"])).split("\n"));
      expect((await (await api("/git/commits/topic?stat=false", owner.token)).json()).sha).toBe(await git(["rev-parse", "refs/tags/topic"]));
    });

    it("answers a commit with its files, line stats, parents and visible accounts, as git shows it", async () => {
      for (const rev of ["main", "main~1", "main~2", "main~3", "main~8", (await git(["rev-list", "--max-parents=0", "main"]))]) {
        const sha = await git(["rev-parse", rev]);
        const res = await api(`/git/commits/${sha}`, owner.token);
        expect(res.status, rev).toBe(200);
        expect(roundTrips(res), rev).toBe(1);
        const c = await res.json();
        expect(c.sha).toBe(sha);
        expect(c.parents.map((p: Json) => p.sha)).toEqual((await git(["rev-list", "--parents", "-1", sha])).split(" ").slice(1));
        const base = (await git(["rev-list", "--parents", "-1", sha])).split(" ")[1] ?? (await git(["hash-object", "-t", "tree", "/dev/null"]));
        // against the first parent, as Gitea's `log --name-status -m --first-parent`
        const status = await git(["diff", "--name-status", "--no-renames", base, sha]);
        const names: Record<string, string> = { A: "added", D: "removed", M: "modified" };
        const want = status ? status.split("\n").map((l) => `${names[l[0]!]} ${l.slice(2)}`) : [];
        expect(c.files.map((f: Json) => `${f.status} ${f.filename}`).sort(), rev).toEqual(want.sort());
        const numstat = await git(["diff", "--numstat", base, sha]);
        let add = 0;
        let del = 0;
        for (const l of numstat.split("\n").filter(Boolean)) {
          const [a, d] = l.split("\t");
          if (a !== "-") add += Number(a);
          if (d !== "-") del += Number(d);
        }
        expect(c.stats, rev).toEqual({ total: add + del, additions: add, deletions: del });
        expect(giteaShapeErrors("Commit", { ...c, author: undefined, committer: undefined, commit: { ...c.commit, verification: unsigned(c.commit.verification) } }).filter((e) => !/must have required property '(author|committer)'/.test(e))).toEqual([]);
        expect(c.commit.message).toBe(`${await git(["log", "-1", "--format=%B", sha])}\n`);
      }
      // abbreviated ids and ref names resolve; the visible author is a Gitea user, a hidden one is not
      const short = await git(["rev-parse", "--short=7", "main~1"]);
      const byShort = await (await api(`/git/commits/${short}`, other.token)).json();
      expect(byShort.sha).toBe(await git(["rev-parse", "main~1"]));
      expect(byShort.author).toBeNull();
      expect(byShort.commit.author).toMatchObject({ name: hidden.name, email: hidden.email, date: "2027-01-15T10:00:00+02:00" });
      const adminView = await (await call("GET", `/api/v1/repos/${full}/git/commits/${short}`, { headers: adminHeaders })).json();
      expect(adminView.author.login).toBe(hidden.name);
      const byRef = await (await api("/git/commits/feature/x".replace("feature/x", "main"), other.token)).json();
      expect(byRef.author.login).toBe(other.name);
      const missing = await api("/git/commits/deadbeef", owner.token);
      expect(missing.status).toBe(404);
      expect((await missing.json()).message).toBe("deadbeef");
      expect(roundTrips(missing)).toBe(1);
      const bad = await api("/git/commits/a..b", owner.token);
      expect(bad.status).toBe(422);
      expect((await bad.json()).message).toBe("no valid ref or sha: a..b");
    });

    it("stats rule: a commit's stats are git diff --shortstat -M against the first parent (a pure rename counts 0), its files stay added + removed", async () => {
      const name = uniqName("gas");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name } })).status).toBe(201);
      const dir = s.path(`${target.name}-renames`);
      await makeHistory(s, dir, { commits: 1, files: 2 });
      const at = (cmd: string[]) => s.gitText(cmd, { cwd: dir });
      const { writeFileSync } = await import("node:fs");
      const body = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join("");
      writeFileSync(`${dir}/a.txt`, body);
      await at(["add", "a.txt"]);
      await at(["commit", "-q", "-m", "a"]);
      await at(["mv", "a.txt", "b.txt"]);
      await at(["commit", "-q", "-m", "pure rename"]);
      await at(["mv", "b.txt", "c.txt"]);
      writeFileSync(`${dir}/c.txt`, body.replace("line 3\n", "line three\n"));
      await at(["commit", "-q", "-am", "rename with an edit"]);
      await s.git(["push", `http://${owner.name}:${owner.token}@${host}/${owner.name}/${name}.git`, "main"], { cwd: dir });
      const shortstat = async (rev: string) => {
        const out = await at(["diff", "--shortstat", "-M", `${rev}^1`, rev]);
        const additions = Number(/(\d+) insertion/.exec(out)?.[1] ?? 0);
        const deletions = Number(/(\d+) deletion/.exec(out)?.[1] ?? 0);
        return { total: additions + deletions, additions, deletions };
      };
      expect(await shortstat("main~1")).toEqual({ total: 0, additions: 0, deletions: 0 });
      expect(await shortstat("main")).toEqual({ total: 2, additions: 1, deletions: 1 });
      const list = (await (await call("GET", `/api/v1/repos/${owner.name}/${name}/commits?limit=2`, { headers: tokenAuth(owner.token) })).json()) as Json[];
      for (const [i, rev] of ["main", "main~1"].entries()) {
        const sha = await at(["rev-parse", rev]);
        const one = await (await call("GET", `/api/v1/repos/${owner.name}/${name}/git/commits/${sha}`, { headers: tokenAuth(owner.token) })).json();
        expect(one.stats, rev).toEqual(await shortstat(rev));
        expect(list[i]!.sha, rev).toBe(sha);
        expect(list[i]!.stats, rev).toEqual(await shortstat(rev));
        // files as Gitea's `log --name-status --no-renames`: the old path removed, the new one added
        const files = (await at(["diff", "--name-status", "--no-renames", `${rev}^1`, rev])).split("\n").map((l) => `${l[0] === "A" ? "added" : "removed"} ${l.slice(2)}`);
        expect(one.files.map((f: Json) => `${f.status} ${f.filename}`).sort(), rev).toEqual(files.sort());
      }
    });

    it("creates and deletes branches as pushes: the clone sees them, the feed records them, Gitea's refusals", async () => {
      const created = await api("/branches", owner.token, { method: "POST", json: { new_branch_name: "made/by-api", old_ref_name: "v1.0" } });
      expect(created.status).toBe(201);
      expect(roundTrips(created)).toBe(2);
      const b = await created.json();
      expect(branchShape(b)).toEqual([]);
      expect(b).toMatchObject({ name: "made/by-api", commit: { id: await git(["rev-parse", "v1.0^{commit}"]) } });
      const fromDefault = await (await api("/branches", owner.token, { method: "POST", json: { new_branch_name: "from-default" } })).json();
      expect(fromDefault.commit.id).toBe(await git(["rev-parse", "main"]));
      const remote = await s.gitText(["ls-remote", `http://${host}/${full}.git`]);
      expect(remote).toContain(`${await git(["rev-parse", "v1.0^{commit}"])}\trefs/heads/made/by-api`);

      const refuse = async (json: Json, status: number, message: string, token = owner.token) => {
        const res = await api("/branches", token, { method: "POST", json });
        expect({ status: res.status, message: (await res.json()).message }, JSON.stringify(json)).toEqual({ status, message });
        return res;
      };
      expect(roundTrips(await refuse({ new_branch_name: "main" }, 409, "The branch already exists."))).toBe(1);
      await refuse({ new_branch_name: "feature" }, 409, "The branch with the same name already exists.");
      await refuse({ new_branch_name: "feature/x/y" }, 409, "The branch with the same name already exists.");
      await refuse({ new_branch_name: "light" }, 409, "The branch with the same tag already exists.");
      await refuse({ new_branch_name: "fresh", old_branch_name: "nope" }, 404, "The old branch does not exist");
      await refuse({ new_branch_name: "fresh", old_ref_name: "nope" }, 404, NOT_FOUND);
      await refuse({ new_branch_name: "a..b" }, 422, "[BranchName]: GitRefName");
      await refuse({ new_branch_name: "fresh" }, 403, "user should have a permission to write to a repo", other.token);
      expect((await call("POST", `/api/v1/repos/${full}/branches`, { json: { new_branch_name: "fresh" } })).status).toBe(401);

      const del = await api("/branches/made/by-api", owner.token, { method: "DELETE" });
      expect(del.status).toBe(204);
      expect(roundTrips(del)).toBe(2);
      expect(await s.gitText(["ls-remote", `http://${host}/${full}.git`])).not.toContain("made/by-api");
      const again = await api("/branches/made/by-api", owner.token, { method: "DELETE" });
      expect(again.status).toBe(404);
      expect((await again.json()).errors).toEqual(["branch does not exist [name: made/by-api]"]);
      const head = await api("/branches/main", owner.token, { method: "DELETE" });
      expect({ status: head.status, message: (await head.json()).message }).toEqual({ status: 403, message: "can not delete default branch" });
      expect((await api("/branches/topic", other.token, { method: "DELETE" })).status).toBe(403);

      const feeds = (await (await call("GET", `/api/v1/repos/${full}/activities/feeds?limit=50`, { headers: tokenAuth(owner.token) })).json()) as Json[];
      const ops = feeds.map((f) => `${f.op_type} ${f.ref_name}`);
      expect(ops.slice(0, 5)).toEqual(["delete_branch refs/heads/made/by-api", "commit_repo refs/heads/from-default", "commit_repo refs/heads/from-default", "commit_repo refs/heads/made/by-api", "commit_repo refs/heads/made/by-api"]);
      const dst = s.path(`${target.name}-after`);
      await s.git(["clone", "-q", `http://${host}/${full}.git`, dst]);
      const fsck = await s.git(["fsck", "--full", "--no-dangling"], { cwd: dst });
      expect(fsck.stderr).not.toMatch(/error|missing|broken/i);
    });

    it("updates a branch as a push would (fast-forward, or forced; old_commit_id a lease) and renames one (the default branch only by admins, HEAD follows)", async () => {
      const remoteRef = async (name: string) => (await s.gitText(["ls-remote", `http://${host}/${full}.git`, `refs/heads/${name}`])).split("\t")[0] ?? "";
      expect((await api("/branches", owner.token, { method: "POST", json: { new_branch_name: "upd", old_ref_name: await git(["rev-parse", "main~5"]) } })).status).toBe(201);
      const put = (json: Json, token = owner.token, branch = "upd") => api(`/branches/${branch}`, token, { method: "PUT", json });
      const ff = await put({ new_commit_id: "main~3" });
      expect(ff.status).toBe(204);
      expect(roundTrips(ff)).toBe(2);
      expect(await remoteRef("upd")).toBe(await git(["rev-parse", "main~3"]));
      const answer = async (res: Response) => ({ status: res.status, message: (await res.json()).message });
      const back = await git(["rev-parse", "main~5"]);
      expect(await answer(await put({ new_commit_id: back }))).toEqual({ status: 409, message: `the update of upd to ${back} is not a fast-forward; set force to move it anyway` });
      expect(await answer(await put({ new_commit_id: "main", old_commit_id: back }))).toEqual({ status: 409, message: `the branch is at ${await git(["rev-parse", "main~3"])}, not at old_commit_id ${back}` });
      expect((await put({ new_commit_id: back, force: true, old_commit_id: await git(["rev-parse", "main~3"]) })).status).toBe(204);
      expect(await remoteRef("upd")).toBe(back);
      expect(await answer(await put({ new_commit_id: "no-such-rev" }))).toEqual({ status: 404, message: "object does not exist [id: no-such-rev, rel_path: ]" });
      expect(await answer(await put({ new_commit_id: "" }))).toEqual({ status: 422, message: "[NewCommitID]: Required" });
      expect((await (await put({ new_commit_id: "main" }, owner.token, "no-such-branch")).json()).errors).toEqual(["branch does not exist [name: no-such-branch]"]);
      expect(await answer(await put({ new_commit_id: "main" }, other.token))).toEqual({ status: 403, message: "user should have a permission to write to a repo" });
      expect(await remoteRef("upd")).toBe(back);
      // forced moves without a lease at once: each is judged against the branch as it then is (a
      // lost compare-and-swap reads again), so every one lands and the branch ends at one of them
      const targets = ["main~1", "main~2", "main~3", "main~4"];
      const raced = await Promise.all(targets.map((t) => put({ new_commit_id: t, force: true })));
      expect(raced.map((r) => r.status)).toEqual([204, 204, 204, 204]);
      expect(await Promise.all(targets.map((t) => git(["rev-parse", t])))).toContain(await remoteRef("upd"));
      expect((await put({ new_commit_id: back, force: true })).status).toBe(204);

      const patch = (branch: string, name: string, token = owner.token) => api(`/branches/${branch}`, token, { method: "PATCH", json: { name } });
      const renamed = await patch("upd", "renamed/upd");
      expect(renamed.status).toBe(204);
      expect(roundTrips(renamed)).toBe(2);
      expect([await remoteRef("upd"), await remoteRef("renamed/upd")]).toEqual(["", back]);
      const exists = "Cannot rename a branch using the same name or rename to a branch that already exists.";
      expect(await answer(await patch("upd", "again"))).toEqual({ status: 404, message: "Branch doesn't exist." });
      expect(await answer(await patch("renamed/upd", "main"))).toEqual({ status: 422, message: exists });
      expect(await answer(await patch("renamed/upd", "renamed/upd"))).toEqual({ status: 422, message: exists });
      expect(await answer(await patch("renamed/upd", "feature"))).toEqual({ status: 422, message: exists }); // `feature/x` is in the way
      expect(await answer(await patch("renamed/upd", "a..b"))).toEqual({ status: 422, message: "[Name]: GitRefName" });
      expect(await answer(await patch("renamed/upd", "x", other.token))).toEqual({ status: 403, message: "user should have a permission to write to a repo" });
      const feeds = (await (await call("GET", `/api/v1/repos/${full}/activities/feeds?limit=10`, { headers: tokenAuth(owner.token) })).json()) as Json[];
      expect(feeds.map((f) => `${f.op_type} ${f.ref_name}`)).toContain("delete_branch refs/heads/upd");

      // the default branch: a writer who is not an admin may not rename it; its owner may, and HEAD follows
      const name = uniqName("gad");
      const at = (p: string, token: string, init: { method?: string; json?: unknown } = {}) => call(init.method ?? "GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(token), json: init.json });
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, auto_init: true } })).status).toBe(201);
      expect((await at(`/collaborators/${other.name}`, owner.token, { method: "PUT", json: { permission: "write" } })).status).toBe(204);
      expect(await answer(await at("/branches/main", other.token, { method: "PATCH", json: { name: "trunk" } }))).toEqual({ status: 403, message: "user should be an owner or a collaborator with admin write of a repository" });
      expect((await at("/branches/main", owner.token, { method: "PATCH", json: { name: "trunk" } })).status).toBe(204);
      expect((await (await at("", owner.token)).json()).default_branch).toBe("trunk");
      expect(await s.gitText(["ls-remote", "--symref", `http://${owner.name}:${owner.token}@${host}/${owner.name}/${name}.git`, "HEAD"])).toMatch(/^ref: refs\/heads\/trunk\tHEAD/);
    });

    it("names commit authors in the read's one round trip from the e-mails recorded as commits arrive (push, API commit, fork); unrecorded ones cost one more", async () => {
      const db = createClient({ url: target.databaseUrl });
      try {
        const idOf = async (path: string) => Number((await (await call("GET", `/api/v1/repos/${path}`, { headers: tokenAuth(owner.token) })).json()).id);
        const recorded = async (path: string) =>
          (await db.execute({ sql: "SELECT email FROM git_identity WHERE repo_id = ? ORDER BY email", args: [await idOf(path)] })).rows.map((r) => String(r.email));
        // the push recorded every author and committer e-mail of its commits, lower-cased
        const pushed = [...new Set((await git(["log", "--all", "--format=%ae%n%ce"])).split("\n").map((e) => e.toLowerCase()))].sort();
        expect(await recorded(full)).toEqual(pushed);
        // a commit through the contents API records its author; the answer then names it in one trip
        const put = await api("/contents/by-api.txt", owner.token, { method: "POST", json: { content: Buffer.from("x").toString("base64"), message: "api", author: { name: "Api Author", email: "Api.Author@Example.com" } } });
        expect(put.status).toBe(201);
        expect(await recorded(full)).toContain("api.author@example.com");
        const latest = await api("/commits?limit=1&stat=false&files=false&verification=false", owner.token);
        expect(roundTrips(latest)).toBe(1);
        expect((await latest.json())[0].commit.author).toMatchObject({ name: "Api Author", email: "Api.Author@Example.com" });
        // a fork starts with its base's identities and names the same accounts in one trip
        const fork = await call("POST", `/api/v1/repos/${full}/forks`, { headers: tokenAuth(other.token), json: { name: uniqName("gaf") } });
        expect(fork.status).toBe(202);
        const forkPath = (await fork.json()).full_name as string;
        expect(await recorded(forkPath)).toEqual(await recorded(full));
        const forkBranch = await call("GET", `/api/v1/repos/${forkPath}/branches/feature/x`, { headers: tokenAuth(other.token) });
        expect(roundTrips(forkBranch)).toBe(1);
        expect((await forkBranch.json()).commit.author).toEqual({ name: other.name, email: other.email, username: other.name });
        // commits stored before their e-mails were recorded: the same answer, one more round trip
        const before = await (await api("/branches/feature/x", owner.token)).json();
        await db.execute({ sql: "DELETE FROM git_identity WHERE repo_id = ?", args: [await idOf(forkPath)] });
        const unrecorded = await call("GET", `/api/v1/repos/${forkPath}/branches/feature/x`, { headers: tokenAuth(other.token) });
        expect(roundTrips(unrecorded)).toBe(2);
        expect((await unrecorded.json()).commit.author).toEqual(before.commit.author);
      } finally {
        db.close();
      }
    });

    it("an archived repository: branch create and delete answer its writers 423 'repo is archived', others 403, nothing moves", async () => {
      const name = uniqName("gaa");
      const at = (p: string, token: string, init: { method?: string; json?: unknown } = {}) =>
        call(init.method ?? "GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(token), json: init.json });
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, auto_init: true } })).status).toBe(201);
      expect((await at("/branches", owner.token, { method: "POST", json: { new_branch_name: "keep" } })).status).toBe(201);
      expect((await at("", owner.token, { method: "PATCH", json: { archived: true } })).status).toBe(200);
      const refs = await (await at("/git/refs", owner.token)).text();
      const answer = async (res: Response) => ({ status: res.status, message: (await res.json()).message });
      const create = await at("/branches", owner.token, { method: "POST", json: { new_branch_name: "new-one" } });
      expect(await answer(create)).toEqual({ status: 423, message: "repo is archived" });
      expect(roundTrips(create)).toBe(1);
      expect(await answer(await at("/branches/keep", owner.token, { method: "DELETE" }))).toEqual({ status: 423, message: "repo is archived" });
      // the site admin is a writer too (reqRepoWriter), and is refused the same way
      const byAdmin = await call("POST", `/api/v1/repos/${owner.name}/${name}/branches`, { headers: adminHeaders, json: { new_branch_name: "x" } });
      expect(await answer(byAdmin)).toEqual({ status: 423, message: "repo is archived" });
      // a reader who could not write anyway is refused as a non-writer
      expect(await answer(await at("/branches", other.token, { method: "POST", json: { new_branch_name: "x" } }))).toEqual({ status: 403, message: "user should have a permission to write to a repo" });
      expect(await (await at("/git/refs", owner.token)).text()).toBe(refs);
    });

    it("commits and tags whose dates git stores but RFC 3339 cannot show (year 287168, past int64) are pushed and answered with Go's zero time, never a 500", async () => {
      const name = uniqName("gad");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name } })).status).toBe(201);
      const dir = s.path(`${target.name}-dates`);
      await makeHistory(s, dir, { commits: 2, files: 2 });
      const at = (cmd: string[]) => s.gitText(cmd, { cwd: dir });
      const tree = await at(["rev-parse", "HEAD^{tree}"]);
      const parent = await at(["rev-parse", "HEAD"]);
      const object = async (type: string, body: string) => (await s.git(["hash-object", "-t", type, "-w", "--literally", "--stdin"], { cwd: dir, input: body })).stdout.toString().trim();
      // a far committer date (it reaches the push's activity and webhook payload), then an author date past int64
      const far = await object("commit", `tree ${tree}\nparent ${parent}\nauthor A <a@example.com> 1700000000 +0000\ncommitter C <c@example.com> 9000000000000 +0000\n\nfar\n`);
      // the last commit also adds a file, so that its date is the file's last commit date
      const { writeFileSync } = await import("node:fs");
      writeFileSync(`${dir}/new.txt`, "new\n");
      await at(["add", "new.txt"]);
      const tree2 = await at(["write-tree"]);
      const huge = await object("commit", `tree ${tree2}\nparent ${far}\nauthor A <a@example.com> 99999999999999999999 +0000\ncommitter C <c@example.com> 253402300800 +0000\n\nhuge\n`);
      const tag = await object("tag", `object ${huge}\ntype commit\ntag far\ntagger T <t@example.com> 9000000000000 +0000\n\nfar tag\n`);
      await s.git(["update-ref", "refs/heads/dates", huge], { cwd: dir });
      await s.git(["update-ref", "refs/tags/far", tag], { cwd: dir });
      await s.git(["push", `http://${owner.name}:${owner.token}@${host}/${owner.name}/${name}.git`, "main", "dates", "refs/tags/far"], { cwd: dir });
      const get = async (p: string) => {
        const res = await call("GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(owner.token) });
        expect(res.status, p).toBe(200);
        return res;
      };
      const branch = await (await get("/branches/dates")).json();
      expect(branch.commit.timestamp).toBe("0001-01-01T00:00:00Z");
      expect((await (await get("/branches")).json()).map((b: Json) => b.name).sort()).toEqual(["dates", "main"]);
      const commit = await (await get(`/git/commits/${huge}`)).json();
      expect(commit.commit.author.date).toBe("0001-01-01T00:00:00Z");
      expect(commit.commit.committer.date).toBe("0001-01-01T00:00:00Z");
      expect((await (await get("/commits?sha=dates&limit=2")).json()).map((c: Json) => c.commit.committer.date)).toEqual(["0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]);
      expect((await (await get("/tags/far")).json()).commit.created).toBe("0001-01-01T00:00:00Z");
      expect((await (await get("/tags")).json()).map((t: Json) => t.name)).toEqual(["far"]);
      expect((await (await get(`/git/tags/${tag}`)).json()).tagger.date).toBe("0001-01-01T00:00:00Z");
      const entry = await (await get("/contents/new.txt?ref=dates")).json();
      expect(entry.last_committer_date).toBe("0001-01-01T00:00:00Z");
      const raw = await get("/raw/new.txt?ref=dates");
      expect(raw.headers.get("last-modified")).toBeNull();
      await raw.arrayBuffer();
    });

    it("an empty repository: no branches, commits 409, create and delete 404 'Git Repository is empty.'", async () => {
      const name = uniqName("gae");
      await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name } });
      const at = (p: string, init: { method?: string; json?: unknown } = {}) => call(init.method ?? "GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(owner.token), json: init.json });
      const list = await at("/branches");
      expect(await list.json()).toEqual([]);
      expect(roundTrips(list)).toBe(1);
      const commits = await at("/commits");
      expect({ status: commits.status, body: await commits.json() }).toMatchObject({ status: 409, body: { message: "Git Repository is empty." } });
      const create = await at("/branches", { method: "POST", json: { new_branch_name: "x" } });
      expect({ status: create.status, message: (await create.json()).message }).toEqual({ status: 404, message: "Git Repository is empty." });
      expect((await at("/git/refs")).status).toBe(404);
    });

    it("a private repository's branches, refs and commits answer exactly as a missing repository", async () => {
      const name = uniqName("gap");
      await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, private: true, auto_init: true } });
      for (const p of ["/branches", "/branches/main", "/git/refs", "/git/refs/heads", "/commits", "/git/commits/main"]) {
        for (const token of [undefined, other.token]) {
          const hiddenRes = await call("GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: token ? tokenAuth(token) : {} });
          const missing = await call("GET", `/api/v1/repos/${owner.name}/${name}zz${p}`, { headers: token ? tokenAuth(token) : {} });
          expect(hiddenRes.status, p).toBe(404);
          expect(await hiddenRes.text(), p).toBe(await missing.text());
          expect(roundTrips(hiddenRes)).toBe(1);
        }
        expect((await call("GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(owner.token) })).status, p).toBe(200);
      }
    });
  });
}
