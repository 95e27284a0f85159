import Database from "libsql";
import { readFileSync } from "node:fs";
const db = new Database("/tmp/st/seed.db", { readonly: true });
const it = JSON.parse(readFileSync("/tmp/st/items-search.json", "utf8"))[1];
const A = "json_object('type', ru.type, 'config', ru.config)) FROM repo_unit ru WHERE ru.repo_id = \"repository\".\"id\") || ''";
if (!it.text.includes(A)) throw new Error("no A");
const variants = {
  base: it.text,
  cfgjson: it.text.replace(A, "json_object('type', ru.type, 'config', json(ru.config))) FROM repo_unit ru WHERE ru.repo_id = \"repository\".\"id\") || ''"),
  nested: it.text.replace(A, "json_object('type', ru.type, 'config', json(ru.config))) FROM repo_unit ru WHERE ru.repo_id = \"repository\".\"id\")"),
};
for (const [k, text] of Object.entries(variants)) {
  const st = db.prepare(text).raw(true);
  let rows = st.all(...it.args);
  const M = 300; for (let i = 0; i < 30; i++) st.all(...it.args);
  const t0 = performance.now(); for (let i = 0; i < M; i++) rows = st.all(...it.args);
  const hrana = JSON.stringify(rows.map((r) => r.map((v) => ({ type: typeof v === "number" ? "integer" : v === null ? "null" : "text", value: v === null ? undefined : String(v) }))));
  const t1 = performance.now(); for (let i = 0; i < M; i++) { const x = JSON.parse(hrana); for (const r of x) if (r[2].value) JSON.parse(r[2].value); }
  const t2 = performance.now();
  console.log(k.padEnd(8), "run", ((t1 - t0) / M).toFixed(3), "hrana bytes", hrana.length, "isolate-ish parse ms", ((t2 - t1) / M).toFixed(3));
}
