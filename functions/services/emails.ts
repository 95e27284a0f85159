/** The caller's e-mail addresses (Gitea routers/api/v1/user/email.go): list, add, delete. */
import { and, asc, eq, inArray } from "drizzle-orm";
import { uniqueViolation } from "../db/client.ts";
import { emailAddress, type UserRow } from "../db/schema.ts";
import type { Caller } from "../lib/auth.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { notFound, unprocessable } from "../lib/errors.ts";
import { featureDisabled } from "./common.ts";

type EmailRow = typeof emailAddress.$inferSelect;

/** Gitea's Email JSON for /user/emails (user_id 0 and username "" as Gitea answers there). */
const toEmail = (e: EmailRow) => ({ email: e.email, verified: e.isActivated, primary: e.isPrimary, user_id: 0, username: "" });

const mine = (ctx: Ctx) => ctx.db.select().from(emailAddress).where(eq(emailAddress.uid, ctx.viewer.id)).orderBy(asc(emailAddress.id));

/** Gitea's ValidateEmail: a plausible address made of the characters e-mail allows. */
const VALID_EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/** POST and DELETE answer 404 when credential management is disabled for the caller's login type. */
function reqManageCredentials(ctx: Ctx, caller: Caller) {
  if (featureDisabled(ctx, caller.row as UserRow, "manage_credentials")) throw notFound();
}

/** GET /user/emails (userListEmails). */
export async function listEmails(ctx: Ctx) {
  const { rows } = await readWithCaller(ctx, [mine(ctx)] as const);
  return rows[0].map(toEmail);
}

/** POST /user/emails (userAddEmail): all-or-nothing; answers every address of the user. */
export async function addEmails(ctx: Ctx, emails: string[]) {
  const { caller } = await readWithCaller(ctx, [] as const);
  reqManageCredentials(ctx, caller!);
  const list = [...new Set(emails.map((e) => e.trim()).filter(Boolean))];
  if (list.length === 0) throw unprocessable("Email list empty");
  for (const e of list) if (e.length > 254 || !VALID_EMAIL.test(e)) throw unprocessable(`Email address "${e}" invalid`);
  const seen = new Set<string>();
  for (const e of list) {
    if (seen.has(e.toLowerCase())) throw unprocessable(`Email address has been used: ${e}`);
    seen.add(e.toLowerCase());
  }
  try {
    const res = await writeBatch(ctx, [
      ctx.db.insert(emailAddress).values(list.map((e) => ({ uid: caller!.id, email: e, lowerEmail: e.toLowerCase(), isActivated: true, isPrimary: false }))),
      mine(ctx),
    ] as const);
    return res[1].map(toEmail);
  } catch (err) {
    if (uniqueViolation(err)?.includes("email_address.lower_email")) {
      throw unprocessable(`Email address has been used: ${list.length === 1 ? list[0] : list.join(", ")}`);
    }
    throw err;
  }
}

/** DELETE /user/emails (userDeleteEmail): empty → no-op; an address not the user's → 404; the primary stays. */
export async function deleteEmails(ctx: Ctx, emails: string[]) {
  const lower = [...new Set(emails.map((e) => e.trim().toLowerCase()).filter(Boolean))];
  const { caller, rows } = await readWithCaller(ctx, [ctx.db.select().from(emailAddress).where(and(eq(emailAddress.uid, ctx.viewer.id), inArray(emailAddress.lowerEmail, lower.length ? lower : [""])))] as const);
  reqManageCredentials(ctx, caller!);
  if (lower.length === 0) return;
  const found = rows[0];
  if (found.length !== lower.length) throw notFound();
  if (found.some((e) => e.isPrimary)) throw unprocessable("Primary email address cannot be deleted");
  await writeBatch(ctx, [ctx.db.delete(emailAddress).where(and(eq(emailAddress.uid, caller!.id), eq(emailAddress.isPrimary, false), inArray(emailAddress.lowerEmail, lower)))] as const);
}
