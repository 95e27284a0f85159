/**
 * What hangs off deleted repositories: the ONE list of statements removing it, for the write batch
 * that deletes the repository rows — user purge (db/queries/users.ts) and repository delete
 * (`repoCascade` in db/queries/repos.ts) both run it. test/rules/statements.test.ts checks it
 * against the schema: every column holding a repository id is cleared or updated here.
 */
import { sql, type SQL } from "drizzle-orm";

/** Statements removing everything under the repositories `ids` (a parenthesized SQL list or subquery) yields. */
export function repoCascadeSql(ids: SQL): SQL[] {
  return [
    // The repositories' storage namespaces, as garbage (pack id '' = the whole namespace), in the
    // batch that deletes them: files the deletion right after fails to remove (storage that
    // refuses, a push writing meanwhile) are swept later. Ids are never reused (AUTOINCREMENT).
    sql`INSERT OR IGNORE INTO git_pack_garbage (repo_id, pack_id) SELECT id, '' FROM repository WHERE id IN ${ids}`,
    sql`DELETE FROM repo_unit WHERE repo_id IN ${ids}`,
    sql`DELETE FROM collaboration WHERE repo_id IN ${ids}`,
    sql`UPDATE team SET num_repos = num_repos - (SELECT COUNT(*) FROM team_repo tr WHERE tr.team_id = team.id AND tr.repo_id IN ${ids}) WHERE id IN (SELECT team_id FROM team_repo WHERE repo_id IN ${ids})`,
    sql`DELETE FROM team_repo WHERE repo_id IN ${ids}`,
    sql`DELETE FROM label WHERE repo_id IN ${ids}`,
    sql`UPDATE user SET num_stars = num_stars - 1 WHERE id IN (SELECT uid FROM star WHERE repo_id IN ${ids})`,
    sql`DELETE FROM star WHERE repo_id IN ${ids}`,
    sql`DELETE FROM repo_redirect WHERE redirect_repo_id IN ${ids}`,
    sql`DELETE FROM action WHERE repo_id IN ${ids}`,
    sql`DELETE FROM mirror WHERE repo_id IN ${ids}`,
    sql`DELETE FROM git_ref WHERE repo_id IN ${ids}`,
    sql`DELETE FROM git_pack WHERE catalog_repo_id IN ${ids}`,
    sql`DELETE FROM git_identity WHERE repo_id IN ${ids}`,
    // Repository webhooks (organization hooks have repo_id 0), as Gitea's DeleteRepository.
    sql`DELETE FROM hook_task WHERE hook_id IN (SELECT id FROM webhook WHERE repo_id IN ${ids})`,
    sql`DELETE FROM webhook WHERE repo_id IN ${ids}`,
    // Bases of deleted forks count one fork less; forks of a deleted repository become independent
    // repositories; generated ones forget their template.
    sql`UPDATE repository SET num_forks = num_forks - (SELECT COUNT(*) FROM repository f WHERE f.fork_id = repository.id AND f.id IN ${ids})
      WHERE id IN (SELECT fork_id FROM repository WHERE id IN ${ids} AND fork_id <> 0)`,
    sql`UPDATE repository SET is_fork = 0, fork_id = 0 WHERE fork_id IN ${ids}`,
    sql`UPDATE repository SET template_id = 0 WHERE template_id IN ${ids}`,
  ];
}
