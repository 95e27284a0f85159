/**
 * Webhook deliveries (`hook_task`): the rows an event inserts inside its write batch, and the
 * deliverer's claim, read and record. Statements built once.
 */
import { sql } from "drizzle-orm";
import { hookTask, webhook } from "../schema.ts";
import { columnsOf, command, p, query } from "../sql.ts";

/** A random version-4 UUID, as Gitea's `gouuid.New()` writes them. */
const UUID_SQL = `lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))`;

/**
 * The hooks an event reaches: the active hooks of organization `owner` that chose the event
 * (Gitea's API-made hooks are always `choose_events`), of every type — a chat type's message is made
 * from the stored payload at delivery (convert/chat-hooks.ts). Repository hooks (`repo_id` ≠ 0) are
 * not made by this app. Branch filters are matched when a task is delivered (`ref_name`, the full ref).
 */
const HOOKS_OF_EVENT = `FROM webhook w WHERE w.owner_id = ? AND w.repo_id = 0 AND w.is_active = 1 AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ?)`;

/**
 * A push payload's text from its pieces (a JSON array): text, an e-mail, text, an e-mail, …, text,
 * joined in order by a recursive CTE (sqld's parser refuses `group_concat(… ORDER BY …)`).
 * Each e-mail becomes the JSON string of the account it names (Gitea's GetUserByEmail: an activated
 * address, or the `<login>@<NO_REPLY_ADDRESS>` placeholder, bound as the next argument), or "" —
 * only a public individual account is named: the receiver is not a signed-in viewer.
 */
const PAYLOAD_WITH_USERNAMES = `(WITH RECURSIVE src(a) AS (SELECT ?),
    acc(k, s) AS (
      SELECT 0, json_extract(a, '$[0]') FROM src
      UNION ALL
      SELECT acc.k + 2, acc.s || json_quote(COALESCE((
          SELECT u.name FROM user u, (SELECT lower(json_extract(src.a, '$[' || (acc.k + 1) || ']')) AS email) m
          WHERE u.type = 0 AND u.visibility = 0 AND (u.id IN (SELECT e.uid FROM email_address e WHERE e.lower_email = m.email AND e.is_activated = 1) OR u.lower_name || ? = m.email) LIMIT 1), ''))
        || json_extract(src.a, '$[' || (acc.k + 2) || ']')
      FROM acc, src WHERE acc.k + 2 < json_array_length(src.a))
  SELECT s FROM acc ORDER BY k DESC LIMIT 1)`;

/**
 * The task rows of one push event, as raw text for batches that carry their own guard (a push's
 * rows apply only when its compare-and-swap held): args `[event, branch, pieces, noReply, now, owner, event, ...guard]`.
 */
export const PUSH_HOOK_TASKS_TEXT = (guard: string) =>
  `INSERT INTO hook_task (hook_id, uuid, event_type, ref_name, payload_content, created_unix) SELECT w.id, ${UUID_SQL}, ?, ?, ${PAYLOAD_WITH_USERNAMES}, ? ${HOOKS_OF_EVENT} AND ${guard}`;

export type HookTaskValues = {
  event: string;
  ref: string;
  payload: string;
  now: number;
  owner: number;
};

/** One task per hook of organization :owner that chose :event. */
export const insertHookTasks = command<HookTaskValues>(
  "insertHookTasks",
  sql`INSERT INTO hook_task (hook_id, uuid, event_type, ref_name, payload_content, created_unix) SELECT w.id, ${sql.raw(UUID_SQL)}, ${p("event")}, ${p("ref")}, ${p("payload")}, ${p("now")}
    FROM webhook w WHERE w.owner_id = ${p("owner")} AND w.repo_id = 0 AND w.is_active = 1 AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ${p("event")})`,
);

/**
 * The same for a repository inserted in the same batch (found by :repoOwner and :lowerName; the
 * hooks are :owner's — a fork's event goes to its base's owner): the payload is :p0, the new
 * row's id, :p1, its `empty`, :p2, its `size` in KiB, :p3 — as the batch left them (an initial
 * commit in the same batch made it non-empty); the service split the payload where they go.
 */
export const insertHookTasksOfNewRepo = command<Omit<HookTaskValues, "payload"> & { p0: string; p1: string; p2: string; p3: string; repoOwner: number; lowerName: string }>(
  "insertHookTasksOfNewRepo",
  sql`INSERT INTO hook_task (hook_id, uuid, event_type, ref_name, payload_content, created_unix)
    SELECT w.id, ${sql.raw(UUID_SQL)}, ${p("event")}, ${p("ref")},
      ${p("p0")} || r.id || ${p("p1")} || (CASE WHEN r.is_empty THEN 'true' ELSE 'false' END) || ${p("p2")} || (r.size / 1024) || ${p("p3")}, ${p("now")}
    FROM webhook w JOIN repository r ON r.owner_id = ${p("repoOwner")} AND r.lower_name = ${p("lowerName")}
    WHERE w.owner_id = ${p("owner")} AND w.repo_id = 0 AND w.is_active = 1 AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ${p("event")})`,
);

/** A hook's tasks go with it (Gitea's DeleteWebhookByID). */
export const deleteTasksOfHook = command<{ id: number }>("deleteTasksOfHook", sql`DELETE FROM hook_task WHERE hook_id = ${p("id")}`);

/**
 * Claims the oldest pending task for one deliverer slot: undelivered, unclaimed or claimed before
 * :staleBefore (a deliverer that stopped mid-way), and of a hook with no delivery in flight — a
 * hook's deliveries go out one at a time in event order, and a slow receiver holds one slot, not
 * every other organization's deliveries.
 */
export const claimHookTask = command<{ claim: string; now: number; staleBefore: number }>(
  "claimHookTask",
  sql`UPDATE hook_task SET claim = ${p("claim")}, claimed_unix = ${p("now")}
    WHERE id = (SELECT t.id FROM hook_task t WHERE t.is_delivered = 0 AND t.claimed_unix < ${p("staleBefore")}
      AND t.hook_id NOT IN (SELECT f.hook_id FROM hook_task f WHERE f.is_delivered = 0 AND f.claimed_unix >= ${p("staleBefore")})
      ORDER BY t.id LIMIT 1)`,
);

const T = columnsOf(hookTask, "t", ["requestContent", "responseContent"]);
const W = columnsOf(webhook, "w");
export type ClaimedTask = { task: ReturnType<typeof T.read>; hook: ReturnType<typeof W.read> | null; ownerIsOrg: boolean };

/**
 * The tasks of claim :claim with their hook as it is NOW (null when deleted) and whether its owner
 * is still an organization: delivery re-checks what the event was recorded under.
 */
export const claimedHookTasks = query<ClaimedTask, { claim: string }>(
  "claimedHookTasks",
  sql`SELECT ${T.select}, w.id IS NOT NULL, ${W.select}, EXISTS (SELECT 1 FROM user o WHERE o.id = w.owner_id AND o.type = 1)
    FROM hook_task t LEFT JOIN webhook w ON w.id = t.hook_id
    WHERE t.claim = ${p("claim")} AND t.is_delivered = 0 ORDER BY t.id`,
  (r) => ({
    task: T.read(r, 0),
    hook: r[T.width] === 1 || r[T.width] === 1n ? W.read(r, T.width + 1) : null,
    ownerIsOrg: r[T.width + 1 + W.width] === 1 || r[T.width + 1 + W.width] === 1n,
  }),
);

/** A delivery's outcome, recorded once (only by the claim that holds the task). */
export const recordDelivery = command<{ id: number; claim: string; delivered: number; ok: boolean; request: string; response: string }>(
  "recordDelivery",
  sql`UPDATE hook_task SET is_delivered = 1, delivered = ${p("delivered")}, is_succeed = ${p("ok")}, request_content = ${p("request")}, response_content = ${p("response")}
    WHERE id = ${p("id")} AND claim = ${p("claim")}`,
);

/** A task that no longer applies (its hook is gone, inactive, or its branch filter does not match). */
export const dropHookTask = command<{ id: number; claim: string }>("dropHookTask", sql`DELETE FROM hook_task WHERE id = ${p("id")} AND claim = ${p("claim")}`);

/** How many active hooks organization :owner (a lower-case name) has: a push to its repositories prepares webhook payloads only when some exist. */
export const activeHooksOfOwner = query<number, { owner: string }>(
  "activeHooksOfOwner",
  sql`SELECT COUNT(*) FROM webhook WHERE repo_id = 0 AND is_active = 1 AND owner_id = (SELECT id FROM user WHERE lower_name = ${p("owner")} AND type = 1)`,
  (r) => Number(r[0] ?? 0),
);

/** Delivered tasks recorded before :before (unix ns) are removed (Gitea's cleanup_hook_task_table, OlderThan). */
export const cleanupHookTasks = command<{ before: number }>("cleanupHookTasks", sql`DELETE FROM hook_task WHERE is_delivered = 1 AND delivered < ${p("before")}`);
