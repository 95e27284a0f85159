/** Issue templates and issue config (Gitea modules/issue/template, services/issue/template.go, modules/structs/issue.go). */
import { describe, expect, it } from "vitest";
import {
  ellipsisDisplayString,
  isRequestUri,
  loadIssueConfig,
  loadIssueTemplates,
  parseIssueTemplate,
  templateWarning,
  validateIssueConfig,
} from "../../functions/lib/issue-templates.ts";

const md = `---
name: Bug report
about: Something is broken
title: "[BUG] "
labels: bug, needs triage ,
assignees:
  - alice
ref: main
---
Describe the bug.
`;

const form = `name: Feature
description: Ask for something
labels: [enhancement]
body:
  - type: markdown
    attributes:
      value: Thanks!
  - type: input
    id: summary
    attributes:
      label: Summary
      placeholder: one line
    validations:
      required: true
  - type: dropdown
    id: area
    attributes:
      label: Area
      options: [api, agent]
      default: 1
  - type: checkboxes
    attributes:
      label: Terms
      options:
        - label: I searched
          required: true
    visible: [form]
`;

/** A YAML form with one field, for the field rules. */
const field = (yaml: string) => `name: n\nabout: a\nbody:\n${yaml.replace(/^/gm, "  ")}\n`;
const err = (path: string, content: string) => {
  try {
    parseIssueTemplate(path, content);
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
};

describe("markdown templates", () => {
  it("front matter gives name, about, title, labels (comma-separated), assignees (list), ref; content is the body", () => {
    expect(parseIssueTemplate(".gitea/ISSUE_TEMPLATE/bug.md", md)).toEqual({
      name: "Bug report",
      title: "[BUG] ",
      about: "Something is broken",
      labels: ["bug", "needs triage"],
      assignees: ["alice"],
      ref: "main",
      content: "Describe the bug.\n",
      body: null,
      file_name: ".gitea/ISSUE_TEMPLATE/bug.md",
    });
  });

  it("keys come in Gitea's order: name, title, about, labels, assignees, ref, content, body, file_name", () => {
    expect(Object.keys(parseIssueTemplate("x.md", md))).toEqual(["name", "title", "about", "labels", "assignees", "ref", "content", "body", "file_name"]);
  });

  it("absent labels and assignees are null (Go nil slices); an empty list is []", () => {
    const t = parseIssueTemplate("x.md", "---\nname: n\nabout: a\nassignees: []\n---\n");
    expect(t.labels).toBeNull();
    expect(t.assignees).toEqual([]);
    expect(parseIssueTemplate("x.md", "---\nname: n\nabout: a\nlabels: ' , '\n---\n").labels).toBeNull();
  });

  it("description stands in for an empty about", () => {
    expect(parseIssueTemplate("x.md", "---\nname: n\ndescription: from description\n---\nbody").about).toBe("from description");
    expect(parseIssueTemplate("x.md", "---\nname: n\nabout: A\ndescription: D\n---\n").about).toBe("A");
  });

  it("any run of 3+ dashes (with spaces around) separates; no body after the closing line → empty content", () => {
    expect(parseIssueTemplate("x.md", "  -----  \nname: n\nabout: a\n---").content).toBe("");
  });

  it("no front matter: the whole file is the template, named after the file, about = its first 80 columns", () => {
    const text = "x".repeat(100);
    expect(parseIssueTemplate("ISSUE_TEMPLATE/plain.md", text)).toMatchObject({ name: "plain.md", about: `${"x".repeat(77)}…`, content: text, labels: null });
  });

  it("unparsable front matter (bad YAML, wrong types, CRLF separators, empty front) falls back to the whole file", () => {
    for (const content of ["---\nname: [x\n---\nb", "---\nname: [x]\nabout: a\n---\nb", "---\r\nname: n\r\nabout: a\r\n---\r\nb", "---\n---\nb", "---\nname: n\nabout: a\n"]) {
      expect(parseIssueTemplate("d/f.md", content)).toMatchObject({ name: "f.md", content, about: content });
    }
  });

  it("fallback keeps fields decoded before a type error, as yaml.v3 does", () => {
    expect(parseIssueTemplate("f.md", "---\ntitle: T\nname: [x]\n---\nb")).toMatchObject({ name: "f.md", title: "T" });
  });

  it("an empty or blank markdown file fails with 'about' is required", () => {
    expect(err("x.md", "")).toBe("'about' is required");
    expect(err("x.md", "  \n\t")).toBe("'about' is required");
  });

  it("metadata rules: blank name → 'name' is required, blank about → 'about' is required", () => {
    expect(err("x.md", "---\nname: '  '\nabout: a\n---\n")).toBe("'name' is required");
    expect(err("x.md", "---\nname: n\n---\n")).toBe("'about' is required");
  });

  it("a mapping for labels aborts the front matter (IssueTemplateStringSlice error) → fallback; in YAML forms it is the file's error", () => {
    expect(parseIssueTemplate("f.md", "---\nname: n\nabout: a\nlabels: {a: 1}\n---\nb").name).toBe("f.md");
    expect(err("f.yaml", "name: n\nabout: a\nlabels: {a: 1}\n")).toBe("yaml unmarshal: line 3: cannot unmarshal !!map into IssueTemplateStringSlice");
  });

  it("scalars keep their source text when decoded into strings (numbers, YAML 1.1 booleans)", () => {
    expect(parseIssueTemplate("x.md", "---\nname: 0x10\nabout: yes\nlabels: [1.50, true]\n---\n")).toMatchObject({ name: "0x10", about: "yes", labels: ["1.50", "true"] });
  });
});

describe("YAML form templates", () => {
  it("fields keep type, id, attributes, validations; ids default to the index; visible defaults to [form, content] ([form] for markdown)", () => {
    const t = parseIssueTemplate(".github/ISSUE_TEMPLATE/feature.yaml", form);
    expect(t.about).toBe("Ask for something");
    expect(t.content).toBe("");
    expect(t.body).toEqual([
      { type: "markdown", id: "0", attributes: { value: "Thanks!" }, validations: null, visible: ["form"] },
      { type: "input", id: "summary", attributes: { label: "Summary", placeholder: "one line" }, validations: { required: true }, visible: ["form", "content"] },
      { type: "dropdown", id: "area", attributes: { default: 1, label: "Area", options: ["api", "agent"] }, validations: null, visible: ["form", "content"] },
      { type: "checkboxes", id: "3", attributes: { label: "Terms", options: [{ label: "I searched", required: true }] }, validations: null, visible: ["form"] },
    ]);
  });

  it("attribute maps are written with sorted keys, as Go's encoding/json does", () => {
    const t = parseIssueTemplate("x.yml", field("- type: input\n  attributes: {value: v, label: L, description: d}"));
    expect(Object.keys(t.body![0]!.attributes!)).toEqual(["description", "label", "value"]);
  });

  it("an explicit empty visible list is omitted (omitempty)", () => {
    const t = parseIssueTemplate("x.yml", field("- type: input\n  attributes: {label: L}\n  visible: []"));
    expect(t.body![0]).not.toHaveProperty("visible");
  });

  it.each([
    ["missing name", "about: a\nbody: [{type: markdown, attributes: {value: v}}]\n", "'name' is required"],
    ["missing about and description", "name: n\nbody: [{type: markdown, attributes: {value: v}}]\n", "'about' is required"],
    ["no body", "name: n\nabout: a\n", "'body' is required"],
    ["empty body", "name: n\nabout: a\nbody: []\n", "'body' is required"],
    ["unknown type", field("- type: slider\n  attributes: {label: L}"), "body[0](slider): unknown type"],
    ["missing type", field("- attributes: {label: L}"), "body[0](): unknown type"],
    ["bad id", field("- type: input\n  id: 'a b'\n  attributes: {label: L}"), "body[0](input): 'id' should contain only alphanumeric, '-' and '_'"],
    ["duplicate id", field("- type: input\n  id: a\n  attributes: {label: L}\n- type: textarea\n  id: a\n  attributes: {label: M}"), "body[1](textarea): 'id' should be unique"],
    ["default id colliding with an explicit one", field("- type: input\n  id: '1'\n  attributes: {label: L}\n- type: input\n  attributes: {label: M}"), "body[1](input): 'id' should be unique"],
    ["missing label", field("- type: textarea\n  attributes: {}"), "body[0](textarea): 'label' is required"],
    ["blank label", field("- type: textarea\n  attributes: {label: '  '}"), "body[0](textarea): 'label' is required"],
    ["non-string label", field("- type: textarea\n  attributes: {label: 5}"), "body[0](textarea): 'label' should be a string"],
    ["markdown without value", field("- type: markdown"), "body[0](markdown): 'value' is required"],
    ["markdown with null value", field("- type: markdown\n  attributes: {value: ~}"), "body[0](markdown): 'value' should be a string"],
    ["textarea render not a string", field("- type: textarea\n  attributes: {label: L, description: d, placeholder: p, value: v, render: [x]}"), "body[0](textarea): 'render' should be a string"],
    ["input is_number not a bool", field("- type: input\n  attributes: {label: L}\n  validations: {is_number: 'yes'}"), "body[0](input): 'is_number' should be a bool"],
    ["input regex not a string", field("- type: input\n  attributes: {label: L}\n  validations: {regex: 5}"), "body[0](input): 'regex' should be a string"],
    ["required not a bool", field("- type: input\n  attributes: {label: L}\n  validations: {required: 1}"), "body[0](input): 'required' should be a bool"],
    ["required hidden field", field("- type: input\n  attributes: {label: L}\n  validations: {required: true}\n  visible: [content]"), "body[0](input): can not require a hidden field"],
    ["dropdown without options", field("- type: dropdown\n  attributes: {label: L}"), "body[0](dropdown): 'options' is required and should be a array"],
    ["dropdown option not a string", field("- type: dropdown\n  attributes: {label: L, options: [a, [b]]}"), "body[0](dropdown), option[1]: should be a string"],
    ["dropdown multiple not a bool", field("- type: dropdown\n  attributes: {label: L, multiple: 'no', options: [a]}"), "body[0](dropdown): 'multiple' should be a bool"],
    ["dropdown default not an int", field("- type: dropdown\n  attributes: {label: L, options: [a], default: 0.0}"), "body[0](dropdown): 'default' should be an int"],
    ["dropdown default out of range", field("- type: dropdown\n  attributes: {label: L, options: [a], default: -1}"), "body[0](dropdown): the value of 'default' is out of range"],
    ["checkbox option not a dictionary", field("- type: checkboxes\n  attributes: {label: L, options: [a]}"), "body[0](checkboxes), option[0]: should be a dictionary"],
    ["checkbox option with a non-string key", field("- type: checkboxes\n  attributes: {label: L, options: [{1: a}]}"), "body[0](checkboxes), option[0]: should be a dictionary"],
    ["checkbox option without label", field("- type: checkboxes\n  attributes: {label: L, options: [{required: true}]}"), "body[0](checkboxes), option[0]: 'label' is required and should be a string"],
    ["checkbox option visible not a list", field("- type: checkboxes\n  attributes: {label: L, options: [{label: x, visible: form}]}"), "body[0](checkboxes), option[0]: 'visible' should be list"],
    ["checkbox option visible value", field("- type: checkboxes\n  attributes: {label: L, options: [{label: x, visible: [sidebar]}]}"), "body[0](checkboxes), option[0]: 'visible' list can only contain strings of 'form' and 'content'"],
    ["checkbox option required not a bool", field("- type: checkboxes\n  attributes: {label: L, options: [{label: x, required: 'true'}]}"), "body[0](checkboxes), option[0]: 'required' should be a bool"],
    ["checkbox option required but hidden (even required: false)", field("- type: checkboxes\n  attributes: {label: L, options: [{label: x, required: false, visible: [content]}]}"), "body[0](checkboxes), option[0]: can not require a hidden checkbox"],
  ])("rule: %s", (_rule, content, message) => {
    expect(err("x.yaml", content)).toBe(message);
  });

  it("optional string attributes are checked only up to the first absent one (Gitea's validateStringItem)", () => {
    expect(err("x.yaml", field("- type: textarea\n  attributes: {label: L, placeholder: [not, checked]}"))).toBe("no error");
  });

  it("wrong YAML types are yaml.v3 unmarshal errors with lines, all of them", () => {
    expect(err("x.yaml", "name: [n]\nabout: {a: 1}\nbody: foo\n")).toBe(
      "yaml unmarshal: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into string\n  line 2: cannot unmarshal !!map into string\n  line 3: cannot unmarshal !!str `foo` into []*structs.IssueFormField",
    );
    expect(err("x.yaml", field("- type: input\n  attributes: [a]"))).toBe("yaml unmarshal: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!seq into map[string]interface {}");
    expect(err("x.yaml", field("- type: input\n  attributes: {label: L}\n  visible: form"))).toBe(
      "yaml unmarshal: yaml: unmarshal errors:\n  line 6: cannot unmarshal !!str `form` into []structs.IssueFormFieldVisible",
    );
    expect(err("x.yaml", "- a\n- b\n")).toBe("yaml unmarshal: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into structs.IssueTemplate");
    expect(err("x.yaml", "a long scalar document\n")).toBe("yaml unmarshal: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `a long ...` into structs.IssueTemplate");
  });

  it("duplicate keys are an unmarshal error", () => {
    expect(err("x.yaml", "name: a\nname: b\n")).toBe('yaml unmarshal: yaml: unmarshal errors:\n  line 2: mapping key "name" already defined at line 1');
  });

  it("malformed YAML is an error with the line, never a crash", () => {
    expect(err("x.yaml", "name: [unclosed\n")).toMatch(/^yaml unmarshal: yaml: line \d+: /);
    expect(err("x.yml", "\t- :\n  - ]]\n")).toMatch(/^yaml unmarshal: yaml: /);
  });

  it("a null body item is the file's error (Gitea would panic)", () => {
    expect(err("x.yaml", "name: n\nabout: a\nbody: [~]\n")).toBe("body[0]: field is null");
  });

  it("an alias bomb fails fast with excessive aliasing", () => {
    const levels = ["a: &a [x,x,x,x,x,x,x,x,x,x]"];
    for (let i = 1; i < 8; i++) levels.push(`${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10).fill(`*${"abcdefgh"[i - 1]}`).join(",")}]`);
    const bomb = `${levels.join("\n")}\nname: n\nabout: a\nbody:\n  - type: input\n    attributes: {label: L, x: *h}\n`;
    const started = Date.now();
    expect(err("x.yaml", bomb)).toBe("yaml unmarshal: yaml: document contains excessive aliasing");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("files larger than MaxDisplayFileSize (8 MiB) fail with 'too large'", () => {
    expect(err("x.md", "x".repeat(8 * 1024 * 1024 + 1))).toBe("too large: 8388609 > MaxDisplayFileSize");
  });
});

describe("loadIssueTemplates", () => {
  it("no templates → templates null (Gitea answers JSON null), no errors", () => {
    expect(loadIssueTemplates([])).toEqual({ templates: null, errors: [] });
    expect(loadIssueTemplates([{ path: "README.md", content: md }, { path: "docs/ISSUE_TEMPLATE/a.md", content: md }])).toEqual({ templates: null, errors: [] });
  });

  it("directories in Gitea's order, files in git (byte) order; config.yaml/yml, other extensions and subdirectories skipped", () => {
    const { templates, errors } = loadIssueTemplates([
      { path: ".gitlab/issue_template/z.md", content: md },
      { path: ".github/ISSUE_TEMPLATE/b.yaml", content: form },
      { path: ".gitea/ISSUE_TEMPLATE/b.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/B.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/config.yml", content: "blank_issues_enabled: false" },
      { path: ".gitea/ISSUE_TEMPLATE/nested/c.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/notes.txt", content: "x" },
      { path: ".gitea/ISSUE_TEMPLATE/upper.MD", content: md },
      { path: "ISSUE_TEMPLATE/root.md", content: md },
      { path: ".gitea/issue_template/lower.md", content: md },
    ]);
    expect(templates?.map((t) => t.file_name)).toEqual([
      "ISSUE_TEMPLATE/root.md",
      ".gitea/ISSUE_TEMPLATE/B.md",
      ".gitea/ISSUE_TEMPLATE/b.md",
      ".gitea/issue_template/lower.md",
      ".github/ISSUE_TEMPLATE/b.yaml",
      ".gitlab/issue_template/z.md",
    ]);
    expect(errors).toEqual([]);
  });

  it("ref without refs/ gets refs/heads/; refs/… is kept; an empty ref becomes refs/heads/", () => {
    const { templates } = loadIssueTemplates([
      { path: "ISSUE_TEMPLATE/a.md", content: md },
      { path: "ISSUE_TEMPLATE/b.md", content: md.replace("ref: main", "ref: refs/tags/v1") },
      { path: "ISSUE_TEMPLATE/c.md", content: md.replace("ref: main\n", "") },
    ]);
    expect(templates?.map((t) => t.ref)).toEqual(["refs/heads/main", "refs/tags/v1", "refs/heads/"]);
  });

  it("bad files are counted, good ones still returned; the warning header states the count", () => {
    const { templates, errors } = loadIssueTemplates([
      { path: ".gitea/ISSUE_TEMPLATE/good.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/bad.yaml", content: "name: [\n" },
      { path: ".gitea/ISSUE_TEMPLATE/empty.md", content: "" },
    ]);
    expect(templates?.map((t) => t.file_name)).toEqual([".gitea/ISSUE_TEMPLATE/good.md"]);
    expect(errors).toHaveLength(2);
    expect(errors[1]).toBe(".gitea/ISSUE_TEMPLATE/empty.md: 'about' is required");
    expect(templateWarning(errors.length)).toBe("error occurs when parsing issue template: count=2");
  });

  it("only failures → templates null with the errors", () => {
    expect(loadIssueTemplates([{ path: "issue_template/x.yml", content: "name: n\n" }])).toEqual({ templates: null, errors: ["issue_template/x.yml: 'about' is required"] });
  });
});

describe("issue config", () => {
  const cfg = (content: string, path = ".gitea/ISSUE_TEMPLATE/config.yaml") => [{ path, content }];

  it("defaults when there is no config file (or the repository is empty)", () => {
    expect(loadIssueConfig([])).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect(validateIssueConfig([])).toEqual({ valid: true, message: "" });
  });

  it("absent keys keep the defaults (blank issues enabled, no links)", () => {
    expect(loadIssueConfig(cfg("contact_links:\n  - name: Chat\n    url: https://chat.example\n    about: Ask here\n"))).toEqual({
      blank_issues_enabled: true,
      contact_links: [{ name: "Chat", url: "https://chat.example", about: "Ask here" }],
    });
    expect(loadIssueConfig(cfg("# only a comment\n"))).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect(validateIssueConfig(cfg(""))).toEqual({ valid: true, message: "" });
  });

  it("blank_issues_enabled accepts yaml.v3's YAML 1.1 booleans", () => {
    expect(loadIssueConfig(cfg("blank_issues_enabled: off\n")).blank_issues_enabled).toBe(false);
    expect(loadIssueConfig(cfg("blank_issues_enabled: FALSE\n")).blank_issues_enabled).toBe(false);
  });

  it("contact_links: ~ is null (nil slice)", () => {
    expect(loadIssueConfig(cfg("contact_links: ~\n"))).toEqual({ blank_issues_enabled: true, contact_links: null });
  });

  it("candidates in order: .gitea/ISSUE_TEMPLATE, .gitea/issue_template, .github/ISSUE_TEMPLATE, .github/issue_template; .yaml before .yml", () => {
    const files = [
      { path: ".github/ISSUE_TEMPLATE/config.yaml", content: "blank_issues_enabled: true" },
      { path: ".gitea/issue_template/config.yml", content: "blank_issues_enabled: false" },
      { path: ".gitea/issue_template/config.yaml", content: "blank_issues_enabled: no" },
      { path: "ISSUE_TEMPLATE/config.yaml", content: "blank_issues_enabled: [" },
    ];
    expect(loadIssueConfig(files).blank_issues_enabled).toBe(false);
    expect(validateIssueConfig(files)).toEqual({ valid: true, message: "" });
    expect(loadIssueConfig([files[0]!, { path: ".github/ISSUE_TEMPLATE/config.yml", content: "blank_issues_enabled: false" }]).blank_issues_enabled).toBe(true);
  });

  it.each([
    ["contact_links:\n  - url: https://x\n    about: a\n", "contact_link at position 1 is missing name key"],
    ["contact_links:\n  - name: n\n    url: https://x\n    about: a\n  - name: n\n    about: a\n", "contact_link at position 2 is missing url key"],
    ["contact_links:\n  - name: n\n    url: https://x\n", "contact_link at position 1 is missing about key"],
    ["contact_links:\n  - ~\n", "contact_link at position 1 is missing name key"],
    ["contact_links:\n  - name: n\n    url: 'not a url'\n    about: a\n", "not a url is not a valid URL"],
    ["contact_links:\n  - name: n\n    url: 'example.com/x'\n    about: a\n", "example.com/x is not a valid URL"],
    ["contact_links:\n  - name: n\n    url: 'https://exa mple.com'\n    about: a\n", "https://exa mple.com is not a valid URL"],
    ["blank_issues_enabled: maybe\n", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `maybe` into bool"],
    ["blank_issues_enabled: 1\n", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!int `1` into bool"],
    ["contact_links: {name: n}\n", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into []structs.IssueConfigContactLink"],
    ["contact_links: [x]\n", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `x` into structs.IssueConfigContactLink"],
    ["just text\n", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `just text` into structs.IssueConfig"],
  ])("invalid %j → valid false, message %j; GET issue_config answers the defaults", (content, message) => {
    expect(validateIssueConfig(cfg(content))).toEqual({ valid: false, message });
    expect(loadIssueConfig(cfg(content))).toEqual({ blank_issues_enabled: true, contact_links: [] });
  });

  it("a YAML syntax error is invalid with a 'yaml: line N:' message", () => {
    const v = validateIssueConfig(cfg("blank_issues_enabled: [\n", ".github/issue_template/config.yml"));
    expect(v.valid).toBe(false);
    expect(v.message).toMatch(/^yaml: line \d+: ./);
  });

  it("a huge config file is read up to 1 MiB and never throws", () => {
    expect(() => validateIssueConfig(cfg(`contact_links:\n${"  - {name: n, url: 'https://x', about: a}\n".repeat(40_000)}`))).not.toThrow();
  });
});

describe("helpers", () => {
  it("url.ParseRequestURI: absolute URIs and absolute paths pass; relative, scheme-less or bad hosts/escapes fail", () => {
    for (const ok of ["https://example.com", "https://user:pw@example.com:8080/a?b#c", "mailto:a@b.c", "/relative/to/root", "*", "http://[::1]:80/"]) expect([ok, isRequestUri(ok)]).toEqual([ok, true]);
    for (const bad of ["", "example.com", ":x", "1http://x", "https://a b", "https://x:port", "https://x/%zz", "https://x/\n", "https://[::1"]) expect([bad, isRequestUri(bad)]).toEqual([bad, false]);
  });

  it("EllipsisDisplayString: non-ASCII counts 2 columns, short tails are kept", () => {
    expect(ellipsisDisplayString("abc", 80)).toBe("abc");
    expect(ellipsisDisplayString("x".repeat(80), 80)).toBe("x".repeat(80));
    expect(ellipsisDisplayString("x".repeat(81), 80)).toBe(`${"x".repeat(77)}…`);
    expect(ellipsisDisplayString(`${"x".repeat(78)}é`, 80)).toBe(`${"x".repeat(78)}é`);
    expect(ellipsisDisplayString("中".repeat(41), 80)).toBe(`${"中".repeat(38)}…`);
  });
});
