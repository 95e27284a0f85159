/** The issue template routes answer as Gitea does for a repository without templates (reference §1.12). */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoUnit } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, apiRepo, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
});
afterAll(() => t.close());

describe("issue templates and config of a repository without templates", () => {
  it("issue_templates answers JSON null without a warning header (1 round trip)", async () => {
    const r = await apiRepo(t, ownerTok, { name: uniq("it") });
    const res = await t.request(`/api/v1/repos/${owner.name}/${r.name}/issue_templates`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("null");
    expect(res.headers.get("X-Service-Warning")).toBeNull();
    expect(roundTrips(res)).toBe(1);
  });

  it("issue_config answers the defaults; validate answers valid with an empty message", async () => {
    const r = await apiRepo(t, ownerTok, { name: uniq("ic") });
    expect(await (await t.request(`/api/v1/repos/${owner.name}/${r.name}/issue_config`)).json()).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect(await (await t.request(`/api/v1/repos/${owner.name}/${r.name}/issue_config/validate`)).json()).toEqual({ valid: true, message: "" });
  });

  it("a private repository's templates are 404 to outsiders", async () => {
    const r = await apiRepo(t, ownerTok, { name: uniq("ip"), private: true });
    for (const p of ["issue_templates", "issue_config", "issue_config/validate"]) {
      await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${r.name}/${p}`), 404, NOT_FOUND, p);
    }
  });

  it("needs read access to the code unit (GHSA-3fwp-p5rj-2pxf): without it, 403", async () => {
    const r = await apiRepo(t, ownerTok, { name: uniq("nc") });
    await t.db.delete(repoUnit).where(eq(repoUnit.repoId, r.id));
    await t.db.insert(repoUnit).values({ repoId: r.id, type: 2, config: "{}" });
    const stranger = await seedUser(t.db);
    const res = await t.request(`/api/v1/repos/${owner.name}/${r.name}/issue_templates`, { headers: token(await stranger.token()) });
    await expectRefusal(res, 403, "user should have specific read permission or be a repo admin or a site admin");
    expect((await t.request(`/api/v1/repos/${owner.name}/${r.name}/issue_templates`, { headers: token(ownerTok) })).status).toBe(200);
  });
});
