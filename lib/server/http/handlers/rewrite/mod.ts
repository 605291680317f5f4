/**
 * `http.handlers.rewrite`: changes the request's method and URI internally: `method`, `uri`
 * (placeholders; a query in it replaces the query), `strip_path_prefix`, `strip_path_suffix`,
 * `uri_substring` (`{find, replace, limit}` on the escaped path), `path_regexp`
 * (`{find, replace}`), and `query` operations (`rename`, `set`, `add`, `replace`, `delete`).
 * The config is {@linkcode RewriteConfig} (`config.ts`); the Gatehousefile syntax (`rewrite`,
 * `uri`, `method`, `handle_path`) is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { decodePath, type RequestContext } from "../../context.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { decodeRewrite, type QueryOpsConfig, type RewriteConfig } from "./config.ts";
import { goReplacement } from "../../header_ops.ts";
import { cleanPath } from "../../pathutil.ts";
import { goRegExp } from "../../regexp.ts";
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

function queryEscape(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, "+");
}

/** Builds the query of a rewritten URI, escaping placeholder values (Caddy's rules). */
function buildQuery(tmpl: string, c: RequestContext): string {
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
      const v = compileTemplate(`{${key}}`).render(c);
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

interface QueryOps {
  rename: [string, string][];
  set: [string, Template][];
  add: [string, Template][];
  replace: { key: string; search?: string; re?: RegExp; replace: string }[];
  delete: string[];
}

function compileQueryOps(q: QueryOpsConfig): QueryOps {
  return {
    rename: (q.rename ?? []).map((o) => [String(o.key), String(o.val)]),
    set: (q.set ?? []).map((o) => [String(o.key), compileTemplate(o.val ?? "")]),
    add: (q.add ?? []).map((o) => [String(o.key), compileTemplate(o.val ?? "")]),
    replace: (q.replace ?? []).map((o) => ({
      key: o.key ?? "*",
      search: o.search,
      re: o.search_regexp !== undefined ? goRegExp(o.search_regexp, "g") : undefined,
      replace: goReplacement(o.replace ?? ""),
    })),
    delete: q.delete ?? [],
  };
}

function applyQueryOps(ops: QueryOps, c: RequestContext): void {
  const q = new URLSearchParams(c.query);
  for (const [from, to] of ops.rename) {
    const vals = q.getAll(from);
    if (!vals.length) continue;
    q.delete(from);
    for (const v of vals) q.append(to, v);
  }
  for (const [k, v] of ops.set) q.set(k, v.render(c));
  for (const [k, v] of ops.add) q.append(k, v.render(c));
  for (const r of ops.replace) {
    const keys = r.key === "*" ? [...new Set(q.keys())] : [r.key];
    for (const k of keys) {
      const vals = q.getAll(k).map((v) =>
        r.re
          ? v.replace(r.re, r.replace)
          : r.search !== undefined
          ? v.replaceAll(r.search, r.replace)
          : v
      );
      if (!vals.length) continue;
      q.delete(k);
      for (const v of vals) q.append(k, v);
    }
  }
  for (const k of ops.delete) q.delete(k);
  q.sort(); // Go encodes url.Values sorted by key
  c.query = q.toString();
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
      if (qi >= 0) this.#query = uri.slice(qi + 1, hi > qi ? hi : uri.length);
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
    if (this.#queryOps) applyQueryOps(this.#queryOps, c);
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
        if (query === null || query === "") query = path.slice(q + 1);
        path = path.slice(0, q);
      }
    }
    const built = query === null ? null : query === "" ? "" : buildQuery(query, c);
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

function replaceSubstring(c: RequestContext, s: Substring): void {
  const find = s.find.render(c);
  const rep = s.replace.render(c);
  changePath(c, (p) => {
    let out = cleanPath(p, s.merge);
    if (s.limit > 0) {
      for (let i = 0; i < s.limit && out.includes(find); i++) out = out.replace(find, rep);
      return out;
    }
    return out.replaceAll(find, rep);
  });
}

/** Registry entry. */
export const rewriteModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.rewrite",
  create: (config) => new Rewrite(decodeRewrite(config)),
};
