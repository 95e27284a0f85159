/** URL escaping shared by the converters. */

/**
 * encodeURIComponent of any JS string: a lone surrogate (which encodeURIComponent throws on) is
 * escaped as U+FFFD, the character Go's JSON decoder makes of it, so a converter never throws —
 * least of all after a write it is answering.
 */
export const escapeComponent = (s: string) => encodeURIComponent(s.toWellFormed());

const percent = (ch: string) => [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/**
 * Go's url.PathEscape: every byte but the unreserved characters (`A-Za-z0-9-_.~`) and `$&+:=@` is
 * escaped (`!'()*,;` too, which encodeURIComponent keeps or Go escapes in a segment).
 */
export const goPathEscape = (s: string) => [...s.toWellFormed()].map((ch) => (/^[A-Za-z0-9\-_.~$&+:=@]$/.test(ch) ? ch : percent(ch))).join("");

/** Gitea's util.PathEscapeSegments: each `/`-separated segment escaped as Go's url.PathEscape. */
export const pathEscapeSegments = (p: string) => p.split("/").map(goPathEscape).join("/");
