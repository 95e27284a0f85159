/** What Linux's /proc says about a process, for the benchmarks' stall diagnostics. */
import { readdirSync, readFileSync } from "node:fs";

/** CPU ticks (1/100 s, user + system) of each thread of process `pid`, by `tid name`. */
export function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${tid} ${readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim()}`, Number(f[11]) + Number(f[12]));
    } catch {
      // the thread ended while being read
    }
  }
  return out;
}
