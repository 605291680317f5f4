/**
 * `headers` handler → `header` (response operations, with `defer` and the response matcher
 * `match { ... }`) or `request_header` (one request operation per directive, as the adapter
 * makes them). The header operations' lines ({@linkcode headerOpLines}) are shared with
 * `reverse_proxy`'s `header_up` / `header_down` and `push`'s `headers`, as the syntax shares
 * one parser for them.
 *
 * @module
 */
import type { Directive, HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { canonicalHeader } from "../../../caddyfile/writer/matchers.ts";
import { childPath, type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { responseMatcherLines } from "../../../caddyfile/writer/response_matcher.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";
import type { HeaderOpsConfig, HeadersConfig, RespHeaderOpsConfig } from "./config.ts";

/**
 * Header operations (`add`, `set`, `delete`, `replace`) as Gatehousefile lines: `+Field
 * value`, `Field value`, `-Field`, `Field search replacement`; null after a problem.
 */
export function headerOpLines(f: Fields<HeaderOpsConfig>, setPrefix = ""): Line[] | null {
  const out: Line[] = [];
  let ok = true;
  const canonical = (field: string, path: string): boolean => {
    if (canonicalHeader(field) === field && !/^[+\-?>]/.test(field)) return true;
    f.problems.add(
      path,
      `header field ${JSON.stringify(field)} is not in canonical form (${
        canonicalHeader(field)
      }), which the Gatehousefile always writes`,
    );
    ok = false;
    return false;
  };
  const add = f.obj("add");
  for (const [field, vals] of Object.entries(add ?? {})) {
    if (!canonical(field, childPath(f.at("add"), field))) continue;
    for (const v of Array.isArray(vals) ? vals : []) out.push(line(["+" + field, String(v)]));
  }
  const set = f.obj("set");
  for (const [field, vals] of Object.entries(set ?? {})) {
    if (!canonical(field, childPath(f.at("set"), field))) continue;
    if (!Array.isArray(vals) || vals.length !== 1 || typeof vals[0] !== "string") {
      f.problems.add(
        childPath(f.at("set"), field),
        "setting a header to other than exactly one value has no Gatehousefile form",
      );
      ok = false;
      continue;
    }
    out.push(line([setPrefix + field, vals[0]]));
  }
  for (const d of f.strs("delete") ?? []) out.push(line(["-" + d]));
  const replace = f.obj("replace");
  for (const [field, reps] of Object.entries(replace ?? {})) {
    if (/^[+\-?>]/.test(field)) {
      f.problems.add(childPath(f.at("replace"), field), "a field starting with +, -, ? or >");
      ok = false;
      continue;
    }
    for (const r of Array.isArray(reps) ? reps : []) {
      if (
        !isObject(r) || typeof r.search_regexp !== "string" ||
        Object.keys(r).some((k) => k !== "search_regexp" && k !== "replace")
      ) {
        f.problems.add(
          childPath(f.at("replace"), field),
          "only search_regexp replacements have a Gatehousefile form",
        );
        ok = false;
        continue;
      }
      out.push(line([field, r.search_regexp, String(r.replace ?? "")]));
    }
  }
  return ok ? out : null;
}

/** `headers`. */
export const writer: HandlerReverser<HeadersConfig> = (f) => {
  const req = f.fields<HeaderOpsConfig>("request");
  const resp = f.fields<RespHeaderOpsConfig>("response");
  if (req && resp) {
    f.problems.add(
      f.path,
      "a headers handler changing both request and response headers has no Gatehousefile form (each directive changes one side)",
    );
    return null;
  }
  if (req) {
    const ops = headerOpLines(req);
    req.done("the request header operations");
    if (!ops) return null;
    if (ops.length !== 1) {
      f.problems.add(
        req.path,
        "request_header makes one operation per handler; several in one handler have no Gatehousefile form",
      );
      return null;
    }
    return { name: "request_header", args: ops[0].words };
  }
  if (!resp) return { name: "header", args: [] };
  return responseHeader(resp);
};

/** True for `require` as `?Field value` makes it: absent fields, set by the same handler. */
function requiresAbsent(resp: Fields<RespHeaderOpsConfig>, require: Record<string, unknown>) {
  const h = require.headers;
  if (Object.keys(require).join() !== "headers" || !isObject(h)) return false;
  if (Object.keys(h).length === 0 || Object.values(h).some((v) => v !== null)) return false;
  const set = resp.value.set;
  const setKeys = isObject(set) ? Object.keys(set).sort().join() : "";
  return setKeys === Object.keys(h).sort().join() && resp.rest().every((k) => k === "set");
}

function responseHeader(resp: Fields<RespHeaderOpsConfig>): Directive | null {
  const deferred = resp.bool("deferred") === true;
  const require = resp.obj("require");
  const absent = require !== undefined && requiresAbsent(resp, require);
  let match: Line | undefined;
  if (require && !absent) {
    // `match { ... }`: the operations apply only to responses it matches
    const lines = responseMatcherLines(require, resp.at("require"), resp.problems);
    if (!lines) return null;
    match = line(["match"], lines);
  }
  const ops = headerOpLines(resp, absent ? "?" : "");
  resp.done("the response header operations");
  if (!ops) return null;
  // on one line, a deletion defers the operations by itself; in a block, `defer` does
  const deletes = Array.isArray(resp.value.delete) && resp.value.delete.length > 0;
  if (ops.length === 1 && !match && deferred === deletes) {
    return { name: "header", args: ops[0].words };
  }
  const block: Line[] = [];
  if (deferred) block.push(line(["defer"]));
  if (match) block.push(match);
  block.push(...ops);
  return { name: "header", args: [], block };
}
