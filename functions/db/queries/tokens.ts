/** Personal access tokens of a user by name (`/users/{username}/tokens`): statements built once. */
import { sql } from "drizzle-orm";
import { accessToken } from "../schema.ts";
import { columnsOf, command, insertSql, num, p, query, V, viewerQuery } from "../sql.ts";

const T = columnsOf(accessToken, "t");
export type TokenRow = ReturnType<typeof T.read>;
const tokenRow = (r: readonly unknown[]) => T.read(r, 0);
const OWNER = sql`(SELECT id FROM user WHERE lower_name = ${p("name")})`;
/** User :name when the viewer is that user or a site admin (reqSelfOrAdmin): nobody else makes a user's tokens be read. */
const OWNER_AS_VIEWER = sql`(SELECT su.id FROM user su WHERE su.lower_name = ${p("name")} AND (su.id = ${V.id} OR ${V.isAdmin}))`;

/** The tokens of user :name, newest first, one page. */
export const tokensOfUser = viewerQuery<TokenRow, { name: string; limit: number; offset: number }>(
  "tokensOfUser",
  sql`SELECT ${T.select} FROM access_token t WHERE t.uid = ${OWNER_AS_VIEWER} ORDER BY t.id DESC LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  tokenRow,
);

export const tokenCountOfUser = viewerQuery<number, { name: string }>("tokenCountOfUser", sql`SELECT COUNT(*) FROM access_token t WHERE t.uid = ${OWNER_AS_VIEWER}`, (r) => num(r[0]));

/** At most two tokens of user :name with id :id (the path value was an integer). */
export const tokenIdsById = query<number, { name: string; id: number }>("tokenIdsById", sql`SELECT t.id FROM access_token t WHERE t.uid = ${OWNER} AND t.id = ${p("id")} LIMIT 2`, (r) => num(r[0]));

/** At most two tokens of user :name called :tokenName (two: the name is ambiguous). */
export const tokenIdsByName = query<number, { name: string; tokenName: string }>(
  "tokenIdsByName",
  sql`SELECT t.id FROM access_token t WHERE t.uid = ${OWNER} AND t.name = ${p("tokenName")} LIMIT 2`,
  (r) => num(r[0]),
);

export interface NewToken extends Record<string, unknown> {
  uid: number;
  name: string;
  tokenHash: string;
  tokenLastEight: string;
  scope: string;
  createdUnix: number;
  updatedUnix: number;
}

export const insertToken = command<NewToken>("insertToken", insertSql(accessToken, ["uid", "name", "tokenHash", "tokenLastEight", "scope", "createdUnix", "updatedUnix"]));

/** Token :name of user :uid, as stored (after the insert, in the same batch). */
export const tokenByName = query<TokenRow, { uid: number; name: string }>("tokenByName", sql`SELECT ${T.select} FROM access_token t WHERE t.uid = ${p("uid")} AND t.name = ${p("name")} LIMIT 1`, tokenRow);

export const deleteToken = command<{ id: number; uid: number }>("deleteToken", sql`DELETE FROM access_token WHERE id = ${p("id")} AND uid = ${p("uid")}`);
