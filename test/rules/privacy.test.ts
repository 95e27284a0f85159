/**
 * The privacy matrix (issue 4 item 8): callers × repositories × routes. An outsider gets 404, never
 * 403, and never sees a private repository in a list, a search result, a count header or a feed.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefusal, NOT_FOUND, addCollaborator, apiRepo, seedMember, seedOrg, seedUser, testApp, token, uniq, type TestApp } from "../fixtures/app.ts";

type RepoKey = "userPub" | "userPriv" | "privOrgPub" | "limOrgPub" | "privOrgPriv";
type CallerKey = "anonymous" | "publicOnly" | "unrelated" | "collabRead" | "collabWrite" | "collabAdmin" | "orgMember" | "orgOwner" | "siteAdmin";

let t: TestApp;
const tag = uniq("pm");
const repos = {} as Record<RepoKey, { id: number; full: string }>;
const headers = {} as Record<CallerKey, Record<string, string>>;

/** Who may see what (Gitea's rules; collaborators bypass the owner's visibility). */
const SEES: Record<CallerKey, RepoKey[]> = {
  anonymous: ["userPub"],
  publicOnly: ["userPub"],
  unrelated: ["userPub", "limOrgPub"],
  collabRead: ["userPub", "limOrgPub", "userPriv", "privOrgPriv"],
  collabWrite: ["userPub", "limOrgPub", "userPriv", "privOrgPriv"],
  collabAdmin: ["userPub", "limOrgPub", "userPriv", "privOrgPriv"],
  orgMember: ["userPub", "limOrgPub", "privOrgPub"],
  orgOwner: ["userPub", "limOrgPub", "privOrgPub", "privOrgPriv"],
  siteAdmin: ["userPub", "userPriv", "privOrgPub", "limOrgPub", "privOrgPriv"],
};
/** Who may administrate (edit) which repository. */
const ADMINS: Record<CallerKey, RepoKey[]> = {
  anonymous: [],
  // A public-only token keeps its owner's rights on public repositories of public owners.
  publicOnly: ["userPub"],
  unrelated: [],
  collabRead: [],
  collabWrite: [],
  collabAdmin: ["userPriv", "privOrgPriv"],
  orgMember: [],
  orgOwner: ["privOrgPub", "privOrgPriv"],
  siteAdmin: ["userPub", "userPriv", "privOrgPub", "limOrgPub", "privOrgPriv"],
};
const ALL_REPOS: RepoKey[] = ["userPub", "userPriv", "privOrgPub", "limOrgPub", "privOrgPriv"];
const CALLERS = Object.keys(SEES) as CallerKey[];

beforeAll(async () => {
  t = await testApp();
  const owner = await seedUser(t.db);
  const ownerTok = await owner.token();
  const orgOwner = await seedUser(t.db);
  const orgOwnerTok = await orgOwner.token();
  const privOrg = await seedOrg(t, orgOwner, { visibility: 2 });
  const limOrg = await seedOrg(t, owner, { visibility: 1 });
  const mk = async (key: RepoKey, tk: string, priv: boolean, org?: string) => {
    const r = await apiRepo(t, tk, { name: `${tag}-${key}`, private: priv, issue_labels: "Default" }, org);
    repos[key] = { id: r.id, full: r.full_name };
  };
  await mk("userPub", ownerTok, false);
  await mk("userPriv", ownerTok, true);
  await mk("privOrgPub", orgOwnerTok, false, privOrg.name);
  await mk("limOrgPub", ownerTok, false, limOrg.name);
  await mk("privOrgPriv", orgOwnerTok, true, privOrg.name);
  const users: Partial<Record<CallerKey, string>> = {};
  for (const [k, permission] of [["collabRead", "read"], ["collabWrite", "write"], ["collabAdmin", "admin"]] as const) {
    const u = await seedUser(t.db);
    await addCollaborator(t, ownerTok, repos.userPriv.full, u, permission);
    await addCollaborator(t, orgOwnerTok, repos.privOrgPriv.full, u, permission);
    users[k] = await u.token();
  }
  const member = await seedUser(t.db);
  await seedMember(t, privOrg, member);
  users.orgMember = await member.token();
  users.orgOwner = orgOwnerTok;
  users.unrelated = await (await seedUser(t.db)).token();
  const admin = await seedUser(t.db, { admin: true });
  users.siteAdmin = await admin.token();
  users.publicOnly = await admin.token(["public-only", "all"]);
  headers.anonymous = {};
  for (const k of CALLERS) if (k !== "anonymous") headers[k] = token(users[k]!);
});
afterAll(() => t.close());

const get = (path: string, who: CallerKey) => t.request(path, { headers: headers[who] });

describe.each(CALLERS)("%s", (who) => {
  it("reads of each repository: 200 when visible, otherwise 404 — never 403", async () => {
    for (const key of ALL_REPOS) {
      const visible = SEES[who].includes(key);
      const { full, id } = repos[key];
      for (const path of [`/api/v1/repos/${full}`, `/api/v1/repos/${full}/labels`, `/api/v1/repos/${full}/labels/bug`, `/api/v1/repos/${full}/forks`, `/api/v1/repos/${full}/activities/feeds`]) {
        const res = await get(path, who);
        if (visible) expect(res.status, `${who} GET ${path}`).toBe(200);
        else await expectRefusal(res, 404, NOT_FOUND, `${who} GET ${path}`);
        // the round trips, never the database time: reading a hidden row takes time a missing one does not
        expect(res.headers.get("Server-Timing"), `${who} GET ${path}`).toMatch(/^db;desc="\d+"$/);
      }
      // GET /repositories/{id} needs a signed-in caller.
      const byId = await get(`/api/v1/repositories/${id}`, who);
      if (who === "anonymous") await expectRefusal(byId, 401, "token is required", `${who} by id ${key}`);
      else if (visible) expect(byId.status, `${who} by id ${key}`).toBe(200);
      else await expectRefusal(byId, 404, NOT_FOUND, `${who} by id ${key}`);
    }
  });

  it("writes: 404 when the repository is hidden, 403 when visible without the right", async () => {
    for (const key of ALL_REPOS) {
      const { full } = repos[key];
      const res = await t.request(`/api/v1/repos/${full}`, { method: "PATCH", headers: headers[who], json: { description: "x" } });
      const label = `${who} PATCH ${key}`;
      if (who === "anonymous") await expectRefusal(res, 401, "token is required", label);
      else if (!SEES[who].includes(key)) await expectRefusal(res, 404, NOT_FOUND, label);
      else if (!ADMINS[who].includes(key)) await expectRefusal(res, 403, "user should be an owner or a collaborator with admin write of a repository", label);
      else expect((await res.json()).description, label).toBe("x");
    }
  });

  it("search and counts contain exactly the visible repositories", async () => {
    const res = await get(`/api/v1/repos/search?q=${tag}&limit=50`, who);
    const found = ((await res.json()).data as { full_name: string }[]).map((r) => r.full_name).sort();
    const expected = SEES[who].map((k) => repos[k].full).sort();
    expect(found, who).toEqual(expected);
    expect(res.headers.get("X-Total-Count"), who).toBe(String(expected.length));
  });
});

describe("lists by owner", () => {
  it("an org's repository list and count never include what the caller may not see", async () => {
    const org = repos.privOrgPub.full.split("/")[0];
    // The private organization itself is visible to its members and site admins only: collaborators
    // of one of its repositories do not see it (404), like everyone else.
    const SEES_ORG: CallerKey[] = ["orgMember", "orgOwner", "siteAdmin"];
    for (const who of CALLERS) {
      const res = await get(`/api/v1/orgs/${org}/repos`, who);
      if (!SEES_ORG.includes(who)) {
        await expectRefusal(res, 404, NOT_FOUND, who);
        continue;
      }
      const visible = ALL_REPOS.filter((k) => repos[k].full.startsWith(`${org}/`) && SEES[who].includes(k));
      expect(((await res.json()) as { full_name: string }[]).map((r) => r.full_name).sort(), who).toEqual(visible.map((k) => repos[k].full).sort());
      expect(res.headers.get("X-Total-Count"), who).toBe(String(visible.length));
    }
  });

  it("forks_count counts only the forks the caller may see — as its forks list does — in a read, a list and a search", async () => {
    const owner = await seedUser(t.db);
    const ownerTok = await owner.token();
    const base = await apiRepo(t, ownerTok, { name: uniq("forked") });
    // A fork in a private organization, and one by a user anyone may see.
    const hider = await seedUser(t.db);
    const hiderTok = await hider.token();
    const hidden = await seedOrg(t, hider, { visibility: 2 });
    const fork = (tk: string, json: Record<string, unknown>) => t.request(`/api/v1/repos/${base.full_name}/forks`, { method: "POST", headers: token(tk), json });
    expect((await fork(hiderTok, { organization: hidden.name })).status).toBe(202);
    expect((await fork(await (await seedUser(t.db)).token(), {})).status).toBe(202);
    const admin = await (await seedUser(t.db, { admin: true })).token();
    for (const [who, h, n] of [["anonymous", {}, 1], ["the private organization's owner", token(hiderTok), 2], ["a site admin", token(admin), 2], ["the owner", token(ownerTok), 1]] as const) {
      const forks = await t.request(`/api/v1/repos/${base.full_name}/forks`, { headers: h });
      expect(forks.headers.get("X-Total-Count"), who).toBe(String(n));
      expect((await (await t.request(`/api/v1/repos/${base.full_name}`, { headers: h })).json()).forks_count, who).toBe(n);
      const listed = ((await (await t.request(`/api/v1/users/${owner.name}/repos`, { headers: h })).json()) as { id: number; forks_count: number }[]).find((r) => r.id === base.id);
      expect(listed?.forks_count, who).toBe(n);
      const found = ((await (await t.request(`/api/v1/repos/search?q=${base.name}`, { headers: h })).json()).data as { id: number; forks_count: number }[]).find((r) => r.id === base.id);
      expect(found?.forks_count, who).toBe(n);
    }
    // sort=forks ranks by what the caller may see: a repository whose only fork is hidden ties with
    // one without forks (the id breaks the tie), for a keyword search and a walk of all alike.
    // (the one with the hidden fork is older: by id alone it comes last in a descending order)
    // Two names with a common stem of their own (two `uniq` names share a prefix only while the clock's digits do).
    const stem = uniq("forked");
    const hiddenOnly = await apiRepo(t, ownerTok, { name: `${stem}-a` });
    const plain = await apiRepo(t, ownerTok, { name: `${stem}-b` });
    expect((await t.request(`/api/v1/repos/${hiddenOnly.full_name}/forks`, { method: "POST", headers: token(hiderTok), json: { organization: hidden.name } })).status).toBe(202);
    for (const q of [`q=${stem}`, `uid=${owner.id}`]) {
      const order = async (h: Record<string, string>) =>
        ((await (await t.request(`/api/v1/repos/search?${q}&sort=forks&order=desc&limit=50`, { headers: h })).json()).data as { id: number }[]).map((r) => r.id).filter((id) => id === plain.id || id === hiddenOnly.id);
      expect(await order({}), q).toEqual([plain.id, hiddenOnly.id]);
      expect(await order(token(hiderTok)), q).toEqual([hiddenOnly.id, plain.id]);
    }
  });

  it("the feed of a visible repository does not leak other repositories", async () => {
    const feed = await (await get(`/api/v1/repos/${repos.userPub.full}/activities/feeds`, "anonymous")).json();
    expect(feed.map((f: { op_type: string; repo: { full_name: string } }) => `${f.op_type} ${f.repo.full_name}`)).toEqual([`create_repo ${repos.userPub.full}`]);
    void eq;
  });
});

describe("a hidden repository's git data is not read", () => {
  it("its refs and pack catalog come back empty in the read batch for a caller who may not read its code (no time to tell it from a missing one); its owner's batch has them", async () => {
    const batches: { texts: string[]; rows: unknown[][] }[] = [];
    const app = await testApp({}, {
      wrap: (d) => ({
        async batch(items, mode) {
          const rows = await d.batch(items, mode);
          batches.push({ texts: items.map((i) => i.text), rows: rows as unknown[][] });
          return rows;
        },
        close: () => d.close(),
      }),
    });
    try {
      const owner = await seedUser(app.db);
      const ownerTok = await owner.token();
      const outsider = await (await seedUser(app.db)).token();
      const r = await apiRepo(app, ownerTok, { name: uniq("hg"), private: true, auto_init: true });
      const rowsOf = async (tok: string | null) => {
        batches.length = 0;
        const res = await app.request(`/api/v1/repos/${r.full_name}/branches`, { headers: tok ? token(tok) : {} });
        await res.arrayBuffer();
        const read = batches.find((b) => b.texts.some((t) => t.includes("FROM git_ref")))!;
        const at = (needle: string) => read.rows[read.texts.findIndex((t) => t.includes(needle))]!;
        return { status: res.status, refs: at("FROM git_ref").length, packs: at("FROM git_pack").length };
      };
      expect(await rowsOf(ownerTok)).toEqual({ status: 200, refs: 1, packs: 1 });
      expect(await rowsOf(outsider)).toEqual({ status: 404, refs: 0, packs: 0 });
      expect(await rowsOf(null)).toEqual({ status: 404, refs: 0, packs: 0 });
    } finally {
      app.close();
    }
  });
});
