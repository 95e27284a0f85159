/** URL escaping shared by the converters. */

/**
 * encodeURIComponent of any JS string: a lone surrogate (which encodeURIComponent throws on) is
 * escaped as U+FFFD, the character Go's JSON decoder makes of it, so a converter never throws —
 * least of all after a write it is answering.
 */
export const escapeComponent = (s: string) => encodeURIComponent(s.toWellFormed());
