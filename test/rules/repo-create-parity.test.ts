/**
 * Every rule that applies when a repository is created, on all three ways to create one (issue 12):
 * POST /user/repos and /orgs/{org}/repos (create), POST /repos/{owner}/{repo}/generate (generate),
 * POST /repos/{owner}/{repo}/forks (fork). Name rules (reserved names, patterns, characters,
 * length), FORCE_PRIVATE, the organization create right, the 409 on an existing name, the owner's
 * max_repo_creation, and generate's template items. Refusals carry Gitea's message and cost one
 * round trip (two when the write itself fails).
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { label, repository } from "../../functions/db/schema.ts";
import { apiRepo, expectRefusal, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let admin: SeededUser;
let aliceTok: string;
let bobTok: string;
let template: string;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  bob = await seedUser(t.db);
  admin = await seedUser(t.db, { admin: true });
  [aliceTok, bobTok] = await Promise.all([alice.token(), bob.token()]);
  template = (await apiRepo(t, aliceTok, { name: uniq("tpl"), template: true, issue_labels: "Default" })).full_name;
});
afterAll(() => t.close());

interface Way {
  way: "create" | "generate" | "fork";
  /** Creates a repository named `name` for `owner` (the caller itself when omitted) as the caller with token `tk`. */
  make: (app: TestApp, tk: string, body: { name?: string; private?: boolean }, owner?: { name: string; org: boolean }, source?: string) => Promise<Response>;
  created: number;
}

const post = (app: TestApp, path: string, tk: string, json: unknown) => app.request(path, { method: "POST", headers: token(tk), json });
const me = async (app: TestApp, tk: string) => (await (await app.request("/api/v1/user", { headers: token(tk) })).json()).login as string;

const WAYS: Way[] = [
  {
    way: "create",
    created: 201,
    make: (app, tk, body, owner) => post(app, owner?.org ? `/api/v1/orgs/${owner.name}/repos` : "/api/v1/user/repos", tk, body),
  },
  {
    way: "generate",
    created: 201,
    make: async (app, tk, body, owner, source = template) => post(app, `/api/v1/repos/${source}/generate`, tk, { owner: owner?.name ?? (await me(app, tk)), labels: true, ...body }),
  },
  {
    way: "fork",
    created: 202,
    make: (app, tk, body, owner, source) => post(app, `/api/v1/repos/${source}/forks`, tk, { ...body, ...(owner?.org ? { organization: owner.name } : {}) }),
  },
];

/** A fresh public repository of alice's to fork (one owner forks a repository once). */
const freshBase = async (app = t, tk = aliceTok) => (await apiRepo(app, tk, { name: uniq("base"), template: true, issue_labels: "Default" })).full_name;
/** The source a way needs: a template for generate, a fresh base for fork. */
const sourceFor = async (w: Way, app = t, tk = aliceTok) => (w.way === "create" ? undefined : w.way === "generate" ? (app === t ? template : await freshBase(app, tk)) : await freshBase(app, tk));

describe.each(WAYS)("name rules on $way", (w) => {
  it.each([
    [".", "name is reserved [name: .]"],
    ["..", "name is reserved [name: ..]"],
    ["-", "name is reserved [name: -]"],
    ["x.git", "name pattern is not allowed [pattern: *.git]"],
    ["X.WIKI", "name pattern is not allowed [pattern: *.wiki]"],
    ["feed.rss", "name pattern is not allowed [pattern: *.rss]"],
    ["feed.atom", "name pattern is not allowed [pattern: *.atom]"],
    ["a..b", "name is invalid [a..b]: must be valid alpha or numeric or dash(-_) or dot characters"],
    ["has space", "[Name]: AlphaDashDot"],
    ["slash/name", "[Name]: AlphaDashDot"],
    ["", "[Name]: Required"],
    ["n".repeat(101), "[Name]: MaxSize"],
  ])("%j → 422 %s, nothing written, one round trip", async (name, message) => {
    const source = await sourceFor(w);
    const before = await t.db.select({ id: repository.id }).from(repository);
    const res = await w.make(t, bobTok, { name }, undefined, source);
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe(message);
    // A refusal by the validator happens before any database work for an unsigned body; signed-in
    // callers are authenticated first (one round trip).
    expect(roundTrips(res)).toBe(1);
    expect((await t.db.select({ id: repository.id }).from(repository)).length).toBe(before.length);
  });

  it("a name of exactly 100 characters, and names that only contain the reserved ones, are fine", async () => {
    for (const name of [`${"n".repeat(96)}${uniq("").slice(-4)}`, `git.${uniq("x")}`, `${uniq("x")}.github`, `${uniq("a")}-._b`]) {
      const res = await w.make(t, bobTok, { name }, undefined, await sourceFor(w));
      expect(res.status, name).toBe(w.created);
      expect((await res.json()).name, name).toBe(name);
    }
  });
});

describe.each(WAYS)("the 409 on an existing name on $way", (w) => {
  it("an existing repository of the owner with the same name in any case → 409, nothing written (2 round trips)", async () => {
    const existing = await apiRepo(t, bobTok, { name: uniq("taken") });
    const res = await w.make(t, bobTok, { name: existing.name.toUpperCase() }, undefined, await sourceFor(w));
    expect(res.status).toBe(409);
    expect((await res.json()).message).toBe("The repository with the same name already exists.");
    expect(roundTrips(res)).toBe(2);
    const rows = await t.db.select().from(repository).where(and(eq(repository.ownerId, bob.id), eq(repository.lowerName, existing.name.toLowerCase())));
    expect(rows.map((r) => r.id)).toEqual([existing.id]);
  });
});

describe("fork-only conflicts", () => {
  it("forking one's own repository → 409 before any write (1 round trip)", async () => {
    const base = await freshBase();
    const res = await post(t, `/api/v1/repos/${base}/forks`, aliceTok, { name: uniq("self") });
    expect(res.status).toBe(409);
    expect((await res.json()).message).toBe("The repository with the same name already exists.");
    expect(roundTrips(res)).toBe(1);
  });

  it("a second fork into the same owner, under another name → 409 naming the first fork (1 round trip)", async () => {
    const base = await freshBase();
    const first = await post(t, `/api/v1/repos/${base}/forks`, bobTok, {});
    expect(first.status).toBe(202);
    const res = await post(t, `/api/v1/repos/${base}/forks`, bobTok, { name: uniq("again") });
    expect(res.status).toBe(409);
    expect((await res.json()).message).toBe(`repository is already forked by user [uname: ${bob.name}, repo path: ${base}, fork path: ${bob.name}/${base.split("/")[1]}]`);
    expect(roundTrips(res)).toBe(1);
  });
});

describe("FORCE_PRIVATE", () => {
  let tf: TestApp;
  let u: SeededUser;
  let uTok: string;
  let siteAdminTok: string;
  beforeAll(async () => {
    tf = await testApp({ GITEA__repository__FORCE_PRIVATE: "true" });
    u = await seedUser(tf.db);
    uTok = await u.token();
    siteAdminTok = await (await seedUser(tf.db, { admin: true })).token();
  });
  afterAll(() => tf.close());

  it("create: every new repository is private, whatever was asked", async () => {
    for (const priv of [false, true, undefined]) {
      const res = await post(tf, "/api/v1/user/repos", uTok, { name: uniq("fp"), private: priv });
      expect(res.status).toBe(201);
      expect((await res.json()).private).toBe(true);
    }
  });

  it("generate: the generated repository is private, whatever was asked", async () => {
    const tpl = (await apiRepo(tf, siteAdminTok, { name: uniq("tpl"), template: true })).full_name;
    // A site admin may make the template public despite FORCE_PRIVATE.
    expect((await (await tf.request(`/api/v1/repos/${tpl}`, { method: "PATCH", headers: token(siteAdminTok), json: { private: false } })).json()).private).toBe(false);
    for (const priv of [false, undefined]) {
      const res = await post(tf, `/api/v1/repos/${tpl}/generate`, uTok, { owner: u.name, name: uniq("gen"), labels: true, private: priv });
      expect(res.status).toBe(201);
      expect((await res.json()).private).toBe(true);
    }
  });

  it("fork: the base decides (Gitea's ForkRepository): private base → private fork; a base made public by an admin → public fork", async () => {
    const priv = (await apiRepo(tf, siteAdminTok, { name: uniq("pb") })).full_name;
    await tf.request(`/api/v1/repos/${priv}/collaborators/${u.name}`, { method: "PUT", headers: token(siteAdminTok), json: { permission: "read" } });
    const f1 = await post(tf, `/api/v1/repos/${priv}/forks`, uTok, {});
    expect(f1.status).toBe(202);
    expect((await f1.json()).private).toBe(true);
    const pub = (await apiRepo(tf, siteAdminTok, { name: uniq("pub") })).full_name;
    await tf.request(`/api/v1/repos/${pub}`, { method: "PATCH", headers: token(siteAdminTok), json: { private: false } });
    const f2 = await post(tf, `/api/v1/repos/${pub}/forks`, uTok, {});
    expect(f2.status).toBe(202);
    expect((await f2.json()).private).toBe(false);
  });
});

describe("the organization create right", () => {
  let org: SeededOrg;
  let hidden: SeededOrg;
  let member: SeededUser;
  let creator: SeededUser;
  let memberTok: string;
  let creatorTok: string;
  beforeAll(async () => {
    org = await seedOrg(t, alice);
    hidden = await seedOrg(t, alice, { visibility: 2 });
    member = await seedUser(t.db);
    creator = await seedUser(t.db);
    await seedMember(t, org, member);
    await seedMember(t, org, creator, { permission: "write", canCreateOrgRepo: true });
    [memberTok, creatorTok] = await Promise.all([member.token(), creator.token()]);
  });

  const REFUSED: Record<Way["way"], (o: string) => [number, string | Record<string, string>]> = {
    create: () => [403, "Given user is not allowed to create repository in organization."],
    generate: () => [403, "Given user is not allowed to create repository in organization."],
    // Gitea's and Forgejo's texts: a member is told it lacks the right (a non-member, below, that it is none)
    fork: (o) => [403, `User is not allowed to create repos in Organisation '${o}'`],
  };
  const HIDDEN: Record<Way["way"], (o: string) => [number, string | Record<string, string>]> = {
    create: () => [404, "The target couldn't be found."],
    generate: (o) => [404, { error: `request owner \`${o}\` does not exist` }],
    fork: (o) => [422, `org does not exist [id: 0, name: ${o}]`],
  };

  it.each(WAYS)("$way: a member without the right is refused, nothing written, one round trip", async (w) => {
    const res = await w.make(t, memberTok, { name: uniq("m") }, { name: org.name, org: true }, await sourceFor(w));
    const [status, message] = REFUSED[w.way](org.name);
    expect(res.status).toBe(status);
    expect((await res.json()).message).toBe(message);
    expect(roundTrips(res)).toBe(1);
    expect(await t.db.select().from(repository).where(eq(repository.ownerId, org.id))).toEqual([]);
  });

  it("fork: a signed-in user who is no member of a visible organization → 403 `User is no Member of Organisation`", async () => {
    const res = await WAYS.find((w) => w.way === "fork")!.make(t, bobTok, { name: uniq("nm") }, { name: org.name, org: true }, await freshBase());
    expect([res.status, (await res.json()).message]).toEqual([403, `User is no Member of Organisation '${org.name}'`]);
  });

  it.each(WAYS)("$way: a hidden or unknown organization answers as a missing one", async (w) => {
    for (const name of [hidden.name, uniq("no-such-org")]) {
      const res = await w.make(t, bobTok, { name: uniq("h") }, { name, org: true }, await sourceFor(w));
      const [status, body] = HIDDEN[w.way](name);
      expect(res.status, name).toBe(status);
      const got = await res.json();
      if (typeof body === "string") expect(got.message, name).toBe(body);
      else expect(got, name).toEqual(body);
      expect(roundTrips(res), name).toBe(1);
    }
  });

  it.each(WAYS)("$way: a team with can_create_org_repo, an org owner and a site admin may", async (w) => {
    for (const tk of [creatorTok, aliceTok, await admin.token()]) {
      const res = await w.make(t, tk, { name: uniq("ok") }, { name: org.name, org: true }, await sourceFor(w));
      expect(res.status).toBe(w.created);
      expect((await res.json()).owner.login).toBe(org.name);
    }
  });
});

describe("max_repo_creation of the owner", () => {
  /** A user allowed `max` repositories who owns `owns` already. */
  const limited = async (max: number, owns: number) => {
    const u = await seedUser(t.db);
    const tk = await u.token();
    for (let i = 0; i < owns; i++) await apiRepo(t, tk, { name: uniq("own") });
    const res = await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(await admin.token()), json: { max_repo_creation: max } });
    expect(res.status).toBe(200);
    return { u, tk };
  };

  it("create: at the limit → 403 with the limit named; below it → 201; -1 is no limit", async () => {
    const { tk } = await limited(1, 1);
    const res = await post(t, "/api/v1/user/repos", tk, { name: uniq("over") });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("You have reached your limit of 1 repositories.");
    expect(roundTrips(res)).toBe(1);
    expect((await post(t, "/api/v1/user/repos", (await limited(2, 1)).tk, { name: uniq("under") })).status).toBe(201);
    expect((await post(t, "/api/v1/user/repos", (await limited(-1, 2)).tk, { name: uniq("free") })).status).toBe(201);
    const zero = await limited(0, 0);
    expect((await post(t, "/api/v1/user/repos", zero.tk, { name: uniq("none") })).status).toBe(403);
  });

  it("generate: a limit of 0 allows none", async () => {
    const { u, tk } = await limited(0, 0);
    await expectRefusal(post(t, `/api/v1/repos/${template}/generate`, tk, { owner: u.name, name: uniq("zero"), labels: true }), 403, "You have reached your limit of 0 repositories.");
  });

  it("generate: the same limit (Gitea's GenerateRepository checks CanCreateRepo)", async () => {
    const { u, tk } = await limited(1, 1);
    const res = await post(t, `/api/v1/repos/${template}/generate`, tk, { owner: u.name, name: uniq("over"), labels: true });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("You have reached your limit of 1 repositories.");
    expect(roundTrips(res)).toBe(1);
    expect(await t.db.select().from(repository).where(eq(repository.ownerId, u.id))).toHaveLength(1);
    const under = await limited(2, 1);
    expect((await post(t, `/api/v1/repos/${template}/generate`, under.tk, { owner: under.u.name, name: uniq("under"), labels: true })).status).toBe(201);
  });

  it("a site admin is not limited: creating for itself, and generating into a limited user", async () => {
    const adminUser = await seedUser(t.db, { admin: true });
    const adminTok = await adminUser.token();
    await t.request(`/api/v1/admin/users/${adminUser.name}`, { method: "PATCH", headers: token(adminTok), json: { max_repo_creation: 0 } });
    expect((await post(t, "/api/v1/user/repos", adminTok, { name: uniq("adm") })).status).toBe(201);
    const { u } = await limited(0, 0);
    expect((await post(t, `/api/v1/repos/${template}/generate`, adminTok, { owner: u.name, name: uniq("for"), labels: true })).status).toBe(201);
  });

  it("fork: not limited (Gitea's default ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT = true)", async () => {
    const { tk } = await limited(0, 0);
    expect((await post(t, `/api/v1/repos/${await freshBase()}/forks`, tk, {})).status).toBe(202);
  });
});

describe("generate's template items", () => {
  it("labels are copied only when asked; topics only when asked; the template flag is not", async () => {
    const tpl = await apiRepo(t, aliceTok, { name: uniq("items"), template: true, issue_labels: "Default" });
    await t.db.update(repository).set({ topics: JSON.stringify(["alpha", "beta"]) }).where(eq(repository.id, tpl.id));
    const gen = async (items: Record<string, boolean>) => {
      const res = await post(t, `/api/v1/repos/${tpl.full_name}/generate`, aliceTok, { owner: alice.name, name: uniq("g"), ...items });
      expect(res.status).toBe(201);
      const body = await res.json();
      const [row] = await t.db.select().from(repository).where(eq(repository.id, body.id));
      const labels = await t.db.select({ name: label.name }).from(label).where(eq(label.repoId, body.id));
      return { body, row, labels: labels.map((l) => l.name).sort() };
    };
    const withLabels = await gen({ labels: true });
    expect(withLabels.labels).toEqual(["bug", "duplicate", "enhancement", "help wanted", "invalid", "question", "wontfix"]);
    expect(JSON.parse(withLabels.row!.topics)).toEqual([]);
    expect(withLabels.body.template).toBe(false);
    expect(withLabels.row!.templateId).toBe(tpl.id);
    const withTopics = await gen({ topics: true });
    expect(withTopics.labels).toEqual([]);
    expect(JSON.parse(withTopics.row!.topics)).toEqual(["alpha", "beta"]);
    // Any single item is enough; git content of an empty template leaves the repository empty.
    for (const item of ["git_content", "git_hooks", "webhooks", "avatar", "protected_branch"]) {
      const g = await gen({ [item]: true });
      expect(g.labels, item).toEqual([]);
      expect(g.body.empty, item).toBe(true);
    }
  });

  it("every item false or absent → 422 `must select at least one template item` (1 round trip)", async () => {
    const res = await post(t, `/api/v1/repos/${template}/generate`, aliceTok, { owner: alice.name, name: uniq("g"), labels: false, topics: false, git_content: false });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("must select at least one template item");
    expect(roundTrips(res)).toBe(1);
  });
});
