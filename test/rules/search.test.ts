/** GET /repos/search and the repository lists: every parameter and rule, never a hidden repository. */
import { MAX_KEYWORD_PARTS } from "../../functions/services/repos.ts";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orgUser, repository, star } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, addCollaborator, apiRepo, roundTrips, seedMember, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let aliceTok: string;
let bobTok: string;
const tag = uniq("srch");
const names: Record<string, string> = {};

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  bob = await seedUser(t.db);
  [aliceTok, bobTok] = await Promise.all([alice.token(), bob.token()]);
  for (const [key, body] of Object.entries({
    pub: { description: "the public one" },
    priv: { private: true },
    tmpl: { template: true },
    arch: {},
    shared: { private: true },
  })) {
    names[key] = `${tag}-${key}`;
    await apiRepo(t, aliceTok, { name: names[key], ...body });
  }
  await t.request(`/api/v1/repos/${alice.name}/${names.arch}`, { method: "PATCH", headers: token(aliceTok), json: { archived: true } });
  await addCollaborator(t, aliceTok, `${alice.name}/${names.shared}`, bob, "read");
  await t.db.update(repository).set({ topics: JSON.stringify(["edge-topic"]) }).where(eq(repository.lowerName, names.pub!.toLowerCase()));
});
afterAll(() => t.close());

const search = async (q: string, tk?: string) => {
  const res = await t.request(`/api/v1/repos/search?${q}`, { headers: tk ? token(tk) : {} });
  const body = await res.json();
  return { res, body, names: (body.data ?? []).map((r: { name: string }) => r.name).sort() as string[] };
};

describe("search rules", () => {
  it("answers {ok, data} with X-Total-Count and Link, in one round trip", async () => {
    const { res, body } = await search(`q=${tag}&limit=2`, aliceTok);
    expect(body.ok).toBe(true);
    expect(res.headers.get("X-Total-Count")).toBe("5");
    expect(res.headers.get("Link")).toContain('rel="next"');
    expect(roundTrips(res)).toBe(1);
  });

  it("rule 1: anonymous callers and public-only tokens never see or count private repositories", async () => {
    const anon = await search(`q=${tag}`);
    expect(anon.names).toEqual([names.arch, names.pub, names.tmpl].sort());
    expect(anon.res.headers.get("X-Total-Count")).toBe("3");
    const pub = await search(`q=${tag}`, await alice.token(["public-only", "read:repository"]));
    expect(pub.names).toEqual([names.arch, names.pub, names.tmpl].sort());
  });

  it("signed-in callers see private repositories they can access, and only those", async () => {
    expect((await search(`q=${tag}`, aliceTok)).names).toHaveLength(5);
    const asBob = await search(`q=${tag}`, bobTok);
    expect(asBob.names).toEqual([names.arch, names.pub, names.shared, names.tmpl].sort());
    expect(asBob.res.headers.get("X-Total-Count")).toBe("4");
    expect((await search(`q=${tag}&private=false`, aliceTok)).names).toHaveLength(3);
  });

  it("rule 2: modes source, fork, mirror, collaborative; any other mode → 422", async () => {
    expect((await search(`q=${tag}&mode=source`, aliceTok)).names).toHaveLength(5);
    expect((await search(`q=${tag}&mode=fork`, aliceTok)).names).toEqual([]);
    expect((await search(`q=${tag}&mode=mirror`, aliceTok)).names).toEqual([]);
    // Collaborative: only repositories the caller collaborates on (not public repositories of others).
    expect((await search(`q=${tag}&mode=collaborative`, bobTok)).names).toEqual([names.shared]);
    expect((await search(`q=${tag}&mode=collaborative`)).names).toEqual([]);
    const bad = await search(`q=${tag}&mode=weird`, aliceTok);
    expect(bad.res.status).toBe(422);
    expect(bad.body.message).toBe('Invalid search mode: "weird"');
  });

  it("rule 3: an unknown sort or order → 422", async () => {
    const s = await search("sort=random");
    expect(s.res.status).toBe(422);
    expect(s.body.message).toBe('Invalid sort mode: "random"');
    const o = await search("sort=id&order=sideways");
    expect(o.body.message).toBe('Invalid sort order: "sideways"');
  });

  it("sort and order: alpha by default, id desc on request", async () => {
    const asc = (await search(`q=${tag}`, aliceTok)).body.data.map((r: { name: string }) => r.name);
    expect(asc).toEqual([...asc].sort());
    const desc = (await search(`q=${tag}&sort=id&order=desc`, aliceTok)).body.data.map((r: { id: number }) => r.id);
    expect(desc).toEqual([...desc].sort((a: number, b: number) => b - a));
  });

  it("sort=alpha is owner name, then name, both reversed by order=desc (Gitea's SearchOrderByMap); without sort, by name alone (Gitea's default)", async () => {
    const otherTok = await (await seedUser(t.db)).token();
    const made = [
      await apiRepo(t, aliceTok, { name: `${tag}-so-b` }),
      await apiRepo(t, otherTok, { name: `${tag}-so-a` }),
      await apiRepo(t, otherTok, { name: `${tag}-so-c` }),
    ];
    const key = (r: { owner: { login: string }; name: string }) => [r.owner.login.toLowerCase(), r.name.toLowerCase()] as const;
    const cmp = (a: readonly string[], b: readonly string[]) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : a[1]! < b[1]! ? -1 : a[1]! > b[1]! ? 1 : 0);
    const byOwner = made.map(key).sort(cmp).map((k) => k[1]);
    const full = (q: string) => search(q, aliceTok).then((r) => r.body.data.map((x: { name: string }) => x.name.toLowerCase()));
    for (const q of [`q=${tag}-so-`, `q=${tag}-so-&limit=50&page=1`]) {
      expect(await full(`${q}&sort=alpha`)).toEqual(byOwner);
      expect(await full(`${q}&sort=alpha&order=desc`)).toEqual([...byOwner].reverse());
      expect(await full(q)).toEqual(made.map((r) => r.name.toLowerCase()).sort());
    }
    // Without a keyword the page is walked in that order (IDX_repository_alpha).
    const walked = (await search("sort=alpha&limit=50", aliceTok)).body.data.map(key);
    expect(walked).toEqual([...walked].sort(cmp));
  });

  it("priority_owner_id: that owner's repositories first, then the others by owner id, each by the sort (Gitea's CASE WHEN owner_id = ? THEN 0 ELSE owner_id END)", async () => {
    const [carol, dave] = [await seedUser(t.db), await seedUser(t.db)];
    const made = [await apiRepo(t, await carol.token(), { name: `${tag}-pr-a` }), await apiRepo(t, await dave.token(), { name: `${tag}-pr-b` }), await apiRepo(t, aliceTok, { name: `${tag}-pr-c` })];
    const order = async (q: string) => (await search(q, aliceTok)).body.data.map((r: { owner: { id: number }; name: string }) => [r.owner.id, r.name]);
    const rest = made.filter((r) => r.owner.id !== dave.id).sort((a, b) => a.owner.id - b.owner.id);
    const want = [made[1]!, ...rest].map((r) => [r.owner.id, r.name]);
    expect(await order(`q=${tag}-pr-&priority_owner_id=${dave.id}`)).toEqual(want);
    expect(await order(`q=${tag}-pr-&priority_owner_id=${dave.id}&sort=alpha&order=desc`)).toEqual(want);
  });

  it("every sort Gitea documents answers the same repositories in both orders (lfs_size: no LFS is stored, so by id)", async () => {
    const all = (await search(`q=${tag}`, aliceTok)).names;
    for (const sort of ["alpha", "created", "updated", "size", "git_size", "lfs_size", "stars", "forks", "id"]) {
      for (const order of ["asc", "desc"]) {
        const r = await search(`q=${tag}&sort=${sort}&order=${order}`, aliceTok);
        expect([r.res.status, r.names], `${sort} ${order}`).toEqual([200, all]);
        // Without a keyword the statement is another shape.
        expect((await search(`sort=${sort}&order=${order}`, aliceTok)).res.status, `${sort} ${order}, no keyword`).toBe(200);
      }
    }
    const ids = async (order: string) => (await search(`q=${tag}&sort=lfs_size&order=${order}`, aliceTok)).body.data.map((r: { id: number }) => r.id);
    const asc = await ids("asc");
    expect(asc).toEqual([...asc].sort((a: number, b: number) => a - b));
  });

  it("filters: is_private, template, archived, includeDesc, topic, uid+exclusive, starredBy, priority_owner_id", async () => {
    expect((await search(`q=${tag}&is_private=true`, aliceTok)).names).toEqual([names.priv, names.shared].sort());
    expect((await search(`q=${tag}&template=true`, aliceTok)).names).toEqual([names.tmpl]);
    expect((await search(`q=${tag}&archived=true`, aliceTok)).names).toEqual([names.arch]);
    expect((await search("q=the public one&includeDesc=true", aliceTok)).names).toEqual([names.pub]);
    expect((await search("q=the public one", aliceTok)).names).toEqual([]);
    expect((await search("q=edge-topic&topic=true", aliceTok)).names).toEqual([names.pub]);
    expect((await search(`uid=${bob.id}`, aliceTok)).names).toEqual([names.shared]);
    expect((await search(`uid=${bob.id}&exclusive=true`, aliceTok)).names).toEqual([]);
    const [pub] = await t.db.select().from(repository).where(eq(repository.lowerName, names.pub!.toLowerCase()));
    await t.db.insert(star).values({ uid: bob.id, repoId: pub!.id });
    expect((await search(`starredBy=${bob.id}`, aliceTok)).names).toEqual([names.pub]);
    const own = await apiRepo(t, bobTok, { name: `${tag}-zzz-bob` });
    const prio = await search(`q=${tag}&priority_owner_id=${bob.id}`, bobTok);
    expect(prio.body.data[0].name).toBe(own.name);
  });

  it("uid: the repositories the user owns or contributes to — collaborations, its teams' repositories, public repositories of its private organizations; a membership only to whom may see it", async () => {
    // Gitea's SearchRepositoryCondition with OwnerID: owned, or (not owned and) a collaboration, a
    // team of the user's covering it, or a public repository of a private organization it is in.
    const carol = await seedUser(t.db);
    const dave = await seedUser(t.db);
    const daveTok = await dave.token();
    const owner = { token: alice.token };
    const ids = async (q: string, tk?: string) => (await search(q, tk)).names;
    const own = await apiRepo(t, await carol.token(), { name: `${tag}-carol-own` });
    // A private organization: carol is in a team that covers nothing.
    const priv = await seedOrg(t, owner, { visibility: 2 });
    await seedMember(t, priv, carol);
    const privPub = await apiRepo(t, aliceTok, { name: `${tag}-priv-pub` }, priv.name);
    await apiRepo(t, aliceTok, { name: `${tag}-priv-priv`, private: true }, priv.name);
    // A public organization: carol's team covers one repository of two; her membership is concealed.
    const pub = await seedOrg(t, owner);
    const covered = await apiRepo(t, aliceTok, { name: `${tag}-org-covered` }, pub.name);
    const other = await apiRepo(t, aliceTok, { name: `${tag}-org-other` }, pub.name);
    const team = await seedMember(t, pub, carol);
    expect((await t.request(`/api/v1/teams/${team.id}/repos/${pub.name}/${covered.name}`, { method: "PUT", headers: token(pub.ownerToken) })).status).toBe(204);
    // A public organization whose team of carol's includes all its repositories, private ones too.
    const all = await seedOrg(t, owner);
    await seedMember(t, all, carol, { includesAll: true, isPublic: true });
    const allPub = await apiRepo(t, aliceTok, { name: `${tag}-all-pub` }, all.name);
    const allPriv = await apiRepo(t, aliceTok, { name: `${tag}-all-priv`, private: true }, all.name);

    // alice owns all three organizations: she sees every membership.
    expect(await ids(`uid=${carol.id}`, aliceTok)).toEqual([own.name, privPub.name, covered.name, allPub.name, allPriv.name].sort());
    expect(await ids(`uid=${carol.id}&exclusive=true`, aliceTok)).toEqual([own.name]);
    // carol herself.
    expect(await ids(`uid=${carol.id}`, await carol.token())).toEqual([own.name, privPub.name, covered.name, allPub.name, allPriv.name].sort());
    // A stranger: the private organization and the concealed membership stay hidden; the public
    // membership's team shows what the stranger may read.
    expect(await ids(`uid=${carol.id}`, daveTok)).toEqual([own.name, allPub.name].sort());
    expect(await ids(`uid=${carol.id}`)).toEqual([own.name, allPub.name].sort());
    // A stranger who may read the private organization's public repository (a collaborator on it)
    // still does not learn of the concealed membership through it.
    await addCollaborator(t, aliceTok, `${priv.name}/${privPub.name}`, dave, "read");
    expect(await ids(`uid=${carol.id}`, daveTok)).toEqual([own.name, allPub.name].sort());
    expect(await ids(`uid=${dave.id}`, daveTok)).toEqual([privPub.name]);
    // Made public, the membership's team repository shows to the stranger too.
    await t.db.update(orgUser).set({ isPublic: true }).where(and(eq(orgUser.orgId, pub.id), eq(orgUser.uid, carol.id)));
    expect(await ids(`uid=${carol.id}`, daveTok)).toEqual([own.name, covered.name, allPub.name].sort());
    await t.db.update(orgUser).set({ isPublic: false }).where(and(eq(orgUser.orgId, pub.id), eq(orgUser.uid, carol.id)));
    // A collaboration shows, but (Gitea: without Private) not in an organization where her membership is concealed.
    await addCollaborator(t, aliceTok, `${pub.name}/${other.name}`, carol, "read");
    expect(await ids(`uid=${carol.id}`, aliceTok)).toContain(other.name);
    expect(await ids(`uid=${carol.id}&private=false`, aliceTok)).toEqual([own.name, allPub.name].sort());
    // A stranger — anonymous, signed in, with private=false — sees the collaboration: leaving it out
    // would tell of the concealed membership (Gitea leaves it out without Private).
    expect(await ids(`uid=${carol.id}`)).toEqual([own.name, other.name, allPub.name].sort());
    expect(await ids(`uid=${carol.id}`, daveTok)).toEqual([own.name, other.name, allPub.name].sort());
    expect(await ids(`uid=${carol.id}&private=false`, daveTok)).toEqual([own.name, other.name, allPub.name].sort());
    // The same with a keyword (the indexed shape) and the total.
    const kw = await search(`q=${tag}-&uid=${carol.id}`, aliceTok);
    expect(kw.names).toEqual([own.name, privPub.name, covered.name, other.name, allPub.name, allPriv.name].sort());
    expect(kw.res.headers.get("X-Total-Count")).toBe("6");
    expect(roundTrips(kw.res)).toBe(1);
  });

  it("GET /user/repos lists the public repositories of the caller's private organizations, as Gitea's ListMyRepos", async () => {
    const erin = await seedUser(t.db);
    const erinTok = await erin.token();
    const priv = await seedOrg(t, { token: alice.token }, { visibility: 2 });
    await seedMember(t, priv, erin);
    const visible = await apiRepo(t, aliceTok, { name: `${tag}-mine-pub` }, priv.name);
    await apiRepo(t, aliceTok, { name: `${tag}-mine-priv`, private: true }, priv.name);
    const res = await t.request("/api/v1/user/repos", { headers: token(erinTok) });
    expect((await res.json()).map((r: { name: string }) => r.name)).toEqual([visible.name]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
    expect(roundTrips(res)).toBe(1);
  });

  it("B.5 the keyword index (repo_search) finds what LIKE finds, and follows creations, edits, renames, topics and deletions", async () => {
    const base = `${tag}-idx`;
    const r = await apiRepo(t, aliceTok, { name: base, description: "Grüße aus Köln" });
    const path = `/api/v1/repos/${alice.name}`;
    // Any case, inside the name, non-ASCII in the description.
    expect((await search(`q=${base.toUpperCase()}`, aliceTok)).names).toEqual([r.name]);
    expect((await search(`q=${base.slice(3)}`, aliceTok)).names).toEqual([r.name]);
    expect((await search(`q=${encodeURIComponent("rüße aus")}&includeDesc=true`, aliceTok)).names).toEqual([r.name]);
    expect((await search(`q=${encodeURIComponent("rüße aus")}`, aliceTok)).names).toEqual([]);
    // Keywords the index cannot take are matched by the scan, with the same answers.
    expect((await search(`q=${encodeURIComponent("ö")}&includeDesc=true`, aliceTok)).names).toContain(r.name);
    // …and a name search does not look in descriptions on the scan either (the index's column filter
    // hides them from an indexed keyword; a one-character keyword is scanned).
    expect((await search(`q=${encodeURIComponent("ö")}`, aliceTok)).names).toEqual([]);
    expect((await search(`q=${encodeURIComponent('"xyz')}`, aliceTok)).res.status).toBe(200);
    expect((await search(`q=${encodeURIComponent("100%")}`, aliceTok)).names).toEqual([]);
    // Edits: the new description and name are found, the old ones no longer.
    await t.request(`${path}/${base}`, { method: "PATCH", headers: token(aliceTok), json: { description: "plain words", name: `${base}-moved` } });
    expect((await search("q=grüße&includeDesc=true", aliceTok)).names).toEqual([]);
    expect((await search("q=plain words&includeDesc=true", aliceTok)).names).toEqual([`${base}-moved`]);
    expect((await search(`q=${base}-moved`, aliceTok)).names).toEqual([`${base}-moved`]);
    expect((await search(`q=${base}&includeDesc=true`, aliceTok)).names).toEqual([`${base}-moved`]);
    // Topics: matched whole and case-insensitively with topic=true; name search also looks in them.
    await t.db.update(repository).set({ topics: JSON.stringify(["Needle-Topic"]) }).where(eq(repository.id, r.id));
    expect((await search("q=needle-topic&topic=true", aliceTok)).names).toEqual([`${base}-moved`]);
    expect((await search("q=needle&topic=true", aliceTok)).names).toEqual([]);
    expect((await search("q=needle-topic", aliceTok)).names).toEqual([`${base}-moved`]);
    // Deleted: gone from the index too.
    expect((await t.request(`${path}/${base}-moved`, { method: "DELETE", headers: token(aliceTok) })).status).toBe(204);
    expect((await search("q=needle-topic&topic=true", aliceTok)).names).toEqual([]);
    const [left] = await t.driver.batch([{ text: "SELECT COUNT(*) FROM repo_search WHERE rowid = ?", args: [r.id] }], "read");
    expect(Number((left![0] as unknown as unknown[])[0])).toBe(0);
  });

  it("keyword rule: q is split on \",\" without trimming the parts, which are ORed; an empty part matches every name (Gitea's SearchRepositoryCondition)", async () => {
    const a = await apiRepo(t, aliceTok, { name: `${tag}-kwa-one` });
    const b = await apiRepo(t, aliceTok, { name: `${tag}-kwb-two` });
    const both = [a.name, b.name].sort();
    expect((await search(`q=${tag}-kwa,${tag}-kwb`, aliceTok)).names).toEqual(both);
    // A part too short for the index is read row by row, with the same answer.
    expect((await search(`q=${tag}-kwa,o`, aliceTok)).names).toContain(a.name);
    expect((await search(`q=zz-nothing,${tag}-kwb`, aliceTok)).names).toEqual([b.name]);
    // Untrimmed: " two" is not inside any name.
    expect((await search(`q=${tag}-kwa,${encodeURIComponent(" two")}`, aliceTok)).names).toEqual([a.name]);
    const every = await search("q=zz-nothing,&limit=1", aliceTok);
    expect(every.res.headers.get("X-Total-Count")).toBe((await search("limit=1", aliceTok)).res.headers.get("X-Total-Count"));
    // Topics: inside one outside topic=true, whole with it — each part.
    await t.db.update(repository).set({ topics: JSON.stringify(["kw-topic-x"]) }).where(eq(repository.id, b.id));
    expect((await search(`q=zz-nothing,kw-topic`, aliceTok)).names).toEqual([b.name]);
    expect((await search(`q=zz-nothing,kw-topic&topic=true`, aliceTok)).names).toEqual([]);
    expect((await search(`q=zz-nothing,KW-topic-x&topic=true`, aliceTok)).names).toEqual([b.name]);
    // includeDesc per part.
    await t.request(`/api/v1/repos/${alice.name}/${a.name}`, { method: "PATCH", headers: token(aliceTok), json: { description: "quux described" } });
    expect((await search(`q=zz-nothing,quux described&includeDesc=true`, aliceTok)).names).toEqual([a.name]);
    expect((await search(`q=zz-nothing,quux described`, aliceTok)).names).toEqual([]);
    expect(roundTrips((await search(`q=${tag}-kwa,${tag}-kwb`, aliceTok)).res)).toBe(1);
  });

  it("keyword rule: only the first MAX_KEYWORD_PARTS (10) distinct parts are read — a bound Gitea does not set: every part is checked on every candidate row", async () => {
    const a = await apiRepo(t, aliceTok, { name: `${tag}-cap-one` });
    const misses = Array.from({ length: MAX_KEYWORD_PARTS }, (_, i) => `zz-miss-${i}`);
    // the 11th distinct part is not read
    expect((await search(`q=${[...misses, a.name].join(",")}`, aliceTok)).names).toEqual([]);
    // repeated parts count once: the same part 50 times, then the name, is 2 distinct parts
    expect((await search(`q=${[...Array(50).fill("zz-miss-0"), a.name].join(",")}`, aliceTok)).names).toEqual([a.name]);
  });

  it("keyword rule: \"owner/repo\" (one slash, no team_id) also matches owner and name, that owner's repositories first", async () => {
    const org = await seedOrg(t, alice, { name: `${alice.name}x` });
    const theirs = await apiRepo(t, aliceTok, { name: `${tag}-sl-a` }, org.name);
    const mine = await apiRepo(t, aliceTok, { name: `${tag}-sl-b` });
    const names = async (q: string) => (await search(q, aliceTok)).body.data.map((r: { name: string }) => r.name);
    // The owner part inside the owner's name, the name part inside the name; the exact owner first.
    expect(await names(`q=${alice.name}/${tag}-sl-`)).toEqual([mine.name, theirs.name]);
    expect(await names(`q=${alice.name.toUpperCase()}/${tag}-sl-`)).toEqual([mine.name, theirs.name]);
    // A name part too short for the index: the owner's repositories are the candidates.
    expect(await names(`q=${alice.name}x/-&limit=50`)).toEqual([theirs.name]);
    expect(await names(`q=${org.name}/${tag}-sl-`)).toEqual([theirs.name]);
    // Not with team_id.
    const team = await seedTeam(t, org, { includesAll: true });
    expect(await names(`q=${alice.name}/${tag}-sl-&team_id=${team.id}`)).toEqual([]);
    expect(await names(`q=${tag}-sl-&team_id=${team.id}`)).toEqual([theirs.name]);
    // Two slashes: no owner form.
    expect(await names(`q=${alice.name}/${tag}-sl-/`)).toEqual([]);
  });

  it("a private repository of a private org is invisible to non-members in search (go-gitea/gitea#23150)", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const r = await apiRepo(t, aliceTok, { name: `${tag}-orgpub` }, org.name);
    expect((await search(`q=${r.name}`, bobTok)).names).toEqual([]);
    expect((await search(`q=${r.name}`)).names).toEqual([]);
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    expect((await search(`q=${r.name}`, await m.token())).names).toEqual([r.name]);
  });

  it("private=false: only public repositories of public owners — none of a limited or private owner, even one the caller sees (Gitea's SearchRepositoryCondition)", async () => {
    const limited = await seedOrg(t, alice, { visibility: 1 });
    const hidden = await seedUser(t.db, { visibility: 2 });
    const ltd = await apiRepo(t, aliceTok, { name: `${tag}-pf-ltd` }, limited.name);
    const own = await apiRepo(t, await hidden.token(), { name: `${tag}-pf-own` });
    const hiddenTok = await hidden.token();
    expect((await search(`q=${tag}-pf`, aliceTok)).names).toEqual([ltd.name]);
    expect((await search(`q=${tag}-pf`, hiddenTok)).names).toEqual([ltd.name, own.name].sort());
    for (const tk of [aliceTok, hiddenTok]) {
      const r = await search(`q=${tag}-pf&private=false`, tk);
      expect([r.names, r.res.headers.get("X-Total-Count")]).toEqual([[], "0"]);
    }
    // Without a keyword the total is counted by class: it leaves them out alike.
    const all = await search("private=false&limit=50", hiddenTok);
    expect(all.names).not.toContain(own.name);
    expect(all.names).not.toContain(ltd.name);
    // …and counts what an anonymous caller counts (public repositories of public owners).
    expect(all.res.headers.get("X-Total-Count")).toBe((await search("limit=1")).res.headers.get("X-Total-Count"));
  });

  it("team_id of a team that includes all repositories lists every repository of its organization the caller may see, with and without a keyword (Gitea keeps its team_repo rows)", async () => {
    const org = await seedOrg(t, alice);
    const all = await seedTeam(t, org, { includesAll: true, visibility: "public" });
    const some = await seedTeam(t, org);
    const made = [];
    for (const [suffix, priv] of [["ta", false], ["tb", true]] as const) made.push((await apiRepo(t, aliceTok, { name: `${tag}-${suffix}`, private: priv }, org.name)).name);
    const outside = await apiRepo(t, aliceTok, { name: `${tag}-tc` }); // the owner's own, not the organization's
    expect((await search(`team_id=${all.id}&limit=50`, aliceTok)).names).toEqual(made.sort());
    expect((await search(`team_id=${all.id}&q=${tag}-t`, aliceTok)).names).toEqual(made.sort());
    const stranger = await search(`team_id=${all.id}&q=${tag}-t`, bobTok);
    expect([stranger.names, stranger.res.headers.get("X-Total-Count")]).toEqual([[`${tag}-ta`], "1"]); // the private one stays hidden
    expect((await search(`team_id=${some.id}&q=${tag}-t`, aliceTok)).names).toEqual([]);
    expect(made).not.toContain(outside.name);
  });
});

describe("lists", () => {
  it("GET /user/repos lists own and shared repositories with X-Total-Count", async () => {
    const res = await t.request("/api/v1/user/repos?limit=50", { headers: token(bobTok) });
    const list = (await res.json()).map((r: { name: string }) => r.name);
    const owned = (await t.db.select({ name: repository.name }).from(repository).where(eq(repository.ownerId, bob.id))).map((r) => r.name);
    expect(list.sort()).toEqual([...owned, names.shared].sort());
    expect(res.headers.get("X-Total-Count")).toBe(String(owned.length + 1));
    expect(roundTrips(res)).toBe(1);
  });

  it("GET /users/{username}/repos hides private repositories from others and private users entirely", async () => {
    const rows = await t.db.select({ name: repository.name, isPrivate: repository.isPrivate }).from(repository).where(eq(repository.ownerId, alice.id));
    const listed = async (headers: Record<string, string>) => (await (await t.request(`/api/v1/users/${alice.name}/repos?limit=50`, { headers })).json()).map((r: { name: string }) => r.name).sort();
    expect(await listed({})).toEqual(rows.filter((r) => !r.isPrivate).map((r) => r.name).sort());
    expect(await listed(token(aliceTok))).toEqual(rows.map((r) => r.name).sort());
    expect(await listed(token(aliceTok))).toEqual(expect.arrayContaining([names.priv, names.shared, names.pub]));
    const hidden = await seedUser(t.db, { visibility: 2 });
    await expectRefusal(t.request(`/api/v1/users/${hidden.name}/repos`), 404, NOT_FOUND);
  });

  it("GET /orgs/{org}/repos: 404 for an org the caller cannot see; private repositories only through a team", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const r = await apiRepo(t, aliceTok, { name: uniq("op"), private: true }, org.name);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/repos`, { headers: token(bobTok) }), 404, NOT_FOUND);
    const m = await seedUser(t.db);
    const mt = await seedMember(t, org, m);
    const mtok = await m.token();
    const none = await t.request(`/api/v1/orgs/${org.name}/repos`, { headers: token(mtok) });
    expect(await none.json()).toEqual([]);
    expect(none.headers.get("X-Total-Count")).toBe("0");
    const widen = await t.request(`/api/v1/teams/${mt.id}`, { method: "PATCH", headers: token(org.ownerToken), json: { permission: "read", includes_all_repositories: true } });
    expect(widen.status).toBe(200);
    const res = await t.request(`/api/v1/orgs/${org.name}/repos`, { headers: token(mtok) });
    expect((await res.json()).map((x: { name: string }) => x.name)).toEqual([r.name]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
  });
});
