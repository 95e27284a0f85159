/**
 * Organizations, their members and blocks (`/orgs/…`, `/user/orgs`, `/user/blocks`): statements
 * built once, reading the viewer from the viewer CTE where the answer depends on who asks.
 */
import { sql, type SQL } from "drizzle-orm";
import { ACCESS } from "../../lib/permissions.ts";
import { user } from "../schema.ts";
import { bool, command, guardCommand, insertSql, num, p, query, rowExists, V, viewerQuery, type Row, whileExists } from "../sql.ts";
import { isOrgMemberSql, isOrgOwnerSql, ORG_ID, seenAccountId, userCols, visibleSql, type UserRow } from "./accounts.ts";

/** Repository unit types 1–10 (Gitea models/unit): code … actions. */
export const UNIT_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;

const U = userCols("u");
const userRow = (r: Row) => U.read(r, 0);
const count = (r: Row) => num(r[0]);

// ---- creating an organization: the org, its Owners team (all units at owner), the creator in it ----

/** The org created earlier in the batch, by its lower-cased name :lowerName. */
const NEW_ORG = sql`(SELECT id FROM user WHERE lower_name = ${p("lowerName")} AND type = 1)`;
const OWNERS = sql`(SELECT id FROM team WHERE org_id = ${NEW_ORG} AND lower_name = 'owners')`;

export interface NewOrg extends Record<string, unknown> {
  name: string;
  lowerName: string;
  fullName: string;
  email: string;
  description: string;
  website: string;
  location: string;
  visibility: number;
  repoAdminChangeTeamAccess: boolean;
  createdUnix: number;
  updatedUnix: number;
}

export const CREATE_ORG = {
  org: command<NewOrg>(
    "createOrg",
    insertSql(user, ["name", "lowerName", "fullName", "email", "description", "website", "location", "visibility", "repoAdminChangeTeamAccess", "createdUnix", "updatedUnix"], {
      type: sql`1`,
      isActive: sql`1`,
      numTeams: sql`1`,
      numMembers: sql`1`,
    }),
  ),
  owners: command<{ lowerName: string; now: number }>(
    "createOrgOwners",
    sql`INSERT INTO team (org_id, name, lower_name, authorize, num_members, includes_all_repositories, can_create_org_repo, created_unix, updated_unix)
        VALUES (${NEW_ORG}, 'Owners', 'owners', ${ACCESS.owner}, 1, 1, 1, ${p("now")}, ${p("now")})`,
  ),
  ownerUnits: command<{ lowerName: string }>(
    "createOrgOwnerUnits",
    sql`INSERT INTO team_unit (org_id, team_id, type, access_mode) VALUES ${sql.join(
      UNIT_TYPES.map((type) => sql`(${NEW_ORG}, ${OWNERS}, ${type}, ${ACCESS.owner})`),
      sql`, `,
    )}`,
  ),
  ownerMember: command<{ lowerName: string; uid: number }>("createOrgOwnerMember", sql`INSERT INTO team_user (org_id, team_id, uid) VALUES (${NEW_ORG}, ${OWNERS}, ${p("uid")})`),
  member: command<{ lowerName: string; uid: number }>("createOrgMember", sql`INSERT INTO org_user (org_id, uid, is_public) VALUES (${NEW_ORG}, ${p("uid")}, 0)`),
  row: query<UserRow, { lowerName: string }>("createdOrg", sql`SELECT ${U.select} FROM user u WHERE u.id = ${NEW_ORG}`, userRow),
};

/** The repositories organization :org owns (an org that owns any is not deleted). */
export const repoCountOfOrg = query<number, { org: string }>("repoCountOfOrg", sql`SELECT COUNT(*) FROM repository WHERE owner_id = ${ORG_ID}`, count);

/** Deleting organization :id: teams, memberships, blocks, hooks, its feed, labels and old repository names go with it (issue 8 C.2). */
export const DELETE_ORG = [
  // an organization that owns a repository when the delete commits (one created since the read) stays
  guardCommand<{ id: number }>("deleteOrgOwnsRepos", sql`EXISTS (SELECT 1 FROM repository WHERE owner_id = ${p("id")})`),
  ...[
    sql`DELETE FROM team_unit WHERE org_id = ${p("id")}`,
    sql`DELETE FROM team_repo WHERE org_id = ${p("id")}`,
    sql`DELETE FROM team_user WHERE org_id = ${p("id")}`,
    sql`DELETE FROM team WHERE org_id = ${p("id")}`,
    sql`DELETE FROM org_user WHERE org_id = ${p("id")}`,
    sql`DELETE FROM user_blocking WHERE blocker_id = ${p("id")}`,
    sql`DELETE FROM hook_task WHERE hook_id IN (SELECT id FROM webhook WHERE owner_id = ${p("id")})`,
    sql`DELETE FROM webhook WHERE owner_id = ${p("id")}`,
    sql`DELETE FROM action WHERE user_id = ${p("id")} OR act_user_id = ${p("id")}`,
    sql`DELETE FROM label WHERE org_id = ${p("id")}`,
    sql`DELETE FROM repo_redirect WHERE owner_id = ${p("id")}`,
    sql`DELETE FROM user WHERE id = ${p("id")} AND type = 1`,
  ].map((q, i) => command<{ id: number }>(`deleteOrg${i}`, q)),
];

// ---- the viewer's organizations ----

/** GET /user/orgs: the viewer's organizations by name; a public-only token sees public ones only. */
const MY_ORGS = sql`FROM user u WHERE u.type = 1 AND u.id IN (SELECT org_id FROM org_user WHERE uid = ${V.id}) AND (u.visibility = 0 OR NOT ${V.publicOnly})`;
export const myOrgs = viewerQuery<UserRow, { limit: number; offset: number }>("myOrgs", sql`SELECT ${U.select} ${MY_ORGS} ORDER BY u.lower_name LIMIT ${p("limit")} OFFSET ${p("offset")}`, userRow);
export const myOrgCount = viewerQuery("myOrgCount", sql`SELECT COUNT(*) ${MY_ORGS}`, count);

// ---- members ----

/**
 * Members of :org the viewer may see: non-members (and public-only tokens) see public members only, never a user the viewer
 * may not see; none of a hidden organization's members is visited (`seenAccountId`).
 */
const MEMBERS = sql`FROM org_user ou JOIN user u ON u.id = ou.uid WHERE ou.org_id = ${seenAccountId("org", true)}
  AND (ou.is_public = 1 OR ${V.isAdmin} OR (NOT ${V.publicOnly} AND ${isOrgMemberSql(ORG_ID, V.id)}))
  AND ${visibleSql(sql`u.id`, sql`u.visibility`, "user")}`;
export const membersOfOrg = viewerQuery<UserRow, { org: string; limit: number; offset: number }>(
  "membersOfOrg",
  sql`SELECT ${U.select} ${MEMBERS} ORDER BY u.lower_name LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  userRow,
);
export const memberCountOfOrg = viewerQuery<number, { org: string }>("memberCountOfOrg", sql`SELECT COUNT(*) ${MEMBERS}`, count);

/** User :name's membership facts in :org. */
export interface MemberFacts {
  u: UserRow;
  isMember: boolean;
  isPublicMember: boolean;
  isOwner: boolean;
}

const memberFacts = (name: string, visible: SQL) =>
  viewerQuery<MemberFacts, { org: string; name: string }>(
    name,
    sql`SELECT ${U.select}, ${isOrgMemberSql(ORG_ID, sql`u.id`)},
        EXISTS (SELECT 1 FROM org_user pm WHERE pm.org_id = ${ORG_ID} AND pm.uid = u.id AND pm.is_public = 1), ${isOrgOwnerSql(ORG_ID, sql`u.id`)}
      FROM user u WHERE u.lower_name = ${p("name")} AND ${visible} LIMIT 1`,
    (r) => ({ u: U.read(r, 0), isMember: bool(r[U.width]), isPublicMember: bool(r[U.width + 1]), isOwner: bool(r[U.width + 2]) }),
  );

/** The member routes' facts about a user the viewer may see (a user it may not see is absent). */
export const memberOfOrg = memberFacts("memberOfOrg", visibleSql(sql`u.id`, sql`u.visibility`, sql`u.type`));

/** The same for the target of a write: the route's scopes gate it, so only public-only limits it. */
export const memberOfOrgForWrite = memberFacts(
  "memberOfOrgForWrite",
  sql`(u.visibility = 0 OR (NOT ${V.publicOnly} AND ${visibleSql(sql`u.id`, sql`u.visibility`, sql`u.type`, { unlimited: true })}))`,
);

/** Removing user :uid from organization :orgId; aborts when :uid is its last owner. */
export const REMOVE_MEMBER = [
  guardCommand<{ orgId: number; uid: number }>(
    "removeMemberLastOwner",
    sql`${isOrgOwnerSql(p("orgId"), p("uid"))} AND (SELECT COUNT(*) FROM team_user tu JOIN team t ON t.id = tu.team_id WHERE t.org_id = ${p("orgId")} AND t.authorize = 4) <= 1`,
  ),
  command<{ orgId: number; uid: number }>("removeMemberTeamCounts", sql`UPDATE team SET num_members = num_members - 1 WHERE id IN (SELECT team_id FROM team_user WHERE uid = ${p("uid")} AND org_id = ${p("orgId")})`),
  command<{ orgId: number; uid: number }>("removeMemberTeams", sql`DELETE FROM team_user WHERE org_id = ${p("orgId")} AND uid = ${p("uid")}`),
  command<{ orgId: number; uid: number }>(
    "removeMemberCount",
    sql`UPDATE user SET num_members = num_members - 1 WHERE id = ${p("orgId")} AND EXISTS (SELECT 1 FROM org_user WHERE org_id = ${p("orgId")} AND uid = ${p("uid")})`,
  ),
  command<{ orgId: number; uid: number }>("removeMember", sql`DELETE FROM org_user WHERE org_id = ${p("orgId")} AND uid = ${p("uid")}`),
];

// ---- blocks: by the viewer (`/user/blocks`) or by organization :org (`/orgs/{org}/blocks`) ----

/** Whether user :name is a member of organization :org (an org cannot block its members). */
export const isMemberOfOrg = query<number, { org: string; name: string }>(
  "isMemberOfOrg",
  sql`SELECT COUNT(*) FROM org_user WHERE org_id = ${ORG_ID} AND uid = (SELECT id FROM user WHERE lower_name = ${p("name")})`,
  count,
);

/** Aborts the write unless blocker :blockerId and blockee :blockeeId still exist (`whileExists`). */
export const blockTargetsExist = whileExists<{ blockerId: number; blockeeId: number }>(
  "blockUserWhileBoth",
  sql`${rowExists("user", p("blockerId"))} AND ${rowExists("user", p("blockeeId"))}`,
);

export const blockUser = command<{ blockerId: number; blockeeId: number; note: string; now: number }>(
  "blockUser",
  sql`INSERT INTO user_blocking (blocker_id, blockee_id, note, created_unix) VALUES (${p("blockerId")}, ${p("blockeeId")}, ${p("note")}, ${p("now")})`,
);

type BlockPair = { blockerId: number; blockeeId: number };
/** SQL: star `s` (or collaboration row `c`, through `uid`/`repo`) ties the two sides of a block: one's on the other's repository. */
const BETWEEN = (uid: SQL, repo: SQL) =>
  sql`((${uid} = ${p("blockeeId")} AND ${repo} IN (SELECT id FROM repository WHERE owner_id = ${p("blockerId")}))
    OR (${uid} = ${p("blockerId")} AND ${repo} IN (SELECT id FROM repository WHERE owner_id = ${p("blockeeId")})))`;

/**
 * PUT …/blocks/{username}'s write batch, as Gitea's BlockUser: both users still exist, each
 * unstars the other's repositories (with the counters) and stops collaborating on them, then the
 * block. (Gitea also unfollows, unwatches, unassigns and cancels transfers: none of those exist here.)
 */
export const BLOCK_USER = [
  blockTargetsExist,
  command<BlockPair>("blockUnstarRepoCounts", sql`UPDATE repository SET num_stars = num_stars - 1 WHERE id IN (SELECT s.repo_id FROM star s WHERE ${BETWEEN(sql`s.uid`, sql`s.repo_id`)})`),
  command<BlockPair>(
    "blockUnstarUserCounts",
    sql`UPDATE user SET num_stars = num_stars - (SELECT COUNT(*) FROM star s WHERE s.uid = user.id AND ${BETWEEN(sql`s.uid`, sql`s.repo_id`)}) WHERE id IN (${p("blockerId")}, ${p("blockeeId")})`,
  ),
  command<BlockPair>("blockUnstar", sql`DELETE FROM star WHERE ${BETWEEN(sql`uid`, sql`repo_id`)}`),
  command<BlockPair>("blockUncollaborate", sql`DELETE FROM collaboration WHERE ${BETWEEN(sql`user_id`, sql`repo_id`)}`),
  blockUser,
] as const;

export const unblockUser = command<{ blockerId: number; blockeeId: number }>("unblockUser", sql`DELETE FROM user_blocking WHERE blocker_id = ${p("blockerId")} AND blockee_id = ${p("blockeeId")}`);

/** The statements of one blocker kind: the blocker is the viewer, or organization :org. */
function blocksOf(kind: "user" | "org", blocker: SQL) {
  const visible = visibleSql(sql`u.id`, sql`u.visibility`, "user");
  const from = sql`FROM user_blocking b JOIN user u ON u.id = b.blockee_id WHERE b.blocker_id = ${blocker} AND ${visible}`;
  return {
    /** Whether the blocker blocks user :name (one the viewer may not see reads as not blocked). */
    blocks: viewerQuery<number, { org: string; name: string }>(`${kind}Blocks`, sql`SELECT b.id ${from} AND u.lower_name = ${p("name")} LIMIT 1`, count),
    /** The blocked users, newest block first. */
    list: viewerQuery<UserRow, { org: string; limit: number; offset: number }>(`${kind}BlockList`, sql`SELECT ${U.select} ${from} ORDER BY b.id DESC LIMIT ${p("limit")} OFFSET ${p("offset")}`, userRow),
    count: viewerQuery<number, { org: string }>(`${kind}BlockCount`, sql`SELECT COUNT(*) ${from}`, count),
  };
}

export const BLOCKS = { user: blocksOf("user", V.id), org: blocksOf("org", ORG_ID) };
