/**
 * The native driver (Node only — the Worker never imports it): the embedded file through `libsql`
 * directly, each statement text prepared once per connection and reused. Calls are synchronous,
 * so a batch never interleaves with another request's; it runs in one transaction.
 */
import Database from "libsql";
import type { BatchItem, Driver } from "./driver.ts";
import type { Row } from "./sql.ts";

const MAX_PREPARED = 2000;

/** The embedded file through `libsql`: statements prepared once per connection. */
export function nativeDriver(db: Database.Database): Driver {
  // `reader` is read once: asking the binding costs a native call per statement. The cache is
  // bounded (oldest first out): the statement texts come from the code's shapes, never from input,
  // but a bound keeps a mistake there from growing memory without end.
  const prepared = new Map<string, { st: Database.Statement; reader: boolean }>();
  const prepare = (text: string) => {
    let p = prepared.get(text);
    if (!p) {
      if (prepared.size >= MAX_PREPARED) prepared.delete(prepared.keys().next().value as string);
      const st = db.prepare(text);
      const reader = st.reader;
      if (reader) st.raw(true);
      p = { st, reader };
      prepared.set(text, p);
    }
    return p;
  };
  const begin = { read: db.prepare("BEGIN DEFERRED"), write: db.prepare("BEGIN IMMEDIATE") };
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const run = (item: BatchItem): Row[] => {
    const { st, reader } = prepare(item.text);
    if (reader) return st.all(...(item.args as unknown[])) as unknown as Row[];
    st.run(...(item.args as unknown[]));
    return [];
  };
  let closed = false;
  return {
    batch(items, mode) {
      if (closed) return Promise.reject(new Error("the database connection is closed"));
      try {
        if (items.length === 1 && mode === "read") return Promise.resolve([run(items[0])]);
        begin[mode].run();
        try {
          const out = items.map(run);
          commit.run();
          return Promise.resolve(out);
        } catch (err) {
          if (db.inTransaction) rollback.run();
          throw err;
        }
      } catch (err) {
        return Promise.reject(err);
      }
    },
    close: () => {
      if (closed) return;
      closed = true;
      prepared.clear();
      db.close();
    },
  };
}

