/** Time formats of Gitea's JSON that several converters share. */
import type { Signature } from "../git/objects/commit.ts";

/** Go's time.Time JSON form of a signature's time (RFC 3339 with the commit's own offset). */
export function goTime(s: Signature): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(s.timezone);
  const offsetMin = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = new Date((s.timestamp + offsetMin * 60) * 1000).toISOString().replace(/\.\d{3}Z$/, "");
  return `${local}${offsetMin === 0 ? "Z" : `${m![1]}${m![2]}:${m![3]}`}`;
}
