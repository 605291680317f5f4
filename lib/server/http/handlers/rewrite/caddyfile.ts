/**
 * Gatehousefile syntax of the `rewrite` handler: `rewrite`, `uri`, `method` and
 * `handle_path` (a `handle` that strips its path prefix).
 *
 * ```
 * rewrite [<matcher>] <to>
 * uri [<matcher>] strip_prefix|strip_suffix <part> | replace <find> <replace> [<limit>]
 *     | path_regexp <find> <replace> | query [-|+]<key> [<value>] | query { ... }
 * method [<matcher>] <method>
 * handle_path <path_matcher> { <directives...> }
 * ```
 *
 * @module
 */
import { didYouMean } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import { parseSegmentAsSubroute } from "../../../caddyfile/routes.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { type ConfigValue, subrouteHandler } from "../../../caddyfile/types.ts";
import type {
  QueryArgument,
  QueryOpsConfig,
  QueryReplacement,
  RegexpReplacement,
  RewriteConfig,
  SubstringReplacement,
} from "./config.ts";

/** `rewrite [<matcher>] <to>`. */
export function parseRewrite(h: Helper): ConfigValue[] {
  h.next();
  const count = h.countRemainingArgs();
  if (count === 0) throw h.err("too few arguments; must have at least a rewrite URI");
  if (count > 2) throw h.err("too many arguments; should only be a matcher and a URI");
  if (count === 1) {
    if (!h.nextArg()) throw h.argErr();
    const r: RewriteConfig = { handler: "rewrite", uri: h.val() };
    return h.newRoute(undefined, r);
  }
  const matcher = h.extractMatcherSet();
  h.next();
  h.next();
  const r: RewriteConfig = { handler: "rewrite" };
  if (h.val() !== "") r.uri = h.val();
  return h.newRoute(matcher, r);
}

/** `method <method>`. */
export function parseMethod(h: Helper): RewriteConfig {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  if (h.nextArg()) throw h.argErr();
  return { handler: "rewrite", method: h.val() };
}

function applyQueryOps(h: Helper, q: QueryOpsConfig, args: string[]): void {
  const key = args[0];
  const push = <K extends keyof QueryOpsConfig>(k: K, v: NonNullable<QueryOpsConfig[K]>[number]) =>
    ((q[k] ??= []) as unknown[]).push(v);
  const kv = (k: string, v: string) => {
    const o: QueryArgument = {};
    if (k) o.key = k;
    if (v) o.val = v;
    return o;
  };
  if (key.startsWith("-")) {
    if (args.length !== 1) throw h.argErr();
    push("delete", key.replace(/^-+/, ""));
  } else if (key.startsWith("+")) {
    if (args.length !== 2) throw h.argErr();
    push("add", kv(key.replace(/^\++/, ""), args[1]));
  } else if (key.includes(">")) {
    if (args.length !== 1) throw h.argErr();
    const parts = key.split(">");
    push("rename", kv(parts[0], parts[1]));
  } else if (args.length === 3) {
    const o: QueryReplacement = {};
    if (key) o.key = key;
    if (args[1]) o.search_regexp = args[1];
    if (args[2]) o.replace = args[2];
    push("replace", o);
  } else {
    if (args.length !== 2) throw h.argErr();
    push("set", kv(key, args[1]));
  }
}

/** `uri`: path and query manipulations. */
export function parseURI(h: Helper): RewriteConfig {
  h.next();
  const args = h.remainingArgs();
  if (args.length < 1) throw h.argErr();
  const r: RewriteConfig = { handler: "rewrite" };
  switch (args[0]) {
    case "strip_prefix":
    case "strip_suffix":
      if (args.length !== 2) throw h.argErr();
      if (args[1] !== "") {
        r[args[0] === "strip_prefix" ? "strip_path_prefix" : "strip_path_suffix"] = args[1];
      }
      break;
    case "replace": {
      if (args.length !== 3 && args.length !== 4) throw h.argErr();
      let limit = 0;
      if (args.length === 4 && args[3] !== "") {
        if (!/^[+-]?\d+$/.test(args[3])) {
          throw h.err(
            `limit must be an integer; invalid: strconv.Atoi: parsing ${
              JSON.stringify(args[3])
            }: invalid syntax`,
          );
        }
        limit = Number(args[3]);
      }
      const s: SubstringReplacement = {};
      if (args[1]) s.find = args[1];
      if (args[2]) s.replace = args[2];
      if (limit) s.limit = limit;
      r.uri_substring = [s];
      break;
    }
    case "path_regexp": {
      if (args.length !== 3) throw h.argErr();
      const s: RegexpReplacement = {};
      if (args[1]) s.find = args[1];
      if (args[2]) s.replace = args[2];
      r.path_regexp = [s];
      break;
    }
    case "query": {
      if (args.length > 4) throw h.argErr();
      const q: QueryOpsConfig = {};
      let hasArgs = false;
      if (args.length > 1) {
        hasArgs = true;
        applyQueryOps(h, q, args.slice(1));
      }
      for (const n = h.nesting(); h.nextBlock(n);) {
        if (hasArgs) throw h.err("Cannot specify uri query rewrites in both argument and block");
        applyQueryOps(h, q, [h.val(), ...h.remainingArgs()]);
      }
      r.query = q;
      break;
    }
    default:
      throw h.err(
        `unrecognized URI manipulation '${args[0]}'${
          didYouMean(args[0], [
            "strip_prefix",
            "strip_suffix",
            "replace",
            "path_regexp",
            "query",
          ])
        }`,
      );
  }
  return r;
}

/** `handle_path <path> { ... }`: like `handle`, and strips the matched prefix first. */
export function parseHandlePath(h: Helper): ConfigValue[] {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  const path = h.val();
  if (!path.startsWith("/")) throw h.err(`path matcher must begin with '/', got ${path}`);
  const strip = path.endsWith("/*")
    ? path.slice(0, -2)
    : path.endsWith("*")
    ? path.slice(0, -1)
    : path;
  h.reset();
  h.next();
  const routes = parseSegmentAsSubroute(h);
  const rewrite: RewriteConfig = { handler: "rewrite" };
  if (strip !== "") rewrite.strip_path_prefix = strip;
  return h.newRoute({ path: [path] }, subrouteHandler([{ handle: [rewrite] }, ...routes]));
}

/** The Gatehousefile syntax of `rewrite`. */
export const syntax: SyntaxSet = {
  directives: { rewrite: parseRewrite, handle_path: parseHandlePath },
  handlerDirectives: { method: parseMethod, uri: parseURI },
};
