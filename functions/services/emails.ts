/** The caller's e-mail addresses (Gitea routers/api/v1/user/email.go): list, add, delete. */
import { uniqueViolation } from "../db/client.ts";
import { userExists } from "../db/queries/accounts.ts";
import { addEmails as addEmailsCmd, deleteEmails as deleteEmailsCmd, emailsOfViewer, viewerEmailsIn, type EmailRow } from "../db/queries/emails.ts";
import type { Caller } from "../lib/auth.ts";
import { read, write, type Ctx } from "../lib/context.ts";
import { notFound, unprocessable } from "../lib/errors.ts";
import { featureDisabled } from "./common.ts";

/** Gitea's Email JSON for /user/emails (user_id 0 and username "" as Gitea answers there). */
const toEmail = (e: EmailRow) => ({ email: e.email, verified: e.isActivated, primary: e.isPrimary, user_id: 0, username: "" });

/** Gitea's emailRegexp (models/user/email_address.go): its `+-/` is a range, so `,` passes it. */
const GITEA_EMAIL = /^[a-zA-Z0-9.!#$%&'*+,\-./=?^_`{|}~]*@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/**
 * Gitea's validateEmailBasic: "unsupported" for a character its pattern refuses, "invalid" for an
 * empty address, one starting with `-`, or one Go's net/mail.ParseAddress refuses (a local part
 * that is empty, starts or ends with a dot, has two dots in a row, or a comma); null when valid.
 */
export function emailProblem(email: string): "invalid" | "unsupported" | null {
  if (email === "") return "invalid";
  if (!GITEA_EMAIL.test(email)) return "unsupported";
  if (email.startsWith("-")) return "invalid";
  const local = email.slice(0, email.indexOf("@"));
  if (local === "" || local.startsWith(".") || local.endsWith(".") || local.includes("..") || local.includes(",")) return "invalid";
  return null;
}

/** POST and DELETE answer 404 when credential management is disabled for the caller's login type. */
function reqManageCredentials(ctx: Ctx, caller: Caller) {
  if (featureDisabled(ctx, caller.row, "manage_credentials")) throw notFound();
}

/** GET /user/emails (userListEmails). */
export async function listEmails(ctx: Ctx) {
  const { mine } = await read(ctx, { mine: emailsOfViewer.bind(ctx.vv) });
  return mine.map(toEmail);
}

/** POST /user/emails (userAddEmail): all-or-nothing; answers every address of the user. */
export async function addEmails(ctx: Ctx, emails: string[]) {
  const { caller } = await read(ctx, {});
  reqManageCredentials(ctx, caller!);
  // as sent (Gitea trims nothing): " a@x.io" is an address with a space, refused
  const list = emails;
  if (list.length === 0) throw unprocessable("Email list empty");
  for (const e of list) if (e.length > 254 || emailProblem(e) !== null) throw unprocessable(`Email address "${e}" invalid`);
  // the same address twice in one request is "used" by the first, as in Gitea
  const seen = new Set<string>();
  for (const e of list) {
    if (seen.has(e.toLowerCase())) throw unprocessable(`Email address has been used: ${e}`);
    seen.add(e.toLowerCase());
  }
  try {
    const v = { uid: caller!.id, emails: JSON.stringify(list.map((e) => [e, e.toLowerCase()])) };
    const { mine } = await write(ctx, [userExists.bind(v), addEmailsCmd.bind(v)], {
      mine: emailsOfViewer.bind(ctx.vv),
    });
    return mine.map(toEmail);
  } catch (err) {
    if (uniqueViolation(err)?.includes("email_address.lower_email")) {
      throw unprocessable(`Email address has been used: ${list.length === 1 ? list[0] : list.join(", ")}`);
    }
    throw err;
  }
}

/**
 * DELETE /user/emails (userDeleteEmail): an empty list → no-op; an address not the user's → 404 —
 * each looked up as given, in any letter case (Gitea's GetEmailAddressOfUser: "" and " a@b" are
 * addresses no user has); the primary stays.
 */
export async function deleteEmails(ctx: Ctx, emails: string[]) {
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const { caller, found } = await read(ctx, { found: viewerEmailsIn.bind({ ...ctx.vv, lower: JSON.stringify(lower) }) });
  reqManageCredentials(ctx, caller!);
  if (lower.length === 0) return;
  if (found.length !== lower.length) throw notFound();
  if (found.some((e) => e.isPrimary)) throw unprocessable("Primary email address cannot be deleted");
  await write(ctx, [deleteEmailsCmd.bind({ uid: caller!.id, lower: JSON.stringify(lower) })]);
}
