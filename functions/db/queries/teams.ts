/**
 * Teams as the viewer sees them: the visibility fragment every team read and filter reuses.
 */
import { sql, type SQL } from "drizzle-orm";
import { userVisibleSql } from "../../lib/auth.ts";
import type { Ctx } from "../../lib/context.ts";
import { isOrgMemberSql, isOrgOwnerSql } from "./accounts.ts";

/**
 * SQL: the viewer may see the team. First, what hides an organization hides everything in it
 * (issue 8 A.1): the team's organization must be visible to the viewer, whatever the team's own
 * visibility. Then spec team rule 1: site admins and org owners see every team; org members see
 * their teams plus limited and public ones; any signed-in user sees public teams. A token limited
 * to public organization data (public-only, or no organization read scope) sees public teams of
 * public organizations only (A.2, A.3).
 */
export function teamVisibleSql(ctx: Pick<Ctx, "viewer">, t: { id: SQL; orgId: SQL; visibility: SQL }): SQL {
  const v = ctx.viewer;
  const me = v.id;
  const orgVisible = userVisibleSql(v, t.orgId, sql`(SELECT tov.visibility FROM user tov WHERE tov.id = ${t.orgId})`, "org");
  return sql`(${me} IS NOT NULL AND ${orgVisible} AND (
    ${t.visibility} = 'public'
    OR (NOT ${v.limited.organization} AND (
      ${v.isAdmin} OR ${isOrgOwnerSql(t.orgId, me)}
      OR EXISTS (SELECT 1 FROM team_user vtu WHERE vtu.team_id = ${t.id} AND vtu.uid = ${me})
      OR (${t.visibility} = 'limited' AND ${isOrgMemberSql(t.orgId, me)})))))`;
}
