/**
 * Label colours and the built-in label templates (Gitea modules/label/{label,parser}.go,
 * options/label/{Default,Advanced.yaml}, modules/repository/init.go; reference §5.1–5.2).
 * Pure data and functions: no I/O.
 */

/** The error of NormalizeColor; its message is Gitea's `bad color code: <color>` (→ 422). */
export class ColorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ColorError";
  }
}

const COLOR_PATTERN = /^#?(?:[0-9a-f]{6}|[0-9a-f]{3})$/;
// Go's unicode.IsSpace: ASCII white space, U+0085, U+00A0 and the Z categories.
const GO_SPACE = "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, "g");
const encoder = new TextEncoder();

/** Go's strings.ToLower: rune by rune (no context rules; U+0130 İ lowers to a plain i). */
function goToLower(s: string): string {
  let out = "";
  for (const ch of s) {
    if (ch === "\u0130") out += "i";
    else {
      const lower = ch.toLowerCase();
      out += Array.from(lower).length === 1 ? lower : ch;
    }
  }
  return out;
}

/**
 * Gitea's label.NormalizeColor: lower-case, trim, `#` added when the length (in UTF-8 bytes) is 6
 * or 3, must then match `^#?([0-9a-f]{6}|[0-9a-f]{3})$`, short form expanded. Returns `#rrggbb`.
 * @example normalizeColor(" ABC ") // "#aabbcc"
 * @throws ColorError `bad color code: <color after trim/lower-case/#>`
 */
export function normalizeColor(input: string): string {
  let color = goToLower(input).replace(GO_TRIM, "");
  const bytes = encoder.encode(color).length;
  if (bytes === 6 || bytes === 3) color = `#${color}`;
  if (!COLOR_PATTERN.test(color)) throw new ColorError(`bad color code: ${color}`);
  if (color.length === 4) color = `#${color[1]}${color[1]}${color[2]}${color[2]}${color[3]}${color[3]}`;
  return color;
}

/** Gitea's LabelTemplate JSON: colour without `#`. */
export interface LabelTemplate {
  name: string;
  exclusive: boolean;
  color: string;
  description: string;
}

/** A label row to insert from a template: colour stored as `#rrggbb`. */
export interface LabelTemplateRow {
  name: string;
  exclusive: boolean;
  color: string;
  description: string;
}

const label = (name: string, color: string, description: string, exclusive = false): LabelTemplate => ({ name, exclusive, color, description });

/** options/label/Default (legacy `#color name ; description` lines): 7 labels, none exclusive. */
export const DEFAULT_LABELS: readonly LabelTemplate[] = Object.freeze([
  label("bug", "ee0701", "Something is not working"),
  label("duplicate", "cccccc", "This issue or pull request already exists"),
  label("enhancement", "84b6eb", "New feature"),
  label("help wanted", "128a0c", "Need some help"),
  label("invalid", "e6e6e6", "Something is wrong"),
  label("question", "cc317c", "More information is needed"),
  label("wontfix", "ffffff", "This won't be fixed"),
]);

/** options/label/Advanced.yaml, newest snapshot (`Compat/Breaking`): 18 labels in file order. */
export const ADVANCED_LABELS: readonly LabelTemplate[] = Object.freeze([
  label("Kind/Bug", "ee0701", "Something is not working"),
  label("Kind/Feature", "0288d1", "New functionality"),
  label("Kind/Enhancement", "84b6eb", "Improve existing functionality"),
  label("Kind/Security", "9c27b0", "This is security issue"),
  label("Kind/Testing", "795548", "Issue or pull request related to testing"),
  label("Kind/Documentation", "37474f", "Documentation changes"),
  label("Compat/Breaking", "c62828", "Breaking change that won't be backward compatible"),
  label("Reviewed/Duplicate", "616161", "This issue or pull request already exists", true),
  label("Reviewed/Invalid", "546e7a", "Invalid issue", true),
  label("Reviewed/Confirmed", "795548", "Issue has been confirmed", true),
  label("Reviewed/Won't Fix", "eeeeee", "This issue won't be fixed", true),
  label("Status/Need More Info", "424242", "Feedback is required to reproduce issue or to continue work", true),
  label("Status/Blocked", "880e4f", "Something is blocking this issue or pull request", true),
  label("Status/Abandoned", "222222", "Somebody has started to work on this but abandoned work", true),
  label("Priority/Critical", "b71c1c", "The priority is critical", true),
  label("Priority/High", "d32f2f", "The priority is high", true),
  label("Priority/Medium", "e64a19", "The priority is medium", true),
  label("Priority/Low", "4caf50", "The priority is low", true),
]);

const TEMPLATES: ReadonlyMap<string, readonly LabelTemplate[]> = new Map([
  ["Advanced", ADVANCED_LABELS],
  ["Default", DEFAULT_LABELS],
]);

/** GET /label/templates: the display names, sorted → `["Advanced","Default"]`. */
export const labelTemplateNames = (): string[] => [...TEMPLATES.keys()].sort();

/**
 * Gitea's util.PathJoinRelX on the `{name}` path parameter: backslashes become slashes, the path
 * is cleaned as if rooted ("./Default", "x/../Default", "/Default/" → "Default").
 */
export function cleanTemplateName(name: string): string {
  const parts: string[] = [];
  for (const seg of name.replace(/\\/g, "/").split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return parts.length ? parts.join("/") : name === "" ? "" : ".";
}

/**
 * GET /label/templates/{name}: the template's labels as LabelTemplate JSON (fresh copies), or null
 * when unknown (→ 404). The lookup is an exact, case-sensitive map lookup, as Gitea's
 * LoadTemplateLabelsByDisplayName; the name is cleaned first like the API handler does.
 */
export function labelTemplate(name: string): LabelTemplate[] | null {
  const list = TEMPLATES.get(cleanTemplateName(name));
  return list ? list.map((l) => ({ ...l })) : null;
}

/** InitializeLabels: the rows to insert for a template (`#rrggbb` colours), or null when unknown (→ 422). */
export function labelTemplateRows(name: string): LabelTemplateRow[] | null {
  const list = labelTemplate(name);
  return list ? list.map((l) => ({ name: l.name, exclusive: l.exclusive, color: normalizeColor(l.color), description: l.description })) : null;
}

/** label.LoadFormatted: the template's label names joined by ", ", or null when unknown. */
export function labelTemplateDescription(name: string): string | null {
  return labelTemplate(name)?.map((l) => l.name).join(", ") ?? null;
}
