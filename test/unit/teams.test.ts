/**
 * Gitea's convert.ToTeam (`toTeam` in functions/services/teams.ts) on stored rows the API cannot
 * make today but a database may hold: units of a type this version does not know (a newer Gitea's
 * unit) and access modes outside Gitea's names. The routes' tests cover the rows the API writes.
 */
import { describe, expect, it } from "vitest";
import type { TeamRow } from "../../functions/db/schema.ts";
import { toTeam } from "../../functions/services/teams.ts";

const row = (over: Partial<TeamRow> = {}): TeamRow => ({
  id: 5,
  orgId: 2,
  lowerName: "devs",
  name: "Devs",
  description: "",
  authorize: 1,
  numRepos: 0,
  numMembers: 0,
  includesAllRepositories: false,
  canCreateOrgRepo: false,
  visibility: "private",
  createdUnix: 0,
  updatedUnix: 0,
  ...over,
});
const team = (units: [number, number][], over: Partial<TeamRow> = {}) => toTeam(row(over), JSON.stringify(units), null, {} as never);

describe("toTeam (convert.ToTeam)", () => {
  it("units are listed in unit-type order, whatever order the rows come in", () => {
    const t = team([[3, 1], [2, 2], [1, 1]]);
    expect(t.units).toEqual(["repo.code", "repo.issues", "repo.pulls"]);
    expect(Object.keys(t.units_map)).toEqual(["repo.code", "repo.issues", "repo.pulls"]);
  });

  it("a unit type this version does not know is left out; an unknown access mode reads `none`", () => {
    const t = team([[1, 2], [99, 1], [2, 9]]);
    expect(t.units_map).toEqual({ "repo.code": "write", "repo.issues": "none" });
    expect(t.units).toEqual(["repo.code", "repo.issues"]);
  });

  it("the team permission is Gitea's name of the mode, `none` for a mode without one", () => {
    expect(team([[1, 1]], { authorize: 0 }).permission).toBe("none");
    expect(team([[1, 1]], { authorize: 2 }).permission).toBe("write");
    expect(team([[1, 1]], { authorize: 7 }).permission).toBe("none");
  });

  it("no unit rows (an empty JSON text) give no units", () => {
    expect(toTeam(row(), "", null, {} as never)).toMatchObject({ units: [], units_map: {} });
  });
});
