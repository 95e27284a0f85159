/** The caller's e-mail addresses (`/user/emails`): statements built once, lists bound as JSON. */
import { sql } from "drizzle-orm";
import { emailAddress } from "../schema.ts";
import { columnsOf, command, p, query, viewerQuery } from "../sql.ts";

const E = columnsOf(emailAddress, "e");
export type EmailRow = ReturnType<typeof E.read>;
const emailRow = (r: readonly unknown[]) => E.read(r, 0);

/** The viewer's addresses, oldest first. */
export const emailsOfViewer = viewerQuery("emailsOfViewer", sql`SELECT ${E.select} FROM email_address e WHERE e.uid = (SELECT id FROM v) ORDER BY e.id`, emailRow);

/** The viewer's addresses among :lower (a JSON array of lower-cased addresses). */
export const viewerEmailsIn = viewerQuery<EmailRow, { lower: string }>(
  "viewerEmailsIn",
  sql`SELECT ${E.select} FROM email_address e WHERE e.uid = (SELECT id FROM v) AND e.lower_email IN (SELECT value FROM json_each(${p("lower")}))`,
  emailRow,
);

/** An address by its lower-cased form, whoever has it. */
export const emailByLower = query<EmailRow, { lower: string }>("emailByLower", sql`SELECT ${E.select} FROM email_address e WHERE e.lower_email = ${p("lower")} LIMIT 1`, emailRow);

/** Adds :emails (a JSON array of `[email, lower]`, in that order) to user :uid, activated, not primary. */
export const addEmails = command<{ uid: number; emails: string }>(
  "addEmails",
  sql`INSERT INTO email_address (uid, email, lower_email, is_activated, is_primary)
      SELECT ${p("uid")}, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), 1, 0 FROM json_each(${p("emails")}) j ORDER BY j.key`,
);

/** Removes user :uid's addresses among :lower (JSON), never the primary one. */
export const deleteEmails = command<{ uid: number; lower: string }>(
  "deleteEmails",
  sql`DELETE FROM email_address WHERE uid = ${p("uid")} AND is_primary = 0 AND lower_email IN (SELECT value FROM json_each(${p("lower")}))`,
);

/** The primary address of a new account: user :lower's, activated. */
export const addPrimaryEmail = command<{ lower: string; email: string; lowerEmail: string }>(
  "addPrimaryEmail",
  sql`INSERT INTO email_address (uid, email, lower_email, is_activated, is_primary) VALUES ((SELECT id FROM user WHERE lower_name = ${p("lower")}), ${p("email")}, ${p("lowerEmail")}, 1, 1)`,
);

