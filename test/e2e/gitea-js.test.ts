/** A client generated from Gitea's own Swagger document (the npm package gitea-js) drives the users/orgs/tokens flow unchanged, on both targets. */
import { giteaApi } from "gitea-js";
import { describe, expect, it } from "vitest";
import { basicAuth, targets, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`gitea-js on ${target.name}`, () => {
    it("admin creates a user; the user mints a token with basic auth, creates and edits an org, lists it, blocks and unblocks", async () => {
      const admin = giteaApi(target.url, { token: target.admin.token, customFetch: fetch });
      const name = uniqName("gjs");
      const password = "gitea-js-pass-1";
      const created = await admin.admin.adminCreateUser({ username: name, email: `${name}@example.com`, password, must_change_password: false });
      expect(created.status).toBe(201);
      expect(created.data.login).toBe(name);

      // gitea-js puts its token above per-call headers, so basic-auth calls use a client without one.
      const anonymous = giteaApi(target.url, { customFetch: fetch });
      const tok = await anonymous.users.userCreateToken(name, { name: "gitea-js", scopes: ["write:user", "write:organization"] }, { headers: basicAuth(name, password) });
      expect(tok.status).toBe(201);
      expect(tok.data.sha1).toMatch(/^[0-9a-f]{40}$/);

      const api = giteaApi(target.url, { token: tok.data.sha1!, customFetch: fetch });
      const me = await api.user.userGetCurrent();
      expect(me.data).toMatchObject({ login: name, username: name, is_admin: false });

      const orgName = uniqName("gjsorg");
      const org = await api.orgs.orgCreate({ username: orgName, full_name: "Gitea JS", visibility: "private" });
      expect(org.status).toBe(201);
      const edited = await api.orgs.orgEdit(orgName, { description: "edited by gitea-js" });
      expect(edited.data).toMatchObject({ name: orgName, description: "edited by gitea-js", visibility: "private" });
      const mine = await api.user.orgListCurrentUserOrgs();
      expect(mine.data.map((o) => o.name)).toContain(orgName);
      const members = await api.orgs.orgListMembers(orgName);
      expect(members.data.map((u) => u.login)).toEqual([name]);

      const other = (await admin.admin.adminCreateUser({ username: uniqName("gjs2"), email: `${uniqName("g")}@example.com`, password })).data;
      expect((await api.user.userBlockUser(other.login!)).status).toBe(204);
      expect((await api.user.userListBlocks()).data.map((u) => u.login)).toEqual([other.login]);
      expect((await api.user.userUnblockUser(other.login!)).status).toBe(204);

      const tokens = await anonymous.users.userGetTokens(name, {}, { headers: basicAuth(name, password) });
      expect(tokens.data.map((t) => t.name)).toEqual(["gitea-js"]);
      expect((await api.orgs.orgDelete(orgName)).status).toBe(204);
      expect((await admin.admin.adminDeleteUser(other.login!)).status).toBe(204);

      const version = await api.version.getVersion();
      expect(version.data.version).toMatch(/^\d+\.\d+\.\d+/);
    });

    it("drives the git content routes: creates, lists and reads a tag, walks the tree, reads a blob and the tag object, renames a branch", async () => {
      const api = giteaApi(target.url, { token: target.admin.token, customFetch: fetch });
      const owner = target.admin.name;
      const name = uniqName("gjsrepo");
      expect((await api.user.createCurrentUserRepo({ name, auto_init: true })).status).toBe(201);
      const tag = await api.repos.repoCreateTag(owner, name, { tag_name: "v1.0", message: "first release", target: "main" });
      expect(tag.status).toBe(201);
      expect(tag.data).toMatchObject({ name: "v1.0", message: "first release\n" });
      expect((await api.repos.repoListTags(owner, name)).data.map((t) => t.name)).toEqual(["v1.0"]);
      expect((await api.repos.repoGetTag(owner, name, "v1.0")).data.id).toBe(tag.data.id);
      const annotated = await api.repos.getAnnotatedTag(owner, name, tag.data.id!);
      expect(annotated.data).toMatchObject({ tag: "v1.0", object: { type: "commit", sha: tag.data.commit!.sha } });
      const tree = await api.repos.getTree(owner, name, "main", { recursive: true });
      const readme = tree.data.tree!.find((e) => e.path === "README.md")!;
      expect(readme).toMatchObject({ type: "blob", mode: "100644" });
      const blob = await api.repos.getBlob(owner, name, readme.sha!);
      expect(Buffer.from(blob.data.content!, "base64").toString()).toContain(`# ${name}`);
      // gitea-js's repoUpdateBranch is Gitea's PATCH: a rename
      expect((await api.repos.repoCreateBranch(owner, name, { new_branch_name: "topic" })).status).toBe(201);
      expect((await api.repos.repoUpdateBranch(owner, name, "topic", { name: "renamed" })).status).toBe(204);
      expect((await api.repos.repoGetBranch(owner, name, "renamed")).data.name).toBe("renamed");
      expect((await api.repos.repoDeleteTag(owner, name, "v1.0")).status).toBe(204);
    });

    it("gitea-js sees Gitea's errors as rejected responses with {message,url}", async () => {
      const api = giteaApi(target.url, { token: target.admin.token, customFetch: fetch });
      await expect(api.users.userGet("no-such-user-anywhere")).rejects.toMatchObject({ status: 404, error: { message: "The target couldn't be found." } });
    });
  });
}
