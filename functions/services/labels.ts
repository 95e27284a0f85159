/** Repository labels (Gitea routers/api/v1/repo/label.go) and the label templates. */
import { deleteLabel as deleteLabelCmd, insertLabel, labelCountOfRepo, labelRepoExists, labelOfRepo, labelsOfRepo, LABEL_SORT, updateLabel, type LabelRow, type LabelSort, type LabelValues } from "../db/queries/labels.ts";
import { repoPath } from "../db/queries/repos.ts";
import { only, patchKeys } from "../db/sql.ts";
import { write, type Ctx } from "../lib/context.ts";
import { notFound, unprocessable } from "../lib/errors.ts";
import { reqRepoReader, reqRepoWriter } from "../lib/guards.ts";
import { normalizeColor } from "../lib/labels.ts";
import type { Page } from "../lib/pagination.ts";
import { parseGoInt } from "../lib/query.ts";
import { UNIT } from "../lib/permissions.ts";
import { nowUnix } from "./common.ts";
import { assignRepo, repoGuard, type Assigned } from "./repos.ts";


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

/** reqRepoWriter(issues, pulls): the guard of every label write. */
const reqLabelWriter = (a: Assigned) => reqRepoWriter(a.caller, a.perm, UNIT.issues, UNIT.pulls);
/** The label writes' guard before their body is bound. */
export const labelWriterGuard = repoGuard(reqLabelWriter);

/** GET /repos/{owner}/{repo}/labels (issueListLabels). */
export async function listLabels(ctx: Ctx, owner: string, name: string, sort: string | undefined, page: Page) {
  // Unknown (or inherited-property) names sort alphabetically, as Gitea's default case.
  const order: LabelSort = sort && Object.hasOwn(LABEL_SORT, sort) ? (sort as LabelSort) : "alphabetically";
  const path = { ...ctx.vv, ...repoPath(owner, name) };
  const a = await assignRepo(ctx, owner, name, {
    labels: labelsOfRepo(order).bind({ ...path, limit: page.limit, offset: page.offset }),
    total: labelCountOfRepo.bind(path),
  });
  reqRepoReader(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const url = repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name);
  return { total: a.named.total[0] ?? 0, labels: a.named.labels.map((l) => toLabel(l, url)) };
}

/**
 * The label id a path value names, as Gitea reads it (strconv.ParseInt, base 10: `+1` is 1, `-1`
 * an id no label has); null when it is no integer, and the value is then a name.
 */
const labelIdOf = (ref: string): number | null => {
  const id = parseGoInt(ref, 10);
  return id === null ? null : typeof id === "number" ? id : 0;
};

/** A label of this repository by id, or by name when the path value is not an integer (spec: GET by {id} only). */
const labelByRef = (ctx: Ctx, owner: string, name: string, ref: string) => {
  const path = { ...ctx.vv, ...repoPath(owner, name) };
  const id = labelIdOf(ref);
  return id !== null ? labelOfRepo.byId.bind({ ...path, id }) : labelOfRepo.byName.bind({ ...path, label: ref });
};

/**
 * The label id of a write's path value, as Gitea's EditLabel/DeleteLabel read it
 * (ctx.PathParamInt64: no name fallback, a value that is no integer is id 0, which no label has).
 */
const labelWriteId = (ref: string) => labelIdOf(ref) ?? 0;

/** GET /repos/{owner}/{repo}/labels/{id} (issueGetLabel): ids from other repositories answer like absent ones. */
export async function getLabel(ctx: Ctx, owner: string, name: string, ref: string) {
  const a = await assignRepo(ctx, owner, name, { label: labelByRef(ctx, owner, name, ref) });
  reqRepoReader(a.caller, a.perm, UNIT.issues, UNIT.pulls);
  const l = a.named.label[0];
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
  reqLabelWriter(a);
  const c = color(form.color);
  const now = nowUnix();
  const values: LabelValues = { repoId: a.facts.repo.id, name: form.name, color: c, description: form.description ?? "", exclusive: form.exclusive ?? false, archivedUnix: form.is_archived ? now : 0, createdUnix: now, updatedUnix: now };
  const { created } = await write(ctx, [labelRepoExists.bind(values)], { created: insertLabel.bind(values) });
  return toLabel(only(created, "insertLabel"), repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name));
}

/**
 * PATCH /repos/{owner}/{repo}/labels/{id} (issueEditLabel): present fields only; an absent
 * is_archived un-archives. {id} is an id only: a name is a 404, as in Gitea.
 */
export async function editLabel(ctx: Ctx, owner: string, name: string, ref: string, form: LabelForm) {
  const a = await assignRepo(ctx, owner, name, { label: labelOfRepo.byId.bind({ ...ctx.vv, ...repoPath(owner, name), id: labelWriteId(ref) }) });
  reqLabelWriter(a);
  const l = a.named.label[0];
  if (!l) throw notFound();
  const now = nowUnix();
  const patch: Partial<LabelValues> = { updatedUnix: now };
  if (form.name !== undefined) patch.name = form.name;
  if (form.color !== undefined) patch.color = color(form.color);
  if (form.description !== undefined) patch.description = form.description;
  if (form.exclusive !== undefined) patch.exclusive = form.exclusive;
  // Spec: when is_archived is absent the label's archived flag is set to false.
  patch.archivedUnix = form.is_archived ? (l.archivedUnix || now) : 0;
  const { updated } = await write(ctx, [], { updated: updateLabel(patchKeys(patch)).bind({ ...patch, id: l.id, repo: a.facts.repo.id }) });
  // Another request may have deleted the label since it was read: the update changed nothing.
  const row = updated[0];
  if (!row) throw notFound();
  return toLabel(row, repoApiUrl(ctx, a.facts.owner.name, a.facts.repo.name));
}

/**
 * DELETE /repos/{owner}/{repo}/labels/{id} (issueDeleteLabel): 204, also for ids that are not this
 * repository's; {id} is an id only — a name deletes nothing and answers 204, as Gitea's DeleteLabel
 * (id 0 does not exist, which it answers with nil).
 */
export async function deleteLabel(ctx: Ctx, owner: string, name: string, ref: string) {
  const a = await assignRepo(ctx, owner, name);
  reqLabelWriter(a);
  await write(ctx, [deleteLabelCmd.bind({ repoId: a.facts.repo.id, id: labelWriteId(ref) })]);
}
