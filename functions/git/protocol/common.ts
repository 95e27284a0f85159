/**
 * Shared pieces of the smart HTTP services: the context a handler gets, limits, request body
 * decoding (git gzips large negotiation requests), side-band framing, and ref peeling.
 */
import { concat, utf8 } from "../bytes.ts";
import { clientReason, GitError } from "../errors.ts";
import { DEFAULT_INDEX_LIMITS, type IndexLimits } from "../pack/indexer.ts";
import { MAX_PKT_DATA, pkt } from "../pkt-line.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { Ref, RefStore } from "../storage/ref-store.ts";
import type { Commits } from "../walk.ts";

/** Limits of the smart HTTP services (all configurable per call). */
export interface GitLimits extends IndexLimits {
  /** Largest negotiation request (want/have lines) accepted, in bytes. */
  maxRequestBytes: number;
  /** Commits listed per ref in a push event (Gitea caps its feed similarly). */
  maxCommitSummaries: number;
  /** Commits counted per ref in a push event before counting stops. */
  maxCommitCount: number;
  /** Whether a push event lists each summarized commit's added, removed and modified files (webhook payloads need them). */
  commitFiles?: boolean;
  /** Commits the push event's walks for created branches read at most (default EVENT_WALK_BUDGET, git/events.ts). */
  eventWalkBudget?: number;
}

export const DEFAULT_LIMITS: GitLimits = {
  ...DEFAULT_INDEX_LIMITS,
  maxRequestBytes: 10 * 1024 * 1024,
  maxCommitSummaries: 20,
  maxCommitCount: 1000,
};

/** What a smart HTTP handler works on: one repository's storage, no auth, no database of its own. */
export interface GitContext {
  /** Repository id (storage key; never the name). */
  repoId: string;
  objects: ObjectStore;
  refs: RefStore;
  limits?: Partial<GitLimits>;
  /** Advertised `agent=` value. */
  agent?: string;
  /** Refuses deleting the branch HEAD points to (Gitea: the default branch cannot be deleted). */
  protectHead?: boolean;
  /** Refuses non-fast-forward updates of branches (git's receive.denyNonFastForwards). */
  denyNonFastForwards?: boolean;
}

export const limitsOf = (ctx: GitContext): GitLimits => ({ ...DEFAULT_LIMITS, ...ctx.limits });
export const agentOf = (ctx: GitContext): string => ctx.agent ?? "edge-gitea/1.0";

/**
 * A request body that cannot be decoded (`Content-Encoding: gzip` that is not gzip): the request is
 * malformed, so the handlers let it through to `serveGit`'s plain-text 400 instead of answering in
 * the protocol.
 */
export class RequestBodyError extends GitError {
  constructor(message: string) {
    super("bad-request", message);
  }
}

/** What a failed body read says: Node's DecompressionStream throws a TypeError without a message, its reason in `cause`. */
function readFailure(e: unknown): string {
  for (let cur = e; cur instanceof Error; cur = cur.cause) if (cur.message) return cur.message;
  return String(e);
}

/**
 * The request body, gunzipped when the client compressed it (git does for large fetch requests).
 * A body that does not decode, or whose client went away while it was read (Node's `aborted`),
 * fails the read with a `RequestBodyError`: a 400 for a request that never arrived, not an
 * internal error.
 */
export function requestBody(req: Request): ReadableStream<Uint8Array> {
  const body = req.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  const enc = req.headers.get("content-encoding")?.toLowerCase();
  const gzip = enc === "gzip" || enc === "x-gzip";
  const reader = (gzip ? body.pipeThrough(new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>) : body).getReader();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await reader.read();
        if (done) ctl.close();
        else ctl.enqueue(value);
      } catch (e) {
        ctl.error(new RequestBodyError(gzip ? `the request body is not valid gzip (Content-Encoding: ${enc}): ${readFailure(e)}` : `the request body could not be read: ${readFailure(e)}`));
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  });
}

/** Protocol version requested through the `Git-Protocol` header (`version=2`), else 0. */
export function protocolVersion(req: Request): 0 | 1 | 2 {
  const h = req.headers.get("git-protocol") ?? "";
  let v = 0;
  for (const kv of h.split(":")) {
    const m = /^version=(\d+)$/.exec(kv.trim());
    if (m) v = Math.max(v, Number(m[1]));
  }
  return v >= 2 ? 2 : v === 1 ? 1 : 0;
}

/** Frames `data` into side-band packets of `band` (1 pack data, 2 progress, 3 fatal error). */
export function sideband(band: 1 | 2 | 3, data: Uint8Array, max = MAX_PKT_DATA - 1): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < data.length || (i === 0 && data.length === 0); i += max) {
    const slice = data.subarray(i, i + max);
    const framed = new Uint8Array(slice.length + 1);
    framed[0] = band;
    framed.set(slice, 1);
    parts.push(pkt(framed));
    if (data.length === 0) break;
  }
  return concat(parts);
}

/** A progress or error message on side band 2/3 (shown by git as `remote: …`). */
export const sidebandMessage = (band: 2 | 3, message: string): Uint8Array => sideband(band, utf8(message.endsWith("\n") ? message : `${message}\n`));

/**
 * Frames a stream of pack bytes into side-band packets on band 1. If producing the pack fails
 * midway, the client gets the reason on band 3 (git prints "remote error: …") instead of a
 * silently cut connection.
 */
export function sidebandStream(src: ReadableStream<Uint8Array>, max = MAX_PKT_DATA - 1): ReadableStream<Uint8Array> {
  const reader = src.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await reader.read();
        if (done) ctl.close();
        else if (value.length > 0) ctl.enqueue(sideband(1, value, max));
      } catch (e) {
        ctl.enqueue(sideband(3, utf8(`${clientReason(e)}\n`), max));
        ctl.close();
      }
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  });
}

/** The non-tag object a ref finally points to, or null for refs that are not annotated tags. */
export async function peeledOf(ref: Ref, commits: Commits): Promise<string | null> {
  if (ref.peeled !== undefined) return ref.peeled && ref.peeled !== ref.oid ? ref.peeled : null;
  if (!ref.name.startsWith("refs/tags/")) return null;
  const p = await commits.peel(ref.oid).catch(() => null);
  return p && p.oid !== ref.oid ? p.oid : null;
}

/** Standard headers of smart HTTP answers (never cached). */
export function gitHeaders(contentType: string): Record<string, string> {
  return {
    "content-type": contentType,
    "cache-control": "no-cache, max-age=0, must-revalidate",
    expires: "Fri, 01 Jan 1980 00:00:00 GMT",
    pragma: "no-cache",
  };
}

/** A Response body from bytes or a byte stream (TypeScript's DOM types want ArrayBuffer-backed views). */
export const asBody = (b: Uint8Array | ReadableStream<Uint8Array>): BodyInit => b as unknown as BodyInit;
