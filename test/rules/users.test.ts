/** Users: GET /user, GET /users/{username}, /users/search and the admin verbs (Gitea's rules). */
import { and, eq } from "drizzle-orm";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessToken, emailAddress, label, loginSource, repository, team, user } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, apiRepo, basic, interleavedWrites, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let admin: SeededUser;
let alice: SeededUser;
let adminTok: string;

beforeAll(async () => {
  t = await testApp();
  admin = await seedUser(t.db, { admin: true });
  alice = await seedUser(t.db);
  adminTok = await admin.token();
});
afterAll(() => t.close());

const KEYS = ["id", "login", "login_name", "source_id", "full_name", "email", "avatar_url", "html_url", "language", "is_admin", "last_login", "created", "restricted", "active", "prohibit_login", "location", "website", "description", "visibility", "followers_count", "following_count", "starred_repos_count", "username"];

describe("User JSON", () => {
  it("carries Gitea's keys in Gitea's order, `username` duplicating `login`", async () => {
    const res = await t.request("/api/v1/user", { headers: token(await alice.token()) });
    const body = await res.json();
    expect(Object.keys(body)).toEqual(KEYS);
    expect(body.username).toBe(body.login);
    expect(roundTrips(res)).toBe(1);
  });

  it("self sees the private fields; another signed-in user sees them zeroed", async () => {
    const self = await (await t.request(`/api/v1/users/${alice.name}`, { headers: token(await alice.token()) })).json();
    expect(self.active).toBe(true);
    expect(self.last_login).toBe("1970-01-01T00:00:00Z");
    const other = await (await t.request(`/api/v1/users/${alice.name}`, { headers: basic(admin.name, admin.password) })).json();
    expect(other.active).toBe(true);
    const bob = await seedUser(t.db);
    const viewed = await (await t.request(`/api/v1/users/${alice.name}`, { headers: token(await bob.token()) })).json();
    expect(viewed).toMatchObject({ active: false, is_admin: false, last_login: "0001-01-01T00:00:00Z", login_name: "", language: "" });
    expect(viewed.email).toBe(`${alice.name.toLowerCase()}@example.com`);
  });

  it("anonymous viewers get the placeholder e-mail; kept-private e-mails show only to self and admins", async () => {
    const anon = await (await t.request(`/api/v1/users/${alice.name}`)).json();
    expect(anon.email).toBe(`${alice.name.toLowerCase()}@noreply.gitea.test`);
    const hidden = await seedUser(t.db, { keepEmailPrivate: true });
    const bob = await seedUser(t.db);
    const seen = await (await t.request(`/api/v1/users/${hidden.name}`, { headers: token(await bob.token()) })).json();
    expect(seen.email).toBe(`${hidden.name.toLowerCase()}@noreply.gitea.test`);
    const byAdmin = await (await t.request(`/api/v1/users/${hidden.name}`, { headers: token(adminTok) })).json();
    expect(byAdmin.email).toBe(`${hidden.name.toLowerCase()}@example.com`);
    expect(byAdmin.active).toBe(true);
  });

  it("a site admin's public-only token reads public data only: no kept-private e-mail, no admin-only fields of others", async () => {
    const hidden = await seedUser(t.db, { keepEmailPrivate: true });
    const admin = await seedUser(t.db, { admin: true });
    const publicOnly = await admin.token(["public-only", "all"]);
    const seen = await (await t.request(`/api/v1/users/${hidden.name}`, { headers: token(publicOnly) })).json();
    expect(seen.email).toBe(`${hidden.name.toLowerCase()}@noreply.gitea.test`);
    expect(seen.active).toBe(false);
    expect(seen.last_login).toBe("0001-01-01T00:00:00Z");
  });
});

describe("user visibility (IsUserVisibleToViewer)", () => {
  let limited: SeededUser;
  let priv: SeededUser;
  let colleague: SeededUser;
  let stranger: SeededUser;
  beforeAll(async () => {
    limited = await seedUser(t.db, { visibility: 1 });
    priv = await seedUser(t.db, { visibility: 2 });
    colleague = await seedUser(t.db);
    stranger = await seedUser(t.db);
    const org = await seedOrg(t, priv);
    await seedMember(t, org, colleague);
  });

  it("a limited user is 404 to anonymous callers and visible to any signed-in user", async () => {
    await expectRefusal(t.request(`/api/v1/users/${limited.name}`), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/users/${limited.name}`, { headers: token(await stranger.token()) })).status).toBe(200);
  });

  it("a private user is 404 to strangers, visible to self, admins and users sharing an organization", async () => {
    await expectRefusal(t.request(`/api/v1/users/${priv.name}`), 404, NOT_FOUND);
    await expectRefusal(t.request(`/api/v1/users/${priv.name}`, { headers: token(await stranger.token()) }), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/users/${priv.name}`, { headers: token(await priv.token()) })).status).toBe(200);
    expect((await t.request(`/api/v1/users/${priv.name}`, { headers: token(adminTok) })).status).toBe(200);
    expect((await t.request(`/api/v1/users/${priv.name}`, { headers: token(await colleague.token()) })).status).toBe(200);
  });

  it("a 404 for a hidden user is identical to the 404 for a missing one", async () => {
    const hidden = await t.request(`/api/v1/users/${priv.name}`);
    const missing = await t.request("/api/v1/users/no-such-user-here");
    expect(await hidden.json()).toEqual(await missing.json());
  });

  it("a public-only token sees public users only, even for a site admin", async () => {
    const pub = await admin.token(["public-only", "read:user"]);
    await expectRefusal(t.request(`/api/v1/users/${limited.name}`, { headers: token(pub) }), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/users/${alice.name}`, { headers: token(pub) })).status).toBe(200);
  });

  it("search never returns or counts a user the caller may not see", async () => {
    const tag = uniq("vis");
    const [pub, lim, hid] = [await seedUser(t.db, { name: `${tag}pub` }), await seedUser(t.db, { name: `${tag}lim`, visibility: 1 }), await seedUser(t.db, { name: `${tag}hid`, visibility: 2 })];
    const found = async (headers: Record<string, string>) => {
      const r = await t.request(`/api/v1/users/search?q=${tag}&limit=50`, { headers });
      const b = await r.json();
      expect(r.headers.get("X-Total-Count")).toBe(String(b.data.length));
      return b.data.map((u: { login: string }) => u.login).sort();
    };
    expect(await found({})).toEqual([pub.name]);
    expect(await found(token(await stranger.token()))).toEqual([lim.name, pub.name].sort());
    expect(await found(token(adminTok))).toEqual([hid.name, lim.name, pub.name].sort());
    const res = await t.request(`/api/v1/users/search?q=user&limit=50`);
    const body = await res.json();
    expect(Number(res.headers.get("X-Total-Count"))).toBe(body.data.length);
    const asAdmin = await (await t.request(`/api/v1/users/search?q=${priv.name}`, { headers: token(adminTok) })).json();
    expect(asAdmin.data.map((u: { login: string }) => u.login)).toEqual([priv.name]);
  });
});

describe("GET /users/search", () => {
  it("answers Gitea's envelope, matches name case-insensitively, excludes organizations, one round trip", async () => {
    const org = await seedOrg(t, alice, { name: uniq("searchorg") });
    const res = await t.request(`/api/v1/users/search?q=${alice.name.toUpperCase()}`);
    const body = await res.json();
    expect(body.ok).toBe(true);
    expect(body.data.map((u: { login: string }) => u.login)).toEqual([alice.name]);
    const orgs = await (await t.request(`/api/v1/users/search?q=${org.name}`)).json();
    expect(orgs.data).toEqual([]);
    expect(roundTrips(res)).toBe(1);
  });

  it("privacy rule: an e-mail is searched only for callers shown it — anonymous callers see placeholders, so their search does not match addresses (nor count them)", async () => {
    const tag = uniq("mail").toLowerCase();
    const u = await seedUser(t.db, { name: `${tag}-x` });
    await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { login_name: u.name, source_id: 0, email: `hidden-${tag}@corp.example` } });
    const search = async (headers: Record<string, string>) => {
      const res = await t.request(`/api/v1/users/search?q=${encodeURIComponent(`hidden-${tag}@corp`)}`, { headers });
      return [res.headers.get("X-Total-Count"), (await res.json()).data.map((x: { login: string }) => x.login)];
    };
    expect(await search({})).toEqual(["0", []]);
    expect(await search(token(await alice.token()))).toEqual(["1", [u.name]]);
    // what the anonymous caller is shown instead
    expect((await (await t.request(`/api/v1/users/${u.name}`)).json()).email).not.toContain("corp.example");
  });

  it("uid=-1 is the Ghost user; uid filters by id", async () => {
    const ghost = await (await t.request("/api/v1/users/search?uid=-1")).json();
    expect(ghost.data[0].login).toBe("Ghost");
    const byId = await (await t.request(`/api/v1/users/search?uid=${alice.id}`)).json();
    expect(byId.data.map((u: { id: number }) => u.id)).toEqual([alice.id]);
  });

  it("a keyword of three characters or more (the trigram index's candidates) finds exactly what a scan would: name, full name, public e-mail — after edits and deletions too", async () => {
    const tag = uniq("tri").toLowerCase();
    const a = await seedUser(t.db, { name: `${tag}-anna` });
    const b = await seedUser(t.db, { name: `${tag}-bert`, keepEmailPrivate: true });
    const c = await seedUser(t.db, { name: `${tag}-carl` });
    const edit = async (u: SeededUser, json: Record<string, unknown>) =>
      expect((await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { login_name: u.name, source_id: 0, ...json } })).status).toBe(200);
    await edit(a, { full_name: `Zoë ${tag.toUpperCase()} Öberg` });
    await edit(c, { email: `${tag}-Mail@Example.com` });
    const found = async (q: string, tk = adminTok) => {
      const res = await t.request(`/api/v1/users/search?q=${encodeURIComponent(q)}&limit=50`, { headers: token(tk) });
      const body = (await res.json()) as { data: { login: string }[] };
      expect(res.headers.get("X-Total-Count"), q).toBe(String(body.data.length));
      return body.data.map((u) => u.login);
    };
    expect(await found(`${tag}-`)).toEqual([a.name, b.name, c.name]);
    expect(await found(`${tag}-ANNA`)).toEqual([a.name]);
    expect(await found(`Zoë ${tag}`)).toEqual([a.name]); // full name, ASCII case folded
    expect(await found("zoë " + tag + " öberg")).toEqual([]); // as Gitea (SQLite's LIKE): non-ASCII letters match only in their own case
    expect(await found(`${tag}-mail@example`)).toEqual([c.name]); // public e-mail
    // b keeps its e-mail private: found by it only for those shown it, itself and site admins (Gitea's SearchUsers)
    expect(await found(`${b.name}@`, await alice.token())).toEqual([]);
    expect(await found(`${b.name}@`, await b.token())).toEqual([b.name]);
    expect(await found(`${b.name}@`)).toEqual([b.name]);
    expect(await found(`${b.name}@`, await (await seedUser(t.db, { admin: true })).token(["public-only", "all"]))).toEqual([]); // an admin's public-only token reads no kept-private e-mail
    expect(await found(`${tag}-b`)).toEqual([b.name]);
    // The index follows renames of full name and e-mail, and deletions.
    await edit(a, { full_name: "Someone Else" });
    expect(await found(`Zoë ${tag}`)).toEqual([]);
    await edit(c, { email: `${c.name}@other.example` });
    expect(await found(`${tag}-mail@example`)).toEqual([]);
    expect(await found(`${c.name}@other`)).toEqual([c.name]);
    expect((await t.request(`/api/v1/admin/users/${b.name}`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    expect(await found(`${tag}-`)).toEqual([a.name, c.name]);
    // Fewer than three characters, or a character the index is not asked about: the scan, same rules.
    expect((await found(`${tag}-a`)).includes(a.name)).toBe(true);
    expect(await found(`${tag}"-`)).toEqual([]);
  });

  it("a LIKE wildcard in q is matched literally", async () => {
    const body = await (await t.request("/api/v1/users/search?q=%25")).json();
    expect(body.data).toEqual([]);
  });

  it("sets X-Total-Count and a Link header for pages", async () => {
    for (let i = 0; i < 3; i++) await seedUser(t.db, { name: uniq("pager") });
    const res = await t.request("/api/v1/users/search?q=pager&limit=2");
    expect(res.headers.get("X-Total-Count")).toBe("3");
    expect(res.headers.get("Link")).toBe(
      '<http://gitea.test/api/v1/users/search?limit=2&page=2&q=pager>; rel="next",<http://gitea.test/api/v1/users/search?limit=2&page=2&q=pager>; rel="last"',
    );
  });
});

describe("POST /admin/users", () => {
  it("creates an active user that must change its password by default, with the primary e-mail row (2 round trips)", async () => {
    const name = uniq("created");
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: name, email: `${name}@example.com`, password: "longenough1" } });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(body).toMatchObject({ login: name, active: true, is_admin: false, visibility: "public" });
    const [row] = await t.db.select().from(user).where(eq(user.lowerName, name.toLowerCase()));
    expect(row!.mustChangePassword).toBe(true);
    expect(row!.passwd).toMatch(/^pbkdf2_sha256\$10000\$/);
    expect(row!.passwd).not.toContain("longenough1");
    const emails = await t.db.select().from(emailAddress).where(eq(emailAddress.uid, row!.id));
    expect(emails).toMatchObject([{ email: `${name}@example.com`, isPrimary: true, isActivated: true }]);
  });

  it("a name taken case-insensitively → 422 `user already exists`", async () => {
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: alice.name.toUpperCase(), email: "x1@example.com", password: "longenough1" } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe(`user already exists [name: ${alice.name.toUpperCase()}]`);
  });

  it("an e-mail in use → 422 and no user row is written", async () => {
    const name = uniq("dupmail");
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: name, email: `${alice.name.toUpperCase()}@example.com`, password: "longenough1" } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toMatch(/^e-mail already in use/);
    expect(await t.db.select().from(user).where(eq(user.lowerName, name.toLowerCase()))).toEqual([]);
  });

  it("reserved names and patterns → 422 with Gitea's messages", async () => {
    const admin1 = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: "admin", email: "r1@example.com", password: "longenough1" } });
    expect((await admin1.json()).message).toBe("name is reserved [name: admin]");
    const keys = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: "someone.keys", email: "r2@example.com", password: "longenough1" } });
    expect(keys.status).toBe(422);
    expect((await keys.json()).message).toBe("name pattern is not allowed [pattern: *.keys]");
  });

  it("binding rules → 422 `[Field]: Rule` (missing, bad username, bad e-mail, too long)", async () => {
    const cases: [unknown, string][] = [
      [{ email: "a@example.com", password: "longenough1" }, "[Username]: Required"],
      [{ username: "-bad", email: "a@example.com", password: "longenough1" }, "[Username]: Username"],
      [{ username: "okname", email: "not-an-email", password: "longenough1" }, "[Email]: Email"],
      [{ username: "x".repeat(41), email: "a@example.com", password: "longenough1" }, "[Username]: MaxSize"],
      [{ username: "okname", email: "a@example.com", password: 12345678 }, "[Password]: TypeError: expected string"],
    ];
    for (const [json, message] of cases) {
      const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json });
      expect(res.status, message).toBe(422);
      expect((await res.json()).message).toBe(message);
    }
  });

  it("a short password → 400", async () => {
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: uniq("short"), email: `${uniq("s")}@example.com`, password: "short" } });
    await expectRefusal(res, 400, "PasswordIsRequired: the password must be at least 8 characters");
  });

  it("a non-admin gets 403 `user should be the site admin`; a token without write:admin gets the scope 403", async () => {
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(await alice.token()), json: { username: uniq("x"), email: "n@example.com", password: "longenough1" } });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("user should be the site admin");
    const scoped = await t.request("/api/v1/admin/users", { method: "POST", headers: token(await admin.token(["read:admin"])), json: { username: uniq("x"), email: "n@example.com", password: "longenough1" } });
    expect((await scoped.json()).message).toMatch(/required=\[write:admin\]/);
  });

  it("an unknown source_id → 422", async () => {
    const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: uniq("ext"), email: `${uniq("e")}@example.com`, source_id: 999 } });
    await expectRefusal(res, 422, "login source does not exist [id: 999]");
  });
});

describe("PATCH /admin/users/{username}", () => {
  it("a user another request deleted between the edit's read and its write → 404 (not a 500)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const adminTk = await (await seedUser(t2.db, { admin: true })).token();
    const u = await seedUser(t2.db);
    w.beforeNextWrite("DELETE FROM user WHERE id = ?", [u.id]);
    await expectRefusal(t2.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTk), json: { location: "late" } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(user).where(eq(user.id, u.id))).toEqual([]);
    t2.close();
  });

  it("an e-mail change of a user deleted meanwhile adds no address for it (no orphans, whatever the answer)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const adminTk = await (await seedUser(t2.db, { admin: true })).token();
    const u = await seedUser(t2.db);
    w.beforeNextWrite("DELETE FROM email_address WHERE uid = ?", [u.id]);
    w.beforeNextWrite("DELETE FROM user WHERE id = ?", [u.id]);
    const email = `${uniq("late")}@example.com`;
    await expectRefusal(t2.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTk), json: { email } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(emailAddress).where(eq(emailAddress.uid, u.id))).toEqual([]);
    t2.close();
  });

  it("applies only present fields: active, prohibit_login, admin, login_name; 2 round trips", async () => {
    const u = await seedUser(t.db);
    await t.db.update(user).set({ fullName: "Keep Me", location: "Here" }).where(eq(user.id, u.id));
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { prohibit_login: true, admin: true, login_name: "ext-login", location: "There" } });
    expect(res.status).toBe(200);
    expect(roundTrips(res)).toBe(2);
    expect(await res.json()).toMatchObject({ prohibit_login: true, is_admin: true, login_name: "ext-login", full_name: "Keep Me", location: "There" });
    const deact = await (await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { active: false } })).json();
    expect(deact.active).toBe(false);
    await expectRefusal(t.request("/api/v1/user", { headers: basic(u.name, u.password) }), 403, "This account is prohibited from signing in, please contact your site administrator.");
  });

  it("a new password replaces the old one", async () => {
    const u = await seedUser(t.db);
    await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { password: "a-brand-new-pass", must_change_password: false } });
    await expectRefusal(t.request("/api/v1/user", { headers: basic(u.name, u.password) }), 401, "invalid username, password or token");
    expect((await t.request("/api/v1/user", { headers: basic(u.name, "a-brand-new-pass") })).status).toBe(200);
  });

  it("changing the e-mail to another user's → 400 and nothing changes", async () => {
    const u = await seedUser(t.db);
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { email: `${alice.name.toLowerCase()}@example.com`, full_name: "Changed" } });
    await expectRefusal(res, 400, `e-mail already in use [email: ${alice.name.toLowerCase()}@example.com]`);
    const [row] = await t.db.select().from(user).where(eq(user.id, u.id));
    expect(row!.fullName).toBe("");
  });

  it("changing the e-mail makes it the primary address", async () => {
    const u = await seedUser(t.db);
    const email = `${uniq("new")}@example.com`;
    const body = await (await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { email } })).json();
    expect(body.email).toBe(email);
    const rows = await t.db.select().from(emailAddress).where(eq(emailAddress.uid, u.id));
    expect(rows.filter((r) => r.isPrimary).map((r) => r.email)).toEqual([email]);
  });

  it("removing admin from the last site admin → 400 and the flag stays", async () => {
    const t2 = await testApp();
    const only = await seedUser(t2.db, { admin: true });
    const res = await t2.request(`/api/v1/admin/users/${only.name}`, { method: "PATCH", headers: token(await only.token()), json: { admin: false, full_name: "Nope" } });
    await expectRefusal(res, 400, `can not delete the last admin user [uid: ${only.id}]`);
    const [row] = await t2.db.select().from(user).where(eq(user.id, only.id));
    expect(row).toMatchObject({ isAdmin: true, fullName: "" });
    t2.close();
  });

  it("source_id and login_name bind the account to an external login source (and only an existing one)", async () => {
    const [src] = await t.db.insert(loginSource).values({ type: 2, name: uniq("ldap") }).returning();
    const u = await seedUser(t.db);
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { source_id: src!.id, login_name: "uid=ext" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ source_id: src!.id, login_name: "uid=ext" });
    const [row] = await t.db.select().from(user).where(eq(user.id, u.id));
    expect(row).toMatchObject({ loginType: 2, loginSource: src!.id });
    // An external account no longer signs in with the local password.
    await expectRefusal(t.request("/api/v1/user", { headers: basic(u.name, u.password) }), 401, "invalid username, password or token");
    await expectRefusal(t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { source_id: 987654 } }), 422, "login source does not exist [id: 987654]");
  });

  it("an unknown user → 404", async () => {
    await expectRefusal(t.request("/api/v1/admin/users/nobody-at-all", { method: "PATCH", headers: token(adminTok), json: {} }), 404, NOT_FOUND);
  });
});

describe("DELETE /admin/users/{username}", () => {
  it("an admin who loses the flag between the delete's read and its write deletes nothing (403 user should be the site admin), so the last site admin is never deleted", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const caller = await seedUser(t2.db, { admin: true });
    const other = await seedUser(t2.db, { admin: true });
    const callerToken = await caller.token();
    w.beforeNextWrite("UPDATE user SET is_admin = 0 WHERE id = ?", [caller.id]);
    await expectRefusal(t2.request(`/api/v1/admin/users/${other.name}`, { method: "DELETE", headers: token(callerToken) }), 403, "user should be the site admin");
    expect(await t2.db.select().from(user).where(eq(user.id, other.id))).toHaveLength(1);
    t2.close();
  });

  it("removes the account, its tokens and e-mails; its tokens stop working at once", async () => {
    const u = await seedUser(t.db);
    const tok = await u.token();
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "DELETE", headers: token(adminTok) });
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    await expectRefusal(t.request("/api/v1/user", { headers: token(tok) }), 401, "invalid username, password or token");
    expect(await t.db.select().from(accessToken).where(eq(accessToken.uid, u.id))).toEqual([]);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.uid, u.id))).toEqual([]);
  });

  it("deleting yourself → 422; an organization → 422; a member of an organization without purge → 422", async () => {
    await expectRefusal(t.request(`/api/v1/admin/users/${admin.name}`, { method: "DELETE", headers: token(adminTok) }), 422, "you cannot delete yourself");
    const org = await seedOrg(t, alice);
    await expectRefusal(t.request(`/api/v1/admin/users/${org.name}`, { method: "DELETE", headers: token(adminTok) }), 422, `${org.name} is an organization not a user`);
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    await expectRefusal(t.request(`/api/v1/admin/users/${m.name}`, { method: "DELETE", headers: token(adminTok) }), 422, `user still has membership of organizations [uid: ${m.id}]`);
    expect((await t.request(`/api/v1/admin/users/${m.name}?purge=true`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
  });

  it("a user owning repositories → 422 without purge; purge removes the repositories with their sub-resources", async () => {
    const o = await seedUser(t.db);
    const r = await apiRepo(t, await o.token(), { name: uniq("owned"), issue_labels: "Default" });
    const res = await t.request(`/api/v1/admin/users/${o.name}`, { method: "DELETE", headers: token(adminTok) });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe(`user still has ownership of repositories [uid: ${o.id}]`);
    expect((await t.request(`/api/v1/admin/users/${o.name}?purge=true`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    expect(await t.db.select().from(repository).where(eq(repository.id, r.id))).toEqual([]);
    expect(await t.db.select().from(label).where(eq(label.repoId, r.id))).toEqual([]);
  });

  it("what the delete read is checked again when it commits: a repository or membership got since → the same refusal, a purge racing a new repository → 409; nothing deleted", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const admin2 = await (await seedUser(t2.db, { admin: true })).token();
    for (const [what, purge, status, message] of [
      ["repo", false, 422, (id: number) => `user still has ownership of repositories [uid: ${id}]`],
      ["org", false, 422, (id: number) => `user still has membership of organizations [uid: ${id}]`],
      ["repo", true, 409, () => "the user's repositories or organizations changed while it was being deleted; try again"],
    ] as const) {
      const u = await seedUser(t2.db);
      const tk = await u.token();
      w.beforeNextWrite(() =>
        what === "repo"
          ? t2.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: uniq("late"), auto_init: true } }).then((r) => expect(r.status).toBe(201))
          : t2.request("/api/v1/orgs", { method: "POST", headers: token(tk), json: { username: uniq("lateorg") } }).then((r) => expect(r.status).toBe(201)),
      );
      await expectRefusal(t2.request(`/api/v1/admin/users/${u.name}${purge ? "?purge=true" : ""}`, { method: "DELETE", headers: token(admin2) }), status, message(u.id), `${what} purge=${purge}`);
      expect(await t2.db.select().from(user).where(eq(user.id, u.id)), what).toHaveLength(1);
      expect((await t2.db.select().from(repository).where(eq(repository.ownerId, u.id))).length, what).toBe(what === "repo" ? 1 : 0);
    }
    t2.close();
  });

  it("admin create and edit check the e-mail as Gitea's ValidateEmailForAdmin: 422 on create, 400 on edit, nothing written", async () => {
    const name = uniq("mail");
    await expectRefusal(
      t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: name, email: "-d@example.com", password: "password-123", must_change_password: false } }),
      422,
      "e-mail invalid [email: -d@example.com]",
    );
    expect(await t.db.select().from(user).where(eq(user.lowerName, name))).toEqual([]);
    // addresses Gitea takes (its binding pattern is unanchored, then ValidateEmailForAdmin decides); none there is the binding's 422
    for (const email of ["a#b@example.com", "a/b@example.com", "a!b@example.com"]) {
      const res = await t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: uniq("ok"), email, password: "password-123", must_change_password: false } });
      expect(res.status, email).toBe(201);
    }
    await expectRefusal(t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: uniq("no"), email: "nothing", password: "password-123" } }), 422, "[Email]: Email");
    await expectRefusal(t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: uniq("no"), email: "", password: "password-123" } }), 422, "[Email]: Required");
    // the binding's refusal comes before the handler's (a reserved name)
    await expectRefusal(t.request("/api/v1/admin/users", { method: "POST", headers: token(adminTok), json: { username: "admin", email: "nothing", password: "password-123" } }), 422, "[Email]: Email");
    const u = await seedUser(t.db);
    for (const [email, message] of [
      ["", "e-mail invalid [email: ]"],
      ["a..b@example.com", "e-mail invalid [email: a..b@example.com]"],
      ["bad mail@example.com", "e-mail address contains unsupported character [email: bad mail@example.com]"],
    ] as const) {
      await expectRefusal(t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { email } }), 400, message, email);
    }
    expect((await t.db.select().from(user).where(eq(user.id, u.id)))[0]!.email).toBe(`${u.name.toLowerCase()}@example.com`);
  });

  it("an admin's e-mail change is Gitea's AdminAddOrSetPrimaryEmailAddress: the old primary stays as a secondary, an address the user already has becomes primary, another user's is in use", async () => {
    const u = await seedUser(t.db);
    const old = `${u.name.toLowerCase()}@example.com`;
    const secondary = `${uniq("second")}@example.com`;
    expect((await t.request("/api/v1/user/emails", { method: "POST", headers: token(await u.token()), json: { emails: [secondary] } })).status).toBe(201);
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { email: secondary } });
    expect([res.status, (await res.json()).email]).toEqual([200, secondary]);
    const rows = await t.db.select().from(emailAddress).where(eq(emailAddress.uid, u.id));
    expect(rows.map((r) => [r.email, r.isPrimary]).sort()).toEqual([[old, false], [secondary, true]].sort());
    const other = await seedUser(t.db);
    await expectRefusal(t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { email: `${other.name.toLowerCase()}@example.com` } }), 400, `e-mail already in use [email: ${other.name.toLowerCase()}@example.com]`);
  });

  it("a purge checks what it read when it commits: a repository in a sole-owned organization, a co-owner, or a fork reading a deleted repository's packs gained since → 409, nothing deleted, the fork still reads", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const admin2 = await (await seedUser(t2.db, { admin: true })).token();
    for (const what of ["org repo", "co-owner", "fork"] as const) {
      const u = await seedUser(t2.db);
      const tk = await u.token();
      const org = await seedOrg(t2, u);
      const base = await apiRepo(t2, tk, { name: uniq("base"), auto_init: true }, org.name);
      const other = await seedUser(t2.db);
      w.beforeNextWrite(async () => {
        if (what === "org repo") expect((await t2.request(`/api/v1/orgs/${org.name}/repos`, { method: "POST", headers: token(tk), json: { name: uniq("late"), auto_init: true } })).status).toBe(201);
        if (what === "co-owner") {
          const [owners] = await t2.db.select().from(team).where(and(eq(team.orgId, org.id), eq(team.authorize, 4)));
          expect((await t2.request(`/api/v1/teams/${owners!.id}/members/${other.name}`, { method: "PUT", headers: token(tk) })).status).toBe(204);
        }
        if (what === "fork") expect((await t2.request(`/api/v1/repos/${org.name}/${base.name}/forks`, { method: "POST", headers: token(await other.token()), json: {} })).status).toBe(202);
      });
      await expectRefusal(t2.request(`/api/v1/admin/users/${u.name}?purge=true`, { method: "DELETE", headers: token(admin2) }), 409, "the user's repositories or organizations changed while it was being deleted; try again", what);
      expect(await t2.db.select().from(user).where(eq(user.id, u.id)), what).toHaveLength(1);
      expect((await t2.request(`/api/v1/repos/${org.name}/${base.name}/raw/README.md`, { headers: token(tk) })).status, what).toBe(200);
      if (what === "fork") expect((await t2.request(`/api/v1/repos/${other.name}/${base.name}/raw/README.md`, { headers: token(tk) })).status).toBe(200);
    }
    t2.close();
  });

  it("a purge deletes the organizations the user alone owns, with their repositories, as Gitea's DeleteUser; one with another owner stays, without the user", async () => {
    const o = await seedUser(t.db);
    const sole = await seedOrg(t, o);
    const soleRepo = await apiRepo(t, await o.token(), { name: uniq("orgrepo"), auto_init: true }, sole.name);
    const shared = await seedOrg(t, o);
    const other = await seedUser(t.db);
    // a second owner: other joins shared's owner team
    const [ownerTeam] = await t.db.select().from(team).where(and(eq(team.orgId, shared.id), eq(team.authorize, 4)));
    expect((await t.request(`/api/v1/teams/${ownerTeam!.id}/members/${other.name}`, { method: "PUT", headers: token(adminTok) })).status).toBe(204);
    const res = await t.request(`/api/v1/admin/users/${o.name}?purge=true`, { method: "DELETE", headers: token(adminTok) });
    expect(res.status).toBe(204);
    expect(await t.db.select().from(user).where(eq(user.id, o.id))).toEqual([]);
    expect(await t.db.select().from(user).where(eq(user.id, sole.id))).toEqual([]);
    expect(await t.db.select().from(repository).where(eq(repository.id, soleRepo.id))).toEqual([]);
    expect(existsSync(join(t.objects.root, String(soleRepo.id)))).toBe(false);
    expect(await t.db.select().from(user).where(eq(user.id, shared.id))).toHaveLength(1);
    expect((await t.request(`/api/v1/orgs/${shared.name}/members/${o.name}`, { headers: token(adminTok) })).status).toBe(404);
  });
});

describe("a restricted user sees no limited or private user (Gitea's IsUserVisibleToViewer), even one sharing its organization", () => {
  it("profile, search and member lists answer as for users that do not exist; its own organizations and public users it still sees", async () => {
    const owner = await seedUser(t.db);
    const carol = await seedUser(t.db, { restricted: true });
    const dave = await seedUser(t.db); // not restricted: the control
    const bob = await seedUser(t.db, { visibility: 1 });
    const hid = await seedUser(t.db);
    const pub = await seedUser(t.db);
    const shared = await seedOrg(t, owner, { visibility: 2 });
    for (const u of [carol, dave, bob, hid, pub]) await seedMember(t, shared, u);
    // a private user cannot be seen, so not added, by the owner: made private once a member
    expect((await t.request(`/api/v1/admin/users/${hid.name}`, { method: "PATCH", headers: token(adminTok), json: { login_name: hid.name, source_id: 0, visibility: "private" } })).status).toBe(200);
    const [carolTok, daveTok] = [await carol.token(), await dave.token()];
    const as = (tk: string) => ({ headers: token(tk) });
    const missing = await t.request(`/api/v1/users/${uniq("nobody")}`, as(carolTok));
    expect(missing.status).toBe(404);
    for (const u of [bob, hid]) {
      const res = await t.request(`/api/v1/users/${u.name}`, as(carolTok));
      expect(res.status, u.name).toBe(404);
      expect(await res.json()).toEqual(await (await t.request(`/api/v1/users/${uniq("nobody")}`, as(carolTok))).json());
      expect((await t.request(`/api/v1/users/${u.name}`, as(daveTok))).status, u.name).toBe(200);
      const found = await t.request(`/api/v1/users/search?q=${u.name}`, as(carolTok));
      expect((await found.json()).data).toEqual([]);
      expect(found.headers.get("X-Total-Count")).toBe("0");
      expect((await (await t.request(`/api/v1/users/search?q=${u.name}`, as(daveTok))).json()).data).toHaveLength(1);
    }
    const members = async (tk: string) => ((await (await t.request(`/api/v1/orgs/${shared.name}/members?limit=50`, as(tk))).json()) as { login: string }[]).map((m) => m.login).sort();
    expect(await members(carolTok)).toEqual([carol.name, owner.name, pub.name, dave.name].sort());
    expect(await members(daveTok)).toEqual([carol.name, owner.name, pub.name, dave.name, bob.name, hid.name].sort());
    // its own private organization and public users it sees
    expect((await t.request(`/api/v1/orgs/${shared.name}`, as(carolTok))).status).toBe(200);
    expect((await t.request(`/api/v1/users/${pub.name}`, as(carolTok))).status).toBe(200);
    expect((await t.request(`/api/v1/users/${carol.name}`, as(carolTok))).status).toBe(200);
  });
});
