/**
 * `acme_server` handler → `acme_server { ca; lifetime; resolvers; challenges; allow; deny;
 * allow_wildcard_names; sign_with_root }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";
import { durationText } from "../../../config/duration.ts";
import type { ACMEServerConfig } from "./config.ts";
import type { PolicyConfig, RuleSetConfig } from "./policy.ts";

/** `acme_server { ca; lifetime; resolvers; challenges; sign_with_root }`. */
export const writer: HandlerReverser<ACMEServerConfig> = (f) => {
  const block: Line[] = [];
  const ca = f.str("ca");
  if (ca !== undefined) block.push(line(["ca", ca]));
  if (f.has("lifetime")) {
    const d = durationText(f.take("lifetime"));
    if (d !== undefined) block.push(line(["lifetime", d]));
  }
  const resolvers = f.strs("resolvers");
  if (resolvers) block.push(line(["resolvers", ...resolvers]));
  const ch = f.strs("challenges");
  if (ch) block.push(line(["challenges", ...ch]));
  if (f.bool("sign_with_root")) block.push(line(["sign_with_root"]));
  const policy = f.fields<PolicyConfig>("policy");
  if (policy) {
    for (const k of ["allow", "deny"] as const) {
      const r = policy.fields<RuleSetConfig>(k);
      if (!r) continue;
      const rl: Line[] = [];
      for (const field of ["domains", "ip_ranges"] as const) {
        const v = r.strs(field);
        if (v) rl.push(line([field, ...v]));
      }
      r.done(`the ${k} rule`);
      block.push(line([k], rl));
    }
    if (policy.bool("allow_wildcard_names")) block.push(line(["allow_wildcard_names"]));
    policy.done("the acme_server policy");
  }
  return { name: "acme_server", args: [], block: block.length ? block : undefined };
};
