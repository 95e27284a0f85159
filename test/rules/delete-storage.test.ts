/**
 * A repository's delete is done once its rows are gone: files that fail to go (a push writing into
 * the directory meanwhile: ENOTEMPTY) are logged, and the answer is still the delete's 204, never a
 * 500 for a delete that happened (fuzz audit: the DELETE answered 500 while the row was gone).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ObjectStore } from "../../functions/git/storage/object-store.ts";
import { apiRepo, seedUser, testApp, token, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let tok = "";
let failing = false;
const refusing = (o: ObjectStore): ObjectStore =>
  new Proxy(o, {
    get(target, prop, receiver) {
      if (prop === "deleteRepository" && failing) return async () => Promise.reject(Object.assign(new Error("ENOTEMPTY: directory not empty, rmdir"), { code: "ENOTEMPTY" }));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });

beforeAll(async () => {
  t = await testApp({}, { wrapObjects: refusing });
  tok = await (await seedUser(t.db)).token();
});
afterAll(() => t.close());

it("a delete whose files fail to go still answers 204, and the repository is gone", async () => {
  const r = await apiRepo(t, tok, { name: "doomed", auto_init: true });
  failing = true;
  try {
    const del = await t.request(`/api/v1/repos/${r.full_name}`, { method: "DELETE", headers: token(tok) });
    expect(del.status).toBe(204);
  } finally {
    failing = false;
  }
  expect((await t.request(`/api/v1/repos/${r.full_name}`, { headers: token(tok) })).status).toBe(404);
});
