/**
 * Issue 8 on BOTH targets: the rules found by outside testing, one test per rule, named after it —
 * privacy rules outside the matrix (forks, redirects, ownership on creation, credentials in
 * headers), bad input that must be a clear 4xx in Gitea's shape (never a 500, never a partial
 * write), and deletes that leave no orphan row anywhere.
 */
import { createClient, type Client } from "@libsql/client";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefusal, NOT_FOUND, roundTrips } from "../fixtures/app.ts";
import { expectNoOrphans } from "../fixtures/orphans.ts";
import { basicAuth, client, rowsWrittenBy, targets, tokenAuth, uniqName, type Target } from "../fixtures/targets.ts";

/** Sends raw bytes to the target and returns the raw answer (for what `fetch` would not send). */
function raw(target: Target, bytes: Buffer | string, chunks: Buffer[] = []): Promise<string> {
  const { hostname, port } = new URL(target.url);
  return new Promise((ok) => {
    const sock = connect(Number(port), hostname);
    let out = "";
    sock.on("data", (d) => (out += d.toString("latin1")));
    sock.on("error", () => ok(out));
    sock.on("close", () => ok(out));
    sock.write(bytes);
    for (const c of chunks) if (!sock.destroyed) sock.write(c);
    setTimeout(() => sock.destroy(), 10_000).unref();
  });
}

const statusOf = (rawAnswer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(rawAnswer)?.[1] ?? 0);
const bodyOf = (rawAnswer: string) => rawAnswer.slice(rawAnswer.indexOf("\r\n\r\n") + 4);

for (const target of targets()) {
  describe(`hardening on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    let db: Client;

    beforeAll(() => {
      db = createClient({ url: target.databaseUrl });
    });
    afterAll(() => db.close());

    async function newUser(opts: { visibility?: string; restricted?: boolean } = {}) {
      const name = uniqName("hu");
      const res = await call("POST", "/api/v1/admin/users", {
        headers: adminHeaders,
        json: { username: name, email: `${name}@example.com`, password: "hard-password-1", must_change_password: false, visibility: opts.visibility ?? "public", restricted: opts.restricted ?? false },
      });
      expect(res.status).toBe(201);
      const id = (await res.json()).id as number;
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, "hard-password-1"), json: { name: "t", scopes: ["all"] } });
      const token = (await tok.json()).sha1 as string;
      return { name, id, token, h: tokenAuth(token) };
    }
    const repoOf = async (full: string, headers = adminHeaders) => (await call("GET", `/api/v1/repos/${full}`, { headers })).json();

    // ---- A: privacy ----

    it("A.2 a token whose only scope is public-only is refused at creation (Gitea's HasPermissionScope)", async () => {
      const u = await newUser();
      const res = await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, "hard-password-1"), json: { name: "po", scopes: ["public-only"] } });
      expect(res.status).toBe(400);
      expect((await res.json()).message).toBe("access token must have a scope");
      const ok = await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, "hard-password-1"), json: { name: "po2", scopes: ["public-only", "read:repository"] } });
      expect(ok.status).toBe(201);
      expect((await ok.json()).scopes).toEqual(["public-only", "read:repository"]);
    });

    it("A.4 a fork is private when its base is private or the base's owner is private", async () => {
      const priv = await newUser({ visibility: "private" });
      const base = uniqName("fb");
      expect((await call("POST", "/api/v1/user/repos", { headers: priv.h, json: { name: base } })).status).toBe(201);
      const fork = await call("POST", `/api/v1/repos/${priv.name}/${base}/forks`, { headers: adminHeaders, json: { name: uniqName("ff") } });
      expect(fork.status).toBe(202);
      const f = await fork.json();
      expect(f.private).toBe(true);
      expect((await repoOf(`${priv.name}/${base}`)).private).toBe(false);
      // The site admin is shared by every e2e file (the privacy matrix lists its repositories): leave it none.
      expect((await call("DELETE", `/api/v1/repos/${f.full_name}`, { headers: adminHeaders })).status).toBe(204);
    });

    it("A.4 a change of the base's visibility propagates down the fork tree in both directions", async () => {
      const a = await newUser();
      const b = await newUser();
      const c = await newUser();
      const base = uniqName("pb");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: base } });
      expect((await call("POST", `/api/v1/repos/${a.name}/${base}/forks`, { headers: b.h, json: {} })).status).toBe(202);
      expect((await call("POST", `/api/v1/repos/${b.name}/${base}/forks`, { headers: c.h, json: {} })).status).toBe(202);
      const state = async () => [(await repoOf(`${a.name}/${base}`)).private, (await repoOf(`${b.name}/${base}`)).private, (await repoOf(`${c.name}/${base}`)).private];
      expect(await state()).toEqual([false, false, false]);
      expect((await call("PATCH", `/api/v1/repos/${a.name}/${base}`, { headers: a.h, json: { private: true } })).status).toBe(200);
      expect(await state()).toEqual([true, true, true]);
      // A fork cannot choose: its visibility follows the formula whatever is asked.
      const forced = await call("PATCH", `/api/v1/repos/${b.name}/${base}`, { headers: b.h, json: { private: false } });
      expect(forced.status).toBe(200);
      expect((await forced.json()).private).toBe(true);
      expect((await call("PATCH", `/api/v1/repos/${a.name}/${base}`, { headers: a.h, json: { private: false } })).status).toBe(200);
      expect(await state()).toEqual([false, false, false]);
      // The forks' activity went private with them, and stays private now they are public again
      // (what happened while they were private is not published by the base's owner's edit).
      const rows = await db.execute({ sql: "SELECT DISTINCT is_private FROM action WHERE repo_id IN (SELECT id FROM repository WHERE lower_name = ?)", args: [base.toLowerCase()] });
      expect(rows.rows.map((r) => Number(r.is_private))).toEqual([1]);
    });

    it("A.4 an owner becoming private makes the forks of its repositories private, and public again", async () => {
      const owner = await newUser();
      const forker = await newUser();
      const org = uniqName("fo");
      await call("POST", "/api/v1/orgs", { headers: owner.h, json: { username: org, visibility: "public" } });
      const base = uniqName("ob");
      await call("POST", `/api/v1/orgs/${org}/repos`, { headers: owner.h, json: { name: base } });
      expect((await call("POST", `/api/v1/repos/${org}/${base}/forks`, { headers: forker.h, json: {} })).status).toBe(202);
      expect((await repoOf(`${forker.name}/${base}`)).private).toBe(false);
      await call("PATCH", `/api/v1/orgs/${org}`, { headers: owner.h, json: { visibility: "private" } });
      expect((await repoOf(`${forker.name}/${base}`)).private).toBe(true);
      await call("PATCH", `/api/v1/orgs/${org}`, { headers: owner.h, json: { visibility: "public" } });
      expect((await repoOf(`${forker.name}/${base}`)).private).toBe(false);
    });

    it("A.4 one owner may fork a repository once: a second fork is 409, and concurrent forks yield exactly one", async () => {
      const a = await newUser();
      const b = await newUser();
      const base = uniqName("once");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: base } });
      expect((await call("POST", `/api/v1/repos/${a.name}/${base}/forks`, { headers: b.h, json: {} })).status).toBe(202);
      const again = await call("POST", `/api/v1/repos/${a.name}/${base}/forks`, { headers: b.h, json: { name: uniqName("again") } });
      expect(again.status).toBe(409);
      expect((await again.json()).message).toBe(`repository is already forked by user [uname: ${b.name}, repo path: ${a.name}/${base}, fork path: ${b.name}/${base}]`);

      const c = await newUser();
      const d = await newUser();
      const fork = (who: { h: Record<string, string> }, name: string) => call("POST", `/api/v1/repos/${a.name}/${base}/forks`, { headers: who.h, json: { name } });
      const one = await rowsWrittenBy(db, () => fork(d, `${base}-solo`));
      let answers: Response[] = [];
      const race = await rowsWrittenBy(db, async () => {
        answers = await Promise.all(Array.from({ length: 12 }, (_, i) => fork(c, `${base}-race${i}`)));
      });
      // Twelve racing forks wrote exactly what one fork writes, in every table.
      expect(race).toEqual(one);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 202)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(11);
      const winner = (await answers.find((r) => r.status === 202)!.json()).name as string;
      // A loser that saw the winner's fork names it; one that lost at the unique index names the
      // path it asked for (the fork it could not create).
      const messages = await Promise.all(answers.filter((r) => r.status === 409).map(async (r) => (await r.json()).message as string));
      const prefix = `repository is already forked by user [uname: ${c.name}, repo path: ${a.name}/${base}, fork path: ${c.name}/`;
      for (const m of messages) expect([`${prefix}${winner}]`, ...Array.from({ length: 12 }, (_, i) => `${prefix}${base}-race${i}]`)]).toContain(m);
      expect(messages).toHaveLength(11);
      const forks = await db.execute({ sql: "SELECT COUNT(*) AS n FROM repository WHERE owner_id = ? AND fork_id = (SELECT id FROM repository WHERE owner_id = ? AND lower_name = ?)", args: [c.id, a.id, base.toLowerCase()] });
      expect(Number(forks.rows[0]!.n)).toBe(1);
      expect((await repoOf(`${a.name}/${base}`)).forks_count).toBe(3);
    });

    it("A.5 a rename redirect is followed only for callers who may see the repository", async () => {
      const a = await newUser();
      const name = uniqName("hid");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, private: true } });
      await call("PATCH", `/api/v1/repos/${a.name}/${name}`, { headers: a.h, json: { name: `${name}-new` } });
      const own = await call("GET", `/api/v1/repos/${a.name}/${name}`, { headers: a.h });
      expect(own.status).toBe(307);
      const missing = await call("GET", `/api/v1/repos/${a.name}/${uniqName("nope")}`);
      for (const headers of [{}, (await newUser()).h]) {
        const res = await call("GET", `/api/v1/repos/${a.name}/${name}`, { headers });
        expect(res.status).toBe(404);
        expect(res.headers.get("Location")).toBeNull();
        expect(await res.text()).toBe(await missing.clone().text());
      }
    });

    it("A.5 a hidden owner, parent or organization appears nowhere: no e-mail or profile, no parent, the deprecated create route answers as for a missing org", async () => {
      const priv = await newUser({ visibility: "private" });
      const collab = await newUser();
      const name = uniqName("hidden-owner");
      await call("POST", "/api/v1/user/repos", { headers: priv.h, json: { name, private: true } });
      await call("PATCH", `/api/v1/admin/users/${priv.name}`, { headers: adminHeaders, json: { full_name: "Secret Name", location: "Secret Place", email: `${priv.name}@secret.example` } });
      expect((await call("PUT", `/api/v1/repos/${priv.name}/${name}/collaborators/${collab.name}`, { headers: priv.h, json: { permission: "read" } })).status).toBe(204);
      const seen = await call("GET", `/api/v1/repos/${priv.name}/${name}`, { headers: collab.h });
      expect(seen.status).toBe(200);
      const text = await seen.text();
      for (const secret of ["Secret Name", "Secret Place", "secret.example"]) expect(text).not.toContain(secret);
      expect(JSON.parse(text).owner.login).toBe(priv.name);
      // The owner itself, and an admin, see the profile.
      expect((await repoOf(`${priv.name}/${name}`, priv.h)).owner.full_name).toBe("Secret Name");

      // A fork the caller may read of a base it may not: no parent in the fork's JSON.
      const base = await newUser();
      const baseName = uniqName("pbase");
      await call("POST", "/api/v1/user/repos", { headers: base.h, json: { name: baseName, private: true } });
      const forker = await newUser();
      await call("PUT", `/api/v1/repos/${base.name}/${baseName}/collaborators/${forker.name}`, { headers: base.h, json: { permission: "read" } });
      expect((await call("POST", `/api/v1/repos/${base.name}/${baseName}/forks`, { headers: forker.h, json: {} })).status).toBe(202);
      const reader = await newUser();
      await call("PUT", `/api/v1/repos/${forker.name}/${baseName}/collaborators/${reader.name}`, { headers: forker.h, json: { permission: "read" } });
      const fork = await repoOf(`${forker.name}/${baseName}`, reader.h);
      expect(fork.fork).toBe(true);
      expect(fork.parent).toBeUndefined();
      expect((await repoOf(`${forker.name}/${baseName}`, forker.h)).parent.full_name).toBe(`${base.name}/${baseName}`);

      const org = uniqName("hiddenorg");
      await call("POST", "/api/v1/orgs", { headers: base.h, json: { username: org, visibility: "private" } });
      const hidden = await call("POST", `/api/v1/org/${org}/repos`, { headers: reader.h, json: { name: "x" } });
      const missing = await call("POST", `/api/v1/org/${org}zz/repos`, { headers: reader.h, json: { name: "x" } });
      expect(hidden.status).toBe(422);
      expect(missing.status).toBe(422);
      expect((await hidden.json()).message.replace(org, "<org>")).toBe((await missing.json()).message.replace(`${org}zz`, "<org>"));
    });

    it("A.7 a member who creates a repository in an organization without an admin team becomes its admin collaborator", async () => {
      const owner = await newUser();
      const dev = await newUser();
      const org = uniqName("co");
      await call("POST", "/api/v1/orgs", { headers: owner.h, json: { username: org } });
      const team = await (await call("POST", `/api/v1/orgs/${org}/teams`, { headers: owner.h, json: { name: "devs", permission: "write", units: ["repo.code"], can_create_org_repo: true } })).json();
      expect((await call("PUT", `/api/v1/teams/${team.id}/members/${dev.name}`, { headers: owner.h })).status).toBe(204);
      const name = uniqName("mine");
      const created = await call("POST", `/api/v1/orgs/${org}/repos`, { headers: dev.h, json: { name } });
      expect(created.status).toBe(201);
      const perm = await (await call("GET", `/api/v1/repos/${org}/${name}/collaborators/${dev.name}/permission`, { headers: owner.h })).json();
      expect(perm.permission).toBe("admin");
      const edit = await call("PATCH", `/api/v1/repos/${org}/${name}`, { headers: dev.h, json: { description: "managed by its creator" } });
      expect(edit.status).toBe(200);
      // An owner creating one is admin through the Owners team: no collaborator row.
      const byOwner = uniqName("own");
      await call("POST", `/api/v1/orgs/${org}/repos`, { headers: owner.h, json: { name: byOwner } });
      expect(await (await call("GET", `/api/v1/repos/${org}/${byOwner}/collaborators`, { headers: owner.h })).json()).toEqual([]);
    });

    it("A.8 credentials given as ?token= or ?access_token= are never echoed in any header or body", async () => {
      const a = await newUser();
      for (let i = 0; i < 3; i++) await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: uniqName("echo") } });
      const name = uniqName("mv");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name } });
      await call("PATCH", `/api/v1/repos/${a.name}/${name}`, { headers: a.h, json: { name: `${name}-2` } });
      for (const key of ["token", "access_token"]) {
        for (const [path, status, header, value] of [
          [`/api/v1/user/repos?limit=1&${key}=${a.token}`, 200, "Link", /rel="next"/],
          [`/api/v1/repos/${a.name}/${name}?${key}=${a.token}`, 307, "Location", new RegExp(`^/api/v1/repos/${a.name}/${name}-2$`)],
          [`/api/v1/repos/search?q=echo&limit=1&${key}=${a.token}`, 200, "Link", /rel="next"/],
        ] as const) {
          const res = await call("GET", path);
          expect(res.status, path).toBe(status);
          // The header that carries the request's URL is there, without the credential.
          expect(res.headers.get(header) ?? "", path).toMatch(value);
          const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n");
          expect(headers, path).not.toContain(a.token);
          expect(await res.text(), path).not.toContain(a.token);
        }
      }
    });

    // ---- B: bad input ----

    it("B.1 empty and unknown values of enum-like query parameters get Gitea's answer, never a 500", async () => {
      const expectations: [string, number, string?][] = [
        ["/api/v1/repos/search?sort=", 200],
        ["/api/v1/repos/search?sort=&order=", 200],
        ["/api/v1/repos/search?order=sideways", 200],
        ["/api/v1/repos/search?sort=alpha&order=", 200],
        ["/api/v1/repos/search?sort=bogus", 422, 'Invalid sort mode: "bogus"'],
        ["/api/v1/repos/search?sort=constructor", 422, 'Invalid sort mode: "constructor"'],
        ["/api/v1/repos/search?sort=__proto__", 422, 'Invalid sort mode: "__proto__"'],
        ["/api/v1/repos/search?sort=id&order=sideways", 422, 'Invalid sort order: "sideways"'],
        ["/api/v1/repos/search?mode=", 200],
        ["/api/v1/repos/search?mode=Fork", 422, 'Invalid search mode: "Fork"'],
        ["/api/v1/repos/search?uid=abc&team_id=-&priority_owner_id=1e9&starredBy=", 200],
        ["/api/v1/repos/search?template=abc&archived=&is_private=maybe&private=nope&topic=x&exclusive=2", 200],
        ["/api/v1/users/search?uid=abc", 200],
        [`/api/v1/users/${target.admin.name}/activities/feeds?date=not-a-date&only-performed-by=perhaps`, 200],
      ];
      for (const [path, status, message] of expectations) {
        const res = await call("GET", path, { headers: adminHeaders });
        const body = await res.json();
        expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(status);
        if (message) expect(body.message, path).toBe(message);
      }
      const a = await newUser();
      const repo = uniqName("lb");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: repo, issue_labels: "Default" } });
      for (const sort of ["", "constructor", "toString", "bogus", "mostissues"]) {
        const res = await call("GET", `/api/v1/repos/${a.name}/${repo}/labels?sort=${sort}`, { headers: a.h });
        expect(res.status, sort).toBe(200);
        expect((await res.json()).length, sort).toBeGreaterThan(0);
      }
      // FormOptionalBool: `template=abc` is Some(false) — only non-templates.
      const tpl = uniqName("tpl");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: tpl, template: true } });
      const nonTemplates = await (await call("GET", `/api/v1/repos/search?q=${tpl}&template=abc`, { headers: a.h })).json();
      expect(nonTemplates.data).toEqual([]);
      const templates = await (await call("GET", `/api/v1/repos/search?q=${tpl}&template=1`, { headers: a.h })).json();
      expect(templates.data.map((r: { name: string }) => r.name)).toEqual([tpl]);
    });

    it("B.2 unknown unit keys on team create and edit are a 422 and write nothing", async () => {
      const owner = await newUser();
      const org = uniqName("uo");
      await call("POST", "/api/v1/orgs", { headers: owner.h, json: { username: org } });
      for (const [json, message] of [
        [{ name: "t1", permission: "read", units: ["repo.code", "repo.bogus"] }, '[Units]: unknown unit "repo.bogus"'],
        [{ name: "t2", permission: "write", units_map: { "repo.nope": "write" } }, '[UnitsMap]: unknown unit "repo.nope"'],
        [{ name: "t3", units_map: { "": "read" } }, '[UnitsMap]: unknown unit ""'],
      ] as const) {
        await expectRefusal(call("POST", `/api/v1/orgs/${org}/teams`, { headers: owner.h, json }), 422, message, JSON.stringify(json));
      }
      const teams = await (await call("GET", `/api/v1/orgs/${org}/teams`, { headers: owner.h })).json();
      expect(teams.map((t: { name: string }) => t.name)).toEqual(["Owners"]);
      const t = await (await call("POST", `/api/v1/orgs/${org}/teams`, { headers: owner.h, json: { name: "ok", permission: "read", units: ["repo.code"] } })).json();
      for (const [json, message] of [
        [{ units: ["repo.x"] }, '[Units]: unknown unit "repo.x"'],
        [{ units_map: { "repo.code": "read", "repo.y": "admin" } }, '[UnitsMap]: unknown unit "repo.y"'],
      ] as const) {
        await expectRefusal(call("PATCH", `/api/v1/teams/${t.id}`, { headers: owner.h, json }), 422, message, JSON.stringify(json));
      }
      expect((await (await call("GET", `/api/v1/teams/${t.id}`, { headers: owner.h })).json()).units).toEqual(["repo.code"]);
    });

    it("B.3 a query parameter given twice uses its first value, as Go does", async () => {
      const a = await newUser();
      const b = await newUser();
      const tag = uniqName("dup");
      for (let i = 0; i < 3; i++) await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: `${tag}-${i}` } });
      await call("POST", "/api/v1/user/repos", { headers: b.h, json: { name: `${tag}-b` } });
      const page = await call("GET", `/api/v1/repos/search?q=${tag}&limit=1&limit=50&page=2&page=1`, { headers: a.h });
      expect(page.status).toBe(200);
      expect((await page.json()).data.map((r: { name: string }) => r.name)).toEqual([`${tag}-1`]);
      const uid = await (await call("GET", `/api/v1/repos/search?q=${tag}&uid=${b.id}&uid=${a.id}`, { headers: a.h })).json();
      expect(uid.data.map((r: { name: string }) => r.name)).toEqual([`${tag}-b`]);
      const sorted = await call("GET", `/api/v1/repos/search?q=${tag}&sort=id&sort=bogus&order=desc&order=x`, { headers: a.h });
      expect(sorted.status).toBe(200);
      expect((await sorted.json()).data.map((r: { name: string }) => r.name)).toEqual([`${tag}-b`, `${tag}-2`, `${tag}-1`, `${tag}-0`]);
    });

    it("B.4 path ids and names outside the valid range answer 404 as a missing resource, after authentication", async () => {
      const missing = await (await call("GET", "/api/v1/repositories/999999999", { headers: adminHeaders })).text();
      for (const id of ["9223372036854775808", "99999999999999999999999", "-1", "abc", "0", "1.5", "0x10"]) {
        const res = await call("GET", `/api/v1/repositories/${id}`, { headers: adminHeaders });
        expect(res.status, id).toBe(404);
        expect(await res.text(), id).toBe(missing);
        expect(roundTrips(res), id).toBe(1);
        await expectRefusal(call("GET", `/api/v1/teams/${id}`, { headers: adminHeaders }), 404, NOT_FOUND, id);
        // Bad credentials are judged first.
        await expectRefusal(call("GET", `/api/v1/repositories/${id}`, { headers: tokenAuth("0".repeat(40)) }), 401, "invalid username, password or token", id);
      }
      const long = "x".repeat(300);
      for (const path of [`/api/v1/users/${long}`, `/api/v1/orgs/${long}`, `/api/v1/repos/${long}/${long}`, `/api/v1/repos/${target.admin.name}/${long}/labels`, `/api/v1/orgs/${long}/teams`]) {
        const res = await call("GET", path, { headers: adminHeaders });
        expect(res.status, path).toBe(404);
        expect((await res.json()).message, path).toBe("The target couldn't be found.");
      }
    });

    it("B.5 a blank or whitespace JSON body on PATCH routes is an empty edit", async () => {
      const a = await newUser();
      const name = uniqName("blank");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, description: "kept" } });
      const org = uniqName("bo");
      await call("POST", "/api/v1/orgs", { headers: a.h, json: { username: org, description: "kept" } });
      const team = await (await call("POST", `/api/v1/orgs/${org}/teams`, { headers: a.h, json: { name: "t", permission: "read", units: ["repo.code"], description: "kept" } })).json();
      for (const body of ["", "   ", "\n\t \r\n"]) {
        for (const [path, check] of [
          [`/api/v1/repos/${a.name}/${name}`, (j: { description: string }) => j.description],
          [`/api/v1/orgs/${org}`, (j: { description: string }) => j.description],
          [`/api/v1/teams/${team.id}`, (j: { description: string }) => j.description],
        ] as const) {
          const res = await fetch(`${target.url}${path}`, { method: "PATCH", headers: { ...a.h, "Content-Type": "application/json" }, body });
          expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(200);
          expect(check(await res.json())).toBe("kept");
        }
      }
      // A blank body on a create is an empty form: Gitea's binding answers which field is required.
      const res = await fetch(`${target.url}/api/v1/user/repos`, { method: "POST", headers: { ...a.h, "Content-Type": "application/json" }, body: "  " });
      expect(res.status).toBe(422);
      expect((await res.json()).message).toBe("[Name]: Required");
    });

    it("B.6 NUL characters are refused (422 in bodies and queries, 404 in paths); other control characters round-trip identically", async () => {
      const a = await newUser();
      const name = uniqName("nul");
      const before = await db.execute("SELECT COUNT(*) AS n FROM repository");
      const res = await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, description: "a\u0000b" } });
      expect(res.status).toBe(422);
      expect((await res.json()).message).toBe("[Description]: invalid character NUL");
      expect((await db.execute("SELECT COUNT(*) AS n FROM repository")).rows[0]!.n).toBe(before.rows[0]!.n);
      await expectRefusal(call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: `${name}\u0000x` } }), 422, "[Name]: invalid character NUL");
      // A NUL in the path can match nothing — not a prefix of an existing name either.
      await expectRefusal(call("GET", `/api/v1/users/${a.name}%00suffix`, { headers: a.h }), 404, NOT_FOUND);
      // refused before routing with a body sent (600 KB): the answer still arrives (workerd drops a connection whose body was left unread)
      await expectRefusal(call("POST", `/api/v1/repos/${a.name}/x/contents/%00`, { headers: a.h, json: { content: "aGk=" } }), 404, NOT_FOUND);
      await expectRefusal(call("POST", `/api/v1/repos/${a.name}/x/contents/%ff%fe`, { headers: a.h, json: { content: "aGk=".repeat(150_000) } }), 404, NOT_FOUND);
      await expectRefusal(call("POST", `/api/v1/repos/${a.name}/x/contents/a%zz`, { headers: a.h, json: { content: "aGk=" } }), 400, 'invalid URL escape "%zz"');
      const query = await call("GET", "/api/v1/repos/search?q=a%00b", { headers: a.h });
      expect(query.status).toBe(422);
      expect((await query.json()).message).toBe("[Q]: invalid character NUL");
      await expectRefusal(call("GET", "/api/v1/user", { headers: basicAuth(`${a.name}\u0000x`, "hard-password-1") }), 401, "invalid username, password or token");

      const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join("") + "\u007f\u2028\u{1F600}";
      const ok = await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, description: controls } });
      expect(ok.status).toBe(201);
      expect((await ok.json()).description).toBe(controls);
      expect((await repoOf(`${a.name}/${name}`, a.h)).description).toBe(controls);
    });

    it("a null member of a JSON body is as if it were absent (Go's decoder): edits keep the field, creates take the default, a required one is still required", async () => {
      const a = await newUser();
      const name = uniqName("nil");
      const made = await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, description: null, private: null, default_branch: null } });
      expect(made.status).toBe(201);
      expect(await made.json()).toMatchObject({ description: "", private: false, default_branch: "main" });
      const edit = await call("PATCH", `/api/v1/repos/${a.name}/${name}`, { headers: a.h, json: { description: "kept" } });
      expect(edit.status).toBe(200);
      const nulls = await call("PATCH", `/api/v1/repos/${a.name}/${name}`, { headers: a.h, json: { description: null, website: "https://example.com", has_issues: null } });
      expect(nulls.status).toBe(200);
      expect(await nulls.json()).toMatchObject({ description: "kept", website: "https://example.com", has_issues: true });
      const label = await call("POST", `/api/v1/repos/${a.name}/${name}/labels`, { headers: a.h, json: { name: "l", color: "#00aabb", description: null, exclusive: null } });
      expect(label.status).toBe(201);
      expect(await label.json()).toMatchObject({ description: "", exclusive: false });
      await expectRefusal(call("POST", "/api/v1/user/repos", { headers: a.h, json: { name: null } }), 422, "[Name]: Required");
    });

    it("a body that is neither JSON nor a form is Gitea's binding 422 (empty or unsupported Content-Type), never a 415, and writes nothing; a form binds as Gitea's", async () => {
      const a = await newUser();
      const name = uniqName("ct");
      const post = (headers: Record<string, string>, body: string) => fetch(`${target.url}/api/v1/user/repos`, { method: "POST", headers: { ...a.h, ...headers }, body });
      const none = await post({}, JSON.stringify({ name })); // fetch adds text/plain to a string body unless told otherwise
      expect(none.status).toBe(422);
      expect((await none.json()).message).toBe("[]: Unsupported Content-Type");
      const formName = uniqName("form");
      const form = await post({ "Content-Type": "application/x-www-form-urlencoded" }, `name=${formName}&private=true`);
      expect(form.status).toBe(201);
      expect(await form.json()).toMatchObject({ name: formName, private: true });
      const empty = await fetch(`${target.url}/api/v1/user/repos`, { method: "POST", headers: a.h, body: new Uint8Array(Buffer.from(JSON.stringify({ name }))) });
      expect(empty.status).toBe(422);
      expect((await empty.json()).message).toBe("[]: Empty Content-Type");
      expect((await call("GET", `/api/v1/repos/${a.name}/${name}`, { headers: a.h })).status).toBe(404);
    });

    it("a body nested deeper than Go's decoder reads (10,000) is a 422 that writes nothing; one just within it is read, its unknown member ignored", async () => {
      const a = await newUser();
      const name = uniqName("deep");
      await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name } });
      const nested = (depth: number, label: string) => `{"name":"${label}","color":"#ff0000","extra":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
      const post = (body: string) => fetch(`${target.url}/api/v1/repos/${a.name}/${name}/labels`, { method: "POST", headers: { ...a.h, "Content-Type": "application/json" }, body });
      const ok = await post(nested(10_000, "within"));
      expect(ok.status).toBe(201);
      const deep = await post(nested(10_001, "beyond"));
      expect(deep.status).toBe(422);
      expect((await deep.json()).message).toBe("[Body]: DeserializationError: exceeded max depth");
      const labels = await (await call("GET", `/api/v1/repos/${a.name}/${name}/labels`, { headers: a.h })).json();
      expect(labels.map((l: { name: string }) => l.name)).toEqual(["within"]);
    });

    it("Gitea's order: the route's guards before its body is bound — a hidden repository is a 404 whatever the body, its owner's bad body a 422, nothing written", async () => {
      const [a, b] = [await newUser(), await newUser()];
      const name = uniqName("order");
      expect((await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, private: true } })).status).toBe(201);
      const labels = `/api/v1/repos/${a.name}/${name}/labels`;
      const bodies: [Record<string, string>, string, string][] = [
        [{ "Content-Type": "application/json" }, "{not json", "[Body]: DeserializationError: Malformed JSON in request body"],
        [{ "Content-Type": "application/json" }, "[]", "[]: TypeError: expected object"],
        [{ "Content-Type": "text/plain" }, "name=x", "[]: Unsupported Content-Type"],
        [{ "Content-Type": "application/json" }, `{"name":"a\\u0000","color":"#fff"}`, "[Name]: invalid character NUL"],
      ];
      for (const [headers, body, message] of bodies) {
        const post = (h: Record<string, string>) => fetch(`${target.url}${labels}`, { method: "POST", headers: { ...h, ...headers }, body });
        await expectRefusal(post(b.h), 404, NOT_FOUND, `outsider: ${body}`);
        await expectRefusal(post(a.h), 422, message, `owner: ${body}`);
      }
      expect(await (await call("GET", labels, { headers: a.h })).json()).toEqual([]);
    });

    it("paths as Gitea's router takes them: a . or .. segment (raw or %2e) is never resolved into another route — 404, nothing written; stray slashes collapse", async () => {
      const a = await newUser();
      const name = uniqName("dots");
      expect((await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, auto_init: true } })).status).toBe(201);
      const org = uniqName("do");
      expect((await call("POST", "/api/v1/orgs", { headers: a.h, json: { username: org } })).status).toBe(201);
      const team = await (await call("POST", `/api/v1/orgs/${org}/teams`, { headers: a.h, json: { name: "t", permission: "read", units: ["repo.code"] } })).json();
      // raw request targets (fetch would resolve the dots itself): node:http sends the path as given
      const { request } = await import("node:http");
      const raw = (method: string, path: string, body?: string) =>
        new Promise<{ status: number; json: { message?: string } }>((ok, fail) => {
          const u = new URL(target.url);
          const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...a.h, ...(body ? { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) } : {}) } }, (res) => {
            let text = "";
            res.on("data", (d) => (text += d));
            res.on("end", () => ok({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : {} }));
          });
          req.on("error", fail);
          req.end(body);
        });
      // workerd resolves dot segments while it parses the request, before the Worker sees its URL
      // (as Cloudflare's URL normalization does in front of it): only Node's server can refuse them.
      if (target.name === "node") {
        for (const dots of ["..", "%2E%2E", "%2e.", ".%2E"]) {
          const del = await raw("DELETE", `/api/v1/teams/${dots}/repos/${a.name}/${name}`);
          expect(del.status, dots).toBe(404);
          expect(del.json.message).toBe(NOT_FOUND);
        }
        const viaContents = await raw("DELETE", `/api/v1/repos/${a.name}/${name}/contents/%2E%2E/%2E%2E/${name}`, JSON.stringify({ message: "rm", sha: "0".repeat(40) }));
        expect(viaContents.status).toBe(404);
        expect((await raw("GET", `/api/v1/teams/${team.id}/./`)).status).toBe(404);
      }
      expect((await raw("GET", `/api/v1/users/${a.name}/..%5C..%5Crepos`)).status).toBe(404); // %5C is not a separator: one odd name
      // The root of the contents routes named "." (Gitea documents it for contents-ext; a Go client
      // sends it as written), empty, or left out: the root directory.
      for (const root of ["contents-ext/.", "contents-ext/%2E", "contents-ext/", "contents-ext"]) {
        const res = await raw("GET", `/api/v1/repos/${a.name}/${name}/${root}`);
        expect(res.status, root).toBe(200);
        expect((res.json as { dir_contents?: { name: string }[] }).dir_contents?.map((e) => e.name), root).toContain("README.md");
      }
      for (const root of ["contents/.", "contents/%2e"]) {
        const res = await raw("GET", `/api/v1/repos/${a.name}/${name}/${root}`);
        expect(res.status, root).toBe(200);
        expect((res.json as unknown as { name: string }[]).map((e) => e.name), root).toContain("README.md");
      }
      // still there
      expect((await call("GET", `/api/v1/repos/${a.name}/${name}`, { headers: a.h })).status).toBe(200);
      expect((await call("GET", `/api/v1/repos/${a.name}/${name}/contents/README.md`, { headers: a.h })).status).toBe(200);
      // stray slashes: Gitea's stripSlashesMiddleware
      expect((await raw("GET", "/api/v1//version")).status).toBe(200);
      expect((await raw("GET", "/api/v1/version/")).status).toBe(200);
      expect((await raw("GET", `/api/v1/repos//${a.name}///${name}//`)).status).toBe(200);
      expect((await raw("GET", `/api/v1/repos/${a.name}/${name}?q=a//b/`)).status).toBe(200);
    });

    it("a lone UTF-16 surrogate in a JSON body becomes U+FFFD, as Go's decoder makes it: what a write answers is what it stored", async () => {
      const a = await newUser();
      const name = uniqName("sur");
      // JSON.stringify writes a lone surrogate as the escape \ud800.
      const made = await call("POST", "/api/v1/user/repos", { headers: a.h, json: { name, description: "x\ud800y", auto_init: true } });
      expect(made.status).toBe(201);
      expect((await made.json()).description).toBe("x\uFFFDy");
      expect((await repoOf(`${a.name}/${name}`, a.h)).description).toBe("x\uFFFDy");
      const branch = await call("POST", `/api/v1/repos/${a.name}/${name}/branches`, { headers: a.h, json: { new_branch_name: "b\udc00", old_branch_name: "main" } });
      expect(branch.status).toBe(201);
      expect((await branch.json()).name).toBe("b\uFFFD");
      expect((await call("GET", `/api/v1/repos/${a.name}/${name}/branches/${encodeURIComponent("b\uFFFD")}`, { headers: a.h })).status).toBe(200);
      const file = await call("POST", `/api/v1/repos/${a.name}/${name}/contents/f.txt`, { headers: a.h, json: { content: "aGk=", new_branch: "nb\ud800" } });
      expect(file.status).toBe(201);
      expect((await file.json()).commit.html_url).toBeTypeOf("string");
      expect((await call("GET", `/api/v1/repos/${a.name}/${name}/branches/${encodeURIComponent("nb\uFFFD")}`, { headers: a.h })).status).toBe(200);
    });

    it("B.7 answers that were not JSON are JSON in Gitea's shape: oversized headers (over 16 KiB: 431 on both targets) and chunked oversized bodies; the server survives", async () => {
      const { hostname, port } = new URL(target.url);
      const big = await raw(target, `GET /api/v1/version HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Big: ${"a".repeat(200_000)}\r\nConnection: close\r\n\r\n`);
      expect(statusOf(big), big.slice(0, 200)).toBe(431);
      // On Node the app answers; under workerd the runtime refuses such a request before any Worker
      // code runs (as Cloudflare's edge does in production), with its own plain-text answer.
      if (target.name === "node") expect(JSON.parse(bodyOf(big))).toEqual({ message: "request header fields too large", url: expect.stringMatching(/api\/swagger$/) });
      // Over Node's 16 KiB and under what workerd refuses itself: the same JSON 431 on both targets.
      for (const [what, head] of [
        ["a 70 KB header", `GET /api/v1/version HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Big: ${"a".repeat(70_000)}\r\nConnection: close\r\n\r\n`],
        ["a 20 KB query", `GET /api/v1/repos/search?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`],
      ]) {
        const answer = await raw(target, head!);
        expect(statusOf(answer), `${what}: ${answer.slice(0, 200)}`).toBe(431);
        expect(JSON.parse(bodyOf(answer)), what).toEqual({ message: "request header fields too large", url: expect.stringMatching(/api\/swagger$/) });
      }
      const near = await call("GET", "/api/v1/version", { headers: { "X-Near": "a".repeat(15_000) } });
      expect(near.status, "15 KB of headers pass").toBe(200);
      expect((await call("GET", "/api/v1/version")).status).toBe(200);
      const chunk = Buffer.concat([Buffer.from(`100000\r\n`), Buffer.alloc(0x100000, 0x78), Buffer.from("\r\n")]);
      for (const path of ["/api/v1/user/repos", "/api/v1/version", `/api/v1/repos/${target.admin.name}/x/labels`]) {
        const head = `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nAuthorization: token ${target.admin.token}\r\nTransfer-Encoding: chunked\r\n\r\n`;
        const answer = await raw(target, head, [...Array.from({ length: 3 }, () => chunk), Buffer.from("0\r\n\r\n")]);
        expect(statusOf(answer), answer.slice(0, 200)).toBe(413);
        expect(JSON.parse(bodyOf(answer)).message).toBe("request body too large");
        const alive = await call("GET", "/api/v1/version");
        expect(alive.status).toBe(200);
      }
    });

    // Node's server only: a CONNECT never reaches a Worker's fetch handler (Cloudflare's edge takes
    // it; locally, Miniflare's entry Worker answers it with its own 500).
    it.skipIf(target.name !== "node")("a CONNECT request is answered as any method no route serves (405 with Allow, or 404), not dropped unanswered", async () => {
      const { hostname, port } = new URL(target.url);
      const served = await raw(target, `CONNECT /api/v1/version HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      expect(statusOf(served), served.slice(0, 200)).toBe(405);
      expect(served).toMatch(/\r\nallow: GET, HEAD\r\n/i);
      expect(JSON.parse(bodyOf(served))).toEqual({ message: "Method Not Allowed", url: expect.stringMatching(/api\/swagger$/) });
      const unknown = await raw(target, `CONNECT /api/v1/no/such/route HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      expect(statusOf(unknown), unknown.slice(0, 200)).toBe(404);
      const authority = await raw(target, `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`);
      expect(statusOf(authority), authority.slice(0, 200)).toBe(404);
      // The tunnel is never opened: what follows the request is not relayed anywhere.
      expect(authority).toMatch(/\r\nConnection: close\r\n/);
      expect((await call("GET", "/api/v1/version")).status).toBe(200);
      // A client that keeps its side open does not keep the server's: after the answer the server
      // closes the socket both ways (bytes sent to it then are refused), so such requests pile up nothing.
      const refused = await new Promise<string>((ok) => {
        const sock = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
        sock.on("error", (e: NodeJS.ErrnoException) => ok(e.code ?? "error"));
        // the first write after the server's close draws its RST, the next one fails
        sock.on("end", () => setTimeout(() => sock.write("still here\r\n", () => setTimeout(() => sock.write("again\r\n"), 300)), 300));
        sock.on("data", () => undefined);
        sock.write(`CONNECT /api/v1/version HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
        setTimeout(() => {
          ok("still open");
          sock.destroy();
        }, 5000).unref();
      });
      expect(["ECONNRESET", "EPIPE"]).toContain(refused);
    });

    // Node's server only: under workerd the runtime owns the client's connection (in production,
    // Cloudflare's edge), and workerd resets one whose body the Worker left unread.
    it.skipIf(target.name !== "node")("a client that keeps its connection after a 413 is not left with a dropped one: its next requests are answered", async () => {
      // One keep-alive socket: a body over the limit, then small requests on the same client.
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
      const post = (body: string) =>
        new Promise<number>((ok, fail) => {
          const req = httpRequest(`${target.url}/api/v1/user/emails`, { method: "POST", agent, headers: { ...adminHeaders, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
            res.resume();
            res.on("end", () => ok(res.statusCode ?? 0));
          });
          req.on("error", fail);
          req.end(body);
        });
      try {
        const big = JSON.stringify({ emails: ["a".repeat(2 * 1024 * 1024)] });
        // The answer comes before the body is read; a client still writing when the server closes
        // may see its write fail instead (as with Gitea's Go server, which closes such a connection too).
        expect([413, "write EPIPE", "write ECONNRESET"]).toContain(await post(big).catch((e: Error) => e.message));
        const after: (number | string)[] = [];
        for (let i = 0; i < 4; i++) after.push(await post("{").catch((e: Error) => e.message));
        expect(after).toEqual([422, 422, 422, 422]);
      } finally {
        agent.destroy();
      }
    });

    it("B.8 a route's every answer is in its documented responses (spot check of the generic ones)", async () => {
      const doc = await (await call("GET", "/openapi3.v1.json")).json();
      for (const ops of Object.values(doc.paths) as Record<string, { responses: Record<string, unknown> }>[]) {
        for (const op of Object.values(ops)) for (const s of ["401", "403", "404", "413", "422", "503"]) expect(Object.keys(op.responses)).toContain(s);
      }
      const team = doc.components.schemas.Team.properties.organization;
      expect(team.nullable).toBe(true);
      expect(doc.components.schemas.Activity.properties.comment.nullable).toBe(true);
      expect(doc.components.schemas.Organization.nullable).toBeUndefined();
    });

    // ---- C: faults ----

    it("C.2 deleting a repository, an organization or a user (purge) leaves no orphan row anywhere", async () => {
      const owner = await newUser();
      const other = await newUser();
      const org = uniqName("do");
      await call("POST", "/api/v1/orgs", { headers: owner.h, json: { username: org } });
      const team = await (await call("POST", `/api/v1/orgs/${org}/teams`, { headers: owner.h, json: { name: "t", permission: "write", units: ["repo.code"], can_create_org_repo: true } })).json();
      await call("PUT", `/api/v1/teams/${team.id}/members/${other.name}`, { headers: owner.h });
      const orgRepo = uniqName("or");
      await call("POST", `/api/v1/orgs/${org}/repos`, { headers: other.h, json: { name: orgRepo, issue_labels: "Default" } });
      await call("PUT", `/api/v1/teams/${team.id}/repos/${org}/${orgRepo}`, { headers: owner.h });
      await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: owner.h, json: { type: "gitea", config: { url: "https://hooks.example.com/x", content_type: "json" } } });
      const mine = uniqName("mine");
      await call("POST", "/api/v1/user/repos", { headers: other.h, json: { name: mine, issue_labels: "Default" } });
      await call("PUT", `/api/v1/repos/${other.name}/${mine}/collaborators/${owner.name}`, { headers: other.h, json: { permission: "write" } });
      await call("PATCH", `/api/v1/repos/${other.name}/${mine}`, { headers: other.h, json: { name: `${mine}-renamed` } });
      await call("POST", `/api/v1/repos/${org}/${orgRepo}/forks`, { headers: owner.h, json: {} });
      await call("PUT", `/api/v1/user/blocks/${owner.name}`, { headers: other.h });
      await call("POST", "/api/v1/user/emails", { headers: other.h, json: { emails: [`${other.name}-2@example.com`] } });

      // Deleting the fork base (the org's repository) first, then the org, then the user (purge).
      expect((await call("DELETE", `/api/v1/repos/${org}/${orgRepo}`, { headers: owner.h })).status).toBe(204);
      await expectNoOrphans(db);
      expect((await call("DELETE", `/api/v1/orgs/${org}`, { headers: owner.h })).status).toBe(204);
      await expectNoOrphans(db);
      expect((await call("DELETE", `/api/v1/admin/users/${other.name}?purge=true`, { headers: adminHeaders })).status).toBe(204);
      await expectNoOrphans(db);
      // The purged user's activity is gone from every feed and count.
      const feed = await call("GET", `/api/v1/users/${owner.name}/activities/feeds`, { headers: owner.h });
      const entries = await feed.json();
      expect(entries.map((e: { act_user: { login: string } }) => e.act_user.login)).toEqual(entries.map(() => owner.name));
      expect(entries.length).toBeGreaterThan(0);
      expect(Number(feed.headers.get("X-Total-Count"))).toBe(entries.length);
    });
  });
}
