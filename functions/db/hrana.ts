/**
 * The Worker's driver: Hrana over HTTP (sqld's and Turso's `/v2/pipeline`, JSON) spoken directly,
 * with the streams kept open between batches.
 *
 * Why not `@libsql/client/web` (which the Node side still uses against a remote URL): measured on
 * the Worker under load, it opened and closed a server stream for every batch (sqld spends ~1 ms
 * of CPU opening one: a connection and its state), and built every row as an object with two
 * `Object.defineProperty` per column (`rowFromProto`: 24 % of the Worker's CPU on the repository
 * search, 6 % on a repository read). Here a row is the array of its values — what the query layer
 * reads — and an open stream's baton is handed to the next batch of the same isolate.
 *
 * What a batch sends is what @libsql/client sends: one `execute` for a single read, otherwise one
 * `batch` of BEGIN (READONLY for reads, IMMEDIATE for writes), the statements each conditioned on
 * the previous step, COMMIT, and ROLLBACK unless the COMMIT succeeded; so a batch is still one
 * round trip and one transaction, all or nothing. Values are bound as @libsql/client binds them,
 * except that an integral number goes as an integer (it sent every number as a float).
 */
import { expandConfig } from "@libsql/core/config";
import { encodeBaseUrl } from "@libsql/core/uri";
import { remoteRefusedForNow, type BatchItem, type Driver } from "./driver.ts";
import type { Row } from "./sql.ts";

/**
 * How long an idle stream is reused. sqld expires a stream idle for 10 s; a stream is reused only
 * well inside that, and a batch sent on a stream the server has expired anyway is sent again on a
 * new one (the server refused it whole: nothing ran).
 */
export const STREAM_IDLE_MS = 5_000;
/** At most this many streams per database are held open by one isolate; beyond, a batch closes its own. */
export const MAX_OPEN_STREAMS = 16;
/** A stream lease older than this is a batch whose request was cancelled (its query timeout is shorter). */
export const LEASE_MS = 60_000;

interface Stream {
  baton: string;
  /** The pipeline URL of this stream's next request: under the server's `base_url`, else the database's. */
  url: string;
  idleSince: number;
}

/** A database as the isolate knows it: where its pipeline is, how to sign in, its open streams. */
interface Pool {
  base: string;
  pipeline: string;
  headers: Record<string, string>;
  idle: Stream[];
  /**
   * Streams batches are using (each batch's lease and when it took it). A request workerd cancels
   * (answered, or its client gone) never runs its batch's `finally`: its lease is not given back,
   * so a lease older than LEASE_MS no longer counts — a counter decremented in `finally` would
   * have stayed high for good, and after MAX_OPEN_STREAMS such requests every batch would open
   * and close a stream of its own.
   */
  leases: Set<{ since: number }>;
}

type ProtoValue = { type: "null" } | { type: "integer"; value: string } | { type: "float"; value: number } | { type: "text"; value: string } | { type: "blob"; base64: string };
interface ProtoError {
  message: string;
  code?: string;
}
interface StmtResult {
  rows: ProtoValue[][];
}
type ProtoResult = { type: "ok"; response: { type: "execute"; result: StmtResult } | { type: "batch"; result: { step_results: (StmtResult | null)[]; step_errors: (ProtoError | null)[] } } | { type: "close" } } | { type: "error"; error: ProtoError };

/** An error the database answered (a statement failed, or the request was refused), with its code. */
export class HranaError extends Error {
  readonly code: string | undefined;
  readonly status: number | undefined;
  constructor(message: string, code?: string, status?: number) {
    super(message);
    this.name = "HranaError";
    this.code = code;
    this.status = status;
  }
}

// One pool per database URL and credentials, for the life of the isolate: batons are plain
// strings, so handing one to another request's batch shares no I/O object between requests.
const pools = new Map<string, Pool>();

function poolOf(url: string, authToken: string | undefined): Pool {
  const key = `${url}\n${authToken ?? ""}`;
  let pool = pools.get(key);
  if (!pool) {
    const config = expandConfig({ url, authToken }, true);
    if (config.scheme !== "http" && config.scheme !== "https") throw new TypeError(`DATABASE_URL: the Worker speaks HTTP to the database ("libsql:", "https:" or "http:"), got "${config.scheme}:"`);
    const base = encodeBaseUrl(config.scheme, config.authority, config.path).toString();
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (config.authToken) headers.authorization = `Bearer ${config.authToken}`;
    pool = { base, pipeline: pipelineOf(base), headers, idle: [], leases: new Set() };
    pools.set(key, pool);
  }
  return pool;
}

/** A Hrana-over-HTTP driver for `url` (`libsql:`, `https:` or `http:`, as @libsql/client reads it). */
export function hranaDriver(url: string, authToken?: string): Driver {
  const streams = poolOf(url, authToken);
  const { base, pipeline, headers } = streams;

  /** The most recently used idle stream still well inside the server's expiry, or null for a new one. */
  const take = (): Stream | null => {
    const now = Date.now();
    for (let s = streams.idle.pop(); s; s = streams.idle.pop()) {
      if (now - s.idleSince < STREAM_IDLE_MS) return s;
      // older: left to expire on the server
    }
    return null;
  };

  /** Streams held open: the idle ones and those batches are using (leases younger than LEASE_MS). */
  const open = () => {
    const now = Date.now();
    for (const l of streams.leases) if (now - l.since > LEASE_MS) streams.leases.delete(l);
    return streams.idle.length + streams.leases.size;
  };

  const send = async (stream: Stream | null, request: string, keep: boolean): Promise<{ baton: string | null; base_url: string | null; results: ProtoResult[] }> => {
    const res = await fetch(stream?.url ?? pipeline, {
      method: "POST",
      headers,
      body: `{"baton":${JSON.stringify(stream?.baton ?? null)},"requests":[${request}${keep ? "" : ',{"type":"close"}'}]}`,
    });
    if (!res.ok) {
      const text = await res.text();
      let err: ProtoError = { message: text };
      try {
        err = JSON.parse(text) as ProtoError;
      } catch {}
      // "Server returned HTTP status 5xx" is what `unreachable()` takes for a database that is down.
      throw new HranaError(`Server returned HTTP status ${res.status}: ${err.message}`, err.code, res.status);
    }
    return (await res.json()) as { baton: string | null; base_url: string | null; results: ProtoResult[] };
  };

  return {
    async batch(items, mode) {
      const single = items.length === 1 && mode === "read";
      const request = single ? `{"type":"execute","stmt":${stmtOf(items[0]!)}}` : `{"type":"batch","batch":{"steps":[${stepsOf(items, mode)}]}}`; // items[0]!: single means one item
      let stream = take();
      const keep = stream !== null || open() < MAX_OPEN_STREAMS;
      const lease = { since: Date.now() };
      if (keep) streams.leases.add(lease);
      try {
        let answer: Awaited<ReturnType<typeof send>>;
        try {
          answer = await send(stream, request, keep);
        } catch (e) {
          // A stream the server no longer knows (expired early, or restarted): it refused the
          // pipeline before running any of it, so the same request goes once more on a new stream.
          if (!(stream && e instanceof HranaError && e.status === 400 && (e.code === "STREAM_EXPIRED" || /baton/i.test(e.message)))) throw e;
          stream = null;
          answer = await send(null, request, keep);
        }
        const [result] = answer.results;
        const { rows, clean } = single ? executeRows(result) : batchRows(result, items.length);
        // A stream left in an unknown transaction state is not reused; the server expires it.
        if (keep && answer.baton && clean) {
          const url = answer.base_url ? pipelineOf(new URL(answer.base_url, base).toString()) : (stream?.url ?? pipeline);
          streams.idle.push({ baton: answer.baton, url, idleSince: Date.now() });
        }
        if (rows instanceof HranaError) throw rows;
        return rows;
      } finally {
        streams.leases.delete(lease);
      }
    },
    close() {},
    refusedForNow: remoteRefusedForNow,
  };
}

const pipelineOf = (base: string) => new URL("v2/pipeline", base.endsWith("/") ? base : `${base}/`).toString();

/**
 * Statement texts as JSON strings, encoded once: the query layer builds each text once, and
 * escaping a 5 KB text on every request cost more than the rest of the request body. Bounded:
 * texts built per request (an auto-init's rows) pass through without filling it.
 */
const encodedTexts = new Map<string, string>();
const encodedText = (text: string) => {
  let json = encodedTexts.get(text);
  if (json === undefined) {
    if (encodedTexts.size >= 1024) encodedTexts.clear();
    json = JSON.stringify(text);
    encodedTexts.set(text, json);
  }
  return json;
};

/** A statement as the JSON text of a Hrana `Stmt`. */
function stmtOf(item: BatchItem) {
  return `{"sql":${encodedText(item.text)},"args":${JSON.stringify(item.args.map(valueToProto))}}`;
}

/** @libsql/client's transaction batch: BEGIN, each statement if the previous step succeeded, COMMIT, ROLLBACK unless committed (JSON texts of the steps). */
function stepsOf(items: readonly BatchItem[], mode: "read" | "write") {
  const steps = [`{"stmt":{"sql":"${mode === "read" ? "BEGIN TRANSACTION READONLY" : "BEGIN IMMEDIATE"}"}}`];
  for (const item of items) steps.push(`{"condition":{"type":"ok","step":${steps.length - 1}},"stmt":${stmtOf(item)}}`);
  const commit = steps.length;
  steps.push(`{"condition":{"type":"ok","step":${commit - 1}},"stmt":{"sql":"COMMIT"}}`);
  steps.push(`{"condition":{"type":"not","cond":{"type":"ok","step":${commit}}},"stmt":{"sql":"ROLLBACK"}}`);
  return steps.join(",");
}

function errorOf(e: ProtoError): HranaError {
  return new HranaError(e.message, e.code);
}

/** The rows of a single `execute`; an autocommit statement leaves the stream clean even when it fails. */
function executeRows(result: ProtoResult | undefined): { rows: Row[][] | HranaError; clean: boolean } {
  if (!result) return { rows: new HranaError("the database answered no result"), clean: false };
  if (result.type === "error") return { rows: errorOf(result.error), clean: true };
  if (result.response.type !== "execute") return { rows: new HranaError("the database answered another request type"), clean: false };
  return { rows: [result.response.result.rows.map(rowOf)], clean: true };
}

/** The statements' rows of a transaction batch, or its first error; clean once COMMIT or ROLLBACK ran. */
function batchRows(result: ProtoResult | undefined, count: number): { rows: Row[][] | HranaError; clean: boolean } {
  if (!result) return { rows: new HranaError("the database answered no result"), clean: false };
  if (result.type === "error") return { rows: errorOf(result.error), clean: false };
  if (result.response.type !== "batch") return { rows: new HranaError("the database answered another request type"), clean: false };
  const { step_results: results, step_errors: errors } = result.response.result;
  const clean = results[count + 1] != null || results[count + 2] != null;
  // Steps: 0 BEGIN, 1..count the statements, count + 1 COMMIT, count + 2 ROLLBACK.
  for (let i = 0; i <= count + 1; i++) if (errors[i]) return { rows: errorOf(errors[i] as ProtoError), clean };
  const rows: Row[][] = [];
  for (let i = 1; i <= count; i++) {
    const r = results[i];
    if (!r) return { rows: new HranaError("a statement of the batch did not run"), clean };
    rows.push(r.rows.map(rowOf));
  }
  return { rows, clean };
}

const rowOf = (values: ProtoValue[]): Row => values.map(valueFromProto);

function valueFromProto(v: ProtoValue): unknown {
  switch (v.type) {
    case "null":
      return null;
    case "text":
      return v.value;
    case "float":
      return v.value;
    case "integer": {
      const n = Number(v.value);
      if (!Number.isSafeInteger(n)) throw new RangeError("Received integer which is too large to be safely represented as a JavaScript number");
      return n;
    }
    case "blob":
      return Uint8Array.from(atob(v.base64), (c) => c.charCodeAt(0));
  }
}

function valueToProto(v: unknown): ProtoValue {
  if (v === null) return { type: "null" };
  if (typeof v === "string") return { type: "text", value: v };
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    return Number.isSafeInteger(v) ? { type: "integer", value: String(v) } : { type: "float", value: v };
  }
  if (typeof v === "boolean") return { type: "integer", value: v ? "1" : "0" };
  if (typeof v === "bigint") return { type: "integer", value: String(v) };
  if (v instanceof Uint8Array) {
    let binary = "";
    for (const byte of v) binary += String.fromCharCode(byte);
    return { type: "blob", base64: btoa(binary) };
  }
  throw new TypeError(`Unsupported type of value: ${typeof v}`);
}
