/**
 * The chat hook types' messages (Gitea services/webhook/{slack,discord,dingtalk,telegram,msteams,
 * feishu,matrix,wechatwork,packagist}.go): at delivery, the stored Gitea payload of an event
 * becomes the body a chat service takes. Pure; the deliverer signs and sends what this returns.
 *
 * Byte for byte as Gitea renders them (two-space JSON, its wording, colours and links), except
 * where Gitea's output is a bug (docs/api.md lists each): a created branch or tag links to its
 * page in Slack and Matrix (Gitea links to `…/src/` or `…/src/commit/<name>`), Feishu and WeChat
 * Work name the commit count (Gitea's text leaves it empty), and Matrix escapes commit messages
 * and names in its HTML (Gitea puts them in raw).
 */
import { goTrimSpace } from "../lib/template-expansion.ts";
import { pathEscapeSegments } from "./escape.ts";

/** The types converted here; `gitea` and `gogs` hooks receive the payload itself. */
export const CHAT_TYPES = new Set(["slack", "discord", "dingtalk", "telegram", "msteams", "feishu", "matrix", "wechatwork", "packagist"]);

interface PayloadUser {
  login: string;
  full_name?: string;
  avatar_url?: string;
}
interface PayloadRepo {
  full_name: string;
  html_url: string;
}
interface PayloadCommit {
  id: string;
  message: string;
  url: string;
  author?: { name: string } | null;
}
/** The fields of Gitea's payloads (create, delete, fork, push, repository) a message uses. */
export interface EventPayload {
  ref?: string;
  ref_type?: string;
  action?: string;
  repository: PayloadRepo;
  forkee?: PayloadRepo;
  sender: PayloadUser;
  pusher?: PayloadUser;
  commits?: PayloadCommit[];
  total_commits?: number;
  compare_url?: string;
}

/** A hook's type-specific settings (the `meta` column): slack's channel, discord's name, matrix's message type, … */
export type HookMeta = Record<string, string | undefined>;

/** What the deliverer sends for a chat hook. */
export interface ChatRequest {
  body: string;
  /** Matrix sends PUT to the hook's URL plus a transaction id; the others the hook's method. */
  put?: { suffix: string };
  /** Whether the X-Gitea/X-Gogs/X-Hub/X-GitHub headers go too (all but Feishu). */
  defaultHeaders: boolean;
}

/** What happened, as the messages word it. */
type Happened =
  | { kind: "create" | "delete"; ref: string; refType: string }
  | { kind: "fork"; forkee: PayloadRepo }
  | { kind: "push"; branch: string; ref: string; commits: PayloadCommit[]; total: number; compare: string }
  | { kind: "repository"; created: boolean };

/** Shared facts of one message. */
interface Facts {
  /** The site's root URL with its trailing slash (the payload's repository URL without its path). */
  app: string;
  repo: PayloadRepo;
  sender: PayloadUser;
  pusher: PayloadUser;
  meta: HookMeta;
}

// ---- Go's escaping, as Gitea's templates use it ----

const UNRESERVED = /[A-Za-z0-9\-_.~]/;
const percent = (ch: string) => [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
/** Go's url.QueryEscape: a space is `+`. */
const queryEscape = (s: string) => [...s].map((ch) => (UNRESERVED.test(ch) ? ch : ch === " " ? "+" : percent(ch))).join("");
/** Go's html.EscapeString. */
const htmlEscape = (s: string) => s.replace(/[&'<>"]/g, (c) => ({ "&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;" })[c]!);
const htmlUnescape = (s: string) => s.replace(/&(amp|#39|lt|gt|#34);/g, (_, e: string) => ({ amp: "&", "#39": "'", lt: "<", gt: ">", "#34": '"' })[e]!);
const htmlLink = (url: string, text: string) => `<a href="${htmlEscape(url)}">${htmlEscape(text)}</a>`;
/** Go's strings.TrimRight(s, "\r\n"), scanning back (a regular expression's `[\r\n]+$` is quadratic on a long run). */
const trimEol = (s: string) => {
  let end = s.length;
  while (end > 0 && (s[end - 1] === "\n" || s[end - 1] === "\r")) end--;
  return s.slice(0, end);
};
const shortRef = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, "");
/** A created or deleted ref's full name from the payload's short one and its type. */
const fullRef = (h: { ref: string; refType: string }) => `refs/${h.refType === "tag" ? "tags" : "heads"}/${h.ref}`;
/** A ref's page: `branch/…` or `tag/…` (Gitea's RefWebLinkPath). */
const refPage = (repoUrl: string, ref: string) => `${repoUrl}/src/${ref.startsWith("refs/tags/") ? "tag" : "branch"}/${pathEscapeSegments(shortRef(ref))}`;
const newCommits = (n: number) => (n === 1 ? "1 new commit" : `${n} new commits`);
/** A push's title link: the commit of a one-commit push, else the comparison (else the branch). */
function pushLink(h: Extract<Happened, { kind: "push" }>, repoUrl: string) {
  const link = h.total === 1 ? (h.commits[0]?.url ?? "") : h.compare;
  return link || `${repoUrl}/src/${pathEscapeSegments(h.branch)}`;
}
const runes = (s: string) => [...s];
const json = (v: unknown) => JSON.stringify(v, null, 2);

// ---- the types ----

const slackText = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const slackLink = (url: string, text: string) => `<${url}|${slackText(text)}>`;

function slack(h: Happened, f: Facts): unknown {
  const H = f.repo.html_url;
  const repoLink = slackLink(H, f.repo.full_name);
  let text: string;
  let attachments: unknown[] | null = null;
  switch (h.kind) {
    case "create":
      text = `[${repoLink}:${slackLink(refPage(H, fullRef(h)), h.ref)}] ${h.refType} created by ${f.sender.login}`;
      break;
    case "delete":
      text = `[${repoLink}:${h.ref}] ${h.refType} deleted by ${f.sender.login}`;
      break;
    case "fork":
      text = `${slackLink(h.forkee.html_url, h.forkee.full_name)} is forked to ${repoLink}`;
      break;
    case "push": {
      const desc = newCommits(h.total);
      const commitString = h.compare ? slackLink(h.compare, desc) : desc;
      text = `[${repoLink}:${slackLink(refPage(H, h.ref), h.branch)}] ${commitString} pushed by ${f.pusher.login}`;
      const lines = h.commits.map((c) => `${slackLink(c.url, c.id.slice(0, 7))}: ${slackText(c.message.split("\n")[0]!)} - ${slackText(c.author?.name ?? "")}`);
      attachments = [{ fallback: "", color: f.meta.color ?? "", title: H, title_link: H, text: lines.join("\n") }];
      break;
    }
    case "repository":
      text = `[${repoLink}] Repository ${h.created ? "created" : "deleted"} by ${slackLink(f.app + f.sender.login, f.sender.login)}`;
      break;
  }
  return { channel: f.meta.channel ?? "", text, username: f.meta.username ?? "", icon_url: f.meta.icon_url ?? "", unfurl_links: 0, link_names: 0, attachments };
}

const GREEN = 0x1ac600;
const YELLOW = 0xffd930;
const RED = 0xff3232;

/** What most formats say: Gitea's shared wording of each event (title, text, link, colour). */
function plain(h: Happened, f: Facts, commitLine: (c: PayloadCommit) => string, joiner: string) {
  const R = f.repo.full_name;
  const H = f.repo.html_url;
  switch (h.kind) {
    case "create":
    case "delete":
      return { title: `[${R}] ${h.refType} ${h.ref} ${h.kind}d`, text: "", url: `${H}/src/${pathEscapeSegments(h.ref)}`, created: h.kind === "create" };
    case "fork":
      return { title: `${h.forkee.full_name} is forked to ${R}`, text: "", url: H, created: true };
    case "push":
      return { title: `[${R}:${h.branch}] ${newCommits(h.total)}`, text: h.commits.map(commitLine).join(joiner), url: pushLink(h, H), created: true };
    case "repository":
      return { title: `[${R}] Repository ${h.created ? "created" : "deleted"}`, text: "", url: h.created ? H : "", created: h.created };
  }
}

function discord(h: Happened, f: Facts): unknown {
  const line = (c: PayloadCommit) => {
    let message = trimEol(c.message.split("\n")[0]!);
    if (runes(message).length > 50) message = `${runes(message).slice(0, 47).join("")}...`;
    return `[${c.id.slice(0, 7)}](${c.url}) ${message} - ${c.author?.name ?? ""}`;
  };
  const m = plain(h, f, line, "\n");
  // Discord's own wording: a deletion is red, and so is a deleted repository.
  const color = h.kind === "delete" || (h.kind === "repository" && !h.created) ? RED : GREEN;
  const embed = {
    title: m.title,
    description: runes(m.text).slice(0, 2000).join(""),
    url: m.url,
    color,
    footer: { text: "" },
    author: { name: f.sender.login, url: f.app + f.sender.login, icon_url: f.sender.avatar_url ?? "" },
    fields: null,
  };
  return { wait: false, content: "", ...(f.meta.username ? { username: f.meta.username } : {}), ...(f.meta.icon_url ? { avatar_url: f.meta.icon_url } : {}), tts: false, embeds: [embed] };
}

function dingtalk(h: Happened, f: Facts): unknown {
  const empty = { text: "", title: "", hideAvatar: "", btnOrientation: "", singleTitle: "", singleURL: "", btns: null };
  const frame = (msgtype: string, content: string, actionCard: typeof empty) => ({
    msgtype,
    text: { content },
    link: { text: "", title: "", picUrl: "", messageUrl: "" },
    markdown: { text: "", title: "" },
    actionCard,
    feedCard: { links: null },
    at: { atMobiles: null, isAtAll: false },
  });
  if (h.kind === "repository" && !h.created) return frame("text", `[${f.repo.full_name}] Repository deleted`, empty);
  const m = plain(h, f, (c) => `[${c.id.slice(0, 7)}](${c.url}) ${trimEol(c.message)}${c.author ? ` - ${c.author.name}` : ""}`, "\r\n");
  const singleTitle =
    h.kind === "create" || h.kind === "delete" ? `view ref ${h.ref}` : h.kind === "fork" ? `view forked repo ${f.repo.full_name}` : h.kind === "push" ? (h.total === 1 ? "view commit" : "view commits") : "view repository";
  const text = h.kind === "push" ? m.text : m.title;
  return frame("actionCard", "", {
    ...empty,
    text: goTrimSpace(text),
    title: goTrimSpace(m.title),
    hideAvatar: "0",
    singleTitle,
    singleURL: `dingtalk://dingtalkclient/page/link?pc_slide=false&url=${queryEscape(m.url)}`,
  });
}

/**
 * Gitea's HTML sanitizer pass on what it built from escaped text and links: links get
 * `rel="nofollow"`; its HTML tokenizer reads a CR LF or a lone CR as LF.
 */
const sanitized = (html: string) => goTrimSpace(html.replace(/<a href="([^"]*)">/g, '<a href="$1" rel="nofollow">').replace(/\r\n?/g, "\n"));

function telegram(h: Happened, f: Facts): unknown {
  const R = f.repo.full_name;
  const H = f.repo.html_url;
  let html: string;
  switch (h.kind) {
    case "create":
    case "delete":
      html = `[${htmlLink(H, R)}] ${htmlEscape(h.refType)} ${htmlLink(`${H}/src/${pathEscapeSegments(h.ref)}`, h.ref)} ${h.kind}d`;
      break;
    case "fork":
      html = `${htmlEscape(h.forkee.full_name)} is forked to ${htmlLink(H, R)}`;
      break;
    case "push":
      html = `[${htmlLink(H, R)}:${htmlLink(pushLink(h, H), h.branch)}] ${htmlEscape(newCommits(h.total))}`;
      for (const c of h.commits) html += `\n[${htmlLink(c.url, c.id.slice(0, 7))}] ${htmlEscape(trimEol(c.message))}${c.author ? ` - ${htmlEscape(c.author.name)}` : ""}`;
      break;
    case "repository":
      html = h.created ? `[${htmlLink(H, R)}] Repository created` : `[${htmlEscape(R)}] Repository deleted`;
      break;
  }
  return { text: sanitized(html), parse_mode: "HTML", disable_web_page_preview: true };
}

function msteams(h: Happened, f: Facts): unknown {
  const m = plain(h, f, (c) => `[${c.id.slice(0, 7)}](${c.url}) ${trimEol(c.message)} - ${c.author?.name ?? ""}`, "\n\n");
  const facts = [{ name: "Repository:", value: f.repo.full_name }];
  if (h.kind === "create" || h.kind === "delete") facts.push({ name: `${h.refType}:`, value: h.ref });
  if (h.kind === "fork") facts.push({ name: "Forkee:", value: h.forkee.full_name });
  if (h.kind === "push") facts.push({ name: "Commit count:", value: String(h.total) });
  const color = m.created ? GREEN : YELLOW;
  return {
    "@type": "MessageCard",
    "@context": "https://schema.org/extensions",
    themeColor: color.toString(16),
    title: m.title,
    summary: m.title,
    sections: [{ activityTitle: f.sender.full_name ?? "", activitySubtitle: f.sender.login, activityImage: f.sender.avatar_url ?? "", facts, text: m.text }],
    potentialAction: [{ "@type": "OpenUri", name: "View in Gitea", targets: [{ os: "default", uri: m.url }] }],
  };
}

/** Feishu's signature: HMAC-SHA256 keyed with "<timestamp>\n<secret>" over nothing, in base64. */
export type FeishuSigner = (stringToSign: string) => string;

function feishu(h: Happened, f: Facts, secret: string, now: number, sign: FeishuSigner): unknown {
  const line = (c: PayloadCommit) => `[${c.id.slice(0, 7)}](${c.url}) ${trimEol(c.message)}${c.author ? ` - ${c.author.name}` : ""}`;
  const text = h.kind === "push" ? `[${f.repo.full_name}:${h.branch}] ${newCommits(h.total)}\r\n${h.commits.map(line).join("\r\n")}` : plain(h, f, line, "").title;
  const signed = secret ? { timestamp: now, sign: sign(`${now}\n${secret}`) } : { timestamp: 0 };
  return { ...signed, msg_type: "text", content: { text: goTrimSpace(text) } };
}

const MATRIX_MAX = 64 * 1024;
const MATRIX_MSGTYPES: Record<string, string> = { "1": "m.notice", "2": "m.text", "m.notice": "m.notice", "m.text": "m.text" };

function matrix(h: Happened, f: Facts, rawCommits: unknown[]): unknown {
  const R = f.repo.full_name;
  const H = f.repo.html_url;
  const repoLink = htmlLink(H, R);
  const refLink = (ref: string) => htmlLink(refPage(H, ref), shortRef(ref));
  let html: string;
  switch (h.kind) {
    case "create":
      html = `[${repoLink}:${refLink(fullRef(h))}] ${htmlEscape(h.refType)} created by ${htmlEscape(f.sender.login)}`;
      break;
    case "delete":
      html = `[${repoLink}:${htmlEscape(h.ref)}] ${htmlEscape(h.refType)} deleted by ${htmlEscape(f.sender.login)}`;
      break;
    case "fork":
      html = `${htmlLink(h.forkee.html_url, h.forkee.full_name)} is forked to ${repoLink}`;
      break;
    case "push": {
      const desc = h.total === 1 ? "1 commit" : `${h.total} commits`;
      const lines = h.commits.map((c) => `${htmlLink(c.url, c.id.slice(0, 7))}: ${htmlEscape(c.message)} - ${htmlEscape(c.author?.name ?? "")}`);
      html = `[${repoLink}] ${htmlEscape(f.pusher.login)} pushed ${desc} to ${refLink(h.ref)}:<br>${lines.join("<br>")}`;
      break;
    }
    case "repository":
      html = `[${repoLink}] Repository ${h.created ? "created" : "deleted"} by ${htmlLink(f.app + f.sender.login, f.sender.login)}`;
      break;
  }
  // The plain body: links as Markdown, line breaks as newlines, the text unescaped.
  const body = htmlUnescape(html.replace(/<a [^>]*?href="([^">]*?)">(.*?)<\/a>/g, "[$2]($1)").replaceAll("<br>", "\n"));
  const msgtype = MATRIX_MSGTYPES[f.meta.message_type ?? "1"] ?? "m.notice";
  return { body, msgtype, format: "org.matrix.custom.html", formatted_body: html, ...(h.kind === "push" && rawCommits.length ? { "io.gitea.commits": rawCommits } : {}) };
}

function wechatwork(h: Happened, f: Facts): unknown {
  let content: string;
  if (h.kind === "push") {
    const title = `# ${f.repo.full_name}:${h.branch} <font color="warning">  ${newCommits(h.total)}  </font>`;
    const lines = h.commits.map(
      (c) => ` > [${c.id.slice(0, 7)}](${c.url}) \r\n ><font color="info">${c.message.replaceAll("\n\n", "\r\n")}</font> \n ><font color="warning">${c.author ? `Author: ${c.author.name}` : ""}</font>`,
    );
    content = `${title}\r\n\r\n${lines.join("\n")}`;
  } else content = plain(h, f, () => "", "").title;
  return { msgtype: "markdown", text: { content: "", mentioned_list: null, mentioned_mobile_list: null }, markdown: { content } };
}

/** Packagist: a push asks it to update the package; every other event sends an empty URL (as Gitea). */
const packagist = (h: Happened, f: Facts): unknown => ({ repository: { url: h.kind === "push" ? (f.meta.package_url ?? "") : "" } });

/** The types whose message is the body alone, sent with Gitea's default headers. */
const PLAIN_FORMATS: Record<string, (h: Happened, f: Facts) => unknown> = { slack, discord, dingtalk, telegram, msteams, wechatwork, packagist };

/** What the stored payload says happened; null for an event no message is made of. */
function happened(event: string, p: EventPayload): Happened | null {
  switch (event) {
    case "create":
    case "delete":
      return { kind: event, ref: p.ref ?? "", refType: p.ref_type ?? "branch" };
    case "fork":
      return p.forkee ? { kind: "fork", forkee: p.forkee } : null;
    case "push":
      return { kind: "push", ref: p.ref ?? "", branch: shortRef(p.ref ?? ""), commits: p.commits ?? [], total: p.total_commits ?? 0, compare: p.compare_url ?? "" };
    case "repository":
      return { kind: "repository", created: p.action === "created" };
  }
  return null;
}

/**
 * Whether a chat hook gets this event at all: Gitea sends a push without commits (a tag, a
 * rewinding force push) only to `gitea` and `gogs` hooks.
 */
function chatDelivers(event: string, payload: EventPayload): boolean {
  return event !== "push" || (payload.commits?.length ?? 0) > 0;
}

/**
 * The request body of a chat hook for a stored payload; null when the event makes no message for
 * it (an event no format words, a push without commits). `secret` and `now` (Unix seconds) sign
 * Feishu's body; `sha1Hex` names Matrix's transaction (the body's SHA-1, so a message sent twice is
 * one message in the room).
 */
export function chatRequest(
  type: string,
  event: string,
  payloadText: string,
  meta: HookMeta,
  crypto: { secret: string; now: number; feishuSign: FeishuSigner; sha1Hex: (s: string) => string },
): ChatRequest | null {
  const p = JSON.parse(payloadText) as EventPayload;
  const h = happened(event, p);
  if (!h || !CHAT_TYPES.has(type) || !chatDelivers(event, p)) return null;
  const repoUrl = p.repository.html_url;
  const app = repoUrl.endsWith(p.repository.full_name) ? repoUrl.slice(0, repoUrl.length - p.repository.full_name.length) : "";
  const f: Facts = { app, repo: p.repository, sender: p.sender, pusher: p.pusher ?? p.sender, meta };
  if (type === "feishu") return { body: json(feishu(h, f, crypto.secret, crypto.now, crypto.feishuSign)), defaultHeaders: false };
  if (type === "matrix") {
    const body = json(matrix(h, f, p.commits ?? []));
    // Gitea's getMatrixTxnID refuses a body of 64 KiB or more (the delivery is recorded as failed).
    const size = new TextEncoder().encode(body).length;
    if (size >= MATRIX_MAX) throw new Error(`getMatrixTxnID: payload size ${size} > ${MATRIX_MAX}`);
    return { body, put: { suffix: crypto.sha1Hex(body) }, defaultHeaders: true };
  }
  return { body: json(PLAIN_FORMATS[type]!(h, f)), defaultHeaders: true }; // !: every other chat type has one
}
