/**
 * The chat hook types' messages (convert/chat-hooks.ts) against Gitea's: every type × event for
 * the same inputs, byte for byte (test/fixtures/chat-hooks-gitea.txt), except the documented
 * deliberate differences, each spelled out below as the edit it makes to Gitea's body.
 */
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHAT_TYPES, chatRequest, type HookMeta } from "../../functions/convert/chat-hooks.ts";

/** Gitea's bodies: type → case → { body, txn }. */
function giteaBodies() {
  const out = new Map<string, Map<string, { body: string; txn?: string }>>();
  let type = "";
  let name = "";
  let lines: string[] = [];
  const flush = () => {
    if (!name) return;
    const txn = lines.at(-1)?.startsWith("txnID=") ? lines.pop()!.slice(6) : undefined;
    out.get(type)!.set(name, { body: lines.join("\n"), txn });
    name = "";
    lines = [];
  };
  for (const line of readFileSync(new URL("../fixtures/chat-hooks-gitea.txt", import.meta.url), "utf8").split("\n")) {
    if (line.startsWith("#") && !line.startsWith("##########")) continue;
    if (line.startsWith("########## ")) {
      flush();
      type = line.slice(11);
      out.set(type, new Map());
    } else if (line.startsWith("----- ")) {
      flush();
      name = line.slice(6).replace(/ \(\d+ bytes\)$/, "");
    } else if (name) lines.push(line);
  }
  flush();
  while (true) {
    // Trailing blank lines of the last body.
    const last = [...out.values()].at(-1)!;
    const [k, v] = [...last.entries()].at(-1)!;
    if (!v.body.endsWith("\n")) break;
    last.set(k, { ...v, body: v.body.slice(0, -1) });
  }
  return out;
}

const APP = "http://localhost:3000/";
const alice = { id: 1, login: "alice", full_name: "Alice Liddell", avatar_url: `${APP}avatars/1b2c3d` };
const bob = { id: 2, login: "bob", full_name: "", avatar_url: `${APP}avatars/4e5f6a` };
const demo = { id: 1, full_name: "alice/demo", html_url: `${APP}alice/demo` };
const person = { name: "Alice Liddell", email: "alice@example.com", username: "alice" };
interface Commit {
  id: string;
  message: string;
  url: string;
  author: typeof person;
  committer: typeof person;
  verification: null;
  timestamp: string;
  added: string[];
  removed: string[];
  modified: string[];
}
const c1: Commit = {
  id: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
  message: "Fix <b> & escape\n\nLonger body\n",
  url: `${APP}alice/demo/commit/0a1b2c3d4e5f60718293a4b5c6d7e8f901234567`,
  author: person,
  committer: person,
  verification: null,
  timestamp: "2026-05-01T10:00:00Z",
  added: [],
  removed: [],
  modified: ["README.md"],
};
const c2: Commit = {
  ...c1,
  id: "89abcdef0123456789abcdef0123456789abcdef",
  message: "Initial commit\n",
  url: `${APP}alice/demo/commit/89abcdef0123456789abcdef0123456789abcdef`,
  timestamp: "2026-05-01T09:00:00Z",
  added: ["README.md"],
  modified: [],
};
const push = (commits: Commit[], compare: string) => ({
  ref: "refs/heads/main",
  before: "0".repeat(40),
  after: c1.id,
  compare_url: `${APP}alice/demo/compare/${compare}`,
  commits,
  total_commits: commits.length,
  head_commit: c1,
  repository: demo,
  pusher: alice,
  sender: alice,
});

/** The inputs of Gitea's bodies (the fixture's header names them). */
const CASES: [string, string, unknown][] = [
  ["create branch feature/x", "create", { ref: "feature/x", ref_type: "branch", sha: c1.id, repository: demo, sender: alice }],
  ["create tag v1.0", "create", { ref: "v1.0", ref_type: "tag", sha: c1.id, repository: demo, sender: alice }],
  ["delete branch feature/x", "delete", { ref: "feature/x", ref_type: "branch", pusher_type: "user", repository: demo, sender: alice }],
  ["fork", "fork", { forkee: demo, repository: { id: 2, full_name: "bob/demo", html_url: `${APP}bob/demo` }, sender: bob }],
  ["push 2 commits", "push", push([c1, c2], "0000000...0a1b2c3")],
  ["push 1 commit", "push", push([c1], "89abcde...0a1b2c3")],
  ["repository created", "repository", { action: "created", repository: demo, organization: alice, sender: alice }],
  ["repository deleted", "repository", { action: "deleted", repository: demo, organization: alice, sender: alice }],
];

const META: Record<string, HookMeta> = {
  slack: { channel: "#dev", username: "gitea-bot", icon_url: "", color: "good" },
  discord: { username: "Gitea", icon_url: "" },
  matrix: { message_type: "1" },
  packagist: { package_url: "https://packagist.org/packages/alice/demo" },
};

const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
const crypto = (secret = "", now = 0) => ({ secret, now, feishuSign: (key: string) => createHmac("sha256", key).update("").digest("base64"), sha1Hex: sha1 });
const render = (type: string, event: string, payload: unknown, meta = META[type] ?? {}, secret = "", now = 0) => chatRequest(type, event, JSON.stringify(payload, null, 2), meta, crypto(secret, now));

/**
 * Where this host's message differs from Gitea's on purpose (docs/api.md): the edit to Gitea's
 * body that gives ours, per type and case.
 */
const DIFFERENCES: Record<string, (name: string, body: string) => string> = {
  // A created branch or tag links to its page (Gitea: `…/src/` for a short name).
  slack: (name, body) => (name === "create branch feature/x" ? body.replace("/src/|feature/x>", "/src/branch/feature/x|feature/x>") : name === "create tag v1.0" ? body.replace("/src/|v1.0>", "/src/tag/v1.0|v1.0>") : body),
  // The same (Gitea: `…/src/commit/<name>`); commit messages and names are escaped in the HTML.
  matrix: (name, body) => {
    if (name === "create branch feature/x") return body.replaceAll("/src/commit/feature/x", "/src/branch/feature/x");
    if (name === "create tag v1.0") return body.replaceAll("/src/commit/v1.0", "/src/tag/v1.0");
    if (name.startsWith("push")) {
      const [before, after] = body.split('"formatted_body"');
      return `${before}"formatted_body"${after!.replace("Fix <b> & escape", "Fix &lt;b&gt; &amp; escape")}`;
    }
    return body;
  },
  // The commit count is named (Gitea declares it and never sets it).
  feishu: (name, body) => (name === "push 2 commits" ? body.replace("[alice/demo:main] \\r\\n", "[alice/demo:main] 2 new commits\\r\\n") : name === "push 1 commit" ? body.replace("[alice/demo:main] \\r\\n", "[alice/demo:main] 1 new commit\\r\\n") : body),
  wechatwork: (name, body) => body.replace('<font color=\\"warning\\">    </font>', name === "push 2 commits" ? '<font color=\\"warning\\">  2 new commits  </font>' : name === "push 1 commit" ? '<font color=\\"warning\\">  1 new commit  </font>' : '<font color=\\"warning\\">    </font>'),
};

describe("chat hook messages (Gitea services/webhook)", () => {
  const gitea = giteaBodies();

  it("the fixture holds every type and event", () => {
    expect([...gitea.keys()].sort()).toEqual([...CHAT_TYPES].sort());
    for (const cases of gitea.values()) expect([...cases.keys()]).toEqual(CASES.map(([name]) => name));
  });

  for (const type of CHAT_TYPES) {
    it(`${type}: every event's body is Gitea's, but for the documented differences`, () => {
      const differences = DIFFERENCES[type] ?? ((_: string, body: string) => body);
      for (const [name, event, payload] of CASES) {
        const expected = gitea.get(type)!.get(name)!;
        const req = render(type, event, payload);
        expect(req, `${type} ${name}`).not.toBeNull();
        expect(req!.body, `${type} ${name}`).toBe(differences(name, expected.body));
        expect(req!.defaultHeaders).toBe(type !== "feishu");
        if (type === "matrix") {
          expect(req!.put!.suffix).toBe(sha1(req!.body));
          // Where the body is Gitea's, so is the transaction id (a retried message stays one message).
          if (req!.body === expected.body) expect(req!.put!.suffix).toBe(expected.txn);
        } else expect(req!.put).toBeUndefined();
      }
    });
  }
});

describe("chat hook rules", () => {
  it("a push without commits (a tag, a rewind) makes no chat message; one with commits does", () => {
    for (const type of CHAT_TYPES) {
      expect(render(type, "push", { ...push([], "x"), total_commits: 0 }), type).toBeNull();
      expect(render(type, "push", push([c1], "x")), type).not.toBeNull();
    }
  });

  it("Feishu signs with its timestamp and the hook's secret (Gitea's test vector), and sends no default headers", () => {
    expect(createHmac("sha256", "1\na").update("").digest("base64")).toBe("rWZ84lcag1x9aBFhn1gtV4ZN+4gme3pilfQNMk86vKg=");
    const req = render("feishu", "create", CASES[0]![2], {}, "a", 1)!;
    expect(JSON.parse(req.body)).toEqual({ timestamp: 1, sign: "rWZ84lcag1x9aBFhn1gtV4ZN+4gme3pilfQNMk86vKg=", msg_type: "text", content: { text: "[alice/demo] branch feature/x created" } });
  });

  it("names and links are escaped as each service reads them: path segments and queries as Go escapes them, Slack's and HTML's entities", () => {
    // Go's PathEscape keeps `$&+:=@` in a segment and escapes `,` `;` `?`.
    const odd = { ref: "feat/ä b#1,;?$&+:=@", ref_type: "branch", sha: c1.id, repository: demo, sender: alice };
    expect(JSON.parse(render("discord", "create", odd)!.body).embeds[0].url).toBe(`${APP}alice/demo/src/feat/%C3%A4%20b%231%2C%3B%3F$&+:=@`);
    expect(JSON.parse(render("dingtalk", "create", odd)!.body).actionCard.singleURL).toBe(
      "dingtalk://dingtalkclient/page/link?pc_slide=false&url=http%3A%2F%2Flocalhost%3A3000%2Falice%2Fdemo%2Fsrc%2Ffeat%2F%25C3%25A4%2520b%25231%252C%253B%253F%24%26%2B%3A%3D%40",
    );
    const tricky = { ...push([{ ...c1, message: "a <x> & 'q'\r\nsecond", author: { ...person, name: "O'Brien <ob>" } }], "a...b") };
    expect(JSON.parse(render("matrix", "push", push([{ ...c1, message: 'say "hi"' }], "a...b"))!.body).formatted_body).toContain("say &#34;hi&#34; - ");
    expect(JSON.parse(render("slack", "push", tricky)!.body).attachments[0].text).toBe(`<${c1.url}|0a1b2c3>: a &lt;x&gt; &amp; 'q'\r - O'Brien &lt;ob&gt;`);
    // Telegram's sanitizer reads a CR LF (or a lone CR) as LF.
    expect(JSON.parse(render("telegram", "push", tricky)!.body).text).toContain("] a &lt;x&gt; &amp; &#39;q&#39;\nsecond - O&#39;Brien &lt;ob&gt;");
    const matrix = JSON.parse(render("matrix", "push", tricky)!.body);
    expect(matrix.formatted_body).toContain("a &lt;x&gt; &amp; &#39;q&#39;\r\nsecond - O&#39;Brien &lt;ob&gt;");
    expect(matrix.body).toContain("a <x> & 'q'\r\nsecond - O'Brien <ob>");
  });

  it("texts are trimmed as Go trims (U+0085 is space, U+FEFF is not); a message's trailing line ends go, however many", () => {
    const named = (name: string, message = "m\n\n\n") => push([{ ...c1, message, author: { ...person, name } }], "a...b");
    expect(JSON.parse(render("feishu", "push", named("Bob\ufeff"))!.body).content.text.endsWith("Bob\ufeff")).toBe(true);
    expect(JSON.parse(render("feishu", "push", named("Bob\u0085"))!.body).content.text.endsWith("Bob")).toBe(true);
    expect(JSON.parse(render("dingtalk", "push", named("Bob\u3000"))!.body).actionCard.text.endsWith("Bob")).toBe(true);
    expect(JSON.parse(render("telegram", "push", named("Bob", "m\r\n\r\n"))!.body).text).toMatch(/<\/a>\] m - Bob$/);
    expect(JSON.parse(render("msteams", "push", named("Bob", "m\n\n"))!.body).sections[0].text).toMatch(/\) m - Bob$/);
  });

  it("Discord and Slack take the hook's name and icon; an unset one is left out (Discord) or empty (Slack)", () => {
    expect(JSON.parse(render("discord", "fork", CASES[3]![2], { username: "CI", icon_url: "https://x.example/i.png" })!.body)).toMatchObject({ username: "CI", avatar_url: "https://x.example/i.png" });
    expect(Object.keys(JSON.parse(render("discord", "fork", CASES[3]![2], {})!.body))).toEqual(["wait", "content", "tts", "embeds"]);
    expect(JSON.parse(render("slack", "fork", CASES[3]![2], { channel: "#x" })!.body)).toMatchObject({ channel: "#x", username: "", icon_url: "" });
  });

  it("Discord keeps a commit's first line to 50 characters and its description to 2,000", () => {
    const long = "é".repeat(60);
    const many = push(Array.from({ length: 5 }, (_, i) => ({ ...c1, id: `${i}`.repeat(40), message: `${long}\nbody` })), "a...b");
    const d = JSON.parse(render("discord", "push", { ...many, total_commits: 5 })!.body).embeds[0];
    expect(d.description.split("\n")[0]).toBe(`[0000000](${c1.url}) ${"é".repeat(47)}... - Alice Liddell`);
    // Exactly 50 stays whole.
    const fifty = JSON.parse(render("discord", "push", push([{ ...c1, message: `${"é".repeat(50)}\n` }], "a...b"))!.body).embeds[0];
    expect(fifty.description).toBe(`[0a1b2c3](${c1.url}) ${"é".repeat(50)} - Alice Liddell`);
    const huge = JSON.parse(render("discord", "push", { ...many, commits: many.commits.map((c) => ({ ...c, author: { ...person, name: "n".repeat(900) } })) })!.body).embeds[0];
    expect([...huge.description]).toHaveLength(2000);
  });

  it("Matrix: a PUT to the hook's URL and the body's SHA-1; the message type from the hook; a body of 64 KiB or more is refused", () => {
    expect(JSON.parse(render("matrix", "fork", CASES[3]![2], { message_type: "2" })!.body).msgtype).toBe("m.text");
    expect(JSON.parse(render("matrix", "fork", CASES[3]![2], {})!.body).msgtype).toBe("m.notice");
    const big = push([{ ...c1, message: "x".repeat(70_000) }], "a...b");
    expect(() => render("matrix", "push", big)).toThrow(/^getMatrixTxnID: payload size \d+ > 65536$/);
  });

  it("Packagist asks for an update on a push and sends an empty URL for every other event (as Gitea)", () => {
    expect(JSON.parse(render("packagist", "push", CASES[4]![2])!.body)).toEqual({ repository: { url: META.packagist!.package_url } });
    expect(JSON.parse(render("packagist", "fork", CASES[3]![2])!.body)).toEqual({ repository: { url: "" } });
  });

  it("a gitea or gogs hook, or an event no message is made of, gets no chat message", () => {
    expect(render("gitea", "push", CASES[4]![2])).toBeNull();
    expect(render("slack", "issues", CASES[0]![2])).toBeNull();
  });
});
