/** Organization webhooks (`/orgs/{org}/hooks`): statements built once; edits once per set of fields. */
import { sql } from "drizzle-orm";
import { webhook } from "../schema.ts";
import { columnsOf, command, insertSql, num, p, query, rowExists, setList, shaped, viewerQuery, type InsertKey, whileExists } from "../sql.ts";
import { ownedOrgId } from "./accounts.ts";

const H = columnsOf(webhook, "webhook");
export type HookRow = ReturnType<typeof H.read>;
const hookRow = (r: readonly unknown[]) => H.read(r, 0);
/** The hooks of :org, read only for its owners and site admins (`ownedOrgId`): nobody else makes them be read. */
const OF_ORG = sql`webhook.owner_id = ${ownedOrgId("org")} AND webhook.repo_id = 0`;

/** The hooks of organization :org, oldest first, one page. */
export const hooksOfOrg = viewerQuery<HookRow, { org: string; limit: number; offset: number }>(
  "hooksOfOrg",
  sql`SELECT ${H.select} FROM webhook WHERE ${OF_ORG} ORDER BY webhook.id LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  hookRow,
);

export const hookCountOfOrg = viewerQuery<number, { org: string }>("hookCountOfOrg", sql`SELECT COUNT(*) FROM webhook WHERE ${OF_ORG}`, (r) => num(r[0]));

/** Hook :id of organization :org (a hook of another owner reads as none). */
export const hookOfOrg = viewerQuery<HookRow, { org: string; id: number }>("hookOfOrg", sql`SELECT ${H.select} FROM webhook WHERE webhook.id = ${p("id")} AND ${OF_ORG} LIMIT 1`, hookRow);

export type HookValues = Omit<HookRow, "id" | "httpMethod">;

const INSERTED: InsertKey<typeof webhook>[] = [
  "ownerId", "repoId", "type", "name", "url", "contentType", "secretEnc", "authHeaderEnc", "events", "branchFilter", "meta", "isActive", "createdUnix", "updatedUnix",
];

/** Aborts the write unless the hook's owner :ownerId (an organization) still exists (`whileExists`). */
export const hookOwnerExists = whileExists<{ ownerId: number | null }>("insertHookWhileOwner", rowExists("user", p("ownerId")));

/** A new hook, answered as stored. */
export const insertHook = query<HookRow, HookValues>("insertHook", sql`${insertSql(webhook, INSERTED)} RETURNING ${H.select}`, hookRow);

/** Sets the given fields of hook :id, answered as stored: one statement per set of fields. */
export const updateHook = shaped((keys: readonly InsertKey<typeof webhook>[]) =>
  query<HookRow, Partial<HookValues> & { id: number }>(`updateHook(${keys})`, sql`UPDATE webhook SET ${setList(webhook, keys)} WHERE id = ${p("id")} RETURNING ${H.select}`, hookRow),
);

export const deleteHook = command<{ id: number }>("deleteHook", sql`DELETE FROM webhook WHERE id = ${p("id")}`);
