/**
 * The query layer's core: a statement is SQL built ONCE (defined at module load and compiled to
 * text on its first use, or once per shape for queries whose shape varies) with named
 * placeholders, plus a mapper from result rows to typed objects. Requests only bind values. On
 * Node the driver prepares each statement text once per connection; on the Worker the same text
 * goes to sqld/Turso every time, so they can cache it.
 *
 * Statements that depend on who asks start with the viewer CTE (`WITH v AS (…)`): the token, the
 * basic-auth name and the sudo name are bound once per statement and every fragment reads the
 * viewer from `v` — the token is looked up once per statement, not once per subquery.
 */
import { Placeholder, sql, type SQL } from "drizzle-orm";
import { getTableColumns, getTableName, type InferSelectModel } from "drizzle-orm";
import { SQLiteSyncDialect, type SQLiteTable } from "drizzle-orm/sqlite-core";

const dialect = new SQLiteSyncDialect();

/** A value bound at request time: `p("name")`. */
export const p = (name: string) => sql.placeholder(name);

/** A compiled statement: its text, where each parameter comes from, and whether it returns rows. */
export interface Compiled {
  readonly name: string;
  readonly text: string;
  /** Per `?` in `text`: a placeholder name to bind, or a constant fixed at build time. */
  readonly params: readonly ({ name: string } | { value: unknown })[];
}

/** A row as the drivers return it: values by column position. */
export type Row = readonly unknown[];

/** A statement with its values bound and its row mapper, ready for a batch. */
export interface Bound<T> {
  readonly stmt: Compiled;
  readonly args: readonly unknown[];
  readonly map: (row: Row) => T;
}

/** Bound statements as the driver's batch items (text and arguments). */
export const batchItems = (items: readonly Bound<unknown>[]) => items.map((b) => ({ text: b.stmt.text, args: b.args }));

/** The typed rows of a bound statement from the rows its batch returned. */
export const rowsOf = <T>(b: Bound<T>, rows: Row[]): T[] => rows.map((row) => b.map(row));

/**
 * The row a statement returns by construction — a write batch's read-back of the row it just
 * inserted in the same transaction, a row of the same read snapshot the route already found.
 * Its absence is a broken invariant, not an answer: a plain Error naming the statement (a 500).
 * Rows a client can make absent (a name it gave, a row another request deleted) are checked
 * where they are read and answered with Gitea's status instead.
 */
export function only<T>(rows: readonly T[], what: string): T {
  const row = rows[0];
  if (row === undefined) throw new Error(`${what}: the statement returned no row`);
  return row;
}

/** A statement definition: `bind(values)` makes a Bound<T>. */
export interface Statement<T, V extends Record<string, unknown>> {
  readonly compiled: Compiled;
  bind(values: V): Bound<T>;
}

/** The values every viewer-dependent statement binds (see `VIEWER_CTE`). */
export interface ViewerValues {
  v_token: string | null;
  v_name: string | null;
  v_sudo: string | null;
  /** 1 on routes whose own category reaches the path's repository (`reachesPathRepo`): the issue scope counts as the repository's. */
  v_issue: number;
}

/**
 * Every statement text `query`/`command` built (once per statement or shape): a driver that sees a
 * text outside this set ran SQL built for one request (the rules test `statements.test.ts` checks
 * the converted routes against it).
 */
export const BUILT_ONCE: ReadonlySet<string> = new Set<string>();

/**
 * How many statements `query`/`command` defined: `total`, `loose` outside a `shaped` build (counted
 * when defined), `rebuilt` those of a `shaped` build whose text was already built (counted when
 * first used: a shape keyed per request). A request defines none loose and rebuilds none — else it
 * built SQL for itself, whatever text it sent (statements.test.ts watches these around every
 * request). Two statements defined once each at module load may share a text.
 */
export const COMPILED = { total: 0, loose: 0, rebuilt: 0 };
let shaping = 0;

/**
 * Compiles drizzle SQL into text with positional parameters; placeholders stay named. Outside the
 * query layer's statements (`query`/`command`): nothing is counted, no text enters BUILT_ONCE.
 */
export function compile(name: string, q: SQL): Compiled {
  return textOf(name, q, null);
}

/** Counts a statement defined for the query layer (see COMPILED); true inside a `shaped` build. */
function define(): boolean {
  COMPILED.total++;
  if (shaping === 0) COMPILED.loose++;
  return shaping > 0;
}

/** The statement's text; `inShape` (null: not a query-layer statement) decides what is counted. */
function textOf(name: string, q: SQL, inShape: boolean | null): Compiled {
  const { sql: text, params } = dialect.sqlToQuery(q);
  if (inShape !== null) {
    if (inShape && BUILT_ONCE.has(text)) COMPILED.rebuilt++;
    (BUILT_ONCE as Set<string>).add(text);
  }
  return {
    name,
    text,
    params: params.map((v) => (v instanceof Placeholder ? { name: v.name } : { value: v })),
  };
}

function bindArgs(c: Compiled, values: Record<string, unknown>): unknown[] {
  return c.params.map((prm) => {
    if ("value" in prm) return prm.value;
    const v = values[prm.name];
    if (v === undefined) throw new Error(`statement ${c.name}: no value for :${prm.name}`);
    return typeof v === "boolean" ? (v ? 1 : 0) : v;
  });
}

/**
 * A statement whose text is compiled on its first use, not when its module loads: a process (or a
 * Worker isolate) starting up compiles only what its first requests run — drizzle's compilation
 * of every statement was ~15 ms of a cold start (issue 9 B.4). Each text is still built once.
 */
function lazyStatement<T, V extends Record<string, unknown>>(name: string, q: SQL, map: (row: Row) => T): Statement<T, V> {
  const inShape = define();
  let compiled: Compiled | null = null;
  const get = () => (compiled ??= textOf(name, q, inShape));
  const statement: Statement<T, V> = {
    get compiled() {
      return get();
    },
    bind: (values) => {
      const stmt = get();
      return { stmt, args: bindArgs(stmt, values), map };
    },
  };
  if (!inShape && DEFINED.length < DEFINED_MAX) DEFINED.push(statement);
  return statement;
}

/**
 * The statements defined outside a shape — at module load, where a request never defines one —
 * so a test can compile and prepare every one, as start-up did before statements compiled lazily
 * (statements.test.ts). Bounded, in case a request ever did define one.
 */
const DEFINED: Statement<unknown, never>[] = [];
const DEFINED_MAX = 4096;
export const DEFINED_STATEMENTS: readonly Statement<unknown, never>[] = DEFINED;

/** A statement that returns rows, mapped by `map`. */
export function query<T, V extends Record<string, unknown> = Record<never, never>>(name: string, q: SQL, map: (row: Row) => T): Statement<T, V> {
  return lazyStatement<T, V>(name, q, map);
}

/** A statement that changes rows (its result is its change count). */
export function command<V extends Record<string, unknown> = Record<never, never>>(name: string, q: SQL): Statement<number, V> {
  return lazyStatement<number, V>(name, q, () => 0);
}

/** A command built for one request (SQL whose text varies per request, e.g. the git rows of an initial commit). */
export function commandOnce(name: string, q: SQL): Bound<number> {
  const compiled = compile(name, q);
  return { stmt: compiled, args: bindArgs(compiled, {}), map: () => 0 };
}

/**
 * Statements whose shape varies (optional filters, a variable SET list), compiled once per shape:
 * `build(shapeKey)` runs only the first time a key is seen.
 */
export function shaped<K, S>(build: (key: K) => S, keyOf: (key: K) => string = (k) => JSON.stringify(k)) {
  const cache = new Map<string, S>();
  return (key: K): S => {
    const k = keyOf(key);
    let s = cache.get(k);
    if (!s) {
      shaping++;
      try {
        s = build(key);
      } finally {
        shaping--;
      }
      cache.set(k, s);
    }
    return s;
  };
}

// ---- statement text from the drizzle schema ----

/** A table's insert columns (its TypeScript keys). */
export type InsertKey<TT extends SQLiteTable> = keyof InferSelectModel<TT> & string;

const quoted = (table: SQLiteTable, key: string) => {
  const c = getTableColumns(table)[key];
  if (!c) throw new Error(`${getTableName(table)} has no column ${key}`);
  return `"${c.name}"`;
};

/**
 * `INSERT INTO t ("c1", …) VALUES (:k1, …)`: each key's value is the placeholder of the same name,
 * or the SQL `exprs` gives for it (an id read in the same batch, a constant). Columns not named
 * take their defaults.
 */
export function insertSql<TT extends SQLiteTable>(table: TT, keys: readonly InsertKey<TT>[], exprs: Partial<Record<InsertKey<TT>, SQL>> = {}): SQL {
  const all = [...keys, ...(Object.keys(exprs) as InsertKey<TT>[]).filter((k) => !keys.includes(k))];
  const cols = sql.raw(all.map((k) => quoted(table, k)).join(", "));
  const values = sql.join(all.map((k) => exprs[k] ?? p(k)), sql`, `);
  return sql`INSERT INTO ${sql.raw(`"${getTableName(table)}"`)} (${cols}) VALUES (${values})`;
}

/** `"c1" = :k1, "c2" = :k2` — the SET list of an UPDATE of these keys (built once per set of keys). */
export function setList<TT extends SQLiteTable>(table: TT, keys: readonly InsertKey<TT>[]): SQL {
  return sql.join(
    keys.map((k) => sql`${sql.raw(quoted(table, k))} = ${p(k)}`),
    sql`, `,
  );
}

/**
 * The present keys of a patch, sorted: the shape key of an UPDATE whose SET list depends on
 * which fields a request gave.
 */
export const patchKeys = <T extends object>(patch: T) => (Object.keys(patch) as (keyof T & string)[]).filter((k) => patch[k] !== undefined).sort();

/**
 * A statement that aborts its write batch (and so the whole transaction) when `cond` holds at
 * write time — closing races a read-then-write check leaves open (removing the last admin or the
 * last owner concurrently). SQLite raises "integer overflow" for abs(-9223372036854775808), and
 * CASE evaluates it only when the condition is true (services/common.ts `isGuardTrip`).
 */
export function guardCommand<V extends Record<string, unknown>>(name: string, cond: SQL): Statement<number, V> {
  return command<V>(name, guardSql(cond));
}

/** The guard's SQL (see `guardCommand`). */
export const guardSql = (cond: SQL) => sql`SELECT CASE WHEN ${cond} THEN abs(-9223372036854775807 - 1) ELSE 0 END`;

/**
 * A statement that aborts its write batch unless `exists` holds at write time: the rows a write
 * hangs on (the repository a collaborator is added to, the user a token is made for) may have been
 * deleted by another request since the route read them. The batch then writes nothing — no row
 * left pointing at nothing — and `write()` (lib/context.ts) answers 404, as the request would have
 * been answered a moment later. The error is SQLite's SQLITE_TOOBIG for a zeroblob longer than any
 * length limit can be (2^63 - 1 bytes; the limit's hard maximum is 2^31 - 1, so nothing is
 * allocated), evaluated only when the row is gone: no other statement raises it, so it is told
 * apart from `guardCommand`'s (db/driver.ts `rowGone`).
 */
export function whileExists<V extends Record<string, unknown>>(name: string, exists: SQL): Statement<number, V> {
  return command<V>(name, sql`SELECT CASE WHEN ${exists} THEN 0 ELSE zeroblob(9223372036854775807) END`);
}

/** SQL: row `id` of `table` exists (a `whileExists` condition). */
export const rowExists = (table: "user" | "repository" | "team", id: SQL | Placeholder) => sql`EXISTS (SELECT 1 FROM ${sql.raw(table)} WHERE id = ${id})`;

// ---- typed row mapping from the drizzle schema ----

/** Reads `table`'s columns from a row at `offset` (in the order `columnsOf` listed them). */
export interface TableShape<T> {
  /** `a.col1, a.col2, …` for a select list. */
  readonly select: SQL;
  readonly width: number;
  read(row: Row, offset: number): T;
}

/**
 * The select list and row reader of a table under an alias; `omit` leaves out columns no response
 * needs (e.g. the password hash outside authentication) — they read as their default.
 */
export function columnsOf<TT extends SQLiteTable>(table: TT, alias: string, omit: readonly (keyof InferSelectModel<TT>)[] = []): TableShape<InferSelectModel<TT>> {
  const entries = Object.entries(getTableColumns(table)).filter(([key]) => !omit.includes(key as keyof InferSelectModel<TT>));
  const omitted = Object.entries(getTableColumns(table)).filter(([key]) => omit.includes(key as keyof InferSelectModel<TT>));
  const select = sql.raw(entries.map(([, c]) => `${alias}."${c.name}"`).join(", "));
  // Read per request for every row: plain arrays and one loop, no allocation besides the object.
  const keys = entries.map(([key]) => key);
  const booleans = entries.map(([, c]) => c.columnType === "SQLiteBoolean");
  const defaults = omitted.map(([key, c]) => [key, c.columnType === "SQLiteBoolean" ? false : c.dataType === "number" ? 0 : ""] as const);
  return {
    select,
    width: entries.length,
    read(row, offset) {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const v = row[offset + i];
        out[keys[i]!] = v === null || v === undefined ? v : booleans[i] ? v === 1 || v === 1n || v === true : typeof v === "bigint" ? Number(v) : v; // !: i < keys.length
      }
      for (const [k, v] of defaults) out[k] = v;
      return out as InferSelectModel<TT>;
    },
  };
}

/** Row value helpers for computed columns. */
export const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
export const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
export const bool = (v: unknown) => v === 1 || v === 1n || v === true;
export const str = (v: unknown) => (v === null || v === undefined ? "" : String(v));

// ---- the viewer ----

/**
 * Who signed in, before sudo: the token's owner, or the basic-auth user by name (an individual;
 * the password is checked afterwards in application code). The viewer CTE's `va` asks the same
 * (through `vt`); the caller statement uses this one alone, since it reads nothing else of the
 * viewer and sqld parses and prepares every statement text on every request (the whole CTE cost
 * ~0.15 ms of its CPU per signed request). Change both together.
 */
export const SIGNED_IN = sql`COALESCE((SELECT uid FROM access_token WHERE token_hash = ${p("v_token")}), (SELECT id FROM user WHERE lower_name = ${p("v_name")} AND type = 0))`;

/**
 * The viewer CTE, bound from the credentials: the authenticated principal (token, or the name of a
 * basic-auth password sign-in — checked afterwards in application code), sudo applied for site
 * admins, and the token's limits. `lim_*`: the token may read only public data of that category
 * (public-only, or no read scope for it), issue 8 A.3.
 */
const VIEWER_CTE = sql`WITH
  vt AS (SELECT uid, ',' || scope || ',' AS scope FROM access_token WHERE token_hash = ${p("v_token")}),
  va AS (SELECT COALESCE((SELECT uid FROM vt), (SELECT id FROM user WHERE lower_name = ${p("v_name")} AND type = 0)) AS id),
  vs AS (SELECT CASE WHEN ${p("v_sudo")} IS NOT NULL AND EXISTS (SELECT 1 FROM user WHERE id = (SELECT id FROM va) AND is_admin = 1)
           THEN (SELECT id FROM user WHERE lower_name = ${p("v_sudo")}) ELSE (SELECT id FROM va) END AS id),
  vp AS (SELECT COALESCE((SELECT scope LIKE '%,public-only,%' FROM vt), 0) AS po,
                COALESCE((SELECT scope NOT LIKE '%,all,%' AND scope NOT LIKE '%:repository,%' AND NOT (${p("v_issue")} AND scope LIKE '%:issue,%') FROM vt), 0) AS nr,
                COALESCE((SELECT scope NOT LIKE '%,all,%' AND scope NOT LIKE '%:organization,%' FROM vt), 0) AS no,
                COALESCE((SELECT scope NOT LIKE '%,all,%' AND scope NOT LIKE '%:user,%' FROM vt), 0) AS nu),
  v AS MATERIALIZED (SELECT vs.id AS id,
               COALESCE(u.is_admin = 1 AND vp.po = 0, 0) AS admin,
               COALESCE(u.is_admin, 0) AS site_admin,
               COALESCE(u.is_restricted, 0) AS restricted,
               vp.po AS public_only,
               (vp.po OR vp.nr) AS lim_repo, (vp.po OR vp.no) AS lim_org, (vp.po OR vp.nu) AS lim_user
        FROM vs CROSS JOIN vp LEFT JOIN user u ON u.id = vs.id)
`;

/** SQL fragments reading the viewer from the `v` CTE. */
export const V = {
  id: sql`(SELECT id FROM v)`,
  isAdmin: sql`(SELECT admin FROM v)`,
  /** A site admin, whatever the token's limits (for the caller's own relations). */
  siteAdmin: sql`(SELECT site_admin FROM v)`,
  restricted: sql`(SELECT restricted FROM v)`,
  publicOnly: sql`(SELECT public_only FROM v)`,
  limited: { repository: sql`(SELECT lim_repo FROM v)`, organization: sql`(SELECT lim_org FROM v)`, user: sql`(SELECT lim_user FROM v)` },
} as const;

/**
 * The viewer as columns of the `v` row, for statements that join it once (`… ${VIEWER_JOIN}`
 * after their tables; `v` is exactly one row). Preferred over `V` where a statement reads the
 * viewer more than a few times: SQLite compiles the whole viewer CTE again for every
 * `(SELECT … FROM v)`, ~70 µs each, and sqld/Turso prepare a statement on every request — the
 * repository search read it 25 times (prepare 2.4 ms → 0.5 ms).
 */
export const VIEWER_COLUMNS = {
  id: sql`v.id`,
  isAdmin: sql`v.admin`,
  siteAdmin: sql`v.site_admin`,
  restricted: sql`v.restricted`,
  publicOnly: sql`v.public_only`,
  limited: { repository: sql`v.lim_repo`, organization: sql`v.lim_org`, user: sql`v.lim_user` },
  idOnce: V.id,
} as const;
/**
 * Joins the viewer row last: the statement's own tables keep the query plan they had (at the head
 * of the FROM, the planner took another index for a search's ORDER BY and ran 2× slower), and `v`
 * is materialized once, so the inner loop over it reads one stored row.
 */
export const VIEWER_JOIN = sql`CROSS JOIN v`;

/** A viewer-dependent statement: the viewer CTE, then `body` (a SELECT; no WITH of its own). */
export function viewerQuery<T, V2 extends Record<string, unknown> = Record<never, never>>(name: string, body: SQL, map: (row: Row) => T): Statement<T, V2 & ViewerValues> {
  return query<T, V2 & ViewerValues>(name, sql`${VIEWER_CTE}${body}`, map);
}

/** `viewerQuery` with common table expressions of its own after the viewer's: `ctes` is `name AS (…)[, …]`. */
export function viewerQueryWith<T, V2 extends Record<string, unknown> = Record<never, never>>(name: string, ctes: SQL, body: SQL, map: (row: Row) => T): Statement<T, V2 & ViewerValues> {
  return query<T, V2 & ViewerValues>(name, sql`${VIEWER_CTE}, ${ctes} ${body}`, map);
}

/** A viewer-dependent command (INSERT … SELECT / UPDATE … WHERE reading `v`). */
export function viewerCommand<V2 extends Record<string, unknown> = Record<never, never>>(name: string, body: SQL): Statement<number, V2 & ViewerValues> {
  return command<V2 & ViewerValues>(name, sql`${VIEWER_CTE}${body}`);
}
