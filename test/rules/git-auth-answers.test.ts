/**
 * Rule: git smart HTTP never tells an unknown user from a wrong password (GHSA-pc73-rj2c-wvf9
 * class: an answer that differs by account reveals which accounts exist, or their state). A failed
 * sign-in answers the same whether the account is missing, exists, or exists deactivated, barred
 * from signing in or bound to change its password; the API's sign-in does the same. And a
 * repository its caller may not see — a public repository of a private user or of a limited
 * organization — answers exactly as a missing one: 401 with the challenge to anonymous callers,
 * 404 to signed-in ones (a public-only token).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRepo, basic, seedOrg, seedUser, testApp, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
/** A private repository (with content) of a public user. */
let privateRepo: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  privateRepo = (await apiRepo(t, await owner.token(), { name: uniq("gaa"), private: true, auto_init: true })).full_name;
});
afterAll(() => t.close());

/** A smart HTTP answer as a git client sees it: status, challenge, body. */
async function gitAnswer(full: string, headers: Record<string, string> = {}) {
  const res = await t.request(`/${full}.git/info/refs?service=git-upload-pack`, { headers });
  return { status: res.status, challenge: res.headers.get("WWW-Authenticate"), contentType: res.headers.get("Content-Type"), body: await res.text() };
}

/** An API answer: status, challenge, body. */
async function apiAnswer(headers: Record<string, string>) {
  const res = await t.request("/api/v1/user", { headers });
  return { status: res.status, challenge: res.headers.get("WWW-Authenticate"), body: await res.json() };
}

const TOKENISH = "0123456789abcdef0123456789abcdef01234567";

describe("git smart HTTP never tells an unknown user from a wrong password (GHSA-pc73-rj2c-wvf9)", () => {
  it("info/refs of a private repository: an unknown user, a wrong password, and a wrong password of an inactive, prohibited or must-change-password account answer alike", async () => {
    const inactive = await seedUser(t.db, { active: false });
    const prohibited = await seedUser(t.db, { prohibitLogin: true });
    const mustChange = await seedUser(t.db, { mustChangePassword: true });
    const unknown = await gitAnswer(privateRepo, basic(uniq("nobody"), "x"));
    // the baseline is a sign-in failure: 401 with Gitea's challenge, nothing of the repository
    expect(unknown).toEqual({ status: 401, challenge: 'Basic realm="Gitea"', contentType: "text/plain; charset=utf-8", body: "Unauthorized\n" });
    // and the right password does get in (the failures below are failures of the password alone)
    expect((await gitAnswer(privateRepo, basic(owner.name, owner.password))).status).toBe(200);
    const tries: [string, Record<string, string>][] = [
      ["existing user, wrong password", basic(owner.name, "wrongpassword")],
      ["existing user, wrong password shaped like a token", basic(owner.name, TOKENISH)],
      ["unknown user, password shaped like a token", basic(uniq("nobody"), TOKENISH)],
      ["an unknown token as the user name", basic(TOKENISH, "")],
      ["inactive user, wrong password", basic(inactive.name, "wrongpassword")],
      ["prohibit-login user, wrong password", basic(prohibited.name, "wrongpassword")],
      ["must-change-password user, wrong password", basic(mustChange.name, "wrongpassword")],
    ];
    for (const [label, h] of tries) expect(await gitAnswer(privateRepo, h), label).toEqual(unknown);
    // the same failures on a repository that does not exist answer alike too
    const missing = `${owner.name}/${uniq("nosuch")}`;
    for (const [label, h] of tries) expect(await gitAnswer(missing, h), `missing repository: ${label}`).toEqual(unknown);
  });

  it("GET /api/v1/user: a wrong password of an inactive, prohibited or must-change-password account gets the unknown user's 401", async () => {
    const unknown = await apiAnswer(basic(uniq("nobody"), "x"));
    expect(unknown.status).toBe(401);
    expect(unknown.body.message).toBeTruthy();
    expect(await apiAnswer(basic(owner.name, "wrongpassword")), "existing user").toEqual(unknown);
    for (const opts of [{ active: false }, { prohibitLogin: true }, { mustChangePassword: true }]) {
      const u = await seedUser(t.db, opts);
      // the right password is refused for the account's state (403): the wrong one must not say so
      expect((await apiAnswer(basic(u.name, u.password))).status, JSON.stringify(opts)).toBe(403);
      expect(await apiAnswer(basic(u.name, "wrongpassword")), JSON.stringify(opts)).toEqual(unknown);
    }
  });
});

describe("git smart HTTP: a repository its caller may not see answers as a missing one", () => {
  it("a public repository of a private user and of a limited organization: anonymous → the missing repository's 401, public-only token → its 404", async () => {
    const privUser = await seedUser(t.db, { visibility: 2 });
    const privTok = await privUser.token();
    const ofPrivateUser = (await apiRepo(t, privTok, { name: uniq("pubofpriv"), private: false, auto_init: true })).full_name;
    const orgOwner = await seedUser(t.db);
    const limitedOrg = await seedOrg(t, orgOwner, { visibility: 1 });
    const ofLimitedOrg = (await apiRepo(t, limitedOrg.ownerToken, { name: uniq("pubofltd"), private: false, auto_init: true }, limitedOrg.name)).full_name;
    const publicOwner = await seedUser(t.db);
    const ofPublicUser = (await apiRepo(t, await publicOwner.token(), { name: uniq("pubofpub"), private: false, auto_init: true })).full_name;

    const stranger = await seedUser(t.db);
    const strangerAll = basic(stranger.name, await stranger.token());
    const strangerPublicOnly = basic(stranger.name, await stranger.token(["public-only", "read:repository"]));
    const ownerPublicOnly = basic(privUser.name, await privUser.token(["public-only", "read:repository"]));

    // the comparisons are not vacuous: who may see each repository fetches it
    expect((await gitAnswer(ofPublicUser)).status, "anonymous, public repository of a public user").toBe(200);
    expect((await gitAnswer(ofPublicUser, strangerPublicOnly)).status, "public-only token, public repository of a public user").toBe(200);
    expect((await gitAnswer(ofPrivateUser, basic(privUser.name, privTok))).status, "the private user's own token").toBe(200);
    expect((await gitAnswer(ofLimitedOrg, strangerAll)).status, "a signed-in user, limited organization").toBe(200);

    for (const missing of [`${publicOwner.name}/${uniq("nosuch")}`, `${uniq("noowner")}/${uniq("nosuch")}`]) {
      const anonymous = await gitAnswer(missing);
      expect(anonymous, "a missing repository, anonymous").toEqual({ status: 401, challenge: 'Basic realm="Gitea"', contentType: "text/plain; charset=utf-8", body: "Unauthorized\n" });
      const signedIn = await gitAnswer(missing, strangerPublicOnly);
      expect(signedIn, "a missing repository, public-only token").toEqual({ status: 404, challenge: null, contentType: "text/plain; charset=utf-8", body: "Repository not found\n" });
      for (const hidden of [ofPrivateUser, ofLimitedOrg]) {
        expect(await gitAnswer(hidden), `anonymous: ${hidden} vs ${missing}`).toEqual(anonymous);
        expect(await gitAnswer(hidden, strangerPublicOnly), `public-only token: ${hidden} vs ${missing}`).toEqual(signedIn);
      }
      expect(await gitAnswer(missing, ownerPublicOnly), `the owner's public-only token: ${missing}`).toEqual(signedIn);
      expect(await gitAnswer(ofPrivateUser, ownerPublicOnly), `the owner's own public-only token: ${ofPrivateUser} vs ${missing}`).toEqual(signedIn);
      expect(await gitAnswer(ofPrivateUser, strangerAll), `a stranger's full token: ${ofPrivateUser} vs ${missing}`).toEqual(signedIn);
    }
  });
});
