/** Label colour normalization and the built-in label templates (Gitea modules/label, options/label; reference §5.1–5.2). */
import { describe, expect, it } from "vitest";
import {
  ColorError,
  cleanTemplateName,
  labelTemplate,
  labelTemplateDescription,
  labelTemplateNames,
  labelTemplateRows,
  normalizeColor,
} from "../../functions/lib/labels.ts";

const rejection = (input: string) => {
  try {
    return normalizeColor(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ColorError);
    return (e as Error).message;
  }
};

describe("normalizeColor", () => {
  it("6 hex digits with or without #, any case → #rrggbb", () => {
    expect(normalizeColor("AABBCC")).toBe("#aabbcc");
    expect(normalizeColor("#aabbcc")).toBe("#aabbcc");
    expect(normalizeColor("#E4e4E4")).toBe("#e4e4e4");
  });

  it("3 hex digits with or without # expand to 6", () => {
    expect(normalizeColor("abc")).toBe("#aabbcc");
    expect(normalizeColor("#ABC")).toBe("#aabbcc");
    expect(normalizeColor("#0f0")).toBe("#00ff00");
  });

  it("surrounding white space (Go's unicode spaces included) is trimmed", () => {
    expect(normalizeColor("  #E4E4E4 \n")).toBe("#e4e4e4");
    expect(normalizeColor("\u00a0abc\u3000")).toBe("#aabbcc");
  });

  it.each([
    ["#abcd", "bad color code: #abcd"],
    ["red", "bad color code: #red"],
    ["", "bad color code: "],
    ["   ", "bad color code: "],
    ["#gggggg", "bad color code: #gggggg"],
    ["12345", "bad color code: 12345"],
    ["1234567", "bad color code: 1234567"],
    ["##abc", "bad color code: ##abc"],
    ["#ab c", "bad color code: #ab c"],
    ["ZZZZZZ", "bad color code: #zzzzzz"],
    ["€", "bad color code: #€"],
    ["éé", "bad color code: éé"],
    ["rgb(1,2,3)", "bad color code: rgb(1,2,3)"],
  ])("%j is rejected with %j (the color after trim, lower-case and #)", (input, message) => {
    expect(rejection(input)).toBe(message);
  });

  it("lower-casing is Go's per-rune ToLower (İ → i), so messages match Gitea's", () => {
    expect(rejection("İBC")).toBe("bad color code: #ibc");
  });

  it("huge input is rejected, never thrown as anything but ColorError", () => {
    expect(rejection("a".repeat(100_000))).toBe(`bad color code: ${"a".repeat(100_000)}`);
  });
});

describe("label templates", () => {
  it("names are Advanced and Default, sorted", () => {
    expect(labelTemplateNames()).toEqual(["Advanced", "Default"]);
  });

  it("Default is Gitea's 7 labels, none exclusive, colours without #", () => {
    expect(labelTemplate("Default")).toEqual([
      { name: "bug", exclusive: false, color: "ee0701", description: "Something is not working" },
      { name: "duplicate", exclusive: false, color: "cccccc", description: "This issue or pull request already exists" },
      { name: "enhancement", exclusive: false, color: "84b6eb", description: "New feature" },
      { name: "help wanted", exclusive: false, color: "128a0c", description: "Need some help" },
      { name: "invalid", exclusive: false, color: "e6e6e6", description: "Something is wrong" },
      { name: "question", exclusive: false, color: "cc317c", description: "More information is needed" },
      { name: "wontfix", exclusive: false, color: "ffffff", description: "This won't be fixed" },
    ]);
  });

  it("Advanced is the newest snapshot's 18 labels in file order (Compat/Breaking), Reviewed/Status/Priority exclusive", () => {
    const x = (name: string, color: string, description: string, exclusive = false) => ({ name, exclusive, color, description });
    expect(labelTemplate("Advanced")).toEqual([
      x("Kind/Bug", "ee0701", "Something is not working"),
      x("Kind/Feature", "0288d1", "New functionality"),
      x("Kind/Enhancement", "84b6eb", "Improve existing functionality"),
      x("Kind/Security", "9c27b0", "This is security issue"),
      x("Kind/Testing", "795548", "Issue or pull request related to testing"),
      x("Kind/Documentation", "37474f", "Documentation changes"),
      x("Compat/Breaking", "c62828", "Breaking change that won't be backward compatible"),
      x("Reviewed/Duplicate", "616161", "This issue or pull request already exists", true),
      x("Reviewed/Invalid", "546e7a", "Invalid issue", true),
      x("Reviewed/Confirmed", "795548", "Issue has been confirmed", true),
      x("Reviewed/Won't Fix", "eeeeee", "This issue won't be fixed", true),
      x("Status/Need More Info", "424242", "Feedback is required to reproduce issue or to continue work", true),
      x("Status/Blocked", "880e4f", "Something is blocking this issue or pull request", true),
      x("Status/Abandoned", "222222", "Somebody has started to work on this but abandoned work", true),
      x("Priority/Critical", "b71c1c", "The priority is critical", true),
      x("Priority/High", "d32f2f", "The priority is high", true),
      x("Priority/Medium", "e64a19", "The priority is medium", true),
      x("Priority/Low", "4caf50", "The priority is low", true),
    ]);
  });

  it("LabelTemplate JSON keys are name, exclusive, color, description", () => {
    expect(Object.keys(labelTemplate("Default")![0]!)).toEqual(["name", "exclusive", "color", "description"]);
  });

  it("lookup is case-sensitive like Gitea's display-name map: unknown → null", () => {
    expect(labelTemplate("default")).toBeNull();
    expect(labelTemplate("ADVANCED")).toBeNull();
    expect(labelTemplate("Nope")).toBeNull();
    expect(labelTemplate("")).toBeNull();
    expect(labelTemplate("Default.yaml")).toBeNull();
  });

  it("the name is cleaned like util.PathJoinRelX before the lookup", () => {
    expect(cleanTemplateName("./Default")).toBe("Default");
    expect(cleanTemplateName("x/../Advanced")).toBe("Advanced");
    expect(cleanTemplateName("\\Default\\")).toBe("Default");
    expect(cleanTemplateName("/")).toBe(".");
    expect(labelTemplate("../Default")).toHaveLength(7);
  });

  it("callers get copies: mutating a result does not change the template", () => {
    labelTemplate("Default")![0]!.name = "changed";
    expect(labelTemplate("Default")![0]!.name).toBe("bug");
  });

  it("rows to insert carry #rrggbb colours and the exclusive flag; unknown template → null", () => {
    const rows = labelTemplateRows("Advanced")!;
    expect(rows).toHaveLength(18);
    expect(rows[7]).toEqual({ name: "Reviewed/Duplicate", exclusive: true, color: "#616161", description: "This issue or pull request already exists" });
    expect(labelTemplateRows("Default")![0]).toEqual({ name: "bug", exclusive: false, color: "#ee0701", description: "Something is not working" });
    expect(labelTemplateRows("nope")).toBeNull();
  });

  it("template description is the label names joined by ', ' (label.LoadFormatted)", () => {
    expect(labelTemplateDescription("Default")).toBe("bug, duplicate, enhancement, help wanted, invalid, question, wontfix");
    expect(labelTemplateDescription("x")).toBeNull();
  });
});
