/**
 * git's user formats (pretty.c format_commit_message) for one commit, as `git archive` expands
 * `$Format:…$` in export-subst files: %H %h %T %t %P %p, the person placeholders %a?/%c? (names,
 * e-mails, local parts, mailmap'd %aN/%aE/%aL, dates in the commit's own zone: %ad DATE_NORMAL, %aD,
 * %ai, %aI, %as, %at, %ar, %ah), %s %f %b %B %e, %d %D, %(describe[:options]) (git archive allows
 * one per archive), %n %% %x<hh>, %m, the reflog and signature placeholders as git gives them
 * outside a log walk and for an unsigned commit, colors (never shown), %w() wrapping, padding and truncation
 * (%<(N), %>(N), %><(N), %>>(N), `|`, trunc/ltrunc/mtrunc) and the `+`/`-`/` ` magic. Text is handled
 * as bytes (latin1 strings); what git leaves unexpanded (an unknown placeholder, %N, %S) stays as
 * written. %w() rewraps what follows it. Not done: %(trailers) (left as written), the re-encoding
 * of a commit with a non-UTF-8 `encoding` header.
 */

import { GitError } from "./errors.ts";

/** A decoration of the commit (log-tree.c name_decoration), in git's display order. */
export interface Decoration {
  type: "head" | "branch" | "remote" | "tag" | "stash" | "grafted" | "none";
  /** The full ref name (`HEAD`, `refs/heads/main`) or `replaced`. */
  name: string;
}

/** What a format may need beyond the commit's bytes; read only when a placeholder asks. */
export interface PrettySource {
  oid: string;
  /** The commit object's bytes. */
  raw: Uint8Array;
  /** find_unique_abbrev: `len` hex digits or more (-1: git's default), unique in the repository. */
  abbrev(oid: string, len?: number): Promise<string>;
  /** The refs naming the commit, as `git log --decorate` lists them; and HEAD's symbolic target. */
  decorations(): Promise<{ list: Decoration[]; head: string | null }>;
  /** The output of `git describe <args> <commit>`, trimmed; "" when it fails. */
  describe(args: readonly string[]): Promise<string>;
  /** The mailmap (HEAD:.mailmap in a bare repository), or null. */
  mailmap(): Promise<Mailmap | null>;
  /** Seconds since the epoch, for relative dates. */
  now?: () => number;
}

/** State shared by every expansion of one archive (git's pretty_print_context). */
export interface PrettyState {
  /** %(describe) expansions left (git archive allows 1). */
  describeLeft: number;
}

// ---------------------------------------------------------------- bytes as latin1 strings

/** Bytes → a string of one char per byte. */
export const bin = (b: Uint8Array): string => {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode(...b.subarray(i, i + 8192));
  return s;
};
/** A string of one char per byte → bytes. */
export const unbin = (s: string): Uint8Array => {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
};
/** A JavaScript string as its UTF-8 bytes, one char per byte. */
const u8 = (s: string) => bin(new TextEncoder().encode(s));

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r";
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

// ---------------------------------------------------------------- dates (date.c)

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS = ["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"];

interface Tm {
  year: number;
  mon: number;
  mday: number;
  hour: number;
  min: number;
  sec: number;
  wday: number;
}

/** time_to_tm: the broken-down time in the zone `tz` (git's decimal `hhmm` integer). */
function tmOf(time: number, tz: number): Tm {
  let minutes = Math.abs(tz);
  minutes = Math.trunc(minutes / 100) * 60 + (minutes % 100);
  const d = new Date((time + (tz < 0 ? -minutes : minutes) * 60) * 1000);
  if (Number.isNaN(d.getTime())) return tmOf(0, 0);
  return { year: d.getUTCFullYear(), mon: d.getUTCMonth(), mday: d.getUTCDate(), hour: d.getUTCHours(), min: d.getUTCMinutes(), sec: d.getUTCSeconds(), wday: d.getUTCDay() };
}

const pad = (n: number, w: number) => String(n).padStart(w, "0");
/** printf `%+05d`. */
const signed5 = (n: number) => (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(4, "0");

/** show_date_relative. */
function relative(time: number, now: number): string {
  if (now < time) return "in the future";
  let diff = now - time;
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (diff < 90) return `${plural(diff, "second")} ago`;
  diff = Math.floor((diff + 30) / 60);
  if (diff < 90) return `${plural(diff, "minute")} ago`;
  diff = Math.floor((diff + 30) / 60);
  if (diff < 36) return `${plural(diff, "hour")} ago`;
  diff = Math.floor((diff + 12) / 24);
  if (diff < 14) return `${plural(diff, "day")} ago`;
  if (diff < 70) return `${plural(Math.floor((diff + 3) / 7), "week")} ago`;
  if (diff < 365) return `${plural(Math.floor((diff + 15) / 30), "month")} ago`;
  if (diff < 1825) {
    const total = Math.floor((diff * 12 * 2 + 365) / (365 * 2));
    const years = Math.floor(total / 12);
    const months = total % 12;
    return months ? `${plural(years, "year")}, ${plural(months, "month")} ago` : `${plural(years, "year")} ago`;
  }
  return `${plural(Math.floor((diff + 183) / 365), "year")} ago`;
}

type DateMode = "normal" | "rfc2822" | "iso" | "iso-strict" | "short" | "relative" | "human";

/** show_date in the commit's own zone (never `local`). */
function showDate(time: number, tz: number, mode: DateMode, now: number): string {
  if (mode === "relative") return relative(time, now);
  const tm = tmOf(time, tz);
  const wday = WEEKDAYS[tm.wday]!.slice(0, 3);
  const mon = MONTHS[tm.mon]!.slice(0, 3);
  const hms = `${pad(tm.hour, 2)}:${pad(tm.min, 2)}:${pad(tm.sec, 2)}`;
  switch (mode) {
    case "short":
      return `${pad(tm.year, 4)}-${pad(tm.mon + 1, 2)}-${pad(tm.mday, 2)}`;
    case "iso":
      return `${pad(tm.year, 4)}-${pad(tm.mon + 1, 2)}-${pad(tm.mday, 2)} ${hms} ${signed5(tz)}`;
    case "iso-strict": {
      const a = Math.abs(tz);
      return `${pad(tm.year, 4)}-${pad(tm.mon + 1, 2)}-${pad(tm.mday, 2)}T${hms}${tz >= 0 ? "+" : "-"}${pad(Math.trunc(a / 100), 2)}:${pad(a % 100, 2)}`;
    }
    case "rfc2822":
      return `${wday}, ${tm.mday} ${mon} ${tm.year} ${hms} ${signed5(tz)}`;
    default:
      return showNormal(time, tm, tz, mode === "human" ? now : null);
  }
}

/** show_date_normal; `now` set for DATE_HUMAN (the server's own zone is "today"). */
function showNormal(time: number, tm: Tm, tz: number, now: number | null): string {
  let humanTz = -1;
  let human: Tm | null = null;
  if (now !== null) {
    const d = new Date(now * 1000);
    const off = -d.getTimezoneOffset();
    humanTz = Math.sign(off) * (Math.trunc(Math.abs(off) / 60) * 100 + (Math.abs(off) % 60));
    human = { year: d.getFullYear(), mon: d.getMonth(), mday: d.getDate(), hour: d.getHours(), min: d.getMinutes(), sec: d.getSeconds(), wday: d.getDay() };
  }
  const hide = { year: false, date: false, wday: false, time: false, seconds: false, tz: tz === humanTz };
  // a zeroed struct tm (year 1900) when not human: nothing is hidden but a -0001 zone
  hide.year = human ? tm.year === human.year : tm.year === 1900;
  if (hide.year && human && tm.mon === human.mon) {
    if (tm.mday > human.mday) {
      // a future date: think time zones
    } else if (tm.mday === human.mday) hide.date = hide.wday = true;
    else if (tm.mday + 5 > human.mday) hide.date = true;
  }
  if (hide.wday && now !== null) return relative(time, now);
  if (human && human.year !== 1900) {
    hide.seconds = true;
    hide.tz ||= !hide.date;
    hide.wday = hide.time = !hide.year;
  }
  let out = "";
  if (!hide.wday) out += `${WEEKDAYS[tm.wday]!.slice(0, 3)} `;
  if (!hide.date) out += `${MONTHS[tm.mon]!.slice(0, 3)} ${tm.mday} `;
  if (!hide.time) {
    out += `${pad(tm.hour, 2)}:${pad(tm.min, 2)}`;
    if (!hide.seconds) out += `:${pad(tm.sec, 2)}`;
  } else out = out.replace(/[ \t\n\r]+$/, "");
  if (!hide.year) out += ` ${tm.year}`;
  if (!hide.tz) out += ` ${signed5(tz)}`;
  return out;
}

// ---------------------------------------------------------------- idents (ident.c split_ident_line)

interface Ident {
  name: string;
  mail: string;
  date: string | null;
  tz: string | null;
}

function splitIdent(line: string): Ident | null {
  const lt = line.indexOf("<");
  if (lt < 0) return null;
  let nameEnd = 0;
  for (let i = lt - 1; i >= 0; i--) {
    if (!isSpace(line[i])) {
      nameEnd = i + 1;
      break;
    }
  }
  const gt = line.indexOf(">", lt + 1);
  if (gt < 0) return null;
  const ident: Ident = { name: line.slice(0, nameEnd), mail: line.slice(lt + 1, gt), date: null, tz: null };
  let cp = line.lastIndexOf(">") + 1;
  while (cp < line.length && isSpace(line[cp])) cp++;
  let end = cp;
  while (isDigit(line[end])) end++;
  if (end === cp) return ident;
  const date = line.slice(cp, end);
  cp = end;
  while (cp < line.length && isSpace(line[cp])) cp++;
  if (line[cp] !== "+" && line[cp] !== "-") return ident;
  end = cp + 1;
  while (isDigit(line[end])) end++;
  if (end === cp + 1) return ident;
  return { ...ident, date, tz: line.slice(cp, end) };
}

// ---------------------------------------------------------------- mailmap (mailmap.c)

interface MailmapInfo {
  name: string | null;
  email: string | null;
}
interface MailmapEntry extends MailmapInfo {
  names: Map<string, MailmapInfo>;
}
/** Old e-mail (ASCII lower case) → its mapping. */
export type Mailmap = Map<string, MailmapEntry>;

const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** parse_name_and_email: [name, email, rest] or null. */
function nameAndEmail(buf: string, allowEmpty: boolean): { name: string | null; email: string; rest: string | null } | null {
  const left = buf.indexOf("<");
  if (left < 0) return null;
  const right = buf.indexOf(">", left + 1);
  if (right < 0) return null;
  if (!allowEmpty && left + 1 === right) return null;
  let s = 0;
  while (s < left && isSpace(buf[s])) s++;
  let e = left - 1;
  while (e > s && isSpace(buf[e])) e--;
  const rest = buf.slice(right + 1);
  return { name: s <= e ? buf.slice(s, e + 1) : null, email: buf.slice(left + 1, right), rest: rest === "" ? null : rest };
}

/** A mailmap from a `.mailmap` blob (read_mailmap_string). */
export function parseMailmap(data: Uint8Array): Mailmap {
  const map: Mailmap = new Map();
  const text = bin(data.indexOf(0) >= 0 ? data.subarray(0, data.indexOf(0)) : data);
  for (const line of text.split("\n")) {
    if (line[0] === "#") continue;
    const one = nameAndEmail(line, false);
    if (!one) continue;
    const two = one.rest !== null ? nameAndEmail(one.rest, true) : null;
    const newName = one.name;
    let newEmail: string | null = one.email;
    const oldName = two?.name ?? null;
    let oldEmail = two?.email ?? null;
    if (oldEmail === null) {
      oldEmail = newEmail;
      newEmail = null;
    }
    const key = lowerAscii(oldEmail);
    const me = map.get(key) ?? { name: null, email: null, names: new Map() };
    map.set(key, me);
    if (oldName === null) {
      if (newName !== null) me.name = newName;
      if (newEmail !== null) me.email = newEmail;
    } else me.names.set(lowerAscii(oldName), { name: newName, email: newEmail });
  }
  return map;
}

/** map_user. */
function mapUser(map: Mailmap, name: string, email: string): { name: string; email: string } {
  const me = map.get(lowerAscii(email));
  if (!me) return { name, email };
  const info: MailmapInfo = (me.names.size && me.names.get(lowerAscii(name))) || me;
  if (info.name === null && info.email === null) return { name, email };
  return { name: info.name ?? name, email: info.email ?? email };
}

// ---------------------------------------------------------------- the commit

interface Parsed {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  encoding: string | null;
  /** The text after the header's blank line (a C string: up to a NUL). */
  body: string;
  /** Where the message starts in `body` after blank lines (subject_off), and the body (body_off). */
  subject: number;
  bodyOff: number;
}

const getOneLine = (s: string, at: number) => {
  const nl = s.indexOf("\n", at);
  return nl < 0 ? s.length - at : nl + 1 - at;
};
const blankLen = (s: string, at: number, len: number) => {
  while (len && isSpace(s[at + len - 1])) len--;
  return len;
};
function skipBlankLines(s: string, at: number): number {
  for (;;) {
    const len = getOneLine(s, at);
    if (!len || blankLen(s, at, len)) return at;
    at += len;
  }
}
/** format_subject: the lines up to a blank one, trimmed and joined; and where it stopped. */
function formatSubject(s: string, at: number, sep: string): { text: string; end: number } {
  const parts: string[] = [];
  for (;;) {
    const len = getOneLine(s, at);
    const line = at;
    at += len;
    const trimmed = blankLen(s, line, len);
    if (!len || !trimmed) break;
    parts.push(s.slice(line, line + trimmed));
  }
  return { text: parts.join(sep), end: at };
}

function parseRaw(raw: Uint8Array): Parsed {
  const nul = raw.indexOf(0);
  const s = bin(nul >= 0 ? raw.subarray(0, nul) : raw);
  const p: Parsed = { tree: "", parents: [], author: "", committer: "", encoding: null, body: "", subject: 0, bodyOff: 0 };
  let i = 0;
  for (; i < s.length; ) {
    let eol = s.indexOf("\n", i);
    if (eol < 0) eol = s.length;
    if (eol === i) break;
    const line = s.slice(i, eol);
    if (line.startsWith("tree ") && !p.tree) p.tree = line.slice(5);
    else if (line.startsWith("parent ")) p.parents.push(line.slice(7));
    else if (line.startsWith("author ")) p.author = line.slice(7);
    else if (line.startsWith("committer ")) p.committer = line.slice(10);
    else if (line.startsWith("encoding ") && p.encoding === null) p.encoding = line.slice(9);
    i = eol + 1;
  }
  // i is at the blank line ending the header (message_off); %B starts after it
  p.body = s.slice(i + 1);
  p.subject = skipBlankLines(p.body, 0);
  p.bodyOff = skipBlankLines(p.body, formatSubject(p.body, p.subject, " ").end);
  return p;
}

/**
 * `s` without the characters of `set` at its end — a scan back from the end, where a regular
 * expression like /[.-]+$/ retries from every position of a long run (quadratic).
 */
function trimEnd(s: string, set: string): string {
  let end = s.length;
  while (end > 0 && set.includes(s[end - 1]!)) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** format_sanitized_subject (%f). */
function sanitizedSubject(line: string): string {
  let out = "";
  let space = 2;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (/[A-Za-z0-9._]/.test(c)) {
      if (space === 1) out += "-";
      space = 0;
      out += c;
      if (c === ".") while (line[i + 1] === ".") i++;
    } else space |= 1;
  }
  return trimEnd(out, ".-");
}

// ---------------------------------------------------------------- display width (utf8.c)

/** git_wcwidth, with git's tables approximated by Unicode properties. */
function wcwidth(cp: number): number {
  if (cp === 0) return 0;
  if (cp < 32 || (cp >= 0x7f && cp < 0xa0)) return -1;
  const ch = String.fromCodePoint(cp);
  if (/[\p{Mn}\p{Me}\p{Cf}]/u.test(ch) || (cp >= 0x1160 && cp <= 0x11ff)) return 0;
  const wide =
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe6f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd);
  return wide ? 2 : 1;
}

/** utf8_strnwidth of a latin1-held byte string: its columns, or its length when not UTF-8. */
function width(s: string): number {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(unbin(s));
  } catch {
    return s.length;
  }
  let w = 0;
  for (const ch of text) {
    const g = wcwidth(ch.codePointAt(0)!);
    if (g > 0) w += g;
  }
  return w;
}

/** strbuf_utf8_replace: the glyphs in columns [pos, pos+w) replaced by `subst`. */
function utf8Replace(s: string, pos: number, w: number, subst: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(unbin(s));
  } catch {
    return s;
  }
  let out = "";
  let col = 0;
  let sub: string | null = subst;
  for (const ch of text) {
    const g = Math.max(0, wcwidth(ch.codePointAt(0)!));
    if (g && col >= pos && col < pos + w) {
      if (sub !== null) {
        out += sub;
        sub = null;
      }
    } else out += u8(ch);
    col += g;
  }
  return out;
}

/** pick_one_utf8_char: the code point at `at` and its length, or null when not valid UTF-8. */
function utf8At(s: string, at: number): [number, number] | null {
  const b = (i: number) => s.charCodeAt(at + i);
  const c0 = b(0);
  if (c0 < 0x80) return [c0, 1];
  const cont = (i: number) => at + i < s.length && (b(i) & 0xc0) === 0x80;
  if ((c0 & 0xe0) === 0xc0) {
    if (!cont(1) || (c0 & 0xfe) === 0xc0) return null;
    return [((c0 & 0x1f) << 6) | (b(1) & 0x3f), 2];
  }
  if ((c0 & 0xf0) === 0xe0) {
    if (!cont(1) || !cont(2) || (c0 === 0xe0 && (b(1) & 0xe0) === 0x80) || (c0 === 0xed && (b(1) & 0xe0) === 0xa0) || (c0 === 0xef && b(1) === 0xbf && (b(2) & 0xfe) === 0xbe)) return null;
    return [((c0 & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f), 3];
  }
  if ((c0 & 0xf8) === 0xf0) {
    if (!cont(1) || !cont(2) || !cont(3) || (c0 === 0xf0 && (b(1) & 0xf0) === 0x80) || (c0 === 0xf4 && b(1) > 0x8f) || c0 > 0xf4) return null;
    return [((c0 & 0x07) << 18) | ((b(1) & 0x3f) << 12) | ((b(2) & 0x3f) << 6) | (b(3) & 0x3f), 4];
  }
  return null;
}

/** strbuf_add_wrapped_text: `text` (a C string) wrapped at `width` columns with the two indents. */
function wrapText(text: string, indent1: number, indent2: number, width: number): string {
  const nul = text.indexOf("\0");
  if (nul >= 0) text = text.slice(0, nul);
  if (width <= 0) {
    // strbuf_add_indented_text
    let out = "";
    let indent = Math.max(0, indent1);
    for (let at = 0; at < text.length; ) {
      const nl = text.indexOf("\n", at);
      const eol = nl < 0 ? text.length : nl + 1;
      out += " ".repeat(indent) + text.slice(at, eol);
      at = eol;
      indent = indent2;
    }
    return out;
  }
  for (const utf8 of [true, false]) {
    let out = "";
    let t = 0;
    let bol = 0;
    let w = indent1;
    let indent = indent1;
    let space: number | null = null;
    if (indent < 0) {
      w = -indent;
      space = 0;
    }
    let invalid = false;
    for (;;) {
      const c = text[t];
      if (c === undefined || isSpace(c)) {
        if (w <= width || space === null) {
          let start = bol;
          if (c === undefined && t === start) return out;
          if (space !== null) start = space;
          else out += " ".repeat(Math.max(0, indent));
          out += text.slice(start, t);
          if (c === undefined) return out;
          space = t;
          let newLine = false;
          if (c === "\t") w |= 0x07;
          else if (c === "\n") {
            space++;
            if (text[space] === "\n") {
              out += "\n";
              newLine = true;
            } else if (!/[A-Za-z0-9]/.test(text[space] ?? "")) newLine = true;
            else out += " ";
          }
          if (!newLine) {
            w++;
            t++;
            continue;
          }
        }
        // new_line
        out += "\n";
        t = bol = space! + (isSpace(text[space!]) ? 1 : 0);
        space = null;
        w = indent = indent2;
        continue;
      }
      if (utf8) {
        const one = utf8At(text, t);
        if (!one) {
          invalid = true;
          break;
        }
        w += wcwidth(one[0]);
        t += one[1];
      } else {
        w++;
        t++;
      }
    }
    if (!invalid) return out;
  }
  return text;
}

// ---------------------------------------------------------------- the format engine

type Flush = "none" | "right" | "left" | "left-steal" | "both";
type Trunc = "none" | "left" | "middle" | "right";

const FORMATTING_LIMIT = 16 * 1024;

/** strtol over a latin1 string from `at`: the value and where it stopped (at, when nothing was read). */
function strtol(s: string, at: number): { value: number; end: number } {
  let i = at;
  while (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r" || s[i] === "\v" || s[i] === "\f") i++;
  let sign = 1;
  if (s[i] === "+" || s[i] === "-") sign = s[i++] === "-" ? -1 : 1;
  const d = i;
  while (isDigit(s[i])) i++;
  if (i === d) return { value: 0, end: at };
  const v = Number(s.slice(d, i));
  return { value: sign * Math.min(v, 2 ** 63), end: i };
}

/** strtoul: like strtol, a negative value wrapping round to a huge one. */
function strtoul(s: string, at: number): { value: number; end: number } {
  const r = strtol(s, at);
  return { value: r.value < 0 ? 2 ** 64 + r.value : r.value, end: r.end };
}

/** git_parse_maybe_bool: 1, 0, or -1 when not a boolean. */
function maybeBool(v: string | null): number {
  if (v === null) return 1;
  if (v === "") return 0;
  const l = lowerAscii(v);
  if (l === "true" || l === "yes" || l === "on") return 1;
  if (l === "false" || l === "no" || l === "off") return 0;
  const m = /^([-+]?\d+)([kmg]?)$/i.exec(v);
  return m ? (Number(m[1]) !== 0 ? 1 : 0) : -1;
}

/** match_placeholder_arg_value: `candidate[=value]` followed by `,` or `)`. */
function argValue(s: string, at: number, candidate: string): { value: string | null; next: number } | null {
  if (!s.startsWith(candidate, at)) return null;
  let p = at + candidate.length;
  let value: string | null = null;
  if (s[p] === "=") {
    const start = p + 1;
    let e = start;
    while (e < s.length && s[e] !== "," && s[e] !== ")") e++;
    value = s.slice(start, e);
    p = e;
  } else if (s[p] !== "," && s[p] !== ")") return null;
  if (s[p] === ",") return { value, next: p + 1 };
  if (s[p] === ")") return { value, next: p };
  return null;
}

/** parse_describe_args: the `git describe` options and where parsing stopped. */
function describeArgs(s: string, at: number): { args: string[]; end: number } | null {
  const args: string[] = [];
  for (;;) {
    let found = false;
    const b = argValue(s, at, "tags");
    if (b) {
      const v = maybeBool(b.value);
      if (v >= 0) {
        args.push(v ? "--tags" : "--no-tags");
        at = b.next;
        found = true;
      }
    }
    if (!found) {
      const a = argValue(s, at, "abbrev");
      if (a) {
        const v = a.value ?? "";
        if (!v.length || strtol(v, 0).end !== v.length) return null;
        args.push(`--abbrev=${v}`);
        at = a.next;
        found = true;
      }
    }
    for (const name of ["exclude", "match"]) {
      if (found) break;
      const a = argValue(s, at, name);
      if (a) {
        if (!a.value?.length) return null;
        args.push(`--${name}=${a.value}`);
        at = a.next;
        found = true;
      }
    }
    if (!found) return { args, end: at };
  }
}

/**
 * Expands one user format (`$Format:<fmt>$`'s inside) for the commit, as
 * repo_format_commit_message does.
 */
export async function formatCommit(fmt: Uint8Array, src: PrettySource, state: PrettyState): Promise<Uint8Array> {
  return unbin(await expand(bin(fmt), src, state, ""));
}

/**
 * format_subst: every `$Format:<fmt>$` of an export-subst file expanded. As in git, each expansion
 * appends to what precedes it in the file, so `%-x` and `%>>(N)` reach back into that text.
 */
/** How much bigger export-subst may make one file (git sets no bound; a Worker holds 128 MiB). */
const MAX_GROWTH = 16 * 1024 * 1024;

export async function formatSubst(data: Uint8Array, src: PrettySource, state: PrettyState): Promise<Uint8Array> {
  const s = bin(data);
  let buf = "";
  let at = 0;
  for (;;) {
    const b = s.indexOf("$Format:", at);
    if (b < 0) break;
    const c = s.indexOf("$", b + 8);
    if (c < 0) break;
    buf = await expand(s.slice(b + 8, c), src, state, buf + s.slice(at, b));
    at = c + 1;
    // padding repeated by placeholders could grow a small file past what an isolate holds
    if (buf.length > data.length + MAX_GROWTH) throw new GitError("too-large", `export-subst expands a file by more than ${MAX_GROWTH} bytes`);
  }
  return unbin(buf + s.slice(at));
}

/** strbuf_expand of `format` with format_commit_item, appending to `sb`. */
async function expand(format: string, src: PrettySource, state: PrettyState, sb: string): Promise<string> {
  // the format is a C string: it ends at a NUL
  const fmt = format.indexOf("\0") >= 0 ? format.slice(0, format.indexOf("\0")) : format;
  let parsed: Parsed | null = null;
  const commit = () => (parsed ??= parseRaw(src.raw));
  const now = () => Math.floor(src.now ? src.now() : Date.now() / 1000);
  let padding = 0;
  let flush: Flush = "none";
  let trunc: Trunc = "none";
  // rewrap_message_tail: what the last %w() asked for, applied from where it was given
  let wrap = { start: sb.length, width: 0, indent1: 0, indent2: 0 };
  const rewrap = (width: number, indent1: number, indent2: number) => {
    if (wrap.width === width && wrap.indent1 === indent1 && wrap.indent2 === indent2) return;
    if (wrap.start < sb.length) sb = sb.slice(0, wrap.start) + wrapText(sb.slice(wrap.start), wrap.indent1, wrap.indent2, wrap.width);
    wrap = { start: sb.length, width, indent1, indent2 };
  };

  const person = async (ident: string, part: string | undefined): Promise<{ out: string; used: number }> => {
    const s = splitIdent(ident);
    if (s && part !== undefined) {
      let { name, mail } = s;
      if (part === "N" || part === "E" || part === "L") {
        const mm = await src.mailmap();
        if (mm) ({ name, email: mail } = mapUser(mm, name, mail));
      }
      if (part === "n" || part === "N") return { out: name, used: 2 };
      if (part === "e" || part === "E") return { out: mail, used: 2 };
      if (part === "l" || part === "L") {
        const at = mail.indexOf("@");
        return { out: at >= 0 ? mail.slice(0, at) : mail, used: 2 };
      }
      if (s.date !== null) {
        if (part === "t") return { out: s.date, used: 2 };
        const modes: Record<string, DateMode> = { d: "normal", D: "rfc2822", r: "relative", i: "iso", I: "iso-strict", h: "human", s: "short" };
        const mode = Object.hasOwn(modes, part) ? modes[part] : undefined;
        if (mode) {
          let date = Number(s.date);
          let tz = 0;
          if (!Number.isFinite(date) || date >= 2 ** 63) date = 0;
          else {
            tz = Number.parseInt(s.tz!, 10);
            if (!Number.isFinite(tz) || tz >= 2 ** 31 - 1 || tz <= -(2 ** 31)) tz = 0;
          }
          return { out: showDate(date, tz, mode, now()), used: 2 };
        }
      }
    }
    // a broken ident: these still consume their placeholder (format_person_part's skip)
    return { out: "", used: part !== undefined && "netdDri".includes(part) ? 2 : 0 };
  };

  /** format_commit_one: appends to `out.s`; returns how many format bytes it consumed (0: not a placeholder). */
  const one = async (p: string, at: number, out: { s: string }): Promise<number> => {
    const c = p[at];
    if (c === "n") {
      out.s += "\n";
      return 1;
    }
    if (c === "x") {
      const h = p.slice(at + 1, at + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(h)) return 0;
      out.s += String.fromCharCode(Number.parseInt(h, 16));
      return 3;
    }
    if (c === "C") {
      if (p.startsWith("(auto)", at + 1)) return 7;
      if (p[at + 1] === "(") {
        const end = p.indexOf(")", at + 2);
        return end < 0 ? 0 : end - at + 1; // colors are never shown (git archive's color is "never")
      }
      for (const name of ["red", "green", "blue", "reset"]) if (p.startsWith(name, at + 1)) return 1 + name.length;
      return 0;
    }
    if (c === "w") {
      if (p[at + 1] !== "(") return 0;
      const end = p.indexOf(")", at + 2);
      if (end < 0) return 0;
      const nums = [0, 0, 0];
      if (end > at + 2) {
        let next = at + 2;
        for (let k = 0; k < 3; k++) {
          const r = strtoul(p, next);
          nums[k] = r.value;
          next = r.end;
          if (p[next] !== "," || k === 2) break;
          next++;
        }
        if (next !== end) return 0;
      }
      if (nums.some((n) => n > FORMATTING_LIMIT)) return 0;
      rewrap(nums[0]!, nums[1]!, nums[2]!);
      return end - at + 1;
    }
    if (c === "<" || c === ">") return paddingPlaceholder(p, at);
    if (p.startsWith("(describe", at)) {
      if (state.describeLeft <= 0) return 0;
      state.describeLeft--;
      let i = at + 9;
      let args: string[] = [];
      if (p[i] === ":") {
        const d = describeArgs(p, i + 1);
        if (!d) return 0;
        args = d.args;
        i = d.end;
      }
      if (p[i] !== ")") return 0;
      out.s += u8(await src.describe(args));
      return i - at + 1;
    }
    switch (c) {
      case "H":
        out.s += src.oid;
        return 1;
      case "h":
        out.s += await src.abbrev(src.oid);
        return 1;
      case "T":
        out.s += commit().tree;
        return 1;
      case "t":
        out.s += await src.abbrev(commit().tree);
        return 1;
      case "P":
        out.s += commit().parents.join(" ");
        return 1;
      case "p": {
        const abbrevs: string[] = [];
        for (const parent of commit().parents) abbrevs.push(await src.abbrev(parent));
        out.s += abbrevs.join(" ");
        return 1;
      }
      case "m":
        out.s += ">"; // get_revision_mark without a revision walk
        return 1;
      case "d":
      case "D": {
        const { list, head } = await src.decorations();
        out.s += u8(formatDecorations(list, head, c === "d" ? " (" : "", ", ", c === "d" ? ")" : ""));
        return 1;
      }
      case "S":
      case "N":
        return 0; // no --source, no notes: left as written
      case "g": {
        const g = p[at + 1];
        if (g !== undefined && "dDsnNeE".includes(g)) return 2; // no reflog walk: empty
        return 0;
      }
      case "G": {
        // an unsigned commit: result N, nothing else known
        const g = p[at + 1];
        if (g === "?") out.s += "N";
        else if (g === "T") out.s += "undefined";
        else if (g === undefined || !"GSKFP".includes(g)) return 0;
        return 2;
      }
      case "a":
      case "c": {
        const r = await person(c === "a" ? commit().author : commit().committer, p[at + 1]);
        out.s += r.out;
        return r.used;
      }
      case "e":
        if (commit().encoding !== null) out.s += commit().encoding;
        return 1;
      case "B":
        out.s += commit().body;
        return 1;
      case "s":
        out.s += formatSubject(commit().body, commit().subject, " ").text;
        return 1;
      case "f": {
        const b = commit().body;
        const nl = b.indexOf("\n", commit().subject);
        out.s += sanitizedSubject(b.slice(commit().subject, nl < 0 ? b.length : nl));
        return 1;
      }
      case "b":
        out.s += commit().body.slice(commit().bodyOff);
        return 1;
    }
    return 0; // unknown (and %(trailers), not done): left as written
  };

  const paddingPlaceholder = (p: string, at: number): number => {
    let i = at;
    let f: Flush;
    if (p[i] === "<") f = "right";
    else if (p[i + 1] === "<") {
      f = "both";
      i++;
    } else if (p[i + 1] === ">") {
      f = "left-steal";
      i++;
    } else f = "left";
    i++;
    let toColumn = false;
    if (p[i] === "|") {
      toColumn = true;
      i++;
    }
    if (p[i] !== "(") return 0;
    const start = i + 1;
    let end = start;
    while (end < p.length && p[end] !== "," && p[end] !== ")") end++;
    if (end >= p.length || end === start) return 0;
    const { value: w, end: next } = strtol(p, start);
    if (w < -FORMATTING_LIMIT || w > FORMATTING_LIMIT) return 0;
    if (next === start || w === 0) return 0;
    // a negative width counts from the terminal's width, which an archive has not (80: git's default)
    const width = w < 0 ? (toColumn ? w + 80 : w) : w;
    if (width < 0) return 0;
    let t: Trunc = "none";
    if (p[end] === ",") {
      const s2 = end + 1;
      end = p.indexOf(")", s2);
      if (end < 0 || end === s2) return 0;
      if (p.startsWith("trunc)", s2)) t = "right";
      else if (p.startsWith("ltrunc)", s2)) t = "left";
      else if (p.startsWith("mtrunc)", s2)) t = "middle";
      else return 0;
    }
    padding = toColumn ? -width : width;
    flush = f;
    trunc = t;
    return end - at + 1;
  };

  /** format_and_pad_commit. */
  const padded = async (p: string, at: number): Promise<number> => {
    const local = { s: "" };
    let total = 0;
    let pad = padding;
    if (pad < 0) {
      const nl = sb.lastIndexOf("\n");
      pad = -pad - width(sb.slice(nl + 1));
    }
    let i = at;
    for (;;) {
      const modifier = p[i] === "C";
      const used = await one(p, i, local);
      total += used;
      if (!modifier) break;
      i += used;
      if (p[i] !== "%") break;
      i++;
      total++;
    }
    let len = width(local.s);
    if (flush === "left-steal") {
      let ch = sb.length - 1;
      while (len > pad && ch > 0 && sb[ch] === " ") {
        ch--;
        pad++;
      }
      sb = sb.slice(0, ch + 1);
      flush = "left";
    }
    if (len > pad) {
      if (trunc === "left") local.s = utf8Replace(local.s, 0, len - (pad - 2), "..");
      else if (trunc === "middle") local.s = utf8Replace(local.s, Math.trunc(pad / 2) - 1, len - (pad - 2), "..");
      else if (trunc === "right") local.s = utf8Replace(local.s, pad - 2, len - (pad - 2), "..");
      sb += local.s;
    } else {
      const offset = flush === "left" ? pad - len : flush === "both" ? Math.trunc((pad - len) / 2) : 0;
      const room = pad - len + local.s.length;
      const spaces = " ".repeat(room);
      sb += spaces.slice(0, offset) + local.s + spaces.slice(offset + local.s.length);
      len = 0;
    }
    flush = "none";
    return total;
  };

  // strbuf_expand with format_commit_item
  let i = 0;
  while (i < fmt.length) {
    const pct = fmt.indexOf("%", i);
    if (pct < 0) {
      sb += fmt.slice(i);
      break;
    }
    sb += fmt.slice(i, pct);
    i = pct + 1;
    if (fmt[i] === "%") {
      sb += "%";
      i++;
      continue;
    }
    let magic: "" | "-" | "+" | " " = "";
    let at = i;
    if (fmt[at] === "-" || fmt[at] === "+" || fmt[at] === " ") {
      magic = fmt[at] as "-" | "+" | " ";
      at++;
      if (fmt[at] === "w") {
        sb += "%";
        continue;
      }
    }
    const before = sb.length;
    let used: number;
    if (flush !== "none") used = await padded(fmt, at);
    else {
      const out = { s: "" };
      used = await one(fmt, at, out);
      sb += out.s;
    }
    if (!used && !magic) {
      sb += "%";
      continue;
    }
    // with magic the placeholder counts one more byte, even an unknown one (its letters then
    // stay as text, without the `%`)
    if (magic === "-" && sb.length === before) sb = trimEnd(sb, "\n");
    else if (sb.length !== before && magic === "+") sb = `${sb.slice(0, before)}\n${sb.slice(before)}`;
    else if (sb.length !== before && magic === " ") sb = `${sb.slice(0, before)} ${sb.slice(before)}`;
    i = at + used;
  }
  rewrap(0, 0, 0);
  return sb;
}

/** format_decorations_extended: `HEAD -> branch` where both name the commit, tags as `tag: …`, names shortened. */
export function formatDecorations(list: readonly Decoration[], head: string | null, prefix: string, separator: string, suffix: string): string {
  if (list.length === 0) return "";
  const pretty = (n: string) => n.replace(/^refs\/(heads|tags|remotes)\//, "");
  const current = list.some((d) => d.type === "head") && head?.startsWith("refs/") ? (list.find((d) => d.type === "branch" && d.name === head) ?? null) : null;
  const parts: string[] = [];
  for (const d of list) {
    if (d === current) continue;
    let s = d.type === "tag" ? `tag: ${pretty(d.name)}` : pretty(d.name);
    if (current && d.type === "head") s += ` -> ${pretty(current.name)}`;
    parts.push(s);
  }
  return prefix + parts.join(separator) + suffix;
}
