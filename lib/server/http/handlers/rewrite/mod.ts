/**
 * `http.handlers.rewrite`: changes the request's method and URI internally: `method`, `uri`
 * (placeholders; a query in it replaces the query), `strip_path_prefix`, `strip_path_suffix`,
 * `uri_substring` (`{find, replace, limit}` on the escaped path and the raw query), `path_regexp`
 * (`{find, replace}`), and `query` operations (`rename`, `set`, `add`, `replace`, `delete`:
 * `query.ts`).
 * The config is {@linkcode RewriteConfig} (`config.ts`); the Gatehousefile syntax (`rewrite`,
 * `uri`, `method`, `handle_path`) is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { decodePath, type RequestContext } from "../../context.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { decodeRewrite, type RewriteConfig } from "./config.ts";
import { compileQueryOps, queryEscape, type QueryOps } from "./query.ts";
import { goRegExp, goReplacement } from "../../../config/regexp.ts";
import { cleanPath } from "../../pathutil.ts";
import { compileTemplate, type Template } from "../../replacer.ts";

function changePath(c: RequestContext, fn: (escaped: string) => string): void {
  const next = fn(c.rawPath);
  if (decodePath(next) !== null) c.rawPath = next;
}

function trimPrefixCI(escaped: string, prefix: string): string {
  // Compare decoded characters case-insensitively, consuming escapes in the path.
  let ip = 0;
  let ix = 0;
  while (ip < prefix.length && ix < escaped.length) {
    let ch = escaped[ix];
    let width = 1;
    if (ch === "%" && prefix[ip] !== "%" && ix + 3 <= escaped.length) {
      const d = decodePath(escaped.slice(ix, ix + 3));
      if (d !== null && d.length === 1) {
        ch = d;
        width = 3;
      }
    }
    if (ch.toLowerCase() !== prefix[ip].toLowerCase()) return escaped;
    ip++;
    ix += width;
  }
  if (ip < prefix.length) return escaped;
  return escaped.slice(ix);
}

const reverse = (s: string) => [...s].reverse().join("");

/** Builds the query of a rewritten URI, escaping placeholder values (Caddy's rules). */
function buildQuery(tmpl: string, c: RequestContext, values: Map<string, Template>): string {
  let out = "";
  let qs = tmpl;
  let wroteVal = true;
  while (qs.length > 0) {
    const eq = qs.indexOf("=");
    const amp = qs.indexOf("&");
    const ampNext = amp >= 0 && (amp < eq || eq < 0);
    let end = qs.length;
    if (ampNext) end = amp;
    else if (eq >= 0 && (eq < amp || amp < 0)) end = eq;
    const comp = qs.slice(0, end).replace(/\{([^}]+)\}/g, (_m, key: string) => {
      const v = values.get(key)?.render(c) ?? "";
      return key === "http.request.uri.query" && wroteVal ? v : queryEscape(v);
    });
    qs = qs.slice(end < qs.length ? end + 1 : end);
    if (wroteVal) {
      if (out.length && comp.length) out += "&";
    } else out += "=";
    out += comp;
    wroteVal = ampNext;
  }
  return out;
}

interface Substring {
  find: Template;
  replace: Template;
  limit: number;
  /** Runs of slashes are merged before replacing, unless the search has `//`. */
  merge: boolean;
}

/** A rewrite handler: each step changes the request when its field is set. */
export class Rewrite implements HttpHandler {
  #method: Template | null;
  #path: Template | null = null;
  #query: string | null = null;
  /** The placeholders of `#query`, compiled once. */
  #queryValues = new Map<string, Template>();
  #prefix: Template | null;
  #suffix: Template | null;
  #substrings: Substring[];
  #regexps: { re: RegExp; replace: string }[];
  #queryOps: QueryOps | null;

  /** Compiles a decoded config. */
  constructor(config: RewriteConfig) {
    this.#method = config.method ? compileTemplate(config.method) : null;
    this.#prefix = config.strip_path_prefix ? compileTemplate(config.strip_path_prefix) : null;
    this.#suffix = config.strip_path_suffix ? compileTemplate(config.strip_path_suffix) : null;
    this.#substrings = (config.uri_substring ?? []).map((s) => ({
      find: compileTemplate(s.find ?? ""),
      replace: compileTemplate(s.replace ?? ""),
      limit: s.limit ?? 0,
      merge: !(s.find ?? "").includes("//"),
    }));
    this.#regexps = (config.path_regexp ?? []).map((r) => ({
      re: goRegExp(r.find ?? "", "g"),
      replace: goReplacement(r.replace ?? ""),
    }));
    this.#queryOps = config.query ? compileQueryOps(config.query) : null;
    // the uri splits into path, query and fragment like Caddy's
    const uri = config.uri ?? "";
    if (uri) {
      const qi = uri.indexOf("?");
      const hi = uri.indexOf("#");
      const pathEnd = qi >= 0 ? qi : hi >= 0 ? hi : uri.length;
      if (pathEnd > 0) this.#path = compileTemplate(uri.slice(0, pathEnd));
      if (qi >= 0) {
        this.#query = uri.slice(qi + 1, hi > qi ? hi : uri.length);
        for (const [, key] of this.#query.matchAll(/\{([^}]+)\}/g)) {
          this.#queryValues.set(key, compileTemplate(`{${key}}`));
        }
      }
    }
  }

  serveHTTP(c: RequestContext, next: Next): Response | Promise<Response> {
    if (this.#method) c.method = this.#method.render(c).toUpperCase();
    if (this.#path || this.#query !== null) this.#rewriteURI(c);
    if (this.#prefix) this.#stripPrefix(c, this.#prefix.render(c));
    if (this.#suffix) this.#stripSuffix(c, this.#suffix.render(c));
    for (const s of this.#substrings) replaceSubstring(c, s);
    for (const r of this.#regexps) {
      changePath(c, (p) => cleanPath(p, true).replace(r.re, r.replace));
    }
    if (this.#queryOps) this.#queryOps.apply(c);
    return next(c);
  }

  /** `uri`: every part is built from the URI as it was, then set (Caddy reads one version). */
  #rewriteURI(c: RequestContext): void {
    let query = this.#query;
    let path: string | null = null;
    if (this.#path) {
      path = this.#path.render(c);
      const q = path.indexOf("?");
      if (q >= 0) {
        // a query that came out of the path's placeholder values is taken when the uri has
        // an empty one (`/x{v}?`; without a `?` the query stays, as Caddy's), and is data:
        // its braces are escaped so that no client-sent `{env.SECRET}` is expanded (current
        // Caddy, 176b043b0, GHSA-j8px-rmrx-76h9)
        if (query === "") {
          query = path.slice(q + 1).replace(/\{/g, "%7B").replace(/\}/g, "%7D");
        }
        path = path.slice(0, q);
      }
    }
    const built = query === null
      ? null
      : query === ""
      ? ""
      : buildQuery(query, c, this.#queryValues);
    if (path !== null) c.setPath(path);
    if (built !== null) c.query = built;
  }

  #stripPrefix(c: RequestContext, pre: string): void {
    changePath(c, (p) => {
      const rest = trimPrefixCI(cleanPath(p, !pre.includes("//")), pre);
      return rest.startsWith("/") ? rest : "/" + rest;
    });
  }

  #stripSuffix(c: RequestContext, suf: string): void {
    changePath(c, (p) => {
      const r = reverse(trimPrefixCI(reverse(cleanPath(p, !suf.includes("//"))), reverse(suf)));
      return r.startsWith("/") ? r.slice(r.startsWith("//") ? 1 : 0) : r;
    });
  }
}

/** Go's `strings.Replace`: the first `n` occurrences (all when `n` is 0 or less), literally. */
function replaceN(s: string, find: string, to: string, n: number): string {
  if (n <= 0) return s.replaceAll(find, () => to);
  let out = "";
  let at = 0;
  for (let i = 0; i < n; i++) {
    const j = s.indexOf(find, at);
    if (j < 0) break;
    out += s.slice(at, j) + to;
    at = j + find.length;
  }
  return out + s.slice(at);
}

/** `uri_substring`: in the (cleaned, escaped) path and in the raw query, as Caddy's. */
function replaceSubstring(c: RequestContext, s: Substring): void {
  const find = s.find.render(c);
  if (find === "") return;
  const rep = s.replace.render(c);
  changePath(c, (p) => replaceN(cleanPath(p, s.merge), find, rep, s.limit));
  c.query = replaceN(c.query, find, rep, s.limit);
}

/** Registry entry. */
export const rewriteModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.rewrite",
  create: (config) => new Rewrite(decodeRewrite(config)),
};
