/**
 * `headers` handler → `header` (response operations) or `request_header` (one request
 * operation per directive, as the adapter makes them).
 *
 * @module
 */
import type { Directive, HandlerReverser } from "../context.ts";
import { Fields, isObject } from "../problems.ts";
import { type Line, line } from "../tokens.ts";
import { headerOpLines } from "./header_ops.ts";

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

function responseHeader(resp: Fields): Directive | null {
  const deferred = resp.bool("deferred") === true;
  const require = resp.obj("require");
  let requireFields: string[] = [];
  if (require) {
    const h = require.headers;
    const keys = Object.keys(require);
    if (
      keys.length !== 1 || !isObject(h) || Object.values(h).some((v) => v !== null)
    ) {
      resp.problems.add(
        resp.at("require"),
        "only a require of absent headers (?Field value) has a Gatehousefile form",
      );
      return null;
    }
    requireFields = Object.keys(h);
    const set = resp.value.set;
    const setKeys = isObject(set) ? Object.keys(set).sort().join() : "";
    if (setKeys !== [...requireFields].sort().join() || resp.rest().some((k) => k !== "set")) {
      resp.problems.add(
        resp.at("require"),
        "?Field value sets exactly the required fields, nothing else",
      );
      return null;
    }
  }
  const ops = headerOpLines(resp, require ? "?" : "");
  resp.done("the response header operations");
  if (!ops) return null;
  const hasDelete = Array.isArray(resp.value.delete) && resp.value.delete.length > 0;
  const block: Line[] = [];
  if (deferred && !hasDelete) block.push(line(["defer"]));
  if (ops.length === 1 && block.length === 0) return { name: "header", args: ops[0].words };
  block.push(...ops);
  return { name: "header", args: [], block };
}

/** For other modules (reverse_proxy) that embed header operations. */
export { Fields };
