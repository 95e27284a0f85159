/**
 * Repository labels (`/repos/{owner}/{repo}/labels`): statements built once, one per sort order and
 * per set of edited fields. The reads are keyed by `SEEN_REPO_ID`: none of a hidden repository's
 * labels is visited (their number would make a hidden repository cost more than a missing one).
 */
import { sql } from "drizzle-orm";
import { label } from "../schema.ts";
import { columnsOf, command, insertSql, num, p, query, rowExists, setList, shaped, viewerQuery, type InsertKey, type Row, whileExists } from "../sql.ts";
import { SEEN_REPO_ID, type RepoPath } from "./repos.ts";

const L = columnsOf(label, "label");
export type LabelRow = ReturnType<typeof L.read>;
const labelRow = (r: Row) => L.read(r, 0);

/** Gitea's label sorts; unknown names sort alphabetically. */
export const LABEL_SORT = {
  alphabetically: sql`label.name, label.id`,
  reversealphabetically: sql`label.name DESC, label.id DESC`,
  leastissues: sql`label.num_issues, label.id`,
  mostissues: sql`label.num_issues DESC, label.id`,
} as const;
export type LabelSort = keyof typeof LABEL_SORT;

/** The labels of the repository at :owner/:name, one page in one sort order. */
export const labelsOfRepo = shaped((sort: LabelSort) =>
  viewerQuery<LabelRow, RepoPath & { limit: number; offset: number }>(
    `labelsOfRepo(${sort})`,
    sql`SELECT ${L.select} FROM label WHERE label.repo_id = ${SEEN_REPO_ID} ORDER BY ${LABEL_SORT[sort]} LIMIT ${p("limit")} OFFSET ${p("offset")}`,
    labelRow,
  ),
);

/** Every label of the repository at :owner/:name in creation order (generate copies them). */
export const allLabelsOfRepo = viewerQuery<LabelRow, RepoPath>("allLabelsOfRepo", sql`SELECT ${L.select} FROM label WHERE label.repo_id = ${SEEN_REPO_ID} ORDER BY label.id`, labelRow);

export const labelCountOfRepo = viewerQuery<number, RepoPath>("labelCountOfRepo", sql`SELECT COUNT(*) FROM label WHERE label.repo_id = ${SEEN_REPO_ID}`, (r) => num(r[0]));

/** A label of the repository at :owner/:name by :id, or by :label name (the first such). */
export const labelOfRepo = {
  byId: viewerQuery<LabelRow, RepoPath & { id: number }>("labelOfRepoById", sql`SELECT ${L.select} FROM label WHERE label.repo_id = ${SEEN_REPO_ID} AND label.id = ${p("id")} ORDER BY label.id LIMIT 1`, labelRow),
  byName: viewerQuery<LabelRow, RepoPath & { label: string }>(
    "labelOfRepoByName",
    sql`SELECT ${L.select} FROM label WHERE label.repo_id = ${SEEN_REPO_ID} AND label.name = ${p("label")} ORDER BY label.id LIMIT 1`,
    labelRow,
  ),
};

export type LabelValues = Pick<LabelRow, "repoId" | "name" | "color" | "description" | "exclusive" | "archivedUnix" | "createdUnix" | "updatedUnix">;

/** Aborts the write unless repository :repoId still exists (`whileExists`). */
export const labelRepoExists = whileExists<{ repoId: number }>("insertLabelWhileRepo", rowExists("repository", p("repoId")));

/** A new label, answered as stored. */
export const insertLabel = query<LabelRow, LabelValues>(
  "insertLabel",
  sql`${insertSql(label, ["repoId", "name", "color", "description", "exclusive", "archivedUnix", "createdUnix", "updatedUnix"])} RETURNING ${L.select}`,
  labelRow,
);

/** Sets the given fields of label :id of repository :repoId, answered as stored: one statement per set of fields. */
export const updateLabel = shaped((keys: readonly InsertKey<typeof label>[]) =>
  query<LabelRow, Partial<LabelValues> & { id: number; repo: number }>(
    `updateLabel(${keys})`,
    sql`UPDATE label SET ${setList(label, keys)} WHERE id = ${p("id")} AND repo_id = ${p("repo")} RETURNING ${L.select}`,
    labelRow,
  ),
);

/** Deletes label :id of repository :repoId (Gitea's DeleteLabel takes an id only). */
export const deleteLabel = command<{ repoId: number; id: number }>("deleteLabelById", sql`DELETE FROM label WHERE id = ${p("id")} AND repo_id = ${p("repoId")}`);
