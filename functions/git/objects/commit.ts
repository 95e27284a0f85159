/**
 * Commit and annotated tag objects: parsing (headers kept in order so nothing is lost) and
 * serialisation in git's exact byte layout.
 */
import { asBuffer, isOid, text, utf8 } from "../bytes.ts";
import { check, GitError } from "../errors.ts";
import type { ObjectType } from "./object.ts";

/** A person and a moment, as in `author`/`committer`/`tagger` lines. */
export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** Git's offset spelling, e.g. `+0200`. */
  timezone: string;
}

/** A parsed commit. `message` is everything after the blank line, as stored. */
export interface Commit {
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
  /** Other headers (gpgsig, encoding, mergetag …) in order, continuation lines joined by `\n`. */
  extraHeaders: [string, string][];
}

/** A parsed annotated tag. */
export interface Tag {
  object: string;
  type: ObjectType;
  tag: string;
  tagger: Signature | null;
  message: string;
}

// `s`: a name may hold a CR or another character `.` would not match (git writes them as given)
const IDENT = /^(.*?) ?<([^<>]*)> (-?\d+) ([+-]\d{4})$/s;

/** Parses `Name <email> 1700000000 +0000`; tolerant of odd names as git is. */
export function parseSignature(line: string): Signature {
  const m = IDENT.exec(line);
  if (!m) return { name: line, email: "", timestamp: 0, timezone: "+0000" };
  return { name: m[1]!, email: m[2]!, timestamp: Number(m[3]), timezone: m[4]! };
}

/**
 * git's ident.c `crud`: what is trimmed from both ends of a name or e-mail — bytes up to space
 * (controls included) and . , : ; < > " \ '. Non-ASCII characters are never crud.
 */
const isCrud = (c: number) => c <= 0x20 || c === 0x2e || c === 0x2c || c === 0x3a || c === 0x3b || c === 0x3c || c === 0x3e || c === 0x22 || c === 0x5c || c === 0x27;

/**
 * A name or e-mail as git's `strbuf_addstr_without_crud` writes it into an ident line: crud trimmed
 * from both ends, every `\n`, `<` and `>` inside dropped (NUL too: git's C strings cannot hold it,
 * and fsck refuses it in a header). What is left can never end the line or the e-mail early.
 */
export function identPart(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isCrud(s.charCodeAt(start))) start++;
  while (end > start && isCrud(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end).replace(/[\n<>\0]/g, "");
}

/** The signature with its name and e-mail as git writes them (`identPart`). */
export const cleanSignature = (s: Signature): Signature => ({ ...s, name: identPart(s.name), email: identPart(s.email) });

/**
 * The latest time a signature may carry, 9999-12-31T23:59:59Z. git's fsck takes any non-negative
 * number of seconds that fits a time_t (negative ones are a badDate), but Gitea's JSON (Go's
 * time.MarshalJSON, RFC 3339) cannot show a year past 9999.
 */
export const MAX_SIGNATURE_TIME = 253402300799;

/** Why a signature's time is not one git and the API can hold (null when it is). */
export function signatureTimeProblem(timestamp: number): string | null {
  if (Number.isInteger(timestamp) && timestamp >= 0 && timestamp <= MAX_SIGNATURE_TIME) return null;
  const iso = Number.isFinite(timestamp) && Math.abs(timestamp) < 8.64e12 ? new Date(timestamp * 1000).toISOString().replace(/\.000Z$/, "Z") : String(timestamp);
  return `${iso} is out of range: git commits hold times from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z`;
}

/**
 * Formats a signature line value the way git writes it (`role` names it in errors: author,
 * committer, tagger). Name and e-mail are cleaned as git's ident.c cleans them, so no input can
 * forge a header line or give a line `git fsck --strict` refuses; throws `invalid` (nothing is
 * written) when the name or e-mail is nothing but crud (git: "name consists only of disallowed
 * characters"), the time is out of range, or the offset is not git's `±hhmm`.
 */
export function formatSignature(s: Signature, role = "author"): string {
  const name = identPart(s.name);
  const email = identPart(s.email);
  if (!name) throw new GitError("invalid", `${role} name consists only of disallowed characters: ${JSON.stringify(s.name)}`);
  if (!email) throw new GitError("invalid", `${role} email consists only of disallowed characters: ${JSON.stringify(s.email)}`);
  const timeProblem = signatureTimeProblem(s.timestamp);
  if (timeProblem) throw new GitError("invalid", `${role} date ${timeProblem}`);
  if (!/^[+-]\d{4}$/.test(s.timezone)) throw new GitError("invalid", `${role} timezone ${JSON.stringify(s.timezone)} is not git's ±hhmm`);
  return `${name} <${email}> ${s.timestamp} ${s.timezone}`;
}

/** Splits an object body into header pairs and the message. */
function parseHeaders(data: Uint8Array): { headers: [string, string][]; message: string } {
  const s = text(data);
  const split = s.indexOf("\n\n");
  const head = split < 0 ? s : s.slice(0, split);
  const message = split < 0 ? "" : s.slice(split + 2);
  const headers: [string, string][] = [];
  for (const line of head.split("\n")) {
    if (line.length === 0) continue;
    if (line.startsWith(" ") && headers.length > 0) {
      headers[headers.length - 1]![1] += `\n${line.slice(1)}`;
      continue;
    }
    const sp = line.indexOf(" ");
    headers.push(sp < 0 ? [line, ""] : [line.slice(0, sp), line.slice(sp + 1)]);
  }
  return { headers, message };
}

/** Parses a commit object; throws `corrupt` when the required headers are missing. */
export function parseCommit(data: Uint8Array): Commit {
  const { headers, message } = parseHeaders(data);
  let tree = "";
  const parents: string[] = [];
  let author: Signature | null = null;
  let committer: Signature | null = null;
  const extraHeaders: [string, string][] = [];
  for (const [k, v] of headers) {
    if (k === "tree" && !tree) tree = v;
    else if (k === "parent") parents.push(v);
    else if (k === "author" && !author) author = parseSignature(v);
    else if (k === "committer" && !committer) committer = parseSignature(v);
    else extraHeaders.push([k, v]);
  }
  check(isOid(tree), "commit without a valid tree line");
  for (const p of parents) check(isOid(p), "commit with an invalid parent line");
  check(author && committer, "commit without author or committer");
  return { tree, parents, author, committer, message, extraHeaders };
}

/** Only the fields a history walk needs, without decoding the message (fast path). */
export function parseCommitLinks(data: Uint8Array): { tree: string; parents: string[]; time: number; authorEmail: string; committerEmail: string } {
  const end = asBuffer(data).indexOf("\n\n");
  const lines = text(data, 0, end < 0 ? data.length : end).split("\n");
  let tree = "";
  const parents: string[] = [];
  let time = 0;
  let authorEmail = "";
  let committerEmail = "";
  for (const line of lines) {
    if (line.startsWith("tree ")) tree ||= line.slice(5);
    else if (line.startsWith("parent ")) parents.push(line.slice(7));
    else if (line.startsWith("author ")) authorEmail = parseSignature(line.slice(7)).email;
    else if (line.startsWith("committer ")) {
      const committer = parseSignature(line.slice(10));
      time = committer.timestamp;
      committerEmail = committer.email;
      break;
    }
  }
  check(isOid(tree), "commit without a valid tree line");
  for (const p of parents) check(isOid(p), "commit with an invalid parent line");
  return { tree, parents, time, authorEmail, committerEmail };
}

/** Serialises a commit the way `git commit-tree` does. */
export function serializeCommit(c: Omit<Commit, "extraHeaders"> & { extraHeaders?: [string, string][] }): Uint8Array {
  let s = `tree ${c.tree}\n`;
  for (const p of c.parents) s += `parent ${p}\n`;
  s += `author ${formatSignature(c.author, "author")}\ncommitter ${formatSignature(c.committer, "committer")}\n`;
  for (const [k, v] of c.extraHeaders ?? []) s += `${k} ${v.replaceAll("\n", "\n ")}\n`;
  return utf8(`${s}\n${c.message}`);
}

/** Parses an annotated tag object. */
export function parseTag(data: Uint8Array): Tag {
  const { headers, message } = parseHeaders(data);
  const get = (k: string) => headers.find(([h]) => h === k)?.[1];
  const object = get("object") ?? "";
  const type = get("type") as ObjectType | undefined;
  check(isOid(object), "tag without a valid object line");
  check(type === "commit" || type === "tree" || type === "blob" || type === "tag", "tag with an invalid type line");
  const tagger = get("tagger");
  return { object, type, tag: get("tag") ?? "", tagger: tagger ? parseSignature(tagger) : null, message };
}

/** Serialises an annotated tag the way `git mktag` expects. */
export function serializeTag(t: Tag): Uint8Array {
  let s = `object ${t.object}\ntype ${t.type}\ntag ${t.tag}\n`;
  if (t.tagger) s += `tagger ${formatSignature(t.tagger, "tagger")}\n`;
  return utf8(`${s}\n${t.message}`);
}

/** git's isspace (sane-ctype): tab, line feed, carriage return and space only. */
const isGitSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r";

/**
 * git's `strbuf_stripspace`: trailing whitespace of each line removed, runs of blank lines made
 * one, blank lines at the start and end dropped, a final newline added to what is left; with
 * `comment`, lines starting with it removed too (`git tag -m`'s default cleanup, "strip").
 */
export function stripspace(message: string, comment?: string): string {
  let out = "";
  let empties = 0;
  for (const raw of message.split(/(?<=\n)/)) {
    if (comment && raw.startsWith(comment)) continue;
    let end = raw.length;
    while (end > 0 && isGitSpace(raw[end - 1]!)) end--;
    if (end === 0) {
      empties++;
      continue;
    }
    if (empties > 0 && out.length > 0) out += "\n";
    empties = 0;
    out += `${raw.slice(0, end)}\n`;
  }
  return out;
}

/**
 * A tag message without the signature git appends to it (`git tag -s`), as Gitea's
 * parsePayloadSignature splits it: the last line `-----BEGIN <X> SIGNATURE-----` that a
 * `-----END <X> SIGNATURE-----` line follows starts the signature, and the message ends before the
 * line break in front of it.
 */
export function splitTagSignature(message: string): { message: string; signature: string | null } {
  let start = -1;
  let end = -1;
  for (let pos = 0; ; ) {
    const eol = message.indexOf("\n", pos);
    if (eol < 0) break;
    const m = /^-----BEGIN (.*) SIGNATURE-----$/s.exec(message.slice(pos, eol));
    if (m) {
      const close = `\n-----END ${m[1]} SIGNATURE-----`;
      const at = message.indexOf(close, pos);
      if (at >= 0) [start, end] = [pos, at + close.length];
    }
    pos = eol + 1;
  }
  return start < 0 ? { message, signature: null } : { message: message.slice(0, Math.max(0, start - 1)), signature: message.slice(start, end) };
}
