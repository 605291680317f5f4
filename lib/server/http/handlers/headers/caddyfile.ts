/**
 * Gatehousefile syntax of the `headers` handler: the `header` (response headers) and
 * `request_header` directives.
 *
 * ```
 * header [<matcher>] [[+|-|?|>]<field> [<value>|<find>] [<replace>]] {
 *     [+|-|?|>]<field> [<value>|<find> <replace>]
 *     defer
 *     match <response matcher>
 * }
 * request_header [<matcher>] [+|-]<field> [<value>|<find>] [<replace>]
 * ```
 * `+` appends, `-` deletes, `?` sets only when absent, `>` sets after the response is
 * written (deferred); a third argument replaces `<find>` (a regexp) by `<replace>`.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { ConfigValue } from "../../../caddyfile/types.ts";
import { jsonEqual } from "../../../caddyfile/types.ts";
import { canonicalHeaderKey } from "../../../caddyfile/values.ts";
import { parseNamedResponseMatcher, type ResponseMatcher } from "../../matchers/caddyfile.ts";
import type { HeadersConfig, RespHeaderOpsConfig } from "./config.ts";

/**
 * Header operations as the directives build them (`add`, `set`, `delete`, `replace`, and for
 * responses `require` and `deferred`): the `headers` handler's own, shared with
 * `reverse_proxy`'s `header_up`/`header_down` and `push`'s `headers`.
 */
export type HeaderOps = RespHeaderOpsConfig;

/**
 * Applies one header operation written as `[+|-|?|>]field value [replacement]` to `ops`
 * (`response` true for response headers, where `?` and deferral apply).
 */
export function applyHeaderOp(
  ops: HeaderOps,
  response: boolean,
  field: string,
  value: string,
  replacement: string | undefined,
): void {
  if (field.startsWith("+")) {
    const k = canonicalHeaderKey(field.slice(1));
    const add = (ops.add ??= {});
    add[k] = [...(add[k] ?? []), value];
  } else if (field.startsWith("-")) {
    ops.delete = [...(ops.delete ?? []), field.slice(1)];
    if (response) ops.deferred = true;
  } else if (field.startsWith("?")) {
    if (!response) {
      throw new Error(
        `${field}: the default header modifier ('?') can only be used on response headers; for conditional manipulation of request headers, use matchers`,
      );
    }
    const f = field.slice(1);
    const req = (ops.require ??= { headers: {} });
    (req.headers ??= {})[f] = null;
    (ops.set ??= {})[canonicalHeaderKey(f)] = [value];
  } else if (replacement !== undefined) {
    if (field.startsWith(">") && response) ops.deferred = true;
    const f = field.replace(/^[+\-?>]+/, "");
    const rep = (ops.replace ??= {});
    const r: { search_regexp?: string; replace?: string } = {};
    if (value !== "") r.search_regexp = value;
    if (replacement !== "") r.replace = replacement;
    rep[f] = [...(rep[f] ?? []), r];
  } else if (field.startsWith(">")) {
    (ops.set ??= {})[canonicalHeaderKey(field.slice(1))] = [value];
    if (response) ops.deferred = true;
  } else {
    (ops.set ??= {})[canonicalHeaderKey(field)] = [value];
  }
}

/** `header`: response header operations (a second handler for `?` defaults). */
export function parseHeader(h: Helper): ConfigValue[] {
  h.next();
  const matcher = h.extractMatcherSet();
  h.next();
  const main: HeaderOps = {};
  const withRequire: HeaderOps = {};
  let hasArgs = false;
  const apply = (ops: HeaderOps, field: string, value: string, rep: string | undefined) => {
    try {
      applyHeaderOp(ops, true, field, value, rep);
    } catch (e) {
      throw h.err((e as Error).message);
    }
  };
  if (h.nextArg()) {
    hasArgs = true;
    const field = h.val();
    const value = h.nextArg() ? h.val() : "";
    const rep = h.nextArg() ? h.val() : undefined;
    apply(main, field, value, rep);
    if (main.delete?.length) main.deferred = true;
  }
  for (const n = h.nesting(); h.nextBlock(n);) {
    let field = h.val();
    if (field === "defer") {
      main.deferred = true;
      continue;
    }
    if (field === "match") {
      const m = new Map<string, ResponseMatcher>();
      parseNamedResponseMatcher(h.newFromNextSegment(), m);
      main.require = m.get("match");
      continue;
    }
    if (hasArgs) throw h.err("cannot specify headers in both arguments and block");
    field = field.endsWith(":") ? field.slice(0, -1) : field;
    const value = h.nextArg() ? h.val() : "";
    const rep = h.nextArg() ? h.val() : undefined;
    apply(field.startsWith("?") ? withRequire : main, field, value, rep);
  }
  const out: ConfigValue[] = [];
  for (const ops of [main, withRequire]) {
    if (!jsonEqual(ops, {})) {
      const handler: HeadersConfig = { handler: "headers", response: ops };
      out.push(...h.newRoute(matcher, handler));
    }
  }
  return out;
}

/** `request_header`: one request header operation. */
export function parseRequestHeader(h: Helper): ConfigValue[] {
  h.next();
  const matcher = h.extractMatcherSet();
  h.next();
  if (!h.nextArg()) throw h.argErr();
  let field = h.val();
  field = field.endsWith(":") ? field.slice(0, -1) : field;
  const value = h.nextArg() ? h.val() : "";
  let rep: string | undefined;
  if (h.nextArg()) {
    rep = h.val();
    if (h.nextArg()) throw h.argErr();
  }
  const ops: HeaderOps = {};
  try {
    applyHeaderOp(ops, false, field, value, rep);
  } catch (e) {
    throw h.err((e as Error).message);
  }
  const handler: HeadersConfig = { handler: "headers", request: ops };
  const out = h.newRoute(matcher, handler);
  if (h.nextArg()) throw h.argErr();
  return out;
}

/** The Gatehousefile syntax of `headers`. */
export const syntax: SyntaxSet = {
  directives: { header: parseHeader, request_header: parseRequestHeader },
};
