/**
 * The permission model's pure parts (functions/lib/permissions.ts): which units a repository has
 * (DISABLED_REPO_UNITS, rows without a type, a unit's config), the external units that nobody writes
 * through the repository, and whether the owner is visible. The routes' tests (test/rules/
 * permissions.test.ts) show who reaches what; these pin the facts the routes cannot observe.
 */
import { describe, expect, it } from "vitest";
import type { Caller } from "../../functions/lib/auth.ts";
import { ACCESS, parseUnits, repoPermission, repoViewOf, teamAccessOf, UNIT, type RepoFacts, type RepoUnit } from "../../functions/lib/permissions.ts";

const caller = (over: Partial<Caller> = {}, row: { isRestricted?: boolean } = {}): Caller =>
  ({ id: 7, isAdmin: false, viaToken: false, publicOnly: false, scope: "", limited: { repository: false, organization: false, user: false }, row: { isRestricted: false, ...row }, ...over }) as Caller;

/** Facts of a public repository (id 1) of user 2, seen by a viewer with no relation to it. */
const facts = (over: { repo?: object; owner?: object } & Partial<Omit<RepoFacts, "repo" | "owner">> = {}): RepoFacts => {
  const { repo, owner, ...rest } = over;
  return {
    repo: { id: 1, ownerId: 2, isPrivate: false, isArchived: false, ...repo },
    owner: { id: 2, type: 0, visibility: 0, ...owner },
    ownerVisible: 1,
    collabMode: null,
    isOrgOwner: 0,
    teamAccess: "[]",
    units: "[]",
    ...rest,
  } as RepoFacts;
};

const CODE_AND_EXTERNAL: RepoUnit[] = [
  { type: UNIT.code, config: {} },
  { type: UNIT.extWiki, config: { external_wiki_url: "https://wiki.example" } },
  { type: UNIT.extIssues, config: { external_tracker_url: "https://issues.example" } },
];
const modes = (units: ReadonlyMap<number, number>) => Object.fromEntries(units);

describe("parseUnits", () => {
  it("a unit named in DISABLED_REPO_UNITS is gone, the others stay in order", () => {
    const json = JSON.stringify([
      { type: UNIT.code, config: "{}" },
      { type: UNIT.wiki, config: "{}" },
      { type: UNIT.projects, config: "{}" },
      { type: UNIT.issues, config: "{}" },
    ]);
    expect(parseUnits(json, ["repo.wiki", "repo.projects"]).map((u) => u.type)).toEqual([UNIT.code, UNIT.issues]);
    expect(parseUnits(json, []).map((u) => u.type)).toEqual([UNIT.code, UNIT.wiki, UNIT.projects, UNIT.issues]);
  });

  it("a list is parsed once per text and setting and shared frozen: no caller can change what another reads; the memo is bounded", () => {
    const disabled: string[] = [];
    const json = JSON.stringify([{ type: UNIT.pulls, config: '{"allow_merge_commits":false,"nested":{"a":1}}' }]);
    const first = parseUnits(json, disabled);
    expect(parseUnits(json, disabled)).toBe(first);
    expect(parseUnits(json, [])).not.toBe(first);
    // Another list does not push it out before the bound.
    parseUnits(JSON.stringify([{ type: UNIT.code, config: "{}" }]), disabled);
    expect(parseUnits(json, disabled)).toBe(first);
    expect(() => (first as RepoUnit[]).push({ type: UNIT.code, config: {} })).toThrow(TypeError);
    expect(() => {
      (first[0]!.config as Record<string, unknown>).allow_merge_commits = true;
    }).toThrow(TypeError);
    expect(() => {
      ((first[0]!.config.nested as Record<string, unknown>).a as number) = 2;
    }).toThrow(TypeError);
    expect(parseUnits(json, disabled)).toEqual([{ type: UNIT.pulls, config: { allow_merge_commits: false, nested: { a: 1 } } }]);
    // It holds 256 lists; the 257th pushes out the oldest, which is then parsed anew.
    for (let i = 0; i < 254; i++) parseUnits(JSON.stringify([{ type: UNIT.code, config: `{"n":${i}}` }]), disabled);
    expect(parseUnits(json, disabled)).toBe(first);
    parseUnits(JSON.stringify([{ type: UNIT.code, config: '{"n":"last"}' }]), disabled);
    expect(parseUnits(json, disabled)).not.toBe(first);
    expect(parseUnits(json, disabled)).toEqual(first);
  });

  it("rows without a unit type (a repository without units: json_group_array of nothing) are no units", () => {
    expect(parseUnits(JSON.stringify([null, { type: 0, config: "{}" }, { type: null, config: null }, { type: UNIT.pulls, config: "{}" }]), [])).toEqual([{ type: UNIT.pulls, config: {} }]);
    expect(parseUnits("", [])).toEqual([]);
  });

  it("a unit's config is parsed from its stored text; an object stays; empty or missing config is {}", () => {
    expect(
      parseUnits(
        JSON.stringify([
          { type: UNIT.pulls, config: '{"allow_merge_commits":false}' },
          { type: UNIT.issues, config: { enable_time_tracker: true } },
          { type: UNIT.code, config: "" },
          { type: UNIT.wiki, config: null },
          { type: UNIT.releases },
        ]),
        [],
      ),
    ).toEqual([
      { type: UNIT.pulls, config: { allow_merge_commits: false } },
      { type: UNIT.issues, config: { enable_time_tracker: true } },
      { type: UNIT.code, config: {} },
      { type: UNIT.wiki, config: {} },
      { type: UNIT.releases, config: {} },
    ]);
  });
});

describe("external units (external wiki, external tracker) are read-only for everyone", () => {
  it("a site admin and the owner write the code unit but only read the external ones", () => {
    expect(modes(repoPermission(caller({ isAdmin: true }), facts(), CODE_AND_EXTERNAL).units)).toEqual({ [UNIT.code]: ACCESS.admin, [UNIT.extWiki]: ACCESS.read, [UNIT.extIssues]: ACCESS.read });
    expect(modes(repoPermission(caller({ id: 2 }), facts(), CODE_AND_EXTERNAL).units)).toEqual({ [UNIT.code]: ACCESS.owner, [UNIT.extWiki]: ACCESS.read, [UNIT.extIssues]: ACCESS.read });
  });

  it("a write team member of the organization reads the external units of a private repository its team covers", () => {
    const f = facts({ repo: { isPrivate: true }, owner: { type: 1 }, teamAccess: JSON.stringify([[UNIT.code, ACCESS.write, ACCESS.write], [UNIT.extWiki, ACCESS.write, ACCESS.write], [UNIT.extIssues, ACCESS.write, ACCESS.write]]) });
    const p = repoPermission(caller(), f, CODE_AND_EXTERNAL);
    expect(p.mode).toBe(ACCESS.write);
    expect(modes(p.units)).toEqual({ [UNIT.code]: ACCESS.write, [UNIT.extWiki]: ACCESS.read, [UNIT.extIssues]: ACCESS.read });
  });

  it("a reader keeps read on them, a caller without access has none", () => {
    expect(modes(repoPermission(null, facts(), CODE_AND_EXTERNAL).units)).toEqual({ [UNIT.code]: ACCESS.read, [UNIT.extWiki]: ACCESS.read, [UNIT.extIssues]: ACCESS.read });
    const privateOrgRepo = facts({ repo: { isPrivate: true }, owner: { type: 1 } });
    expect(modes(repoPermission(caller(), privateOrgRepo, CODE_AND_EXTERNAL).units)).toEqual({ [UNIT.code]: ACCESS.none, [UNIT.extWiki]: ACCESS.none, [UNIT.extIssues]: ACCESS.none });
  });
});

describe("repoViewOf", () => {
  it("says whether the owner is visible to the viewer, as a boolean (a hidden owner is rendered without its profile)", () => {
    const units = JSON.stringify([{ type: UNIT.code, config: "{}" }]);
    const seen = repoViewOf(caller(), facts({ units }), []);
    expect(seen.ownerVisible).toBe(true);
    expect(seen.units).toEqual([{ type: UNIT.code, config: {} }]);
    expect(modes(seen.perm.units)).toEqual({ [UNIT.code]: ACCESS.read });
    // A collaborator reaches a public repository of an owner hidden from it: the repository, not the owner.
    const hidden = repoViewOf(caller(), facts({ units, ownerVisible: 0, collabMode: ACCESS.write }), []);
    expect(hidden.ownerVisible).toBe(false);
    expect(modes(hidden.perm.units)).toEqual({ [UNIT.code]: ACCESS.write });
  });

  it("drops the disabled units before computing the permission", () => {
    const units = JSON.stringify([{ type: UNIT.code, config: "{}" }, { type: UNIT.wiki, config: "{}" }]);
    expect(modes(repoViewOf(null, facts({ units }), ["repo.wiki"]).perm.units)).toEqual({ [UNIT.code]: ACCESS.read });
  });
});

describe("teamAccessOf (the viewer's teams covering a repository, one row per team unit)", () => {
  const access = (rows: [number | null, number | null, number][]) => {
    const p = teamAccessOf(JSON.stringify(rows));
    return { mode: p.mode, units: modes(p.units) };
  };

  it("no covering team is no access", () => {
    expect(access([])).toEqual({ mode: ACCESS.none, units: {} });
  });

  it("the overall mode is the highest team authorize, whichever team comes first", () => {
    expect(access([[UNIT.code, ACCESS.read, ACCESS.read], [UNIT.code, ACCESS.read, ACCESS.admin]]).mode).toBe(ACCESS.admin);
    expect(access([[UNIT.code, ACCESS.read, ACCESS.admin], [UNIT.code, ACCESS.read, ACCESS.read]]).mode).toBe(ACCESS.admin);
  });

  it("each unit gets the highest mode any covering team gives it, whichever team comes first", () => {
    const rows: [number, number, number][] = [
      [UNIT.code, ACCESS.write, ACCESS.write],
      [UNIT.issues, ACCESS.read, ACCESS.write],
      [UNIT.code, ACCESS.read, ACCESS.read],
      [UNIT.issues, ACCESS.admin, ACCESS.read],
      [UNIT.wiki, ACCESS.none, ACCESS.read],
    ];
    expect(access(rows)).toEqual({ mode: ACCESS.write, units: { [UNIT.code]: ACCESS.write, [UNIT.issues]: ACCESS.admin } });
  });

  it("a team without units (its row is [null, null, authorize]) gives its authorize and no unit", () => {
    expect(access([[null, null, ACCESS.write]])).toEqual({ mode: ACCESS.write, units: {} });
    expect(access([[null, null, ACCESS.read], [UNIT.code, ACCESS.write, ACCESS.write]])).toEqual({ mode: ACCESS.write, units: { [UNIT.code]: ACCESS.write } });
  });
});

describe("shared permissions (one object per unit list and inputs)", () => {
  const orgRepo = (over: Partial<Omit<RepoFacts, "repo" | "owner">> = {}, repo: object = {}) => facts({ owner: { type: 1 }, repo, ...over });
  const team = (mode: number) => JSON.stringify([[UNIT.code, mode, ACCESS.read]]);

  it("every mode of one unit list is its own object, unchanged by the others", () => {
    const units: RepoUnit[] = [{ type: UNIT.code, config: {} }];
    const admin = repoPermission(caller({ isAdmin: true }), facts(), units);
    const owner = repoPermission(caller({ id: 2 }), facts(), units);
    const anonymous = repoPermission(null, facts(), units);
    expect([admin.mode, owner.mode, anonymous.mode]).toEqual([ACCESS.admin, ACCESS.owner, ACCESS.read]);
    expect(repoPermission(caller({ isAdmin: true }), facts(), units)).toBe(admin);
    expect(modes(admin.units)).toEqual({ [UNIT.code]: ACCESS.admin });
    expect(modes(repoPermission(caller({ isAdmin: true }), facts(), [{ type: UNIT.wiki, config: {} }]).units)).toEqual({ [UNIT.wiki]: ACCESS.admin });
    expect(Object.isFrozen(admin)).toBe(true);
  });

  it("through teams: the teams, the collaboration and public read each decide; the same three give the same object", () => {
    const units: RepoUnit[] = [{ type: UNIT.code, config: {} }, { type: UNIT.issues, config: {} }];
    const read = repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }, { isPrivate: true }), units);
    expect(modes(read.units)).toEqual({ [UNIT.code]: ACCESS.read, [UNIT.issues]: ACCESS.none });
    expect(repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }, { isPrivate: true }), units)).toBe(read);
    expect(modes(repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.write) }, { isPrivate: true }), units).units)).toEqual({ [UNIT.code]: ACCESS.write, [UNIT.issues]: ACCESS.none });
    expect(modes(repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read), collabMode: ACCESS.write }, { isPrivate: true }), units).units)).toEqual({ [UNIT.code]: ACCESS.write, [UNIT.issues]: ACCESS.write });
    expect(modes(repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }), units).units)).toEqual({ [UNIT.code]: ACCESS.read, [UNIT.issues]: ACCESS.read });
    expect(Object.isFrozen(read)).toBe(true);
  });

  it("through teams, 64 combinations are kept per unit list; the 65th pushes out the oldest", () => {
    const units: RepoUnit[] = [{ type: UNIT.code, config: {} }];
    const first = repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }), units);
    for (let i = 0; i < 63; i++) repoPermission(caller(), orgRepo({ teamAccess: JSON.stringify([[UNIT.code, ACCESS.read, 100 + i]]) }), units);
    expect(repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }), units)).toBe(first);
    repoPermission(caller(), orgRepo({ teamAccess: JSON.stringify([[UNIT.code, ACCESS.read, 999]]) }), units);
    const again = repoPermission(caller(), orgRepo({ teamAccess: team(ACCESS.read) }), units);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
