/**
 * `map`, `push`, `metrics` and `acme_server` handlers → their directives.
 *
 * @module
 */
import type { Token } from "../../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { durationText } from "../../../../config/duration.ts";
import { childPath, Fields, isObject } from "../../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, stringWord, word } from "../../../../caddyfile/writer/tokens.ts";
import { headerOpLines } from "../../../../http/handlers/headers/writer.ts";
import { handleResponseLines } from "../../../../caddyfile/writer/response_matcher.ts";

/** `map <source> <destinations...> { <input> <outputs...>; default <outputs...> }`. */
export const map: HandlerReverser = (f) => {
  const source = f.str("source") ?? "";
  const dests = f.strs("destinations") ?? [];
  const block: Line[] = [];
  for (const [i, m] of (f.arr("mappings") ?? []).entries()) {
    const mp = childPath(f.at("mappings"), i);
    if (!isObject(m)) continue;
    const mf = new Fields(m, mp, f.problems);
    const input = mf.str("input"), re = mf.str("input_regexp");
    const outs: Token[] = [];
    for (const [k, o] of (mf.arr("outputs") ?? []).entries()) {
      // typed as the adapter reads them back: "-" is null, bare numbers and booleans
      if (o === null) outs.push(bare("-"));
      else if (typeof o === "number" || typeof o === "boolean") outs.push(bare(String(o)));
      else if (typeof o === "string" && o !== "-") outs.push(stringWord(o));
      else {
        f.problems.add(
          childPath(mf.at("outputs"), k),
          'a map output is a string (not "-"), a number, a boolean or null',
        );
        return null;
      }
    }
    mf.done("a map entry");
    if (re !== undefined) block.push(line(["~" + re, ...outs]));
    else if (input !== undefined) block.push(line([input, ...outs]));
  }
  const defaults = f.strs("defaults");
  if (defaults) block.push(line(["default", ...defaults]));
  return { name: "map", args: [word(source), ...dests.map((d) => word(d))], block };
};

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

/** `log_append <key> <value>`. */
export const logAppend: HandlerReverser = (f) => {
  const key = f.str("key") ?? "", value = f.str("value") ?? "";
  return { name: "log_append", args: [word(key), word(value)] };
};

/** `intercept { @m status ...; handle_response @m { ... }; replace_status ... }`. */
export const intercept: HandlerReverser = (f, ctx) => {
  const block = handleResponseLines(f, ctx);
  return { name: "intercept", args: [], block: block.length ? block : undefined };
};
