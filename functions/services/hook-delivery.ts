/**
 * Webhook delivery (Gitea services/webhook/deliver.go): pending `hook_task` rows are claimed,
 * re-checked against their hook as it is now, sent once and recorded. The event seam inserted them
 * in the write that produced the event, so a delivery exists exactly when its write committed; a
 * deliverer that stops mid-way leaves its claim to expire (`claimLeaseS`), and the next sweep
 * sends what it held (at least once). Failed deliveries are recorded, not retried (as Gitea).
 *
 * Runs off the request path: on Node in the server's process (`HookDeliverer`), on the Worker in
 * its queue consumer and scheduled sweep (functions/worker.ts).
 */
import type { Driver } from "../db/driver.ts";
import { claimHookTask, claimedHookTasks, cleanupHookTasks, dropHookTask, recordDelivery, type ClaimedTask } from "../db/queries/hook-tasks.ts";
import { batchItems, type Bound, type Row } from "../db/sql.ts";
import { CHAT_TYPES, chatRequest, type HookMeta } from "../convert/chat-hooks.ts";
import { decryptSecret, hmac, sha1Hex } from "../lib/crypto.ts";
import { send, type Hop, type OutboundRequest } from "../lib/outbound.ts";
import type { Settings } from "../lib/settings.ts";
import { compileGlob } from "../lib/glob.ts";
import { nowUnix } from "./common.ts";

/**
 * How long a claim holds a task before another sweep may take it over: at least 2 minutes, and
 * always longer than a delivery may take (`[webhook] DELIVER_TIMEOUT` bounds the whole exchange,
 * redirects included; a minute more covers recording it). A shorter lease let the sweep's own idle
 * slots take over a slow delivery still in flight: sent again every lease, its answer never recorded,
 * and the hook's later events held behind it for good.
 */
export const claimLeaseS = (deliverTimeoutMs: number) => Math.max(120, Math.ceil(deliverTimeoutMs / 1000) + 60);
/** Deliveries in flight at once per sweep (each slot claims its next task when it is done). */
const SLOTS = 8;
/** Deliveries one sweep makes at most before it returns (the caller starts another). */
export const SWEEP_MAX = 400;

export interface DeliveryDeps {
  driver: Driver;
  settings: Settings;
  hop: Hop;
}

const run = (driver: Driver, items: readonly Bound<unknown>[], mode: "read" | "write") => driver.batch(batchItems(items), mode);

/**
 * Gitea's checkBranchFilter: the hook's branch filter (a glob without separators, `{a,b}`
 * alternatives; "", `*` and `**` admit all) must match a branch's name or else the full ref of a
 * push, create or delete (`refs/tags/v1` for a tag); other events (no ref) pass. A task recorded
 * with a bare branch name (before refs were stored whole) is matched as that name.
 */
export function branchAdmitted(filter: string, ref: string): boolean {
  if (!filter || filter === "*" || filter === "**" || !ref) return true;
  const glob = compileGlob(filter, { separator: false });
  if (!glob) return false;
  if (ref.startsWith("refs/heads/") && glob.test(ref.slice("refs/heads/".length))) return true;
  return glob.test(ref);
}

/** What a delivery sends, and the body its record keeps (the payload, or the chat message sent). */
export type HookRequest = OutboundRequest & { recorded: string };

/**
 * The request Gitea's deliverer makes for a hook (deliver.go): a `gitea`/`gogs` hook gets the
 * payload (newDefaultRequest: JSON, form or GET), a chat type its message (convert/chat-hooks.ts:
 * always JSON; Matrix a PUT); every type but Feishu the X-Gitea/X-Gogs/X-Hub/X-GitHub headers,
 * signed over the body sent. `auth` is the Authorization value, `now` signs Feishu's body. Null:
 * the event makes no message for this hook (a push without commits to a chat hook).
 */
export function hookRequest(t: ClaimedTask["task"], hook: NonNullable<ClaimedTask["hook"]>, secret: string, auth: string, now = nowUnix()): HookRequest | null {
  const payload = t.payloadContent;
  const headers: Record<string, string> = {};
  let url = hook.url;
  let body = payload;
  let signed = payload;
  let method = (hook.httpMethod || "POST").toUpperCase();
  let defaultHeaders = true;
  if (CHAT_TYPES.has(hook.type)) {
    const meta = JSON.parse(hook.meta || "{}") as HookMeta;
    const chat = chatRequest(hook.type, t.eventType, payload, meta, { secret, now, feishuSign: (key) => hmac("sha256", key, "", "base64"), sha1Hex });
    if (!chat) return null;
    body = signed = chat.body;
    headers["Content-Type"] = "application/json";
    if (chat.put) {
      method = "PUT";
      url = `${hook.url}/${chat.put.suffix}`;
    }
    defaultHeaders = chat.defaultHeaders;
  } else if (method === "GET") {
    const u = new URL(hook.url);
    u.searchParams.set("payload", payload);
    url = u.toString();
    body = "";
  } else if (hook.contentType === "form") {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams({ payload }).toString();
  } else {
    headers["Content-Type"] = "application/json";
  }
  if (defaultHeaders) {
    // Signed over what is sent (the payload itself, not its form encoding), with the hook's secret; empty without one.
    const [sha1, sha256] = secret ? [hmac("sha1", secret, signed), hmac("sha256", secret, signed)] : ["", ""];
    // The events delivered here (push, create, delete, fork, repository) are their own X-Gitea-Event.
    const event = t.eventType;
    Object.assign(headers, {
      "X-Gitea-Delivery": t.uuid,
      "X-Gitea-Event": event,
      "X-Gitea-Event-Type": t.eventType,
      "X-Gitea-Signature": sha256,
      "X-Gogs-Delivery": t.uuid,
      "X-Gogs-Event": event,
      "X-Gogs-Event-Type": t.eventType,
      "X-Gogs-Signature": sha256,
      "X-Hub-Signature": `sha1=${sha1}`,
      "X-Hub-Signature-256": `sha256=${sha256}`,
      "X-GitHub-Delivery": t.uuid,
      "X-GitHub-Event": event,
      "X-GitHub-Event-Type": t.eventType,
      // Organization hooks only, here.
      "X-Gitea-Hook-Installation-Target-Type": "organization",
      "X-GitHub-Hook-Installation-Target-Type": "organization",
    });
  }
  if (auth) headers.Authorization = auth;
  return { method, url, headers, body, recorded: signed };
}

/** Delivers one claimed task and records the exchange; a task that no longer applies is dropped. */
async function deliverOne(deps: DeliveryDeps, claim: string, c: ClaimedTask): Promise<void> {
  const { task: t, hook } = c;
  const drop = () => writeWithRetry(deps.driver, [dropHookTask.bind({ id: t.id, claim })]);
  // Re-checked at delivery: the hook must still exist and belong to an organization (a deleted
  // hook's tasks went with it; this closes the race with a delivery already claimed), and its
  // branch filter, as it is now, must admit the branch.
  if (!hook || !c.ownerIsOrg || hook.repoId !== 0 || !branchAdmitted(hook.branchFilter, t.refName)) {
    await drop();
    return;
  }
  // A hook made inactive after the event: recorded as a failed delivery, nothing sent (Gitea).
  if (!hook.isActive) {
    const request = JSON.stringify({ url: hook.url, http_method: hook.httpMethod, headers: {}, body: t.payloadContent });
    const response = JSON.stringify({ status: 0, headers: {}, body: "Hook delivery skipped as webhook is inactive" });
    await writeWithRetry(deps.driver, [recordDelivery.bind({ id: t.id, claim, delivered: Date.now() * 1_000_000, ok: false, request, response })]);
    return;
  }
  const key = deps.settings.security.secretKey;
  let req: HookRequest | null = null;
  let ok = false;
  let response: { status: number; headers: Record<string, string>; body: string } = { status: 0, headers: {}, body: "" };
  try {
    // a secret saved under a key this server does not have is a failed delivery, never an unsigned one
    if ((hook.secretEnc || hook.authHeaderEnc) && !key) throw new Error("cannot decrypt the stored secret: no [security] SECRET_KEY is set");
    const secret = hook.secretEnc && key ? await decryptSecret(key, hook.secretEnc) : "";
    const auth = hook.authHeaderEnc && key ? await decryptSecret(key, hook.authHeaderEnc) : "";
    req = hookRequest(t, hook, secret, auth);
    // No message for this hook (Gitea makes no task): nothing sent, nothing recorded.
    if (!req) {
      await drop();
      return;
    }
    const res = await send(deps.hop, req, { timeoutMs: deps.settings.webhook.deliverTimeoutMs, allowList: deps.settings.webhook.allowedHostList });
    ok = res.status >= 200 && res.status < 300;
    response = res;
  } catch (err) {
    response = { status: 0, headers: {}, body: `Delivery: ${(err as Error).message}` };
  }
  // What was sent, for the record: the secret is never stored, the Authorization value is masked.
  const headers = { ...(req?.headers ?? {}) };
  if (headers.Authorization) headers.Authorization = "******";
  const request = JSON.stringify({ url: req?.url ?? hook.url, http_method: req?.method ?? hook.httpMethod, headers, body: req?.recorded ?? t.payloadContent });
  await writeWithRetry(deps.driver, [
    recordDelivery.bind({ id: t.id, claim, delivered: Date.now() * 1_000_000, ok, request, response: JSON.stringify({ status: response.status, headers: response.headers, body: response.body }) }),
  ]);
}

/** While a slot waits for another's delivery to end, it looks for newly claimable work this often. */
const IDLE_POLL_MS = 1000;

/**
 * Runs a write of the deliverer again on a failure that may pass (the database busy or away):
 * up to 5 tries over ~1.5 s. A record that still fails is logged; its task stays claimed and is
 * sent again once the claim expires (at least once).
 */
async function writeWithRetry(driver: Driver, items: readonly Bound<unknown>[]): Promise<Row[][]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run(driver, items, "write");
    } catch (err) {
      if (attempt >= 4) throw err;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
}

/** How a caller can make a running sweep look for work at once (new tasks were recorded). */
export interface SweepControl {
  wake?: () => void;
}

/**
 * Delivers pending tasks in SLOTS concurrent slots until none is left or SWEEP_MAX were claimed;
 * returns how many were. A slot that finds nothing claimable while other deliveries are in flight
 * waits (for one to end, a wake, or — one waiting slot at a time — IDLE_POLL_MS) and looks again — a slow hook's backlog only
 * becomes claimable one task at a time, and other hooks' tasks may arrive meanwhile. Slots never
 * reject: the sweep returns only when every delivery it started has been sent and recorded (a
 * Worker invocation that returned early would cancel them mid-way). Concurrent sweeps (two
 * processes, two queue invocations) never deliver one task twice while its claim holds, and never
 * two of one hook's at once.
 */
export async function deliverPending(deps: DeliveryDeps, control: SweepControl = {}): Promise<number> {
  const lease = claimLeaseS(deps.settings.webhook.deliverTimeoutMs);
  let count = 0;
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  const wakeAll = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  control.wake = wakeAll;
  // One waiting slot at a time polls (a claim is a write); the others wait for a delivery to end or a wake.
  let polling = false;
  const idle = () =>
    new Promise<void>((resolve) => {
      if (polling) {
        waiters.push(resolve);
        return;
      }
      polling = true;
      let fired = false;
      const done = () => {
        if (fired) return;
        fired = true;
        clearTimeout(timer);
        polling = false;
        resolve();
      };
      const timer = setTimeout(done, IDLE_POLL_MS);
      waiters.push(done);
    });
  const slot = async () => {
    while (count < SWEEP_MAX) {
      const claim = crypto.randomUUID();
      const now = nowUnix();
      const claimed = claimedHookTasks.bind({ claim });
      let task: Row | undefined;
      try {
        const [, rows] = await writeWithRetry(deps.driver, [claimHookTask.bind({ claim, now, staleBefore: now - lease + 1 }), claimed]);
        task = rows?.[0];
      } catch (err) {
        console.error(`webhook delivery: claiming a task failed: ${(err as Error).message}`);
        return;
      }
      if (!task) {
        if (inFlight === 0) return;
        await idle();
        continue;
      }
      count++;
      inFlight++;
      try {
        await deliverOne(deps, claim, claimed.map(task));
      } catch (err) {
        console.error(`webhook delivery: task ${claimed.map(task).task.id}: ${(err as Error).message}`);
      } finally {
        inFlight--;
        wakeAll();
      }
    }
  };
  await Promise.all(Array.from({ length: SLOTS }, slot));
  control.wake = undefined;
  return count;
}

/** How long delivered tasks are kept (Gitea's `[cron.cleanup_hook_task_table] OLDER_THAN`, 168h). */
export const KEEP_DELIVERED_MS = 7 * 24 * 3600 * 1000;

/** Removes the records of deliveries older than KEEP_DELIVERED_MS (pending tasks are never removed). */
export async function cleanupDeliveries(driver: Driver, now = Date.now()): Promise<void> {
  await run(driver, [cleanupHookTasks.bind({ before: (now - KEEP_DELIVERED_MS) * 1_000_000 })], "write");
}

/**
 * Node's deliverer: one sweep at a time in the server's process, started by `kick()` after a write
 * that recorded deliveries, at start (what a stopped server left) and every `intervalMs` (claims
 * that expired; hourly, the removal of records older than a week). Failures of a sweep (the database away) wait for the next kick or tick.
 */
export class HookDeliverer {
  private running: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly deps: DeliveryDeps;
  private cleanedAt = 0;
  private readonly control: SweepControl = {};

  constructor(deps: DeliveryDeps, intervalMs = 60_000) {
    this.deps = deps;
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref?.();
  }

  /** The periodic sweep; old delivery records are removed once an hour. */
  private tick(): void {
    if (Date.now() - this.cleanedAt >= 3600_000) {
      this.cleanedAt = Date.now();
      cleanupDeliveries(this.deps.driver).catch(() => undefined);
    }
    this.kick();
  }

  kick(): void {
    if (this.running) {
      this.again = true;
      this.control.wake?.();
      return;
    }
    this.running = (async () => {
      let n = 0;
      do {
        this.again = false;
        n = await deliverPending(this.deps, this.control).catch(() => 0);
      } while (this.again || n >= SWEEP_MAX);
    })().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when the current sweep (if any) is over. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
