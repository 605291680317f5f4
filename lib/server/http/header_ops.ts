/**
 * Header operations (Caddy's `HeaderOps`): `add`, `set`, `delete` (exact names or `prefix*`,
 * `*suffix`, `*`) and `replace` (`search` substring or `search_regexp`), applied in that
 * order; names and values may hold placeholders. Also the response matcher (`require`) for
 * deferred response operations.
 *
 * @module
 */
import { asObject, checkFields, optObject, optStrings, type Raw } from "./config.ts";
import type { RequestContext } from "./context.ts";
import { ConfigError } from "../config/error.ts";
import { goRegExp } from "./regexp.ts";
import { compileTemplate, type Template } from "./replacer.ts";

interface Replacement {
  search?: Template;
  regexp?: RegExp;
  replace: Template;
}

/** Compiled header operations. */
export interface HeaderOps {
  /** Applies the operations to a header set. */
  apply(h: Headers, c: RequestContext): void;
  /** True when `delete` removes the field (for `Server`). */
  deletes(name: string): boolean;
  /** Number of configured operations. */
  readonly size: number;
}

function stringMap(raw: Raw | undefined, where: string): [Template, Template[]][] {
  if (!raw) return [];
  return Object.entries(raw).map(([k, v]) => {
    if (!Array.isArray(v)) {
      throw new ConfigError("invalid_config", `${where}.${k}: must be array`);
    }
    return [compileTemplate(k), v.map((s) => compileTemplate(String(s)))];
  });
}

/** Converts Go replacement syntax (`${1}`, `${name}`) to JS (`$1`, `$<name>`). */
export function goReplacement(s: string): string {
  return s.replace(/\$\{(\d+)\}/g, "$$$1").replace(/\$\{(\w+)\}/g, "$$<$1>");
}

/**
 * Parses a `HeaderOps` object.
 *
 * @example
 * ```ts ignore
 * const ops = parseHeaderOps({ set: { "X-Served-By": ["{system.hostname}"] } }, "headers");
 * ```
 */
export function parseHeaderOps(raw: Raw | undefined, where: string): HeaderOps {
  if (!raw) return { apply() {}, deletes: () => false, size: 0 };
  checkFields(raw, ["add", "set", "delete", "replace"], where);
  const add = stringMap(optObject(raw, "add", where), `${where}.add`);
  const set = stringMap(optObject(raw, "set", where), `${where}.set`);
  const del = (optStrings(raw, "delete", where) ?? []).map((d) => compileTemplate(d.toLowerCase()));
  const replace: [string, Replacement[]][] = [];
  for (const [field, list] of Object.entries(optObject(raw, "replace", where) ?? {})) {
    if (!Array.isArray(list)) {
      throw new ConfigError("invalid_config", `${where}.replace.${field}: must be array`);
    }
    replace.push([
      field.toLowerCase(),
      list.map((r) => {
        const o = asObject(r, `${where}.replace.${field}`);
        checkFields(o, ["search", "search_regexp", "replace"], `${where}.replace.${field}`);
        return {
          search: typeof o.search === "string" && o.search !== ""
            ? compileTemplate(o.search)
            : undefined,
          regexp: typeof o.search_regexp === "string" && o.search_regexp !== ""
            ? goRegExp(o.search_regexp, "g")
            : undefined,
          replace: compileTemplate(goReplacement(String(o.replace ?? ""))),
        };
      }),
    ]);
  }
  const matchDelete = (pattern: string, name: string) => {
    if (pattern === "*") return true;
    if (pattern.startsWith("*") && pattern.endsWith("*")) {
      return name.includes(pattern.slice(1, -1));
    }
    if (pattern.startsWith("*")) return name.endsWith(pattern.slice(1));
    if (pattern.endsWith("*")) return name.startsWith(pattern.slice(0, -1));
    return pattern === name;
  };
  return {
    size: add.length + set.length + del.length + replace.length,
    deletes: (name) => del.some((d) => d.constant !== null && matchDelete(d.constant, name)),
    apply(h, c) {
      for (const [k, vs] of add) {
        const name = k.render(c);
        for (const v of vs) h.append(name, v.render(c));
      }
      for (const [k, vs] of set) {
        const name = k.render(c);
        const values = vs.map((v) => v.render(c));
        h.delete(name);
        for (const v of values) h.append(name, v);
      }
      for (const d of del) {
        const pattern = d.render(c);
        if (!pattern.includes("*")) {
          h.delete(pattern);
          continue;
        }
        const names = new Set<string>();
        for (const [k] of h) if (matchDelete(pattern, k)) names.add(k);
        for (const n of names) h.delete(n);
      }
      for (const [field, reps] of replace) {
        const fields = field === "*" ? [...new Set([...h.keys()])] : [field];
        for (const f of fields) {
          const values = f === "set-cookie" ? h.getSetCookie() : [h.get(f)];
          if (values[0] === null || values.length === 0) continue;
          const out = (values as string[]).map((v) => {
            for (const r of reps) {
              const to = r.replace.render(c);
              if (r.search) v = v.replaceAll(r.search.render(c), to);
              else if (r.regexp) v = v.replace(r.regexp, to);
            }
            return v;
          });
          h.delete(f);
          for (const v of out) h.append(f, v);
        }
      }
    },
  };
}

/** Caddy's header value pattern test: `*`, `*sub*`, `prefix*`, `*suffix` or exact. */
export function wildcardValue(pattern: string, actual: string): boolean {
  if (pattern === "*") return true;
  if (pattern.length > 1 && pattern.startsWith("*") && pattern.endsWith("*")) {
    return actual.includes(pattern.slice(1, -1));
  }
  if (pattern.startsWith("*")) return actual.endsWith(pattern.slice(1));
  if (pattern.endsWith("*")) return actual.startsWith(pattern.slice(0, -1));
  return actual === pattern;
}

/** A response matcher (`require`): status codes (a single digit means a class) and headers. */
export interface ResponseMatcher {
  /** True when the response matches. */
  match(status: number, headers: Headers): boolean;
}

/** Parses a response matcher `{status_code: [...], headers: {...}}`. */
export function parseResponseMatcher(raw: Raw, where: string): ResponseMatcher {
  checkFields(raw, ["status_code", "headers"], where);
  const codes = (raw.status_code as number[] | undefined) ?? [];
  const headers = Object.entries(optObject(raw, "headers", where) ?? {}).map((
    [k, v],
  ) => [k.toLowerCase(), v as string[] | null] as const);
  return {
    match(status, h) {
      if (codes.length) {
        const ok = codes.some((code) =>
          code < 10 ? Math.floor(status / 100) === code : status === code
        );
        if (!ok) return false;
      }
      for (const [k, vals] of headers) {
        const actual = h.get(k);
        if (vals === null) {
          if (actual !== null) return false;
          continue;
        }
        if (actual === null) return false;
        if (vals.length && !vals.some((v) => wildcardValue(v, actual))) return false;
      }
      return true;
    },
  };
}

/** Returns a response whose headers can be changed (copies when they are immutable). */
export function mutableResponse(res: Response): Response {
  try {
    res.headers.set("x-gatehouse-probe", "1");
    res.headers.delete("x-gatehouse-probe");
    return res;
  } catch {
    return new Response(res.body, {
      status: res.status,
      statusText: res.statusText,
      headers: new Headers(res.headers),
    });
  }
}
