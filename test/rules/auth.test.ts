/** Authentication (reference §3) and account states (§0): one auth module, every credential form. */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { user } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, basic, roundTrips, seedMember, seedOrg, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let admin: SeededUser;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  admin = await seedUser(t.db, { admin: true });
});
afterAll(() => t.close());

describe("credential forms", () => {
  it("a stored password hash missing its salt or hash signs nobody in: 401, like a wrong password (not a 500)", async () => {
    const u = await seedUser(t.db);
    for (const stored of ["pbkdf2_sha256$10000", "pbkdf2_sha256$10000$00ff"]) {
      await t.db.update(user).set({ passwd: stored }).where(eq(user.id, u.id));
      const res = await t.request("/api/v1/user", { headers: basic(u.name, u.password) });
      expect([stored, res.status]).toEqual([stored, 401]);
    }
  });

  it("Authorization: token, Bearer (any case), basic with password, basic with token as user or password all sign in", async () => {
    const tok = await alice.token();
    for (const headers of [
      token(tok),
      { Authorization: `Bearer ${tok}` },
      { Authorization: `bearer ${tok}` },
      { Authorization: `TOKEN ${tok}` },
      { Authorization: `token\t${tok}` },
      { Authorization: `Bearer  ${tok}` },
      basic(alice.name, alice.password),
      basic(tok, ""),
      basic(tok, "x-oauth-basic"),
      basic(alice.name, tok),
    ]) {
      const res = await t.request("/api/v1/user", { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect((await res.json()).login).toBe(alice.name);
    }
  });

  it("?token= and ?access_token= sign in and carry the deprecation warning header", async () => {
    const tok = await alice.token();
    for (const q of ["token", "access_token"]) {
      const res = await t.request(`/api/v1/user?${q}=${tok}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("X-Service-Warning")).toMatch(/deprecated/);
    }
  });

  it("DISABLE_QUERY_AUTH_TOKEN ignores query tokens (the request is anonymous)", async () => {
    const t2 = await testApp({ GITEA__security__DISABLE_QUERY_AUTH_TOKEN: "true" });
    const u = await seedUser(t2.db);
    const res = await t2.request(`/api/v1/user?token=${await u.token()}`);
    expect(res.status).toBe(401);
    expect((await res.json()).message).toBe("token is required");
    t2.close();
  });

  it("unknown user and wrong password get the identical 401 (no user enumeration)", async () => {
    const a = await t.request("/api/v1/user", { headers: basic("nobody-here", "password123") });
    const b = await t.request("/api/v1/user", { headers: basic(alice.name, "wrong-password") });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    expect(await a.json()).toEqual(await b.json());
  });

  it("a remembered password sign-in ends when the password changes; a wrong password is never remembered", async () => {
    const u = await seedUser(t.db);
    expect((await t.request("/api/v1/user", { headers: basic(u.name, u.password) })).status).toBe(200);
    expect((await t.request("/api/v1/user", { headers: basic(u.name, u.password) })).status).toBe(200);
    const edit = await t.request(`/api/v1/admin/users/${u.name}`, {
      method: "PATCH",
      headers: { ...basic(admin.name, admin.password), "Content-Type": "application/json" },
      body: JSON.stringify({ login_name: u.name, source_id: 0, password: "a-new-password-456", must_change_password: false }),
    });
    expect(edit.status).toBe(200);
    expect((await t.request("/api/v1/user", { headers: basic(u.name, u.password) })).status).toBe(401);
    expect((await t.request("/api/v1/user", { headers: basic(u.name, "a-new-password-456") })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await t.request("/api/v1/user", { headers: basic(u.name, "wrong-password") })).status).toBe(401);
  });

  it("an unknown token is a 401 with Gitea's message", async () => {
    const res = await t.request("/api/v1/user", { headers: token("0".repeat(40)) });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: "invalid username, password or token", url: "http://gitea.test/api/swagger" });
  });

  it("reqToken: an anonymous call to /user is 401 `token is required` without touching the database", async () => {
    const res = await t.request("/api/v1/user");
    expect(res.status).toBe(401);
    expect((await res.json()).message).toBe("token is required");
    expect(roundTrips(res)).toBe(0);
  });
});

describe("account states", () => {
  it("an inactive account is refused with 403 and a bare message", async () => {
    const u = await seedUser(t.db, { active: false });
    const res = await t.request("/api/v1/user", { headers: basic(u.name, u.password) });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: "This account is prohibited from signing in, please contact your site administrator." });
  });

  it("a prohibited account is refused even with a valid token", async () => {
    const u = await seedUser(t.db, { prohibitLogin: true });
    const res = await t.request("/api/v1/user", { headers: token(await u.token()) });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toMatch(/prohibited from signing in/);
  });

  it("an account that must change its password is refused with the change-password message", async () => {
    const u = await seedUser(t.db, { mustChangePassword: true });
    const res = await t.request("/api/v1/user", { headers: basic(u.name, u.password) });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: "You must change your password. Change it at: http://gitea.test/user/change_password" });
  });
});

describe("sudo", () => {
  it("a site admin acts as another user with ?sudo= or the Sudo header", async () => {
    const tok = await admin.token();
    const a = await t.request(`/api/v1/user?sudo=${alice.name}`, { headers: token(tok) });
    expect((await a.json()).login).toBe(alice.name);
    const b = await t.request("/api/v1/user", { headers: { ...token(tok), Sudo: alice.name } });
    expect((await b.json()).login).toBe(alice.name);
  });

  it("a non-admin gets 403 `Only administrators allowed to sudo.`", async () => {
    const res = await t.request(`/api/v1/user?sudo=${admin.name}`, { headers: token(await alice.token()) });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: "Only administrators allowed to sudo." });
  });

  it("sudo to an unknown user is 404", async () => {
    const res = await t.request("/api/v1/user?sudo=ghost-nobody", { headers: token(await admin.token()) });
    await expectRefusal(res, 404, NOT_FOUND);
  });
  it("public-only rule: a public-only token may not sudo at all (403 whoever the target: it would read that account's own private data — e-mail, concealed memberships, blocks), nor find a limited or private user through the admin routes", async () => {
    const publicOnly = await admin.token(["public-only", "all"]);
    const full = await admin.token(["all"]);
    for (const visibility of [1, 2]) {
      const hidden = await seedUser(t.db, { visibility });
      await expectRefusal(t.request(`/api/v1/user?sudo=${hidden.name}`, { headers: token(publicOnly) }), 403, "a public-only token cannot sudo", `sudo ${visibility}`);
      await expectRefusal(t.request(`/api/v1/admin/users/${hidden.name}`, { method: "PATCH", headers: token(publicOnly), json: { location: "x" } }), 404, NOT_FOUND, `edit ${visibility}`);
      await expectRefusal(t.request(`/api/v1/admin/users/${hidden.name}`, { method: "DELETE", headers: token(publicOnly) }), 404, NOT_FOUND, `delete ${visibility}`);
      // nothing was changed, and the same token with full reach does all three
      expect((await (await t.request(`/api/v1/user?sudo=${hidden.name}`, { headers: token(full) })).json()).location).toBe("");
      expect((await t.request(`/api/v1/admin/users/${hidden.name}`, { method: "PATCH", headers: token(full), json: {} })).status).toBe(200);
      expect((await t.request(`/api/v1/admin/users/${hidden.name}`, { method: "DELETE", headers: token(full) })).status).toBe(204);
    }
    // a public user, a missing one and the Sudo header alike: the same refusal
    for (const name of [alice.name, "ghost-nobody"]) {
      await expectRefusal(t.request(`/api/v1/user?sudo=${name}`, { headers: token(publicOnly) }), 403, "a public-only token cannot sudo", name);
      await expectRefusal(t.request("/api/v1/user/emails", { headers: { ...token(publicOnly), Sudo: name } }), 403, "a public-only token cannot sudo", `header ${name}`);
    }
    // the admin routes still reach a public user
    expect((await t.request(`/api/v1/admin/users/${alice.name}`, { method: "PATCH", headers: token(publicOnly), json: {} })).status).toBe(200);
  });
});

describe("token scopes", () => {
  it("a GET needs read:<category>; write implies read", async () => {
    expect((await t.request("/api/v1/user", { headers: token(await alice.token(["read:user"])) })).status).toBe(200);
    expect((await t.request("/api/v1/user", { headers: token(await alice.token(["write:user"])) })).status).toBe(200);
  });

  it("a token without the category gets Gitea's 403 scope message", async () => {
    const res = await t.request("/api/v1/user", { headers: token(await alice.token(["read:repository"])) });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("token does not have at least one of required scope(s), required=[read:user], token scope=read:repository");
  });

  it("a mutation needs write:<category>; read is not enough", async () => {
    const res = await t.request("/api/v1/orgs", { method: "POST", json: { username: "scoped-org" }, headers: token(await alice.token(["read:organization"])) });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toMatch(/required=\[write:organization\]/);
  });

  it("a route in two categories needs both (GET /user/orgs: user and organization)", async () => {
    const res = await t.request("/api/v1/user/orgs", { headers: token(await alice.token(["read:user"])) });
    await expectRefusal(res, 403, "token does not have at least one of required scope(s), required=[read:user read:organization], token scope=read:user");
    expect((await t.request("/api/v1/user/orgs", { headers: token(await alice.token(["read:user", "read:organization"])) })).status).toBe(200);
  });

  it("/version and /settings/api need no scope (go-gitea/gitea#26035)", async () => {
    const tok = await alice.token(["read:issue"]);
    expect((await t.request("/api/v1/version", { headers: token(tok) })).status).toBe(200);
    expect((await t.request("/api/v1/settings/api", { headers: token(tok) })).status).toBe(200);
  });

  it("basic auth with a password is not limited by scopes", async () => {
    expect((await t.request("/api/v1/user/orgs", { headers: basic(alice.name, alice.password) })).status).toBe(200);
  });
});

describe("REQUIRE_SIGNIN_VIEW", () => {
  it("anonymous calls get 403 `Only signed in user is allowed to call APIs.`", async () => {
    const t2 = await testApp({ GITEA__service__REQUIRE_SIGNIN_VIEW: "true" });
    const res = await t2.request("/api/v1/version");
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: "Only signed in user is allowed to call APIs." });
    t2.close();
  });
});

describe("the viewer CTE of the query layer: sign-in forms, sudo and token limits per category", () => {
  /** GET /orgs/{org}/teams of a private organization: 200 with its teams for members, 404 for everyone else. */
  const teamsOf = (org: string, headers: Record<string, string>) => t.request(`/api/v1/orgs/${org}/teams`, { headers });

  it("a member signed in with a password (also one shaped like a token) or a token sees its private organization; a stranger does not", async () => {
    const owner = await seedUser(t.db);
    const org = await seedOrg(t, owner, { visibility: 2 });
    const member = await seedUser(t.db, { password: "0123456789abcdef0123456789abcdef01234567" });
    const team = await seedMember(t, org, member);
    for (const headers of [basic(member.name, member.password), basic(member.name.toUpperCase(), member.password), token(await member.token(["read:organization"]))]) {
      const res = await teamsOf(org.name, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect((await res.json()).map((x: { id: number }) => x.id)).toEqual([team.id]);
      expect(roundTrips(res)).toBe(1);
    }
    await expectRefusal(teamsOf(org.name, basic(alice.name, alice.password)), 404, NOT_FOUND);
  });

  it("sudo: a site admin sees what the target sees (the name in any case), not what the admin sees", async () => {
    const owner = await seedUser(t.db);
    const org = await seedOrg(t, owner, { visibility: 2 });
    const member = await seedUser(t.db);
    await seedMember(t, org, member);
    const adminTok = await admin.token();
    expect((await teamsOf(org.name, token(adminTok))).status).toBe(200);
    expect((await teamsOf(org.name, { ...token(adminTok), Sudo: member.name.toUpperCase() })).status).toBe(200);
    const res = await teamsOf(org.name, { ...token(adminTok), Sudo: alice.name });
    expect(roundTrips(await expectRefusal(res, 404, NOT_FOUND))).toBe(1);
  });

  it("an organization is seen through the token's organization scope, a user through its user scope", async () => {
    const owner = await seedUser(t.db);
    const org = await seedOrg(t, owner, { visibility: 1 });
    const member = await seedUser(t.db, { visibility: 1 });
    await seedMember(t, org, member);
    const orgOnly = token(await owner.token(["read:organization"]));
    // The limited organization: its teams, for a token that may read organizations but not users.
    expect((await teamsOf(org.name, orgOnly)).status).toBe(200);
    // The limited member, looked up as a user: hidden from that token (404), seen with read:user too (204).
    const hidden = await t.request(`/api/v1/orgs/${org.name}/members/${member.name}`, { headers: orgOnly });
    expect(roundTrips(await expectRefusal(hidden, 404, NOT_FOUND))).toBe(1);
    const seen = await t.request(`/api/v1/orgs/${org.name}/members/${member.name}`, { headers: token(await owner.token(["read:organization", "read:user"])) });
    expect(seen.status).toBe(204);
  });
});
