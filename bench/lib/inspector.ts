/**
 * workerd's V8 inspector, for diagnosing a stalled benchmark run: a short CPU profile of each
 * isolate (the Worker, Miniflare's entry Worker that forwards every request to it, Miniflare's local
 * R2) says whether a stall is JavaScript spinning, and where. Read with care: all isolates share
 * workerd's main thread, and samples taken while the thread runs another isolate count toward an
 * isolate's last stack, so a function can show self time while it only waits (a normal push shows
 * seconds "in" Miniflare's `readPrefix` and the entry Worker's `fetch`); `(idle)` is what a
 * waiting isolate shows when nothing else runs.
 */

type Cdp = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown> | null>;

/** The isolates worth looking at in a stall: the Worker, Miniflare's entry Worker, and its R2. */
const WATCHED = /core:user:|core:entry|r2:bucket/;

/** A DevTools session on one inspector target; calls answer null after `timeoutMs` (a busy isolate may not answer). */
async function session(url: string, timeoutMs: number): Promise<{ cdp: Cdp; close: () => void }> {
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => {
    ws.addEventListener("open", ok);
    ws.addEventListener("error", () => fail(new Error(`inspector: cannot connect to ${url}`)));
  });
  let nextId = 1;
  const pending = new Map<number, (v: Record<string, unknown> | null) => void>();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown> };
    if (m.id !== undefined) pending.get(m.id)?.(m.result ?? null);
  });
  const cdp: Cdp = (method, params = {}) =>
    new Promise((ok) => {
      const id = nextId++;
      const timer = setTimeout(() => ok(null), timeoutMs);
      pending.set(id, (v) => {
        clearTimeout(timer);
        pending.delete(id);
        ok(v);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { cdp, close: () => ws.close() };
}

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Profiles every isolate of the workerd whose inspector listens on `port` for `ms`; one line per isolate. */
export async function profileIsolates(port: number, ms: number): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { title: string; webSocketDebuggerUrl: string }[];
  const picked = targets.filter((t) => WATCHED.test(t.title));
  const sessions = await Promise.all(picked.map(async (t) => ({ title: t.title, ...(await session(t.webSocketDebuggerUrl, 20_000)) })));
  try {
    for (const x of sessions) {
      await x.cdp("Profiler.enable");
      await x.cdp("Profiler.start");
    }
    await new Promise((ok) => setTimeout(ok, ms));
    const lines: string[] = [];
    for (const x of sessions) {
      const profile = (await x.cdp("Profiler.stop"))?.profile as Profile | undefined;
      if (!profile) {
        lines.push(`${x.title}: no profile (the isolate did not answer)`);
        continue;
      }
      const self = new Map<number, number>();
      for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
      const byFunction = new Map<string, number>();
      for (const n of profile.nodes) {
        const f = n.callFrame;
        const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop() ?? ""}:${f.lineNumber + 1}`;
        byFunction.set(key, (byFunction.get(key) ?? 0) + (self.get(n.id) ?? 0));
      }
      const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 10);
      lines.push(`${x.title}: ${top.map(([k, us]) => `${k} ${(us / 1000).toFixed(0)} ms`).join(" | ")}`);
    }
    return lines.join("\n");
  } finally {
    for (const x of sessions) x.close();
  }
}
