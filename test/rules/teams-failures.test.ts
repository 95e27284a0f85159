/**
 * Teams: a write that fails for another reason than the one a rule maps to 422 stays a failure.
 * Only a duplicate team name is "team already exists" and only the last-owner guard is "the last
 * member of owner team"; another constraint or a lost database is a 500, never a refusal that would
 * tell the client to change its input.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefusal, failingWrites, seedOrg, seedUser, testApp, token, uniq, type SeededOrg, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let org: SeededOrg;
let ownerName = "";
let ownerTok = "";
/** The next write batch fails with the error given to `failNext`. */
const writes = failingWrites();

beforeAll(async () => {
  t = await testApp({}, { wrap: writes.wrap });
  const owner = await seedUser(t.db);
  ownerName = owner.name;
  ownerTok = await owner.token();
  org = await seedOrg(t, owner);
});
afterAll(() => t.close());

const otherUnique = () => new Error("SQLITE_CONSTRAINT_UNIQUE: UNIQUE constraint failed: team_unit.team_id, team_unit.type");

describe("team writes: only their own conflicts are 422", () => {
  it("create: a unique violation of another index → 500, not `team already exists`", async () => {
    writes.failNext(otherUnique());
    const res = await t.request(`/api/v1/orgs/${org.name}/teams`, { method: "POST", headers: token(ownerTok), json: { name: uniq("f"), permission: "read", units: ["repo.code"] } });
    expect(res.status).toBe(500);
  });

  it("edit: a unique violation of another index → 500, not `team already exists`", async () => {
    const tm = await (await t.request(`/api/v1/orgs/${org.name}/teams`, { method: "POST", headers: token(ownerTok), json: { name: uniq("e"), permission: "read", units: ["repo.code"] } })).json();
    writes.failNext(otherUnique());
    const res = await t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json: { name: uniq("e2") } });
    expect(res.status).toBe(500);
    expect((await (await t.request(`/api/v1/teams/${tm.id}`, { headers: token(ownerTok) })).json()).name).toBe(tm.name);
  });

  it("removing a member: a failed write → 500, not `the last member of owner team`", async () => {
    writes.failNext(new Error("disk I/O error"));
    const res = await t.request(`/api/v1/teams/${org.ownersTeamId}/members/${ownerName}`, { method: "DELETE", headers: token(ownerTok) });
    expect(res.status).toBe(500);
    // The guard itself still answers 422 once the database works again.
    await expectRefusal(t.request(`/api/v1/teams/${org.ownersTeamId}/members/${ownerName}`, { method: "DELETE", headers: token(ownerTok) }), 422, `user is the last member of owner team [uid: ${(await (await t.request(`/api/v1/users/${ownerName}`, { headers: token(ownerTok) })).json()).id}]`);
  });
});
