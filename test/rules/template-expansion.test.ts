/**
 * Generate with git_content: the `.gitea/template` globs and the variable expansion as Gitea does
 * them (services/repository/generate{,_test}.go, modules/glob, huandu/xstrings v1.5, os.Expand).
 */
import { describe, expect, it } from "vitest";
import {
  compileGlob,
  expandBytes,
  expandText,
  expansionVars,
  filePathSanitize,
  goExpand,
  goToLower,
  goToUpper,
  parseTemplateRules,
  toCamelCase,
  toKebabCase,
  toPascalCase,
  toSnakeCase,
  toTitleCase,
  type RepoVars,
} from "../../functions/lib/template-expansion.ts";

const matches = (pattern: string, path: string) => compileGlob(pattern)!.test(path);

describe("generate: .gitea/template globs (gobwas/glob with '/' as separator)", () => {
  it("'*' stays within a directory, '**' crosses directories, '?' is one character", () => {
    const rules = parseTemplateRules("\n# Header\n\n# All .go files\n**.go\n\n# All text files in /text/\ntext/*.txt\n\n# All files in modules folders\n**/modules/*\n");
    expect(rules.expand).toHaveLength(3);
    expect(rules.exclude).toHaveLength(0);
    const hit = (p: string) => rules.expand.some((g) => g.test(p));
    expect(hit("main.go")).toBe(true);
    expect(hit("sub/sub/foo.go")).toBe(true);
    expect(hit("a.txt")).toBe(false);
    expect(hit("text/a.txt")).toBe(true);
    expect(hit("sub/text/a.txt")).toBe(false);
    expect(hit("text/a.json")).toBe(false);
    expect(hit("a/b/c/modules/README.md")).toBe(true);
    expect(hit("a/b/c/modules/d/README.md")).toBe(false);
    expect(matches("a?c", "a1c")).toBe(true);
    expect(matches("a?c", "a/c")).toBe(false);
    expect(matches("*", "a/b")).toBe(false);
  });

  it("classes, negated classes, alternatives and escapes; invalid globs are skipped", () => {
    expect(matches("[a-z][!a-x]*cat*[h][!b]*eyes*", "my cat has very bright eyes")).toBe(true);
    expect(matches("[a-z][!a-x]*cat*[h][!b]*eyes*", "my dog has very bright eyes")).toBe(false);
    expect(matches("{abc,def}ghi", "defghi")).toBe(true);
    expect(matches("{*.google.*,yandex.*}", "yandex.com")).toBe(true);
    expect(matches("*//{,*.}example.com", "http://example.com.net")).toBe(false);
    expect(matches("\\*", "*")).toBe(true);
    expect(matches("my-file.txt", "my-file.txt")).toBe(true);
    expect(matches("google.com", "gobwas.com")).toBe(false);
    // Matching never backtracks: a pattern of many stars against a long near-miss answers (a
    // backtracking regular expression did not within any test's time).
    expect(compileGlob(`${"*a".repeat(12)}*c`)!.test("a".repeat(4000))).toBe(false);
    expect(compileGlob(`${"*a".repeat(12)}*c`, { separator: false })!.test(`${"a/".repeat(2000)}c`)).toBe(true);
    expect(compileGlob("[abc")).toBeNull();
    expect(compileGlob("{a,b")).toBeNull();
    expect(compileGlob("a\\")).toBeNull();
    expect(parseTemplateRules("[abc\nok.txt\n").expand).toHaveLength(1);
  });

  it("[expand] and [exclude] sections; other bracketed lines are ignored", () => {
    const r = parseTemplateRules("README.md\n[exclude]\ndocs\n*.tmp\n[other]\n[expand]\nsrc/**\n");
    expect(r.expand.map((g) => g.test("README.md") || g.test("src/a/b.c"))).toEqual([true, true]);
    expect(r.exclude.map((g) => g.test("docs") || g.test("x.tmp"))).toEqual([true, true]);
  });
});

describe("generate: variables and their transformed forms", () => {
  it("SNAKE, KEBAB, CAMEL, PASCAL, LOWER, UPPER, TITLE of 'Abc_Def-XYZ' (Gitea's TestTransformers)", () => {
    const input = "Abc_Def-XYZ";
    expect([toSnakeCase, toKebabCase, toCamelCase, toPascalCase, goToLower, goToUpper, toTitleCase].map((f) => f(input))).toEqual([
      "abc_def_xyz",
      "abc-def-xyz",
      "abcDefXyz",
      "AbcDefXyz",
      "abc_def-xyz",
      "ABC_DEF-XYZ",
      "Abc_def-Xyz",
    ]);
  });

  it("xstrings' documented samples", () => {
    const snake: [string, string][] = [
      ["FirstName", "first_name"],
      ["HTTPServer", "http_server"],
      ["NoHTTPS", "no_https"],
      ["GO_PATH", "go_path"],
      ["GO PATH", "go_path"],
      ["GO-PATH", "go_path"],
      ["http2xx", "http_2xx"],
      ["HTTP20xOK", "http_20x_ok"],
      ["Duration2m3s", "duration_2m3s"],
      ["Bld4Floor3rd", "bld4_floor_3rd"],
    ];
    for (const [i, o] of snake) expect(toSnakeCase(i), i).toBe(o);
    expect(toKebabCase("HTTPServer")).toBe("http-server");
    const camel: [string, string, string][] = [
      ["some_words", "someWords", "SomeWords"],
      ["http_server", "httpServer", "HttpServer"],
      ["no_https", "noHttps", "NoHttps"],
      ["_complex__case_", "_complex_Case_", "_Complex_Case_"],
      ["some words", "someWords", "SomeWords"],
      ["GOLANG_IS_GREAT", "golangIsGreat", "GolangIsGreat"],
    ];
    for (const [i, c, p] of camel) {
      expect(toCamelCase(i), i).toBe(c);
      expect(toPascalCase(i), i).toBe(p);
    }
  });

  it("os.Expand: $NAME and ${NAME}; an unknown name becomes the name; '$' alone stays; bad syntax is eaten", () => {
    const vars = new Map([["REPO_NAME", "demo"]]);
    expect(expandText("a $REPO_NAME b ${REPO_NAME}c", vars)).toBe("a demo b democ");
    expect(expandText("$HOME and ${X} and $1", vars)).toBe("HOME and X and 1");
    expect(expandText("cost: 5$ and $ alone and $", vars)).toBe("cost: 5$ and $ alone and $");
    expect(expandText("${} ${unterminated", vars)).toBe(" unterminated");
    expect(goExpand("no dollars", () => "x")).toBe("no dollars");
  });

  it("file bytes are expanded byte for byte (invalid UTF-8 kept, values written as UTF-8)", () => {
    const vars = new Map([["REPO_NAME", "dëmo"]]);
    const src = new Uint8Array([0xff, 0x24, ...new TextEncoder().encode("REPO_NAME"), 0xfe]);
    expect([...expandBytes(src, vars)]).toEqual([0xff, ...new TextEncoder().encode("dëmo"), 0xfe]);
  });

  it("the expansion map: dates, both repositories' names, owners, descriptions, links and URLs", () => {
    const tpl: RepoVars = { name: "TemplateRepo", description: "tpl d", owner: "alice", link: "/alice/TemplateRepo", httpsUrl: "http://h/alice/TemplateRepo.git", sshUrl: "git@h:alice/TemplateRepo.git" };
    const gen: RepoVars = { name: "my-new_repo", description: "new d", owner: "bob", link: "/bob/my-new_repo", httpsUrl: "http://h/bob/my-new_repo.git", sshUrl: "git@h:bob/my-new_repo.git" };
    const v = expansionVars(tpl, gen, new Date(Date.UTC(2024, 2, 5)));
    expect(Object.fromEntries(["YEAR", "MONTH", "MONTH_ENGLISH", "MONTH_ENGLISH_UPPER", "DAY", "REPO_NAME_PASCAL", "REPO_NAME_SNAKE", "TEMPLATE_NAME_KEBAB", "REPO_OWNER_UPPER", "REPO_DESCRIPTION", "TEMPLATE_LINK", "REPO_HTTPS_URL", "TEMPLATE_SSH_URL"].map((k) => [k, v.get(k)]))).toEqual({
      YEAR: "2024",
      MONTH: "03",
      MONTH_ENGLISH: "March",
      MONTH_ENGLISH_UPPER: "MARCH",
      DAY: "05",
      REPO_NAME_PASCAL: "MyNewRepo",
      REPO_NAME_SNAKE: "my_new_repo",
      TEMPLATE_NAME_KEBAB: "template-repo",
      REPO_OWNER_UPPER: "BOB",
      REPO_DESCRIPTION: "new d",
      TEMPLATE_LINK: "/alice/TemplateRepo",
      REPO_HTTPS_URL: "http://h/bob/my-new_repo.git",
      TEMPLATE_SSH_URL: "git@h:alice/TemplateRepo.git",
    });
    expect(v.has("REPO_DESCRIPTION_UPPER")).toBe(false);
    expect(v.has("YEAR_SNAKE")).toBe(false);
  });

  it("expanded paths are sanitized (Gitea's TestFilePathSanitize)", () => {
    const cases: [string, string][] = [
      ["//a/", "a"],
      ["\\a", "_a"],
      [".. /a/ ..", "__/a/__"],
      ["./../a/.git/ b: ", "__/a/_git/b_"],
      ["CoN", "_"],
      ["LpT1", "_"],
      ["CoM1", "_"],
      ["test_CON", "test_CON"],
      ["test CON ", "test CON"],
      ["\u0000", "_"],
      ["", "."],
      [".", "."],
      ["/", "."],
      ["subst-/../.gIt/name", "subst-/__/_gIt/name"],
    ];
    for (const [i, o] of cases) expect(filePathSanitize(i), JSON.stringify(i)).toBe(o);
  });
});
