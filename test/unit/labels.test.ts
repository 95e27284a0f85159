/** Label colour normalization and the built-in templates (reference §5.1–5.2). */
import { describe, expect, it } from "vitest";
import { labelTemplate, labelTemplateNames, normalizeColor } from "../../functions/lib/labels.ts";

describe("normalizeColor", () => {
  it.each([
    ["abc", "#aabbcc"],
    ["#abc", "#aabbcc"],
    ["AABBCC", "#aabbcc"],
    ["#aabbcc", "#aabbcc"],
    ["  #E4E4E4 ", "#e4e4e4"],
  ])("%j → %s", (input, out) => expect(normalizeColor(input)).toBe(out));

  it.each([
    ["#abcd", "bad color code: #abcd"],
    ["red", "bad color code: #red"],
    ["", "bad color code: "],
    ["#gggggg", "bad color code: #gggggg"],
    ["12345", "bad color code: 12345"],
  ])("%j is rejected with %s", (input, message) => expect(() => normalizeColor(input)).toThrow(message));
});

describe("label templates", () => {
  it("names are Advanced and Default, sorted", () => {
    expect(labelTemplateNames()).toEqual(["Advanced", "Default"]);
  });

  it("Default has Gitea's 7 labels, none exclusive, colours without #", () => {
    const d = labelTemplate("Default")!;
    expect(d.map((l) => [l.name, l.color])).toEqual([
      ["bug", "ee0701"],
      ["duplicate", "cccccc"],
      ["enhancement", "84b6eb"],
      ["help wanted", "128a0c"],
      ["invalid", "e6e6e6"],
      ["question", "cc317c"],
      ["wontfix", "ffffff"],
    ]);
    expect(d.some((l) => l.exclusive)).toBe(false);
  });

  it("Advanced has 18 labels; the Reviewed, Status and Priority scopes are exclusive", () => {
    const a = labelTemplate("Advanced")!;
    expect(a).toHaveLength(18);
    expect(a.filter((l) => l.exclusive).map((l) => l.name.split("/")[0])).toEqual(Array(11).fill(0).map((_, i) => (i < 4 ? "Reviewed" : i < 7 ? "Status" : "Priority")));
    expect(a.find((l) => l.name === "Compat/Breaking")?.color).toBe("c62828");
    for (const l of a) expect(normalizeColor(l.color)).toBe(`#${l.color}`);
  });

  it("an unknown template is null, and callers get copies", () => {
    expect(labelTemplate("Nope")).toBeNull();
    labelTemplate("Default")![0].name = "changed";
    expect(labelTemplate("Default")![0].name).toBe("bug");
  });
});
