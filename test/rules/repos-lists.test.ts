/** GET /repos/search and the repository lists: the parameters and rules the mutation run of the lists and search found unpinned. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mirror, repository, star } from "../../functions/db/schema.ts";
import { indexedKeyword } from "../../functions/services/common.ts";
import { addCollaborator, addTeamMember, apiRepo, expectRefusal, NOT_FOUND, roundTrips, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let carol: SeededUser;
let hidden: SeededUser;
let aliceTok: string;
let bobTok: string;
let carolTok: string;
let org: SeededOrg;
let teamId: number;
const tag = uniq("rl");
const n = (key: string) => `${tag}-${key}`;

beforeAll(async () => {
  t = await testApp();
  [alice, bob, carol] = [await seedUser(t.db), await seedUser(t.db), await seedUser(t.db)];
  hidden = await seedUser(t.db, { visibility: 2 });
  [aliceTok, bobTok, carolTok] = await Promise.all([alice.token(), bob.token(), carol.token()]);
  // alice: a, b (template), arch (archived), mir (a mirror), priv (private); bob forks a.
  await apiRepo(t, aliceTok, { name: n("a") });
  await apiRepo(t, aliceTok, { name: n("b"), template: true });
  await apiRepo(t, aliceTok, { name: n("arch") });
  await t.request(`/api/v1/repos/${alice.name}/${n("arch")}`, { method: "PATCH", headers: token(aliceTok), json: { archived: true } });
  const mir = await apiRepo(t, aliceTok, { name: n("mir") });
  await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, mir.id));
  await t.db.insert(mirror).values({ repoId: mir.id, intervalMs: 28_800_000 });
  await apiRepo(t, aliceTok, { name: n("priv"), private: true });
  expect((await t.request(`/api/v1/repos/${alice.name}/${n("a")}/forks`, { method: "POST", headers: token(bobTok), json: {} })).status).toBe(202);
  // An organization of alice's with a private and a public repository in a team of carol's.
  org = await seedOrg(t, alice);
  await apiRepo(t, aliceTok, { name: n("o"), private: true }, org.name);
  await apiRepo(t, aliceTok, { name: n("opub") }, org.name);
  teamId = (await seedTeam(t, org)).id;
  await addTeamMember(t, org, teamId, carol);
  for (const r of [n("o"), n("opub")]) {
    expect((await t.request(`/api/v1/teams/${teamId}/repos/${org.name}/${r}`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
  }
});
afterAll(() => t.close());

const search = async (q: string, tk?: string) => {
  const res = await t.request(`/api/v1/repos/search?${q}`, { headers: tk ? token(tk) : {} });
  expect(res.status, q).toBe(200);
  const body = await res.json();
  return { total: res.headers.get("X-Total-Count"), names: (body.data as { full_name: string }[]).map((r) => r.full_name) };
};
const sorted = (names: string[]) => [...names].sort();
const mine = (...keys: string[]) => keys.map((k) => `${alice.name}/${n(k)}`);

describe("search rule 2: modes", () => {
  it("search rule 2: source leaves out forks and mirrors; fork and mirror find only those", async () => {
    expect(sorted((await search(`q=${tag}&mode=source`, aliceTok)).names)).toEqual(sorted([...mine("a", "arch", "b", "priv"), `${org.name}/${n("o")}`, `${org.name}/${n("opub")}`]));
    expect((await search(`q=${tag}&mode=fork`, aliceTok)).names).toEqual([`${bob.name}/${n("a")}`]);
    expect((await search(`q=${tag}&mode=mirror`, aliceTok)).names).toEqual(mine("mir"));
  });

  it("search rule 2: collaborative finds repositories reached through a team or a collaboration, never the caller's own, never mirrors", async () => {
    expect(sorted((await search(`q=${tag}&mode=collaborative`, carolTok)).names)).toEqual(sorted([`${org.name}/${n("o")}`, `${org.name}/${n("opub")}`]));
    // The organization's owner reaches them through the Owners team (all repositories).
    expect(sorted((await search(`q=${tag}&mode=collaborative`, aliceTok)).names)).toEqual(sorted([`${org.name}/${n("o")}`, `${org.name}/${n("opub")}`]));
    await addCollaborator(t, aliceTok, `${alice.name}/${n("mir")}`, carol, "read");
    await addCollaborator(t, aliceTok, `${alice.name}/${n("priv")}`, carol, "read");
    expect(sorted((await search(`q=${tag}&mode=collaborative`, carolTok)).names)).toEqual(sorted([`${org.name}/${n("o")}`, `${org.name}/${n("opub")}`, ...mine("priv")]));
    expect((await search(`q=${tag}&mode=collaborative`, bobTok)).names).toEqual([]);
  });

  it("search rule 2: without a keyword, collaborative, uid, team_id and starredBy find what they find with one (their candidates are read by relation)", async () => {
    const [a] = await t.db.select().from(repository).where(and(eq(repository.ownerId, alice.id), eq(repository.lowerName, n("a"))));
    await t.db.insert(star).values({ uid: carol.id, repoId: a!.id }).onConflictDoNothing();
    for (const [filter, tk] of [
      ["mode=collaborative", carolTok],
      ["mode=collaborative", aliceTok],
      [`uid=${alice.id}`, carolTok],
      [`uid=${bob.id}`, aliceTok],
      [`uid=${bob.id}&exclusive=true`, aliceTok],
      [`team_id=${teamId}`, carolTok],
      [`starredBy=${carol.id}`, bobTok],
    ] as const) {
      const withKeyword = sorted((await search(`q=${tag}&${filter}&limit=50`, tk)).names);
      const without = (await search(`${filter}&limit=50`, tk)).names.filter((name) => name.includes(tag));
      expect(withKeyword.length, filter).toBeGreaterThan(0);
      expect(sorted(without), filter).toEqual(withKeyword);
    }
  });
});

describe("search: keyword, filters and order", () => {
  // A public repository of a hidden user, shared with bob: each test below that needs it finds it
  // whether or not the others ran (a mutation run runs only the tests covering a mutant).
  let hid: { name: string };
  beforeAll(async () => {
    hid = await apiRepo(t, await hidden.token(), { name: n("hid") });
    await addCollaborator(t, await hidden.token(), `${hidden.name}/${hid.name}`, bob, "read");
  });

  it("the keyword is trimmed", async () => {
    expect((await search(`q=${encodeURIComponent(`  ${n("arch")}  `)}`)).names).toEqual(mine("arch"));
  });

  it("topic=true matches topics only, never names (with and without the keyword index)", async () => {
    expect((await search(`q=${n("arch")}`)).names).toEqual(mine("arch"));
    expect((await search(`q=${n("arch")}&topic=true`)).names).toEqual([]);
    // Two characters: no trigram, the statement scans.
    expect((await search(`q=${tag.slice(0, 2)}`)).total).toBe("6");
    expect((await search(`q=${tag.slice(0, 2)}&topic=true`)).names).toEqual([]);
  });

  it("is_private, template and archived filter when false too", async () => {
    const all = mine("a", "arch", "b", "mir", "priv");
    const q = `q=${tag}&uid=${alice.id}&exclusive=true`;
    expect(sorted((await search(q, aliceTok)).names)).toEqual(sorted(all));
    expect(sorted((await search(`${q}&is_private=false`, aliceTok)).names)).toEqual(sorted(all.filter((x) => !x.endsWith("-priv"))));
    expect(sorted((await search(`${q}&template=false`, aliceTok)).names)).toEqual(sorted(all.filter((x) => !x.endsWith("-b"))));
    expect(sorted((await search(`${q}&archived=false`, aliceTok)).names)).toEqual(sorted(all.filter((x) => !x.endsWith("-arch"))));
  });

  it("uid, team_id, starredBy and priority_owner_id of 0 or less are no filters", async () => {
    const plain = await search(`q=${tag}`, aliceTok);
    expect(plain.total).toBe("8");
    for (const p of ["uid", "team_id", "starredBy", "priority_owner_id"]) {
      for (const v of ["0", "-1"]) {
        const s = await search(`q=${tag}&${p}=${v}`, aliceTok);
        expect(s.names, `${p}=${v}`).toEqual(plain.names);
        expect(s.total, `${p}=${v}`).toBe("8");
      }
    }
  });

  it("team_id lists the team's repositories to whoever may see the team, nothing to others", async () => {
    expect(sorted((await search(`team_id=${teamId}`, carolTok)).names)).toEqual(sorted([`${org.name}/${n("o")}`, `${org.name}/${n("opub")}`]));
    expect((await search(`team_id=${teamId}`, bobTok)).names).toEqual([]);
    expect((await search(`team_id=${teamId}`)).names).toEqual([]);
  });

  it("uid and starredBy name an account the caller may not see: nothing is found", async () => {
    const htk = await hidden.token();
    const [b] = await t.db.select({ id: repository.id }).from(repository).where(eq(repository.lowerName, n("b").toLowerCase()));
    await t.db.insert(star).values({ uid: hidden.id, repoId: b!.id });
    expect((await search(`uid=${hidden.id}`, htk)).names).toEqual([`${hidden.name}/${hid.name}`]);
    expect((await search(`starredBy=${hidden.id}`, htk)).names).toEqual(mine("b"));
    expect((await search(`q=${hid.name}`, bobTok)).names).toEqual([`${hidden.name}/${hid.name}`]);
    expect((await search(`uid=${hidden.id}`, bobTok)).names).toEqual([]);
    expect((await search(`starredBy=${hidden.id}`, bobTok)).names).toEqual([]);
  });

  it("priority_owner_id of an owner the caller may not see orders as one that does not exist", async () => {
    const htk = await hidden.token();
    const r = await apiRepo(t, htk, { name: n("0first") });
    await addCollaborator(t, htk, `${hidden.name}/${r.name}`, bob, "read");
    const missing = (await search(`q=${tag}&sort=alpha&order=desc&priority_owner_id=999999999`, bobTok)).names;
    expect(missing).toContain(`${hidden.name}/${r.name}`);
    expect(missing[0]).not.toBe(`${hidden.name}/${r.name}`);
    expect((await search(`q=${tag}&sort=alpha&order=desc&priority_owner_id=${hidden.id}`, bobTok)).names).toEqual(missing);
    const own = (await search(`q=${tag}&sort=alpha&order=desc&priority_owner_id=${hidden.id}`, htk)).names;
    expect(own.slice(0, 2)).toEqual([`${hidden.name}/${hid.name}`, `${hidden.name}/${r.name}`]);
  });

  it("search rule 3: the order applies only with a sort; a sort alone is ascending", async () => {
    const byName = (await search(`q=${tag}`, aliceTok)).names;
    expect((await search(`q=${tag}&order=desc`, aliceTok)).names).toEqual(byName);
    expect((await search(`q=${tag}&order=sideways`, aliceTok)).names).toEqual(byName);
    const ids = async (q: string) => {
      const res = await t.request(`/api/v1/repos/search?${q}`, { headers: token(aliceTok) });
      return ((await res.json()).data as { id: number }[]).map((r) => r.id);
    };
    const asc = await ids(`q=${tag}&sort=id`);
    expect(asc).toEqual([...asc].sort((x, y) => x - y));
    expect(await ids(`q=${tag}&sort=id&order=`)).toEqual(asc);
  });

  it("indexedKeyword: three characters or more, none of the characters JSON escapes in topics", () => {
    expect(indexedKeyword("abc")).toBe('"abc"');
    expect(indexedKeyword("köln")).toBe('"köln"');
    expect(indexedKeyword("ab")).toBeNull();
    expect(indexedKeyword("äb")).toBeNull();
    for (const bad of ['a"bc', "a\\bc", "a\u0000bc", "a\u001fbc", "ab\ud800c"]) expect(indexedKeyword(bad), JSON.stringify(bad)).toBeNull();
    expect(indexedKeyword("a\u0020bc")).toBe('"a bc"');
    expect(indexedKeyword("ab\u{1f600}")).toBe('"ab\u{1f600}"');
  });
});

describe("owner lists and forks", () => {
  it("GET /orgs/{org}/repos with a user's name → 404; GET /users/{username}/repos with an organization's name lists its repositories", async () => {
    await expectRefusal(t.request(`/api/v1/orgs/${alice.name}/repos`, { headers: token(aliceTok) }), 404, NOT_FOUND);
    const res = await t.request(`/api/v1/users/${org.name}/repos`, { headers: token(bobTok) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { full_name: string }[]).map((r) => r.full_name)).toEqual([`${org.name}/${n("opub")}`]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
  });

  it("GET /users/{username}/repos and /orgs/{org}/repos of an account that does not exist → 404, the answer for an account hidden from the caller (one round trip)", async () => {
    for (const path of [`/api/v1/users/${n("nobody")}/repos`, `/api/v1/orgs/${n("nobody")}/repos`, `/api/v1/users/${hidden.name}/repos`]) {
      const res = await expectRefusal(t.request(path, { headers: token(bobTok) }), 404, NOT_FOUND, path);
      expect(roundTrips(res), path).toBe(1);
    }
  });

  it("GET /repos/{owner}/{repo}/forks lists the forks with their total", async () => {
    const res = await t.request(`/api/v1/repos/${alice.name}/${n("a")}/forks`, { headers: token(carolTok) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { full_name: string }[]).map((r) => r.full_name)).toEqual([`${bob.name}/${n("a")}`]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
  });
});

describe("a repository in a list is the repository as GET shows it", () => {
  it("every entry of the search, the caller's, an owner's, an organization's and a team's list equals GET /repos/{owner}/{repo} for the same caller (permissions, units, owner)", async () => {
    // A unit configuration of its own and an external tracker, so the lists carry more than the defaults.
    await t.request(`/api/v1/repos/${alice.name}/${n("b")}`, {
      method: "PATCH",
      headers: token(aliceTok),
      json: {
        has_wiki: false,
        external_tracker: { external_tracker_url: "https://tracker.example/", external_tracker_format: "https://tracker.example/{index}" },
        allow_rebase: false,
        // Text a JSON encoder must escape, and characters outside the BMP: a list row travels as JSON text.
        description: 'quote " backslash \\ newline \n tab \t line separator \u2028 emoji 😀 [1,2] {"a":1} null',
      },
    });
    const b = await (await t.request(`/api/v1/repos/${alice.name}/${n("b")}`, { headers: token(aliceTok) })).json();
    expect(b.description).toBe('quote " backslash \\ newline \n tab \t line separator \u2028 emoji 😀 [1,2] {"a":1} null');
    // Forks in every list: bob's fork of alice's public repository (its parent visible to all), and
    // forks of alice's private repositories, whose parent only alice and their collaborators see.
    for (const [base, into] of [[`${alice.name}/${n("priv")}`, { organization: org.name }], [`${org.name}/${n("o")}`, {}]] as const) {
      const fork = await t.request(`/api/v1/repos/${base}/forks`, { method: "POST", headers: token(aliceTok), json: { ...into, name: `${base.split("/")[1]}-fork` } });
      expect(fork.status, base).toBe(202);
    }
    // A public fork of a repository of a limited organization (a fork of it stays public, as in
    // Gitea): its entry names no parent to those who may not see the organization.
    const limited = await seedOrg(t, alice, { visibility: 1 });
    await apiRepo(t, aliceTok, { name: n("gone") }, limited.name);
    expect((await t.request(`/api/v1/repos/${limited.name}/${n("gone")}/forks`, { method: "POST", headers: token(bobTok), json: {} })).status).toBe(202);
    const callers: [string, string | undefined][] = [["alice", aliceTok], ["bob", bobTok], ["carol", carolTok], ["anonymous", undefined]];
    let compared = 0;
    let withParent = 0;
    let teamCompared = 0;
    // The organization's fork of alice's private repository is in carol's team too.
    expect((await t.request(`/api/v1/teams/${teamId}/repos/${org.name}/${n("priv")}-fork`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
    for (const [who, tk] of callers) {
      const lists = [`/api/v1/repos/search?q=${tag}&limit=50`, `/api/v1/repos/search?uid=${bob.id}&limit=50`, `/api/v1/users/${alice.name}/repos?limit=50`, `/api/v1/orgs/${org.name}/repos?limit=50`];
      if (tk) lists.push("/api/v1/user/repos?limit=50", `/api/v1/teams/${teamId}/repos?limit=50`);
      for (const list of lists) {
        const res = await t.request(list, { headers: tk ? token(tk) : {} });
        if (res.status !== 200) continue; // a team's list is the team's members' and its owners'
        const body = await res.json();
        const entries = (Array.isArray(body) ? body : body.data) as { full_name: string }[];
        for (const entry of entries) {
          const one = await t.request(`/api/v1/repos/${entry.full_name}`, { headers: tk ? token(tk) : {} });
          expect(one.status, `${who} ${list} ${entry.full_name}`).toBe(200);
          // A fork's parent included, when the caller may access it.
          const single = await one.json();
          expect(entry, `${who} ${list} ${entry.full_name}`).toEqual(single);
          compared++;
          if (list.startsWith(`/api/v1/teams/${teamId}/`)) {
            // And the team's route for one of its repositories answers the same.
            const inTeam = await t.request(`/api/v1/teams/${teamId}/repos/${entry.full_name}`, { headers: tk ? token(tk) : {} });
            expect(inTeam.status, `${who} team ${entry.full_name}`).toBe(200);
            expect(await inTeam.json(), `${who} team ${entry.full_name}`).toEqual(single);
            teamCompared++;
          }
          if ((entry as { parent?: unknown }).parent) withParent++;
        }
      }
    }
    expect(compared).toBeGreaterThan(30);
    expect(withParent).toBeGreaterThan(5);
    expect(teamCompared).toBeGreaterThan(3);
    for (const [who, tk, parent] of [["alice", aliceTok, `${limited.name}/${n("gone")}`], ["carol", carolTok, `${limited.name}/${n("gone")}`], ["anonymous", undefined, undefined]] as const) {
      const body = await (await t.request(`/api/v1/repos/search?q=${n("gone")}`, { headers: tk ? token(tk) : {} })).json();
      const fork = (body.data as { full_name: string; parent?: { full_name: string } }[]).find((r) => r.full_name === `${bob.name}/${n("gone")}`);
      expect(fork, `${who} ${JSON.stringify((body.data as { full_name: string }[]).map((r) => r.full_name))}`).toBeDefined();
      expect(fork!.parent?.full_name, who).toBe(parent);
    }
  });
});

describe("a list's pages and its total come from one statement", () => {
  const lists = () => [
    `/api/v1/repos/search?q=${tag}`,
    `/api/v1/repos/search?q=${tag}&sort=updated&order=desc`,
    `/api/v1/repos/search?q=${tag}&sort=alpha&order=desc&priority_owner_id=${org.id}`,
    // Without a keyword the page is walked in order and counted apart (listStatement's `walk`).
    `/api/v1/repos/search?uid=${alice.id}&exclusive=true`,
    `/api/v1/repos/search?uid=${alice.id}&exclusive=true&sort=id&order=desc`,
    `/api/v1/users/${alice.name}/repos`,
    `/api/v1/orgs/${org.name}/repos`,
    "/api/v1/user/repos",
    `/api/v1/teams/${teamId}/repos`,
  ];
  const get = async (path: string) => {
    const res = await t.request(path, { headers: token(aliceTok) });
    expect(res.status, path).toBe(200);
    const body = await res.json();
    return { total: res.headers.get("X-Total-Count"), names: ((Array.isArray(body) ? body : body.data) as { full_name: string }[]).map((r) => r.full_name) };
  };
  const sep = (path: string) => (path.includes("?") ? "&" : "?");

  it("pages of 2 put together are the whole list, in its order, each with the whole list's total", async () => {
    for (const list of lists()) {
      const all = await get(`${list}${sep(list)}limit=50`);
      expect(all.names.length, list).toBeGreaterThan(1);
      expect(all.total, list).toBe(String(all.names.length));
      const pages: string[] = [];
      for (let page = 1; page <= Math.ceil(all.names.length / 2); page++) {
        const one = await get(`${list}${sep(list)}limit=2&page=${page}`);
        expect(one.total, `${list} page ${page}`).toBe(all.total);
        pages.push(...one.names);
      }
      expect(pages, list).toEqual(all.names);
    }
  });

  it("a page past the end is empty and still carries the total, in one round trip", async () => {
    for (const list of lists()) {
      const all = await get(`${list}${sep(list)}limit=50`);
      const res = await t.request(`${list}${sep(list)}limit=2&page=40`, { headers: token(aliceTok) });
      expect(res.status, list).toBe(200);
      const body = await res.json();
      expect(Array.isArray(body) ? body : body.data, list).toEqual([]);
      expect(res.headers.get("X-Total-Count"), list).toBe(all.total);
      expect(roundTrips(res), list).toBe(1);
    }
  });

  it("an empty list has a total of 0", async () => {
    const res = await t.request(`/api/v1/repos/search?q=${n("none-such")}`, { headers: token(aliceTok) });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toEqual([]);
    expect(res.headers.get("X-Total-Count")).toBe("0");
  });
});
