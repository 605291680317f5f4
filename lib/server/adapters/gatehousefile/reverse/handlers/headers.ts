/**
 * `headers` handler → `header` (response operations, with `defer` and the response matcher
 * `match { ... }`) or `request_header` (one request operation per directive, as the adapter
 * makes them).
 *
 * @module
 */
import type { Directive, HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { Fields, isObject } from "../../../../caddyfile/writer/problems.ts";
import { type Line, line } from "../../../../caddyfile/writer/tokens.ts";
import { headerOpLines } from "../../../../caddyfile/writer/header_ops.ts";
import { responseMatcherLines } from "../../../../caddyfile/writer/response_matcher.ts";

/** `headers`. */
export const headers: HandlerReverser = (f) => {
  const req = f.fields("request");
  const resp = f.fields("response");
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
function requiresAbsent(resp: Fields, require: Record<string, unknown>): boolean {
  const h = require.headers;
  if (Object.keys(require).join() !== "headers" || !isObject(h)) return false;
  if (Object.keys(h).length === 0 || Object.values(h).some((v) => v !== null)) return false;
  const set = resp.value.set;
  const setKeys = isObject(set) ? Object.keys(set).sort().join() : "";
  return setKeys === Object.keys(h).sort().join() && resp.rest().every((k) => k === "set");
}

function responseHeader(resp: Fields): Directive | null {
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

/** For other modules (reverse_proxy) that embed header operations. */
export { Fields };
