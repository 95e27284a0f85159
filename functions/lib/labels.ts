/** Label colours and the built-in label templates (Gitea modules/label; reference §5.1–5.2). */
export class ColorError extends Error {}

/** Gitea's NormalizeColor: trim, lower-case, `#` prefix, 3→6 digits; invalid → `bad color code: <c>`. */
export function normalizeColor(input: string): string {
  let c = input.trim().toLowerCase();
  if (c.length === 6 || c.length === 3) c = `#${c}`;
  if (!/^#?([0-9a-f]{6}|[0-9a-f]{3})$/.test(c)) throw new ColorError(`bad color code: ${c}`);
  if (!c.startsWith("#")) c = `#${c}`;
  if (c.length === 4) c = `#${c[1]}${c[1]}${c[2]}${c[2]}${c[3]}${c[3]}`;
  return c;
}

export interface LabelTemplate {
  name: string;
  exclusive: boolean;
  color: string;
  description: string;
}

const t = (name: string, color: string, description: string, exclusive = false): LabelTemplate => ({ name, exclusive, color, description });

const TEMPLATES: Record<string, LabelTemplate[]> = {
  Advanced: [
    t("Kind/Bug", "ee0701", "Something is not working"),
    t("Kind/Feature", "0288d1", "New functionality"),
    t("Kind/Enhancement", "84b6eb", "Improve existing functionality"),
    t("Kind/Security", "9c27b0", "This is security issue"),
    t("Kind/Testing", "795548", "Issue or pull request related to testing"),
    t("Kind/Documentation", "37474f", "Documentation changes"),
    t("Compat/Breaking", "c62828", "Breaking change that won't be backward compatible"),
    t("Reviewed/Duplicate", "616161", "This issue or pull request already exists", true),
    t("Reviewed/Invalid", "546e7a", "Invalid issue", true),
    t("Reviewed/Confirmed", "795548", "Issue has been confirmed", true),
    t("Reviewed/Won't Fix", "eeeeee", "This issue won't be fixed", true),
    t("Status/Need More Info", "424242", "Feedback is required to reproduce issue or to continue work", true),
    t("Status/Blocked", "880e4f", "Something is blocking this issue or pull request", true),
    t("Status/Abandoned", "222222", "Somebody has started to work on this but abandoned work", true),
    t("Priority/Critical", "b71c1c", "The priority is critical", true),
    t("Priority/High", "d32f2f", "The priority is high", true),
    t("Priority/Medium", "e64a19", "The priority is medium", true),
    t("Priority/Low", "4caf50", "The priority is low", true),
  ],
  Default: [
    t("bug", "ee0701", "Something is not working"),
    t("duplicate", "cccccc", "This issue or pull request already exists"),
    t("enhancement", "84b6eb", "New feature"),
    t("help wanted", "128a0c", "Need some help"),
    t("invalid", "e6e6e6", "Something is wrong"),
    t("question", "cc317c", "More information is needed"),
    t("wontfix", "ffffff", "This won't be fixed"),
  ],
};

export const labelTemplateNames = () => Object.keys(TEMPLATES).sort();
export const labelTemplate = (name: string): LabelTemplate[] | null => TEMPLATES[name]?.map((l) => ({ ...l })) ?? null;
