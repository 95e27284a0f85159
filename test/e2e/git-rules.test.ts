/**
 * The spec rules that need git content, on BOTH targets, with files pushed by the real git CLI:
 * issue templates and config read from the default branch (Gitea's directory order, the
 * X-Service-Warning count, validation messages), edit rule 4 (default_branch: ignored unless the
 * branch exists or the repository is empty; an existing one becomes HEAD for clients), and
 * generate with git_content (`.gitea/template` globs, variables in contents and paths, a private
 * and an empty template), cross-checked against clones byte for byte with `git fsck --full`.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, describe, expect, it } from "vitest";
import { expansionVars, goToUpper, toKebabCase, toPascalCase, toSnakeCase } from "../../functions/lib/template-expansion.ts";
import { repoVars } from "../../functions/services/git-generate.ts";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";
import { Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-git-rules-");
afterAll(() => s.cleanup());

const NOT_FOUND = { message: "The target couldn't be found.", errors: [] };

async function fsck(dir: string): Promise<void> {
  const r = await s.git(["fsck", "--full", "--no-dangling"], { cwd: dir });
  expect(r.stderr).not.toMatch(/error|missing|broken|bad/i);
}

/** Writes files (path → content; a `{ link }` makes a symlink, `{ exec }` an executable) into a work tree. */
function writeTree(dir: string, files: Record<string, string | Buffer | { link: string } | { exec: string }>) {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof content === "object" && "link" in content) symlinkSync(content.link, full);
    else if (typeof content === "object" && "exec" in content) {
      writeFileSync(full, content.exec);
      chmodSync(full, 0o755);
    } else writeFileSync(full, content);
  }
}

/** `git ls-tree -r` of HEAD: mode, type, id and path per entry. */
const lsTree = (dir: string, rev = "HEAD") => s.gitText(["ls-tree", "-r", rev], { cwd: dir });

for (const target of targets()) {
  describe(`git content rules on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    const host = target.url.replace(/^http:\/\//, "");

    async function newUser() {
      const name = uniqName("ru");
      const password = "rules-password-1";
      await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password, must_change_password: false } });
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes: ["all"] } });
      return { name, password, token: (await tok.json()).sha1 as string };
    }
    type User = Awaited<ReturnType<typeof newUser>>;
    async function newRepo(owner: User, opts: Record<string, unknown> = {}, name = uniqName("rr")) {
      const res = await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, ...opts } });
      expect(res.status).toBe(201);
      return { name, full: `${owner.name}/${name}`, url: `http://${host}/${owner.name}/${name}.git`, push: `http://${encodeURIComponent(owner.name)}:${owner.token}@${host}/${owner.name}/${name}.git` };
    }
    type Repo = Awaited<ReturnType<typeof newRepo>>;
    /** Commits `files` on `branch` of a fresh work tree (on top of `base` when given) and pushes it. */
    async function pushFiles(r: Repo, branch: string, files: Parameters<typeof writeTree>[1], opts: { base?: string; remove?: string[]; gitlinks?: Record<string, string> } = {}) {
      const dir = s.path(uniqName(`${target.name}-w`));
      if (opts.base) await s.git(["clone", "--branch", opts.base, r.push, dir]);
      else await s.git(["init", "-b", branch, dir]);
      if (opts.base && opts.base !== branch) await s.git(["checkout", "-b", branch], { cwd: dir });
      for (const p of opts.remove ?? []) await s.git(["rm", "-q", p], { cwd: dir });
      writeTree(dir, files);
      await s.git(["add", "-A"], { cwd: dir });
      for (const [path, oid] of Object.entries(opts.gitlinks ?? {})) await s.git(["update-index", "--add", "--cacheinfo", `160000,${oid},${path}`], { cwd: dir });
      await s.git(["commit", "-q", "-m", `files on ${branch}`], { cwd: dir });
      await s.git(["push", "-q", r.push, `HEAD:refs/heads/${branch}`], { cwd: dir });
      return dir;
    }
    const get = (path: string, u: User | null) => call("GET", path, { headers: u ? tokenAuth(u.token) : {} });

    describe("issue templates and config from the default branch", () => {
      const BUG = "---\nname: Bug report\nabout: Something is broken\ntitle: \"[BUG] \"\nlabels: [\"bug\", \"triage\"]\nref: main\n---\nWhat happened?\n";
      const FEATURE = "name: Feature\nabout: Ask for something\nbody:\n  - type: input\n    id: what\n    attributes:\n      label: What\n    validations:\n      required: true\n";
      const CONFIG = "blank_issues_enabled: false\ncontact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Ask there\n";
      const bug = {
        name: "Bug report",
        title: "[BUG] ",
        about: "Something is broken",
        labels: ["bug", "triage"],
        assignees: null,
        ref: "refs/heads/main",
        content: "What happened?\n",
        body: null,
        file_name: ".gitea/ISSUE_TEMPLATE/bug.md",
      };
      const feature = {
        name: "Feature",
        title: "",
        about: "Ask for something",
        labels: null,
        assignees: null,
        ref: "refs/heads/",
        content: "",
        body: [{ type: "input", id: "what", attributes: { label: "What" }, validations: { required: true }, visible: ["form", "content"] }],
        file_name: ".gitea/ISSUE_TEMPLATE/feature.yaml",
      };
      const gh = { name: "From GitHub dir", title: "", about: "second directory", labels: null, assignees: null, ref: "refs/heads/", content: "body\n", body: null, file_name: ".github/ISSUE_TEMPLATE/gh.md" };

      it("reads the candidate directories in Gitea's order, only .md/.yaml/.yml files directly in them; broken ones counted in X-Service-Warning; 1 round trip", async () => {
        const u = await newUser();
        const r = await newRepo(u);
        await pushFiles(r, "main", {
          ".gitea/ISSUE_TEMPLATE/bug.md": BUG,
          ".gitea/ISSUE_TEMPLATE/feature.yaml": FEATURE,
          ".gitea/ISSUE_TEMPLATE/broken.yaml": "name: Broken\nabout: no body\n",
          ".gitea/ISSUE_TEMPLATE/notes.txt": "not a template",
          ".gitea/ISSUE_TEMPLATE/sub/deep.md": "---\nname: Deep\nabout: not read\n---\n",
          ".gitea/ISSUE_TEMPLATE/config.yaml": CONFIG,
          ".github/ISSUE_TEMPLATE/gh.md": "---\nname: From GitHub dir\nabout: second directory\n---\nbody\n",
          ".github/ISSUE_TEMPLATE/config.yml": "blank_issues_enabled: true\n",
          "docs/ISSUE_TEMPLATE/elsewhere.md": "---\nname: Elsewhere\nabout: not a candidate\n---\n",
        });
        const res = await get(`/api/v1/repos/${r.full}/issue_templates`, u);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual([bug, feature, gh]);
        expect(res.headers.get("X-Service-Warning")).toBe("error occurs when parsing issue template: count=1");
        expect(roundTrips(res)).toBe(1);

        // the first config candidate wins (.gitea before .github, .yaml before .yml)
        const cfg = await get(`/api/v1/repos/${r.full}/issue_config`, u);
        expect(await cfg.json()).toEqual({ blank_issues_enabled: false, contact_links: [{ name: "Forum", url: "https://forum.example.com", about: "Ask there" }] });
        expect(roundTrips(cfg)).toBe(1);
        const valid = await get(`/api/v1/repos/${r.full}/issue_config/validate`, u);
        expect(await valid.json()).toEqual({ valid: true, message: "" });
        expect(roundTrips(valid)).toBe(1);
      });

      it("a broken config: validate answers Gitea's message (200), issue_config the defaults", async () => {
        const u = await newUser();
        const r = await newRepo(u);
        await pushFiles(r, "main", { ".github/issue_template/config.yaml": "contact_links:\n  - name: Forum\n    about: Ask there\n" });
        const v = await get(`/api/v1/repos/${r.full}/issue_config/validate`, u);
        expect(v.status).toBe(200);
        expect(await v.json()).toEqual({ valid: false, message: "contact_link at position 1 is missing url key" });
        expect(await (await get(`/api/v1/repos/${r.full}/issue_config`, u)).json()).toEqual({ blank_issues_enabled: true, contact_links: [] });
        await pushFiles(r, "main", { ".github/issue_template/config.yaml": "blank_issues_enabled: maybe\n" }, { base: "main" });
        expect(await (await get(`/api/v1/repos/${r.full}/issue_config/validate`, u)).json()).toEqual({
          valid: false,
          message: "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `maybe` into bool",
        });
        // no templates at all: JSON null, no warning
        const none = await get(`/api/v1/repos/${r.full}/issue_templates`, u);
        expect(await none.text()).toBe("null");
        expect(none.headers.get("X-Service-Warning")).toBeNull();
      });

      it("a private repository's templates answer a stranger exactly like a missing repository (1 round trip)", async () => {
        const u = await newUser();
        const stranger = await newUser();
        const r = await newRepo(u, { private: true });
        await pushFiles(r, "main", { ".gitea/ISSUE_TEMPLATE/bug.md": BUG });
        expect(await (await get(`/api/v1/repos/${r.full}/issue_templates`, u)).json()).toEqual([bug]);
        for (const p of ["issue_templates", "issue_config", "issue_config/validate"]) {
          const hidden = await get(`/api/v1/repos/${r.full}/${p}`, stranger);
          const missing = await get(`/api/v1/repos/${u.name}/no-such-repo-${uniqName("x")}/${p}`, stranger);
          expect(hidden.status).toBe(404);
          expect(await hidden.text()).toBe(await missing.text());
          expect(roundTrips(hidden)).toBe(1);
        }
      });
    });

    describe("edit rule 4: default_branch", () => {
      it("a branch that does not exist is ignored (the rest of the edit applies); an existing one becomes HEAD for clients; ≤ 2 round trips", async () => {
        const u = await newUser();
        const r = await newRepo(u, { auto_init: true });
        await pushFiles(r, "develop", { ".gitea/ISSUE_TEMPLATE/dev.md": "---\nname: Dev only\nabout: on develop\n---\n" }, { base: "main" });
        expect(await (await get(`/api/v1/repos/${r.full}/issue_templates`, u)).text()).toBe("null");

        const ignored = await call("PATCH", `/api/v1/repos/${r.full}`, { headers: tokenAuth(u.token), json: { default_branch: "no-such-branch", description: "edited" } });
        expect(ignored.status).toBe(200);
        expect(await ignored.json()).toMatchObject({ default_branch: "main", description: "edited" });
        expect(roundTrips(ignored)).toBeLessThanOrEqual(2);
        expect(await s.gitText(["ls-remote", "--symref", r.url, "HEAD"])).toMatch(/^ref: refs\/heads\/main\tHEAD/);

        const moved = await call("PATCH", `/api/v1/repos/${r.full}`, { headers: tokenAuth(u.token), json: { default_branch: "develop" } });
        expect(moved.status).toBe(200);
        expect(await moved.json()).toMatchObject({ default_branch: "develop", description: "edited" });
        expect(roundTrips(moved)).toBeLessThanOrEqual(2);
        expect((await (await get(`/api/v1/repos/${r.full}`, u)).json()).default_branch).toBe("develop");
        expect(await s.gitText(["ls-remote", "--symref", r.url, "HEAD"])).toMatch(/^ref: refs\/heads\/develop\tHEAD/);
        const clone = s.path(uniqName(`${target.name}-head`));
        await s.git(["clone", "-q", r.url, clone]);
        expect(await s.gitText(["symbolic-ref", "HEAD"], { cwd: clone })).toBe("refs/heads/develop");
        expect(await s.gitText(["symbolic-ref", "refs/remotes/origin/HEAD"], { cwd: clone })).toBe("refs/remotes/origin/develop");
        await fsck(clone);
        // content routes read the new default branch
        expect((await (await get(`/api/v1/repos/${r.full}/issue_templates`, u)).json()).map((t: { name: string }) => t.name)).toEqual(["Dev only"]);
        // and the default branch is now the one a push may not delete
        const del = await s.gitFail(["push", r.push, ":refs/heads/develop"], { cwd: clone });
        expect(del.stderr).toMatch(/develop/);
      });

      it("an empty repository stores any name; its first push then becomes HEAD (Gitea)", async () => {
        const u = await newUser();
        const r = await newRepo(u);
        const res = await call("PATCH", `/api/v1/repos/${r.full}`, { headers: tokenAuth(u.token), json: { default_branch: "trunk" } });
        expect(await res.json()).toMatchObject({ default_branch: "trunk", empty: true });
        await pushFiles(r, "trunk", { "a.txt": "a\n" });
        expect(await s.gitText(["ls-remote", "--symref", r.url, "HEAD"])).toMatch(/^ref: refs\/heads\/trunk\tHEAD/);
        const after = await (await get(`/api/v1/repos/${r.full}`, u)).json();
        expect(after).toMatchObject({ default_branch: "trunk", empty: false });
        // a PATCH without default_branch, or with the current one, changes nothing
        const same = await call("PATCH", `/api/v1/repos/${r.full}`, { headers: tokenAuth(u.token), json: { default_branch: "trunk", website: "https://example.com" } });
        expect(await same.json()).toMatchObject({ default_branch: "trunk", website: "https://example.com" });
      });
    });

    describe("generate with git_content", () => {
      const TEMPLATE_FILE = "# globs of files to expand\nREADME.md\nsrc/**\nrun.sh\nnotes/*\n\n[exclude]\ndocs/private\n*.tmp\n";
      const SUBMODULE = "1234567890abcdef1234567890abcdef12345678";
      const README = "# $REPO_NAME\nFrom ${TEMPLATE_NAME} (${TEMPLATE_OWNER}) for $REPO_OWNER: $REPO_NAME_PASCAL $REPO_NAME_SNAKE $REPO_NAME_KEBAB $REPO_NAME_UPPER\n$REPO_DESCRIPTION\n$REPO_HTTPS_URL $REPO_LINK\nprice: 5$ and $UNKNOWN\n";
      const BINARY = Buffer.from([0, 1, 2, 0x24, ...Buffer.from("REPO_NAME"), 0xff, 0xfe]);
      const templateFiles = {
        "README.md": README,
        "src/$REPO_NAME_SNAKE/main.go": "package $REPO_NAME_SNAKE\n",
        "src/keep.txt": "no variables here\n",
        "run.sh": { exec: "#!/bin/sh\necho $REPO_NAME\n" },
        "tool.sh": { exec: "#!/bin/sh\necho $REPO_NAME unexpanded\n" },
        "assets/logo.bin": BINARY,
        "docs/guide.md": "guide for $REPO_NAME (not expanded)\n",
        "docs/private/secret.md": "left out\n",
        "scratch.tmp": "left out\n",
        "link": { link: "README.md" },
        "notes/${REPO_DESCRIPTION}.txt": "about $REPO_NAME\n",
        ".gitea/template": TEMPLATE_FILE,
      };

      async function makeTemplate(u: User, opts: Record<string, unknown> = {}) {
        const r = await newRepo(u, { template: true, description: "the template", ...opts }, uniqName("Tpl_Repo"));
        const dir = await pushFiles(r, "main", templateFiles, { gitlinks: { "vendor/lib": SUBMODULE } });
        return { ...r, dir };
      }

      it("one 'Initial commit' by the new owner on the default branch; globs expand contents and paths, [exclude] drops, the rest is byte for byte; 2 round trips", async () => {
        const u = await newUser();
        const tpl = await makeTemplate(u);
        // no topic routes are served: the template's topics are set in its row
        const db = createClient({ url: target.databaseUrl });
        await db.execute({ sql: "UPDATE repository SET topics = ? WHERE lower_name = ?", args: [JSON.stringify(["go", "template"]), tpl.name.toLowerCase()] });
        db.close();
        const name = uniqName("my-Gen_repo");
        const res = await call("POST", `/api/v1/repos/${tpl.full}/generate`, {
          headers: tokenAuth(u.token),
          json: { owner: u.name, name, description: "generated: one", git_content: true, topics: true, git_hooks: true, avatar: true },
        });
        expect(res.status).toBe(201);
        expect(roundTrips(res)).toBe(2);
        const body = await res.json();
        expect(body).toMatchObject({ name, empty: false, default_branch: "main", template: false, description: "generated: one", topics: ["go", "template"] });
        expect(body.size).toBeGreaterThan(0);

        const clone = s.path(uniqName(`${target.name}-gen`));
        await s.git(["clone", "-q", `http://${encodeURIComponent(u.name)}:${u.token}@${host}/${u.name}/${name}.git`, clone]);
        await fsck(clone);
        // one commit, no history of the template, the new owner as author and committer
        expect(await s.gitText(["rev-list", "--all", "--count"], { cwd: clone })).toBe("1");
        expect(await s.gitText(["log", "-1", "--format=%s%n%an <%ae>%n%cn <%ce>%n%P"], { cwd: clone })).toBe(`Initial commit\n${u.name} <${u.name}@example.com>\n${u.name} <${u.name}@example.com>`);
        expect(await s.gitText(["symbolic-ref", "HEAD"], { cwd: clone })).toBe("refs/heads/main");

        // what Gitea substitutes (the transforms themselves are unit-tested in test/rules/template-expansion.test.ts)
        const vars = expansionVars(repoVars(`${target.url}/`, u.name, tpl.name, "the template"), repoVars(`${target.url}/`, u.name, name, "generated: one"));
        const snake = toSnakeCase(name);
        expect(vars.get("REPO_NAME_SNAKE")).toBe(snake);
        const readme = `# ${name}\nFrom ${tpl.name} (${u.name}) for ${u.name}: ${toPascalCase(name)} ${snake} ${toKebabCase(name)} ${goToUpper(name)}\ngenerated: one\n${target.url}/${u.name}/${name}.git /${u.name}/${name}\nprice: 5$ and UNKNOWN\n`;
        const tplTree = await lsTree(tpl.dir);
        const idOf = (path: string) => new RegExp(`^\\d+ blob ([0-9a-f]{40})\\t${path.replace(/[$.]/g, "\\$&")}$`, "m").exec(tplTree)![1];
        const hashOf = async (content: string | Buffer) => (await s.git(["hash-object", "--stdin"], { cwd: clone, input: content })).stdout.toString().trim();
        const expected = [
          `100644 blob ${await hashOf(readme)}\tREADME.md`,
          `100644 blob ${idOf("assets/logo.bin")}\tassets/logo.bin`,
          `100644 blob ${idOf("docs/guide.md")}\tdocs/guide.md`,
          `120000 blob ${idOf("link")}\tlink`,
          // a ':' of the description is sanitized out of the expanded path
          `100644 blob ${await hashOf(`about ${name}\n`)}\tnotes/generated_ one.txt`,
          `100755 blob ${await hashOf(`#!/bin/sh\necho ${name}\n`)}\trun.sh`,
          `100644 blob ${idOf("src/keep.txt")}\tsrc/keep.txt`,
          `100644 blob ${await hashOf(`package ${snake}\n`)}\tsrc/${snake}/main.go`,
          `100755 blob ${idOf("tool.sh")}\ttool.sh`,
          `160000 commit ${SUBMODULE}\tvendor/lib`,
        ];
        expect((await lsTree(clone)).split("\n")).toEqual(expected);
        // byte for byte in the work tree too
        expect(readFileSync(join(clone, "README.md"), "utf8")).toBe(readme);
        expect(readFileSync(join(clone, "assets/logo.bin")).equals(BINARY)).toBe(true);
        expect(readFileSync(join(clone, "tool.sh"), "utf8")).toBe("#!/bin/sh\necho $REPO_NAME unexpanded\n");

        // the template keeps its content
        const tplClone = s.path(uniqName(`${target.name}-tplc`));
        await s.git(["clone", "-q", tpl.push, tplClone]);
        expect(await lsTree(tplClone)).toBe(tplTree);
      });

      it("default_branch names the generated branch; a template without .gitea/template is copied whole", async () => {
        const u = await newUser();
        const r = await newRepo(u, { template: true, auto_init: true });
        const name = uniqName("gen");
        const res = await call("POST", `/api/v1/repos/${r.full}/generate`, { headers: tokenAuth(u.token), json: { owner: u.name, name, default_branch: "trunk", git_content: true } });
        expect(res.status).toBe(201);
        expect(await res.json()).toMatchObject({ default_branch: "trunk", empty: false });
        const clone = s.path(uniqName(`${target.name}-trunk`));
        await s.git(["clone", "-q", `http://${encodeURIComponent(u.name)}:${u.token}@${host}/${u.name}/${name}.git`, clone]);
        expect(await s.gitText(["symbolic-ref", "HEAD"], { cwd: clone })).toBe("refs/heads/trunk");
        const tplClone = s.path(uniqName(`${target.name}-tpl`));
        await s.git(["clone", "-q", r.push, tplClone]);
        expect(await s.gitText(["rev-parse", "HEAD^{tree}"], { cwd: clone })).toBe(await s.gitText(["rev-parse", "HEAD^{tree}"], { cwd: tplClone }));
        await fsck(clone);
      });

      it("an empty template gives an empty repository; without git_content nothing of the tree is copied", async () => {
        const u = await newUser();
        const empty = await newRepo(u, { template: true });
        const a = await call("POST", `/api/v1/repos/${empty.full}/generate`, { headers: tokenAuth(u.token), json: { owner: u.name, name: uniqName("ge"), git_content: true } });
        expect(a.status).toBe(201);
        expect(await a.json()).toMatchObject({ empty: true, default_branch: "main" });
        const full = await newRepo(u, { template: true, auto_init: true });
        const bName = uniqName("gl");
        const b = await call("POST", `/api/v1/repos/${full.full}/generate`, { headers: tokenAuth(u.token), json: { owner: u.name, name: bName, labels: true } });
        expect(await b.json()).toMatchObject({ empty: true });
        expect(await s.gitText(["ls-remote", `http://${encodeURIComponent(u.name)}:${u.token}@${host}/${u.name}/${bName}.git`])).toBe("");
      });

      it("a private template: its owner generates a private copy; a stranger gets the missing answer (1 round trip), and nothing is created", async () => {
        const u = await newUser();
        const stranger = await newUser();
        const tpl = await makeTemplate(u, { private: true });
        const mine = await call("POST", `/api/v1/repos/${tpl.full}/generate`, { headers: tokenAuth(u.token), json: { owner: u.name, name: uniqName("gp"), git_content: true, private: true } });
        expect(mine.status).toBe(201);
        expect(await mine.json()).toMatchObject({ private: true, empty: false });

        const name = uniqName("steal");
        const hidden = await call("POST", `/api/v1/repos/${tpl.full}/generate`, { headers: tokenAuth(stranger.token), json: { owner: stranger.name, name, git_content: true } });
        const missing = await call("POST", `/api/v1/repos/${u.name}/no-such-${uniqName("t")}/generate`, { headers: tokenAuth(stranger.token), json: { owner: stranger.name, name, git_content: true } });
        expect(hidden.status).toBe(404);
        expect(roundTrips(hidden)).toBe(1);
        const text = await hidden.text();
        expect(text).toBe(await missing.text());
        expect(JSON.parse(text)).toMatchObject(NOT_FOUND);
        expect((await get(`/api/v1/repos/${stranger.name}/${name}`, stranger)).status).toBe(404);
      });

      it("a default_branch that is not a valid branch name → 422 (Gitea's GitRefName binding) before anything is written", async () => {
        const u = await newUser();
        const r = await newRepo(u, { template: true, auto_init: true });
        const name = uniqName("gb");
        const res = await call("POST", `/api/v1/repos/${r.full}/generate`, { headers: tokenAuth(u.token), json: { owner: u.name, name, default_branch: "bad..name", git_content: true } });
        expect(res.status).toBe(422);
        expect((await res.json()).message).toBe("[DefaultBranch]: GitRefName");
        expect(roundTrips(res)).toBe(1);
        expect((await get(`/api/v1/repos/${u.name}/${name}`, u)).status).toBe(404);
      });
    });
  });
}
