/**
 * `map`, `push`, `metrics` and `acme_server` handlers → their directives.
 *
 * @module
 */
import type { Token } from "../../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { durationText } from "../../../../config/duration.ts";
import { isObject } from "../../../../caddyfile/writer/problems.ts";
import { type Line, line, word } from "../../../../caddyfile/writer/tokens.ts";
import { headerOpLines } from "../../../../http/handlers/headers/writer.ts";
import { handleResponseLines } from "../../../../caddyfile/writer/response_matcher.ts";

/** `push [<resources...>] { <METHOD> <target>; <header ops> }`. */
export const push: HandlerReverser = (f) => {
  const args: Token[] = [];
  const block: Line[] = [];
  (f.arr("resources") ?? []).forEach((r, i) => {
    if (!isObject(r) || typeof r.target !== "string") return;
    // the first target without a method may stand on the directive's line
    if (r.method === undefined && i === 0) args.push(word(r.target));
    else if (r.method === undefined) block.push(line([r.target]));
    else block.push(line([String(r.method), r.target]));
  });
  const h = f.fields("headers");
  if (h) {
    block.unshift(line(["headers"], headerOpLines(h) ?? []));
    h.done("push headers");
  }
  return { name: "push", args, block: block.length ? block : undefined };
};

/** `metrics [{ disable_openmetrics }]`. */
export const metrics: HandlerReverser = (f) => {
  const block = f.bool("disable_openmetrics") ? [line(["disable_openmetrics"])] : undefined;
  return { name: "metrics", args: [], block };
};

/** `acme_server { ca; lifetime; resolvers; challenges; sign_with_root }`. */
export const acmeServer: HandlerReverser = (f) => {
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
  const policy = f.fields("policy");
  if (policy) {
    for (const k of ["allow", "deny"]) {
      const r = policy.fields(k);
      if (!r) continue;
      const rl: Line[] = [];
      for (const field of ["domains", "ip_ranges"]) {
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

/** `tracing { span <name> }`. */
export const tracing: HandlerReverser = (f) => {
  const span = f.str("span");
  return {
    name: "tracing",
    args: [],
    block: span !== undefined ? [line(["span", span])] : undefined,
  };
};

/** `intercept { @m status ...; handle_response @m { ... }; replace_status ... }`. */
export const intercept: HandlerReverser = (f, ctx) => {
  const block = handleResponseLines(f, ctx);
  return { name: "intercept", args: [], block: block.length ? block : undefined };
};
