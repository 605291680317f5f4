/**
 * `rewrite`: changes the request's method and URI internally: `method`, `uri` (placeholders;
 * a query in it replaces the query), `strip_path_prefix`, `strip_path_suffix`,
 * `uri_substring` (`{find, replace, limit}` on the escaped path), `path_regexp`
 * (`{find, replace}`), and `query` operations (`rename`, `set`, `add`, `replace`, `delete`).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { asObject, checkFields, optArray, optObject, optString, type Raw } from "../config.ts";
import { decodePath, type RequestContext } from "../context.ts";
import type { HttpHandler } from "../handler.ts";
import { goReplacement } from "../header_ops.ts";
import { cleanPath } from "../pathutil.ts";
import { goRegExp } from "../regexp.ts";
import { compileTemplate, type Template } from "../replacer.ts";

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

function parseQueryOps(raw: Raw, where: string): QueryOps {
  checkFields(raw, ["rename", "set", "add", "replace", "delete"], where);
  const kv = (k: string) =>
    (optArray(raw, k, where) ?? []).map((e) => asObject(e, `${where}.${k}`));
  return {
    rename: kv("rename").map((o) => [String(o.key), String(o.val)]),
    set: kv("set").map((o) => [String(o.key), compileTemplate(String(o.val ?? ""))]),
    add: kv("add").map((o) => [String(o.key), compileTemplate(String(o.val ?? ""))]),
    replace: kv("replace").map((o) => ({
      key: String(o.key ?? "*"),
      search: typeof o.search === "string" ? o.search : undefined,
      re: typeof o.search_regexp === "string" ? goRegExp(o.search_regexp, "g") : undefined,
      replace: goReplacement(String(o.replace ?? "")),
    })),
    delete: (raw.delete as string[] | undefined) ?? [],
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

/** Registry entry. */
export const rewriteModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.rewrite",
  create(config) {
    const where = "http.handlers.rewrite";
    checkFields(config, [
      "handler",
      "method",
      "uri",
      "strip_path_prefix",
      "strip_path_suffix",
      "uri_substring",
      "path_regexp",
      "query",
    ], where);
    const method = optString(config, "method", where);
    const methodT = method ? compileTemplate(method) : null;
    const uri = optString(config, "uri", where) ?? "";
    const prefix = optString(config, "strip_path_prefix", where);
    const suffix = optString(config, "strip_path_suffix", where);
    const prefixT = prefix ? compileTemplate(prefix) : null;
    const suffixT = suffix ? compileTemplate(suffix) : null;
    const substrings = (optArray(config, "uri_substring", where) ?? []).map((r) => {
      const o = asObject(r, `${where}.uri_substring`);
      return {
        find: compileTemplate(String(o.find ?? "")),
        replace: compileTemplate(String(o.replace ?? "")),
        limit: typeof o.limit === "number" ? o.limit : 0,
        merge: !String(o.find ?? "").includes("//"),
      };
    });
    const regexps = (optArray(config, "path_regexp", where) ?? []).map((r) => {
      const o = asObject(r, `${where}.path_regexp`);
      return {
        re: goRegExp(String(o.find ?? ""), "g"),
        replace: goReplacement(String(o.replace ?? "")),
      };
    });
    const queryRaw = optObject(config, "query", where);
    const queryOps = queryRaw ? parseQueryOps(queryRaw, `${where}.query`) : null;

    // Split the uri template into path, query and fragment like Caddy does.
    let pathT: string | null = null;
    let queryT: string | null = null;
    if (uri) {
      const qi = uri.indexOf("?");
      const hi = uri.indexOf("#");
      const pathEnd = qi >= 0 ? qi : hi >= 0 ? hi : uri.length;
      if (pathEnd > 0) pathT = uri.slice(0, pathEnd);
      if (qi >= 0) queryT = uri.slice(qi + 1, hi > qi ? hi : uri.length);
    }
    const pathTemplate = pathT === null ? null : compileTemplate(pathT);

    return {
      serveHTTP(c, next) {
        if (methodT) c.method = methodT.render(c).toUpperCase();
        if (pathTemplate || queryT !== null) {
          // every part is built from the URI as it was, then set (Caddy reads one version)
          let query = queryT;
          let path: string | null = null;
          if (pathTemplate) {
            path = pathTemplate.render(c);
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
        if (prefix) {
          const pre = prefixT!.render(c);
          changePath(c, (p) => {
            const rest = trimPrefixCI(cleanPath(p, !pre.includes("//")), pre);
            return rest.startsWith("/") ? rest : "/" + rest;
          });
        }
        if (suffix) {
          const suf = suffixT!.render(c);
          changePath(c, (p) => {
            const r = reverse(
              trimPrefixCI(reverse(cleanPath(p, !suf.includes("//"))), reverse(suf)),
            );
            return r.startsWith("/") ? r.slice(r.startsWith("//") ? 1 : 0) : r;
          });
        }
        for (const s of substrings) {
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
        for (const r of regexps) changePath(c, (p) => cleanPath(p, true).replace(r.re, r.replace));
        if (queryOps) applyQueryOps(queryOps, c);
        return next(c);
      },
    };
  },
};
