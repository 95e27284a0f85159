/** Repository labels (Gitea routers/api/v1/repo/label.go) and the label templates. */
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import { col } from "../db/client.ts";
import { label, type LabelRow } from "../db/schema.ts";
import type { Ctx } from "../lib/context.ts";
import { writeBatch } from "../lib/context.ts";
import { notFound, unprocessable } from "../lib/errors.ts";
import { reqRepoReader, reqRepoWriter } from "../lib/guards.ts";
import { normalizeColor } from "../lib/labels.ts";
import type { Page } from "../lib/pagination.ts";
import { UNIT } from "../lib/permissions.ts";
import { nowUnix } from "./common.ts";
import { assignRepo, repoIdByPath } from "./repos.ts";


/** Gitea's Label JSON: colour without `#`, API URL inside the repository. */
export function toLabel(l: LabelRow, repoApiUrl: string) {
  return {
    id: l.id,
    name: l.name,
    exclusive: l.exclusive,
    is_archived: l.archivedUnix > 0,
    color: l.color.replace(/^#/, ""),
    description: l.description,
    url: `${repoApiUrl}/labels/${l.id}`,
  };
}

const repoApiUrl = (ctx: Ctx, owner: string, name: string) => `${ctx.rootUrl}api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;


function color(input: string) {
  try {
    return normalizeColor(input);
  } catch (e) {
    throw unprocessable((e as Error).message);
  }
}

const SORT = {
  alphabetically: [asc(label.name), asc(label.id)],
  reversealphabetically: [desc(label.name), desc(label.id)],
  leastissues: [asc(label.numIssues), asc(label.id)],
  mostissues: [desc(label.numIssues), asc(label.id)],
} as const;

/** GET /repos/{owner}/{repo}/labels (issueListLabels). */
export async function listLabels(ctx: Ctx, owner: string, name: string, sort: string | undefined, page: Page) {
  const where = sql`${col(label.repoId)} = ${repoIdByPath(owner, name)}`;
  // Unknown (or inherited-property) names sort alphabetically, as Gitea's default case.
  const order = sort && Object.hasOwn(SORT, sort) ? SORT[sort as keyof typeof SORT] : SORT.alphabetically;
  const a = await assignRepo(ctx, owner, name, [
    ctx.db.select().from(label).where(where).orderBy(...order).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(label).where(where),
  ] as const);
  reqRepoReader(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const url = repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name);
  return { total: (a.rows[1] as { n: number }[])[0]?.n ?? 0, labels: (a.rows[0] as LabelRow[]).map((l) => toLabel(l, url)) };
}

/** A label of this repository by id, or by name when the path value is not an integer. */
const labelByRef = (ctx: Ctx, owner: string, name: string, ref: string) =>
  ctx.db
    .select()
    .from(label)
    .where(and(sql`${col(label.repoId)} = ${repoIdByPath(owner, name)}`, /^\d{1,18}$/.test(ref) ? eq(label.id, Number(ref)) : eq(label.name, ref)))
    .orderBy(asc(label.id))
    .limit(1);

/** GET /repos/{owner}/{repo}/labels/{id} (issueGetLabel): ids from other repositories answer like absent ones. */
export async function getLabel(ctx: Ctx, owner: string, name: string, ref: string) {
  const a = await assignRepo(ctx, owner, name, [labelByRef(ctx, owner, name, ref)] as const);
  reqRepoReader(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const l = (a.rows[0] as LabelRow[])[0];
  if (!l) throw notFound();
  return toLabel(l, repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name));
}

export interface LabelForm {
  name?: string;
  color?: string;
  description?: string;
  exclusive?: boolean;
  is_archived?: boolean;
}

/** POST /repos/{owner}/{repo}/labels (issueCreateLabel): an invalid colour → 422. */
export async function createLabel(ctx: Ctx, owner: string, name: string, form: Required<Pick<LabelForm, "name" | "color">> & LabelForm) {
  const a = await assignRepo(ctx, owner, name);
  reqRepoWriter(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const c = color(form.color);
  const now = nowUnix();
  const res = await writeBatch(ctx, [
    ctx.db
      .insert(label)
      .values({ repoId: a.facts.repo.id, name: form.name, color: c, description: form.description ?? "", exclusive: form.exclusive ?? false, archivedUnix: form.is_archived ? now : 0, createdUnix: now, updatedUnix: now })
      .returning(),
  ] as const);
  return toLabel(res[0][0], repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name));
}

/** PATCH /repos/{owner}/{repo}/labels/{id} (issueEditLabel): present fields only; an absent is_archived un-archives. */
export async function editLabel(ctx: Ctx, owner: string, name: string, ref: string, form: LabelForm) {
  const a = await assignRepo(ctx, owner, name, [labelByRef(ctx, owner, name, ref)] as const);
  reqRepoWriter(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const l = (a.rows[0] as LabelRow[])[0];
  if (!l) throw notFound();
  const now = nowUnix();
  const patch: Partial<typeof label.$inferInsert> = { updatedUnix: now };
  if (form.name !== undefined) patch.name = form.name;
  if (form.color !== undefined) patch.color = color(form.color);
  if (form.description !== undefined) patch.description = form.description;
  if (form.exclusive !== undefined) patch.exclusive = form.exclusive;
  // Spec: when is_archived is absent the label's archived flag is set to false.
  patch.archivedUnix = form.is_archived ? (l.archivedUnix || now) : 0;
  const res = await writeBatch(ctx, [ctx.db.update(label).set(patch).where(and(eq(label.id, l.id), eq(label.repoId, a.facts.repo.id))).returning()] as const);
  return toLabel(res[0][0], repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name));
}

/** DELETE /repos/{owner}/{repo}/labels/{id} (issueDeleteLabel): 204, also for ids that are not this repository's. */
export async function deleteLabel(ctx: Ctx, owner: string, name: string, ref: string) {
  const a = await assignRepo(ctx, owner, name);
  reqRepoWriter(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const target = /^\d{1,18}$/.test(ref) ? eq(label.id, Number(ref)) : eq(label.name, ref);
  await writeBatch(ctx, [ctx.db.delete(label).where(and(target, eq(label.repoId, a.facts.repo.id)))] as const);
}
