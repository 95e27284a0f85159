/** Issue template and issue config parsing (Gitea modules/issue/template, services/issue/template.go). */
import { describe, expect, it } from "vitest";
import { loadIssueConfig, loadIssueTemplates, parseIssueTemplate, templateWarning, validateIssueConfig } from "../../functions/lib/issue-templates.ts";

const md = `---
name: Bug report
about: Something is broken
title: "[BUG] "
labels: bug, needs triage
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
    validations:
      required: true
  - type: dropdown
    id: area
    attributes:
      label: Area
      options: [api, agent]
  - type: checkboxes
    id: terms
    attributes:
      label: Terms
      options:
        - label: I searched
          required: true
    visible: [form]
`;

describe("parseIssueTemplate", () => {
  it("markdown front matter: fields, comma-separated labels, list assignees, ref prefixed with refs/heads/, content after the front matter", () => {
    expect(parseIssueTemplate(".gitea/ISSUE_TEMPLATE/bug.md", md)).toEqual({
      name: "Bug report",
      title: "[BUG] ",
      about: "Something is broken",
      labels: ["bug", "needs triage"],
      assignees: ["alice"],
      ref: "refs/heads/main",
      content: "Describe the bug.\n",
      body: null,
      file_name: "bug.md",
    });
  });

  it("YAML forms: description stands in for about; body fields keep type, id, attributes, validations, visible", () => {
    const t = parseIssueTemplate(".github/ISSUE_TEMPLATE/feature.yaml", form);
    expect(t.about).toBe("Ask for something");
    expect(t.labels).toEqual(["enhancement"]);
    expect(t.body?.map((f) => f.type)).toEqual(["markdown", "input", "dropdown", "checkboxes"]);
    expect(t.body?.[1]).toEqual({ type: "input", id: "summary", attributes: { label: "Summary" }, validations: { required: true } });
    expect(t.body?.[3].visible).toEqual(["form"]);
    expect(Object.keys(t)).toEqual(["name", "title", "about", "labels", "assignees", "ref", "content", "body", "file_name"]);
  });

  it("refs/ refs are kept as they are", () => {
    expect(parseIssueTemplate("ISSUE_TEMPLATE/x.md", md.replace("ref: main", "ref: refs/tags/v1")).ref).toBe("refs/tags/v1");
  });

  it.each([
    ["a markdown file without front matter", "x.md", "just text", "frontmatter must start with a separator line"],
    ["a missing name", "x.md", "---\nabout: a\n---\n", "'name' is required"],
    ["a missing about", "x.md", "---\nname: n\n---\n", "'about' is required"],
    ["a form without body", "x.yaml", "name: n\nabout: a\n", "'body' is required"],
    ["an unknown field type", "x.yaml", "name: n\nabout: a\nbody:\n  - type: slider\n    id: s\n", "body[0]: unknown type"],
    ["a field without id", "x.yaml", "name: n\nabout: a\nbody:\n  - type: input\n    attributes: {label: L}\n", "body[0](input): 'id' is required"],
    ["a bad id", "x.yaml", "name: n\nabout: a\nbody:\n  - type: input\n    id: 'a b'\n    attributes: {label: L}\n", "body[0](input): 'id' should contain only alphanumeric, '-' and '_'"],
    ["a duplicate id", "x.yaml", "name: n\nabout: a\nbody:\n  - type: input\n    id: a\n    attributes: {label: L}\n  - type: textarea\n    id: a\n    attributes: {label: M}\n", "body[1](textarea): 'id' should be unique"],
    ["markdown without value", "x.yaml", "name: n\nabout: a\nbody:\n  - type: markdown\n", "body[0](markdown): 'value' is required"],
    ["dropdown without options", "x.yaml", "name: n\nabout: a\nbody:\n  - type: dropdown\n    id: d\n    attributes: {label: L}\n", "body[0](dropdown): 'options' is required and should be a array"],
    ["a bad visible value", "x.yaml", "name: n\nabout: a\nbody:\n  - type: input\n    id: a\n    attributes: {label: L}\n    visible: [sidebar]\n", 'body[0](input): \'visible\' value "sidebar" is not in [form content]'],
  ])("%s → %s", (_what, path, content, message) => {
    expect(() => parseIssueTemplate(path, content)).toThrow(message);
  });

  it("malformed YAML is an error, never a crash", () => {
    expect(() => parseIssueTemplate("x.yaml", "name: [unclosed\n")).toThrow();
    expect(() => parseIssueTemplate("x.yaml", "- just\n- a list\n")).toThrow();
  });
});

describe("loadIssueTemplates", () => {
  it("no templates → null (Gitea answers JSON null)", () => {
    expect(loadIssueTemplates([])).toEqual({ templates: null, errors: [] });
    expect(loadIssueTemplates([{ path: "README.md", content: md }])).toEqual({ templates: null, errors: [] });
  });

  it("reads Gitea's directories in order, skips config files and subdirectories, and counts parse errors", () => {
    const { templates, errors } = loadIssueTemplates([
      { path: ".github/ISSUE_TEMPLATE/b.yaml", content: form },
      { path: ".gitea/ISSUE_TEMPLATE/a.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/config.yml", content: "blank_issues_enabled: false" },
      { path: ".gitea/ISSUE_TEMPLATE/nested/c.md", content: md },
      { path: ".gitea/ISSUE_TEMPLATE/broken.md", content: "no front matter" },
      { path: ".gitea/ISSUE_TEMPLATE/notes.txt", content: "x" },
    ]);
    expect(templates?.map((t) => t.file_name)).toEqual(["a.md", "b.yaml"]);
    expect(errors).toHaveLength(1);
    expect(templateWarning(errors.length)).toBe("error occurs when parsing issue template: count=1");
  });
});

describe("issue config", () => {
  it("defaults when there is no config file", () => {
    expect(loadIssueConfig([])).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect(validateIssueConfig([])).toEqual({ valid: true, message: "" });
  });

  it("reads the first candidate file; a missing key keeps Go's zero value", () => {
    const cfg = loadIssueConfig([{ path: ".github/ISSUE_TEMPLATE/config.yaml", content: "contact_links:\n  - name: Chat\n    url: https://chat.example\n    about: Ask here\n" }]);
    expect(cfg).toEqual({ blank_issues_enabled: false, contact_links: [{ name: "Chat", url: "https://chat.example", about: "Ask here" }] });
  });

  it.each([
    ["contact_links:\n  - url: https://x\n    about: a\n", "contact_link at position 1 is missing name key"],
    ["contact_links:\n  - name: n\n    about: a\n", "contact_link at position 1 is missing url key"],
    ["contact_links:\n  - name: n\n    url: https://x\n", "contact_link at position 1 is missing about key"],
    ["contact_links:\n  - name: n\n    url: 'not a url'\n    about: a\n", "not a url is not a valid URL"],
  ])("validate: %j → %s", (content, message) => {
    expect(validateIssueConfig([{ path: ".gitea/ISSUE_TEMPLATE/config.yaml", content }])).toEqual({ valid: false, message });
    expect(loadIssueConfig([{ path: ".gitea/ISSUE_TEMPLATE/config.yaml", content }])).toEqual({ blank_issues_enabled: true, contact_links: [] });
  });

  it("a YAML syntax error is reported as invalid with the parser's message", () => {
    const v = validateIssueConfig([{ path: ".gitea/ISSUE_TEMPLATE/config.yml", content: "blank_issues_enabled: [" }]);
    expect(v.valid).toBe(false);
    expect(v.message).not.toBe("");
  });
});
