/** Time formats of Gitea's JSON that several converters share. */
import type { Signature } from "../git/objects/commit.ts";
import { ZERO_TIME } from "./user.ts";

/** The seconds RFC 3339 (and Go's time.MarshalJSON) can show: years 0000 to 9999. */
const FIRST = -62167219200;
const LAST = 253402300799;

/**
 * `YYYY-MM-DDThh:mm:ss` of `unix` seconds, or null outside what RFC 3339 can show. A pushed
 * commit may carry any number git reads (git's own `log` shows the year 287168); Gitea's JSON
 * cannot (Go's MarshalJSON fails on a year past 9999), so such a time is shown as Go's zero time,
 * what Gitea shows for a signature time it cannot read.
 */
function isoSeconds(unix: number): string | null {
  if (!Number.isFinite(unix) || unix < FIRST || unix > LAST) return null;
  return new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, "");
}

/** Go's time.Time JSON form of a signature's time (RFC 3339 with the commit's own offset). */
export function goTime(s: Signature): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(s.timezone);
  const offsetMin = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = isoSeconds(s.timestamp + offsetMin * 60);
  if (local === null) return ZERO_TIME;
  return `${local}${offsetMin === 0 ? "Z" : `${m![1]}${m![2]}:${m![3]}`}`;
}

/** `time.RFC3339` of a signature's instant in UTC (Gitea's ToCommitUser), Go's zero time when it cannot be shown. */
export function utcTime(s: Signature): string {
  const t = isoSeconds(s.timestamp);
  return t === null ? ZERO_TIME : `${t}Z`;
}
