/**
 * The `rewrite` handler's `query` operations (`uri query` in a Gatehousefile), as Caddy's
 * `queryOps.do` (`modules/caddyhttp/rewrite/rewrite.go`) on Go's `url.Values`: the query is
 * parsed as `url.ParseQuery` parses it (pairs with a `;` or a bad escape dropped), changed,
 * and encoded as `Values.Encode` writes it (keys sorted, `url.QueryEscape`). Keys, values
 * and rename targets have their placeholders replaced (unknown ones by ""); a `replace`
 * operation's search and replacement keep unknown placeholders as written.
 *
 * @module
 */
import { decodePath, type RequestContext } from "../../context.ts";
import { goRegExp, goReplacement } from "../../../config/regexp.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import type { QueryOpsConfig } from "./config.ts";

/**
 * Go's `url.QueryEscape`: every byte but letters, digits and `-_.~` escaped, space as `+`.
 *
 * @example
 * ```ts
 * import { queryEscape } from "./query.ts";
 * queryEscape("a b*"); // "a+b%2A"
 * ```
 */
export function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (ch) => "%" + ch.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, "+");
}

/** Go's `url.QueryUnescape`: `+` is a space; null on a malformed escape. */
function queryUnescape(s: string): string | null {
  return decodePath(s.indexOf("+") < 0 ? s : s.replace(/\+/g, " "));
}

/** Go's `url.ParseQuery`: the values of each key in order; bad pairs left out. */
function parseQuery(raw: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const pair of raw.split("&")) {
    if (pair === "" || pair.indexOf(";") >= 0) continue;
    const eq = pair.indexOf("=");
    const key = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
    const value = queryUnescape(eq < 0 ? "" : pair.slice(eq + 1));
    if (key === null || value === null) continue;
    const list = values.get(key);
    if (list) list.push(value);
    else values.set(key, [value]);
  }
  return values;
}

/** Orders strings by code point, which is the byte order of their UTF-8 (Go's sort). */
function byCodePoint(a: string, b: string): number {
  const ia = a[Symbol.iterator](), ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next(), y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/** Go's `Values.Encode`: keys sorted, each value as `key=value`. */
function encodeQuery(values: Map<string, string[]>): string {
  const parts: string[] = [];
  for (const key of [...values.keys()].sort(byCodePoint)) {
    const k = queryEscape(key);
    for (const v of values.get(key)!) parts.push(`${k}=${queryEscape(v)}`);
  }
  return parts.join("&");
}

interface Replacement {
  key: Template;
  search: Template;
  re?: RegExp;
  replace: Template;
}

/** Query operations compiled once; `apply` changes a request's query. */
export interface QueryOps {
  apply(c: RequestContext): void;
}

/**
 * Compiles decoded query operations.
 *
 * @example
 * ```ts ignore
 * const ops = compileQueryOps({ set: [{ key: "page", val: "{http.vars.page}" }] });
 * ops.apply(c);
 * ```
 */
export function compileQueryOps(q: QueryOpsConfig): QueryOps {
  const all = (s: string | undefined) => compileTemplate(s ?? "");
  const known = (s: string | undefined) => compileTemplate(s ?? "", { keepUnknown: true });
  const rename = (q.rename ?? []).map((o) => [all(o.key), all(o.val)] as const);
  const set = (q.set ?? []).map((o) => [all(o.key), all(o.val)] as const);
  const add = (q.add ?? []).map((o) => [all(o.key), all(o.val)] as const);
  const replace: Replacement[] = (q.replace ?? []).map((o) => ({
    key: all(o.key ?? "*"),
    search: known(o.search),
    re: o.search_regexp !== undefined ? goRegExp(o.search_regexp, "g") : undefined,
    replace: known(o.replace),
  }));
  const remove = (q.delete ?? []).map(all);
  return {
    apply(c) {
      const query = parseQuery(c.query);
      for (const [k, v] of rename) {
        const from = k.render(c), to = v.render(c);
        if (from === "" || to === "" || from === to) continue;
        const vals = query.get(from);
        if (vals === undefined) continue;
        query.set(to, vals);
        query.delete(from);
      }
      for (const [k, v] of set) {
        const key = k.render(c);
        if (key !== "") query.set(key, [v.render(c)]);
      }
      for (const [k, v] of add) {
        const key = k.render(c);
        if (key === "") continue;
        const vals = query.get(key);
        if (vals) vals.push(v.render(c));
        else query.set(key, [v.render(c)]);
      }
      for (const r of replace) {
        const key = r.key.render(c);
        const to = r.replace.render(c);
        let change: (v: string) => string;
        if (r.re) {
          // `$1`, `${name}` in the replacement (after its placeholders) name groups, as in Go
          const re = r.re, expand = goReplacement(to);
          change = (v) => v.replace(re, expand);
        } else {
          // a literal replacement, as Go's strings.ReplaceAll (no `$` patterns)
          const find = r.search.render(c);
          change = (v) => v.replaceAll(find, () => to);
        }
        const keys = key === "*" ? [...query.keys()] : query.has(key) ? [key] : [];
        for (const k of keys) query.set(k, query.get(k)!.map(change));
      }
      for (const k of remove) {
        const key = k.render(c);
        if (key !== "") query.delete(key);
      }
      c.query = encodeQuery(query);
    },
  };
}
