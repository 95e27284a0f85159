/**
 * `GET info/refs?service=…`: the v0/v1 ref advertisement with capabilities (gitprotocol-pack
 * "Reference Discovery") or, for upload-pack with `Git-Protocol: version=2`, the v2 capability
 * advertisement (gitprotocol-v2). Push always speaks v0/v1, as git's receive-pack does.
 */
import { concatStreams, ZERO_OID } from "../bytes.ts";
import { ObjectReader } from "../pack/reader.ts";
import { FLUSH, fitsPkt, pkt, pktLines } from "../pkt-line.ts";
import { refNameLengthProblem } from "../refname.ts";
import type { RepoState } from "../storage/ref-store.ts";
import { Commits } from "../walk.ts";
import { agentOf, asBody, type GitContext, gitHeaders, peeledOf, protocolVersion } from "./common.ts";

export type Service = "git-upload-pack" | "git-receive-pack";

/** Capabilities of v0/v1 upload-pack (no thin-pack, allow-any-sha1-in-want). */
export const UPLOAD_PACK_CAPS = [
  "multi_ack", "multi_ack_detailed", "no-done", "side-band", "side-band-64k", "ofs-delta", "shallow", "deepen-since", "deepen-not", "deepen-relative", "no-progress", "include-tag",
  // a want of any object a ref reaches (checkWants), as Gitea's allowAnySHA1InWant lets v0/v1 clients ask
  "allow-tip-sha1-in-want", "allow-reachable-sha1-in-want",
  // partial clone (Gitea sets uploadpack.allowFilter)
  "filter",
];
/** Capabilities of receive-pack (no report-status-v2, push-cert). */
export const RECEIVE_PACK_CAPS = ["report-status", "delete-refs", "side-band-64k", "quiet", "atomic", "ofs-delta", "push-options"];

/** The v2 capability advertisement lines. */
export const v2Capabilities = (agent: string): string[] => ["version 2", `agent=${agent}`, "ls-refs=unborn", "fetch=shallow filter", "server-option", "object-format=sha1"];

/**
 * True when a ref's advertised lines fit a pkt-line wherever they fall (peeled, or first with
 * `firstLine`'s capabilities). A ref stored before names were limited may not: it is left out, since
 * one line over git's limit would make every client fail on the whole advertisement.
 */
export const advertisable = (name: string, firstLine = ""): boolean => fitsPkt(`${ZERO_OID} ${name}^{} peeled:${ZERO_OID}${firstLine}\n`);

/** The v0/v1 advertisement lines for `service` (refs sorted, HEAD first for upload-pack, peeled tags). */
export async function advertisementLines(ctx: GitContext, service: Service, state: RepoState): Promise<string[]> {
  const agent = agentOf(ctx);
  // HEAD's branch only when git could store its name (it rides in the capabilities of the first line)
  const headRef = state.head && refNameLengthProblem(state.head) === null ? state.refs.find((r) => r.name === state.head) : undefined;
  const caps = service === "git-upload-pack" ? [...UPLOAD_PACK_CAPS] : [...RECEIVE_PACK_CAPS];
  if (service === "git-upload-pack" && headRef) caps.push(`symref=HEAD:${headRef.name}`);
  caps.push("object-format=sha1", `agent=${agent}`);
  const capsText = caps.join(" ");
  const fits = (name: string) => advertisable(name, `\0${capsText}`);
  const entries: [string, string][] = [];
  if (service === "git-upload-pack" && headRef) entries.push([headRef.oid, "HEAD"]);
  const needsPeel = service === "git-upload-pack" && state.refs.some((r) => r.name.startsWith("refs/tags/") && r.peeled === undefined);
  const commits = needsPeel ? new Commits(await ObjectReader.open(ctx.objects, state.packs)) : null;
  for (const r of state.refs) {
    if (!fits(r.name)) continue;
    entries.push([r.oid, r.name]);
    if (service === "git-upload-pack") {
      const peeled = commits ? await peeledOf(r, commits) : r.peeled && r.peeled !== r.oid ? r.peeled : null;
      if (peeled) entries.push([peeled, `${r.name}^{}`]);
    }
  }
  if (entries.length === 0) return [`${ZERO_OID} capabilities^{}\0${capsText}`];
  return entries.map(([oid, name], i) => (i === 0 ? `${oid} ${name}\0${capsText}` : `${oid} ${name}`));
}

/** Answers `GET info/refs?service=<service>`. */
export async function handleInfoRefs(ctx: GitContext, service: Service, req: Request): Promise<Response> {
  const headers = gitHeaders(`application/x-${service}-advertisement`);
  const version = protocolVersion(req);
  if (service === "git-upload-pack" && version === 2) {
    // v2: no "# service" preamble (git http-backend omits it too), just the capabilities
    return new Response(asBody(pktLines(v2Capabilities(agentOf(ctx)))), { headers });
  }
  const state = await ctx.refs.read(ctx.repoId);
  const lines = await advertisementLines(ctx, service, state);
  const body = concatStreams([pkt(`# service=${service}\n`), FLUSH, ...(version === 1 ? [pkt("version 1\n")] : []), pktLines(lines)]);
  return new Response(body, { headers });
}
