/**
 * The git catalog rows a deletion must look at before the git files go (services/repo-storage.ts):
 * other repositories' (forks') catalog rows whose packs live under a repository being deleted, and
 * re-pointing them at the forks' own copies.
 */
import { sql, type SQL } from "drizzle-orm";
import { command, guardCommand, num, p, query, str } from "../sql.ts";
import { REPO_ID_BY_PATH, type RepoPath } from "./repos.ts";

/** A catalog row of another repository (a fork) that reads a deleted repository's storage. */
export type SharedPack = { catalogRepoId: number; id: string; repoId: number; objects: number; size: number; idxSize: number; checksum: string };

/** SQL: the catalog rows of repositories outside `ids` (an SQL list) whose files live under one in `ids`. */
export const sharedPacksSql = (ids: SQL) =>
  sql`SELECT catalog_repo_id, id, repo_id, objects, size, idx_size, checksum FROM git_pack WHERE repo_id IN ${ids} AND catalog_repo_id NOT IN ${ids}`;

/**
 * Aborts a delete of the repositories :ids (a JSON array) when another repository reads one of
 * their packs that the delete's read did not list (:known, `catalog:pack` strings) — a fork made
 * since, whose copy was not made: deleting the files would leave it reading nothing.
 */
export const sharedPacksUnchanged = guardCommand<{ ids: string; known: string }>(
  "sharedPacksUnchanged",
  sql`EXISTS (SELECT 1 FROM git_pack WHERE repo_id IN (SELECT value FROM json_each(${p("ids")})) AND catalog_repo_id NOT IN (SELECT value FROM json_each(${p("ids")}))
    AND (catalog_repo_id || ':' || id) NOT IN (SELECT value FROM json_each(${p("known")})))`,
);

/** The `known` argument of `sharedPacksUnchanged`. */
export const knownShared = (packs: readonly SharedPack[]) => JSON.stringify(packs.map((s) => `${s.catalogRepoId}:${s.id}`));

const sharedPack = (r: readonly unknown[]): SharedPack => ({
  catalogRepoId: num(r[0]),
  id: str(r[1]),
  repoId: num(r[2]),
  objects: num(r[3]),
  size: num(r[4]),
  idxSize: num(r[5]),
  checksum: str(r[6]),
});

/** The shared packs of every repository user :name owns (a user purge deletes them all). */
export const sharedPacksOfOwner = query<SharedPack, { name: string }>(
  "sharedPacksOfOwner",
  sharedPacksSql(sql`(SELECT id FROM repository WHERE owner_id = (SELECT id FROM user WHERE lower_name = ${p("name")}))`),
  sharedPack,
);

/** The shared packs of the repositories of the organizations user :name is the sole owner of (a purge deletes them). */
export const sharedPacksOfSoleOwnedOrgs = query<SharedPack, { name: string }>(
  "sharedPacksOfSoleOwnedOrgs",
  sharedPacksSql(sql`(SELECT id FROM repository WHERE owner_id IN (SELECT t.org_id FROM team t JOIN team_user tu ON tu.team_id = t.id
    AND tu.uid = (SELECT id FROM user WHERE lower_name = ${p("name")}) WHERE t.authorize = 4 AND (SELECT COUNT(*) FROM team_user tu2 WHERE tu2.team_id = t.id) = 1))`),
  sharedPack,
);

/** The shared packs of the repository at :owner/:name (a repository delete). */
export const sharedPacksOfRepo = query<SharedPack, RepoPath>("sharedPacksOfRepo", sharedPacksSql(sql`(${REPO_ID_BY_PATH})`), sharedPack);

/** Fork :forkId's catalog rows among :ids (a JSON array of pack ids) now read the fork's own copies. */
export const repointPacks = command<{ forkId: number; ids: string }>(
  "repointPacks",
  sql`UPDATE git_pack SET repo_id = ${p("forkId")} WHERE catalog_repo_id = ${p("forkId")} AND id IN (SELECT value FROM json_each(${p("ids")}))`,
);


/**
 * A pack file set a compaction took out of its catalog (`git_pack_garbage`), or — pack id
 * `WHOLE_NAMESPACE` — the storage namespace of a deleted repository.
 */
export type PackGarbage = { repoId: number; packId: string };

/** The pack id of a garbage row that stands for a deleted repository's whole namespace. */
export const WHOLE_NAMESPACE = "";

/** SQL: no catalog reads garbage row `g`'s files (for a whole namespace: none of them). */
const unreferenced = (g: string) =>
  sql.raw(`NOT EXISTS (SELECT 1 FROM git_pack k WHERE k.repo_id = ${g}.repo_id AND (k.id = ${g}.pack_id OR ${g}.pack_id = '${WHOLE_NAMESPACE}'))`);

/**
 * Garbage removed at or before :before that no catalog lists any more (a fork may still read its
 * base's old packs: those wait), oldest first, at most :limit.
 */
export const duePackGarbage = query<PackGarbage, { before: number; limit: number }>(
  "duePackGarbage",
  sql`SELECT g.repo_id, g.pack_id FROM git_pack_garbage g
    WHERE g.removed_unix <= ${p("before")} AND ${unreferenced("g")}
    ORDER BY g.removed_unix LIMIT ${p("limit")}`,
  (r) => ({ repoId: num(r[0]), packId: str(r[1]) }),
);

/** Forgets garbage whose files were deleted (:items, a JSON array of [repo id, pack id]), unless a catalog lists it again. */
export const forgetPackGarbage = command<{ items: string }>(
  "forgetPackGarbage",
  sql`DELETE FROM git_pack_garbage WHERE (repo_id, pack_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${p("items")}))
    AND ${unreferenced("git_pack_garbage")}`,
);
