/**
 * Commit and annotated tag objects: parsing (headers kept in order so nothing is lost) and
 * serialisation in git's exact byte layout.
 */
import { asBuffer, isOid, text, utf8 } from "../bytes.ts";
import { check } from "../errors.ts";
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

const IDENT = /^(.*?) ?<([^<>]*)> (-?\d+) ([+-]\d{4})$/;

/** Parses `Name <email> 1700000000 +0000`; tolerant of odd names as git is. */
export function parseSignature(line: string): Signature {
  const m = IDENT.exec(line);
  if (!m) return { name: line, email: "", timestamp: 0, timezone: "+0000" };
  return { name: m[1]!, email: m[2]!, timestamp: Number(m[3]), timezone: m[4]! };
}

/** Formats a signature line value. */
export const formatSignature = (s: Signature): string => `${s.name} <${s.email}> ${s.timestamp} ${s.timezone}`;

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
  s += `author ${formatSignature(c.author)}\ncommitter ${formatSignature(c.committer)}\n`;
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
  if (t.tagger) s += `tagger ${formatSignature(t.tagger)}\n`;
  return utf8(`${s}\n${t.message}`);
}
