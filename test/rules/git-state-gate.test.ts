/**
 * The gate on a repository's git state (refs and pack catalog, read in the route's own batch):
 * - read for every caller who may access the repository, so that the code guard's exceptions —
 *   repository and site admins pass reqRepoReader(code) with the code unit off — work on the real
 *   history, never on an empty one;
 * - never visited for a caller who may not see the repository: the work SQLite does for a hidden
 *   repository is the same whatever it holds (its refs would otherwise be an existence oracle that
 *   grows with their number). Counted in SQLite's VM steps (`sqlite_stmt.nstep`), not timed.
 */
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packsByPath, refsByPath } from "../../functions/db/queries/git-state.ts";
import { identitiesByPath } from "../../functions/db/queries/identities.ts";
import { orgFeed, repoFeed, userFeed } from "../../functions/db/queries/feeds.ts";
import { collaboratorCountOfRepo } from "../../functions/db/queries/collaborators.ts";
import { membersOfOrg } from "../../functions/db/queries/orgs.ts";
import { labelCountOfRepo, labelsOfRepo } from "../../functions/db/queries/labels.ts";
import { hookCountOfOrg, hooksOfOrg } from "../../functions/db/queries/hooks.ts";
import { tokenCountOfUser, tokensOfUser } from "../../functions/db/queries/tokens.ts";
import { REPO_LISTS, repoAtPath, repoAtPathWithParent } from "../../functions/db/queries/repos.ts";
import { batchItems } from "../../functions/db/sql.ts";
import { viewerValues } from "../../functions/lib/context.ts";
import { ANONYMOUS } from "../../functions/lib/auth.ts";
import { tokenHash } from "../../functions/lib/crypto.ts";
import { apiRepo, expectRefusal, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let tok: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  tok = await owner.token();
});
afterAll(() => t.close());

const api = (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<Response> =>
  t.request(`/api/v1/repos/${owner.name}/${path}`, { ...init, headers: { ...token(tok), ...init.headers } });

/**
 * SQLite's VM steps for each run of one statement text with different arguments, in order (the
 * statement is prepared once; `sqlite_stmt.nstep` counts its steps), with the rows of each run.
 */
function vmSteps(raw: Database.Database, text: string, runs: readonly (readonly unknown[])[]): { n: number; rows: number }[] {
  const prepared = raw.prepare(text);
  // summed over every statement of the text: one prepared earlier (another viewer's run) stays listed
  const total = () => (raw.prepare("SELECT sum(nstep) AS n FROM sqlite_stmt WHERE sql = ?").get(text) as { n: number }).n;
  return runs.map((args) => {
    const before = total();
    const rows = prepared.all(args as never).length;
    const n = total() - before;
    expect(n).toBeGreaterThan(0);
    return { n, rows };
  });
}

/** Two private users with a private repository each (`<prefix>-many`, `<prefix>-one`): a big and a small hidden target. */
async function hiddenOwners(prefix: string) {
  const many = await seedUser(t.db, { visibility: 2 });
  const one = await seedUser(t.db, { visibility: 2 });
  const manyRepo = await apiRepo(t, await many.token(), { name: `${prefix}-many`, private: true });
  const oneRepo = await apiRepo(t, await one.token(), { name: `${prefix}-one`, private: true });
  return { many, one, manyRepo, oneRepo };
}

describe("with the code unit off, its admins still read the real history (reqRepoReader(code) lets them through)", () => {
  it("the owner reads the real refs and gets Gitea's branch refusal for a file write; a site admin's write forks from the default branch, which stays", async () => {
    const r = await apiRepo(t, tok, { name: "code-off", auto_init: true });
    const main = await (await api(`${r.name}/branches/main`)).json();
    expect((await api(r.name, { method: "PATCH", json: { has_code: false } })).status).toBe(200);

    for (const path of ["branches", "tags", "git/refs", "commits", "contents", "archive/main.zip"]) expect((await api(`${r.name}/${path}`)).status, path).toBe(200);
    expect((await (await api(`${r.name}/branches`)).json()).map((b: { name: string }) => b.name)).toEqual(["main"]);

    // Gitea: reqRepoWriter(code) lets the owner through, then CanWriteToBranch needs code write
    const files = { files: [{ operation: "create", path: "q.txt", content: "eA==" }], new_branch: "nb" };
    await expectRefusal(api(`${r.name}/contents`, { method: "POST", json: files }), 403, "user should have a permission to write to the target branch");
    const admin = await seedUser(t.db, { admin: true });
    const put = await api(`${r.name}/contents`, { method: "POST", json: files, headers: token(await admin.token()) });
    expect(put.status).toBe(201);
    expect((await put.json()).commit.parents.map((p: { sha: string }) => p.sha)).toEqual([main.commit.id]);

    expect((await api(r.name, { method: "PATCH", json: { has_code: true } })).status).toBe(200);
    expect((await (await api(r.name)).json()).default_branch).toBe("main");
    const names = (await (await api(`${r.name}/contents?ref=nb`)).json()).map((e: { name: string }) => e.name).sort();
    expect(names).toEqual(["README.md", "q.txt"]);
  });

  it("a caller who may read the repository but not its code is refused (403), as before", async () => {
    const r = await apiRepo(t, tok, { name: "code-off-2", auto_init: true });
    expect((await api(r.name, { method: "PATCH", json: { has_code: false } })).status).toBe(200);
    const stranger = await seedUser(t.db);
    const res = await t.request(`/api/v1/repos/${owner.name}/${r.name}/branches`, { headers: token(await stranger.token()) });
    expect(res.status).toBe(403);
  });
});

describe("a hidden repository's git state is never visited", () => {
  it("SQLite does the same work for a hidden repository with 3,000 refs, packs and commit e-mails as for one with one of each (anonymous and a signed-in stranger)", async () => {
    const big = await apiRepo(t, tok, { name: "hidden-big", private: true });
    const small = await apiRepo(t, tok, { name: "hidden-small", private: true });
    const stranger = await seedUser(t.db);
    const strangerTok = await stranger.token();
    // rows straight into the file: the gate, not the push path, is under test
    const raw = new Database(t.file);
    const ref = raw.prepare("INSERT INTO git_ref (repo_id, name, oid) VALUES (?, ?, ?)");
    const pack = raw.prepare("INSERT INTO git_pack (id, repo_id, catalog_repo_id, objects, size, idx_size, checksum) VALUES (?, ?, ?, 1, 1, 1, ?)");
    raw.exec("BEGIN");
    for (let i = 0; i < 3000; i++) {
      ref.run(big.id, `refs/heads/b${i}`, "a".repeat(40));
      pack.run(`p${big.id}-${i}`, big.id, big.id, "c".repeat(40));
    }
    const identity = raw.prepare("INSERT INTO git_identity (repo_id, email) VALUES (?, ?)");
    for (let i = 0; i < 3000; i++) identity.run(big.id, `author${i}@example.com`);
    identity.run(small.id, "author@example.com");
    ref.run(small.id, "refs/heads/main", "a".repeat(40));
    pack.run(`p${small.id}`, small.id, small.id, "c".repeat(40));
    raw.exec("COMMIT");

    for (const viewer of [viewerValues(ANONYMOUS), viewerValues({ ...ANONYMOUS, tokenHash: await tokenHash(strangerTok) })]) {
      for (const q of [refsByPath, packsByPath, identitiesByPath]) {
        const item = (name: string) => batchItems([(q as typeof identitiesByPath).bind({ owner: owner.name, name, noReply: "@noreply.example.com", ...viewer })])[0]!; // !: one statement bound
        const [onBig, onSmall] = vmSteps(raw, item(big.name).text, [item(big.name).args, item(small.name).args]);
        expect([onBig!.rows, onSmall!.rows]).toEqual([0, 0]);
        expect(onBig!.n).toBe(onSmall!.n);
      }
    }
    raw.close();
  });
});

describe("a repository an anonymous caller can never read is not looked at", () => {
  it("its lookup does the work of a missing one (VM steps within a few of each other), while a public one still reads its facts; the answers are unchanged", async () => {
    const hidden = await apiRepo(t, tok, { name: "anon-hidden", private: true, auto_init: true });
    const shown = await apiRepo(t, tok, { name: "anon-shown", auto_init: true });
    const raw = new Database(t.file);
    try {
      for (const q of [repoAtPath, repoAtPathWithParent]) {
        const item = (name: string) => batchItems([q.bind({ owner: owner.name.toLowerCase(), name, ...viewerValues(ANONYMOUS) })])[0]!; // !: one statement bound
        const [onHidden, onMissing, onShown] = vmSteps(raw, item(hidden.name).text, [item(hidden.name).args, item("no-such-repository").args, item(shown.name).args]);
        expect([onHidden!.rows, onMissing!.rows, onShown!.rows]).toEqual([0, 0, 1]);
        expect(Math.abs(onHidden!.n - onMissing!.n)).toBeLessThan(32);
        expect(onShown!.n).toBeGreaterThan(onMissing!.n + 100);
      }
    } finally {
      raw.close();
    }
    const anon = (name: string) => t.request(`/api/v1/repos/${owner.name}/${name}`);
    expect((await anon(hidden.name)).status).toBe(404);
    expect((await anon(shown.name)).status).toBe(200);
    expect((await t.request(`/api/v1/repos/${owner.name}/${hidden.name}`, { headers: token(tok) })).status).toBe(200);
  });
});

describe("the feed of an account or repository the caller may not see is never read", () => {
  it("SQLite does the same work for a hidden one with 2,000 actions as for one with a single action (actions, count and repositories)", async () => {
    const { many, one, manyRepo, oneRepo } = await hiddenOwners("feed");
    const raw = new Database(t.file);
    try {
      const act = raw.prepare("INSERT INTO action (user_id, op_type, act_user_id, repo_id, ref_name, is_private, content, created_unix) VALUES (?, 5, ?, ?, 'refs/heads/main', 1, '', ?)");
      raw.exec("BEGIN");
      for (let i = 0; i < 2000; i++) act.run(many.id, many.id, manyRepo.id, 1_700_000_000 + i);
      act.run(one.id, one.id, oneRepo.id, 1_700_000_000);
      raw.exec("COMMIT");
      const page = { limit: 30, offset: 0, codeDisabled: 0 };
      const vv = viewerValues(ANONYMOUS);
      const cases = [
        { st: userFeed({ performedBy: false, day: false }), a: { name: many.name.toLowerCase() }, b: { name: one.name.toLowerCase() } },
        { st: orgFeed(false), a: { name: many.name.toLowerCase() }, b: { name: one.name.toLowerCase() } },
        { st: repoFeed(false), a: { owner: many.name.toLowerCase(), name: manyRepo.name }, b: { owner: one.name.toLowerCase(), name: oneRepo.name } },
      ] as const;
      for (const { st, a, b } of cases) {
        for (const q of [st.actions, st.total, st.repos] as const) {
          const item = (key: object) => batchItems([(q as typeof st.actions).bind({ ...vv, ...page, ...key } as never)])[0]!; // !: one statement bound
          const [onMany, onOne] = vmSteps(raw, item(a).text, [item(a).args, item(b).args]);
          expect(onMany!.n).toBe(onOne!.n);
        }
      }
    } finally {
      raw.close();
    }
    expect((await t.request(`/api/v1/users/${many.name}/activities/feeds`)).status).toBe(404);
    const mine = await (await t.request(`/api/v1/users/${many.name}/activities/feeds?limit=50`, { headers: token(await many.token()) })).json();
    expect(mine).toHaveLength(50);
  });
});

describe("the repositories, forks and collaborators of an owner or repository the caller may not see are never read", () => {
  it("SQLite does the same work for a hidden owner with 300 repositories (and a hidden base with 300 forks and collaborators) as for one with a single one", async () => {
    const { many, one, manyRepo, oneRepo } = await hiddenOwners("base");
    const raw = new Database(t.file);
    try {
      const add = raw.prepare("INSERT INTO repository (owner_id, owner_name, name, lower_name, is_private, is_fork, fork_id) VALUES (?, ?, ?, ?, 1, ?, ?)");
      const forker = raw.prepare("INSERT INTO user (name, lower_name, email, passwd, type, visibility) VALUES (?, ?, ?, '', 0, 0) RETURNING id");
      raw.exec("BEGIN");
      for (let i = 0; i < 300; i++) {
        add.run(many.id, many.name, `r${i}`, `r${i}`, 0, 0);
        const f = forker.get(`forker-${many.id}-${i}`, `forker-${many.id}-${i}`, `forker-${many.id}-${i}@example.com`) as { id: number };
        add.run(f.id, `forker-${many.id}-${i}`, "fork", "fork", 1, manyRepo.id);
      }
      const f = forker.get(`forker-${one.id}`, `forker-${one.id}`, `forker-${one.id}@example.com`) as { id: number };
      add.run(f.id, `forker-${one.id}`, "fork", "fork", 1, oneRepo.id);
      raw.exec("COMMIT");
      const page = { limit: 30, offset: 0 };
      const vv = viewerValues(ANONYMOUS);
      // the forkers collaborate on the base too: its collaborators are as many
      const collab = raw.prepare("INSERT INTO collaboration (repo_id, user_id, mode) SELECT fork_id, owner_id, 1 FROM repository WHERE fork_id = ?");
      collab.run(manyRepo.id);
      collab.run(oneRepo.id);
      const cases = [
        { q: REPO_LISTS.owner, a: { owner: many.name.toLowerCase() }, b: { owner: one.name.toLowerCase() } },
        { q: REPO_LISTS.forks, a: { owner: many.name.toLowerCase(), name: manyRepo.name }, b: { owner: one.name.toLowerCase(), name: oneRepo.name } },
        { q: collaboratorCountOfRepo, a: { owner: many.name.toLowerCase(), name: manyRepo.name }, b: { owner: one.name.toLowerCase(), name: oneRepo.name } },
      ] as const;
      for (const { q, a, b } of cases) {
        const item = (key: object) => batchItems([(q as typeof REPO_LISTS.forks).bind({ ...vv, ...page, ...key } as never)])[0]!; // !: one statement bound
        const [onMany, onOne] = vmSteps(raw, item(a).text, [item(a).args, item(b).args]);
        expect(onMany!.n).toBe(onOne!.n);
      }
    } finally {
      raw.close();
    }
    expect((await t.request(`/api/v1/users/${many.name}/repos`)).status).toBe(404);
    const own = await t.request(`/api/v1/users/${many.name}/repos?limit=50`, { headers: token(await many.token()) });
    expect(own.headers.get("X-Total-Count")).toBe("301");
    const forks = await t.request(`/api/v1/repos/${many.name}/${manyRepo.name}/forks`, { headers: token(await many.token()) });
    expect([forks.status, forks.headers.get("X-Total-Count")]).toEqual([200, "0"]); // private forks of other owners: not the base owner's to see
  });
});

describe("the members of an organization the caller may not see are never read", () => {
  it("SQLite does the same work for a hidden organization with 300 public members as for one with a single one", async () => {
    const admin = await seedUser(t.db);
    const orgOf = async (name: string) => {
      const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(await admin.token()), json: { username: name, visibility: "private" } });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: number; username: string };
    };
    const many = await orgOf(`hidden-many-${admin.id}`);
    const one = await orgOf(`hidden-one-${admin.id}`);
    const raw = new Database(t.file);
    try {
      const member = raw.prepare("INSERT INTO user (name, lower_name, email, passwd, type, visibility) VALUES (?, ?, ?, '', 0, 0) RETURNING id");
      const join = raw.prepare("INSERT INTO org_user (org_id, uid, is_public) VALUES (?, ?, 1)");
      raw.exec("BEGIN");
      for (let i = 0; i < 300; i++) join.run(many.id, (member.get(`m-${many.id}-${i}`, `m-${many.id}-${i}`, `m-${many.id}-${i}@example.com`) as { id: number }).id);
      raw.exec("COMMIT");
      const item = (org: string) => batchItems([membersOfOrg.bind({ ...viewerValues(ANONYMOUS), org, limit: 30, offset: 0 })])[0]!; // !: one statement bound
      const [onMany, onOne] = vmSteps(raw, item(many.username).text, [item(many.username).args, item(one.username).args]);
      expect(onMany!.rows).toBe(0);
      expect(onMany!.n).toBe(onOne!.n);
    } finally {
      raw.close();
    }
  });
});

describe("the labels of a hidden repository, the hooks of an organization the caller does not own and another user's tokens are never read", () => {
  it("SQLite does the same work for 300 of them as for one (labels for anonymous and a stranger, hooks and tokens for a stranger); their owners still read all of them", async () => {
    const stranger = await seedUser(t.db);
    const strangerTok = await stranger.token();
    const admin = await seedUser(t.db);
    const adminTok = await admin.token();
    const many = await apiRepo(t, tok, { name: "labels-many", private: true });
    const one = await apiRepo(t, tok, { name: "labels-one", private: true });
    const orgOf = async (name: string) => {
      const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(adminTok), json: { username: name, visibility: "public" } });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: number; username: string };
    };
    const orgMany = await orgOf(`hooks-many-${admin.id}`);
    const orgOne = await orgOf(`hooks-one-${admin.id}`);
    const tokensMany = await seedUser(t.db);
    const tokensOne = await seedUser(t.db);
    const raw = new Database(t.file);
    try {
      const label = raw.prepare("INSERT INTO label (repo_id, name, color) VALUES (?, ?, 'ee0701')");
      const hook = raw.prepare("INSERT INTO webhook (owner_id, type, url, is_active) VALUES (?, 'gitea', 'https://example.com/hook', 1)");
      const tokenRow = raw.prepare("INSERT INTO access_token (uid, name, token_hash, token_last_eight) VALUES (?, ?, ?, 'abcdefgh')");
      raw.exec("BEGIN");
      for (let i = 0; i < 300; i++) {
        label.run(many.id, `l${i}`);
        hook.run(orgMany.id);
        tokenRow.run(tokensMany.id, `t${i}`, `hash-${tokensMany.id}-${i}`);
      }
      label.run(one.id, "l");
      hook.run(orgOne.id);
      tokenRow.run(tokensOne.id, "t", `hash-${tokensOne.id}`);
      raw.exec("COMMIT");
      const page = { limit: 30, offset: 0 };
      const anonymous = viewerValues(ANONYMOUS);
      const signedIn = viewerValues({ ...ANONYMOUS, tokenHash: await tokenHash(strangerTok) });
      const cases = [
        ...[anonymous, signedIn].flatMap((vv) => [
          { q: labelsOfRepo("alphabetically"), vv, a: { owner: owner.name.toLowerCase(), name: many.name }, b: { owner: owner.name.toLowerCase(), name: one.name } },
          { q: labelCountOfRepo, vv, a: { owner: owner.name.toLowerCase(), name: many.name }, b: { owner: owner.name.toLowerCase(), name: one.name } },
        ]),
        { q: hooksOfOrg, vv: signedIn, a: { org: orgMany.username.toLowerCase() }, b: { org: orgOne.username.toLowerCase() } },
        { q: hookCountOfOrg, vv: signedIn, a: { org: orgMany.username.toLowerCase() }, b: { org: orgOne.username.toLowerCase() } },
        { q: tokensOfUser, vv: signedIn, a: { name: tokensMany.name.toLowerCase() }, b: { name: tokensOne.name.toLowerCase() } },
        { q: tokenCountOfUser, vv: signedIn, a: { name: tokensMany.name.toLowerCase() }, b: { name: tokensOne.name.toLowerCase() } },
      ];
      for (const { q, vv, a, b } of cases) {
        const item = (key: object) => batchItems([(q as typeof hooksOfOrg).bind({ ...vv, ...page, ...key } as never)])[0]!; // !: one statement bound
        const [onMany, onOne] = vmSteps(raw, item(a).text, [item(a).args, item(b).args]);
        expect(onMany!.n).toBe(onOne!.n);
      }
    } finally {
      raw.close();
    }
    // the answers: refused or hidden as before; the owners read every row
    expect((await t.request(`/api/v1/repos/${owner.name}/${many.name}/labels`, { headers: token(strangerTok) })).status).toBe(404);
    expect((await api(`${many.name}/labels?limit=1`)).headers.get("X-Total-Count")).toBe("300");
    expect((await t.request(`/api/v1/orgs/${orgMany.username}/hooks`, { headers: token(strangerTok) })).status).toBe(403);
    expect((await t.request(`/api/v1/orgs/${orgMany.username}/hooks?limit=1`, { headers: token(adminTok) })).headers.get("X-Total-Count")).toBe("300");
    const basic = (u: SeededUser) => ({ Authorization: `Basic ${btoa(`${u.name}:${u.password}`)}` });
    expect((await t.request(`/api/v1/users/${tokensMany.name}/tokens`, { headers: basic(stranger) })).status).toBe(403);
    const own = await t.request(`/api/v1/users/${tokensMany.name}/tokens?limit=1`, { headers: basic(tokensMany) });
    expect(own.headers.get("X-Total-Count")).toBe("300");
  });
});
