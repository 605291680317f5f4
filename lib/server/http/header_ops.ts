/**
 * Header operations (Caddy's `HeaderOps`) compiled for use: `add`, `set`, `delete` (exact
 * names or `prefix*`, `*suffix`, `*`) and `replace` (`search` substring or `search_regexp`),
 * applied in that order; names and values may hold placeholders. The config and its decoder
 * are the `headers` handler's ({@linkcode HeaderOpsConfig} in `handlers/headers/config.ts`);
 * `parseHeaderOps` and `parseResponseMatcher` decode and compile in one step for modules that
 * embed them.
 *
 * @module
 */
import { Decoder, type Raw } from "../config/decode.ts";
import type { RequestContext } from "./context.ts";
import { decodeHeaderOps, type HeaderOpsConfig } from "./handlers/headers/config.ts";
import { goRegExp, goReplacement } from "../config/regexp.ts";
import { compileTemplate, type Template } from "./replacer.ts";
import {
  compileResponseMatcher,
  decodeResponseMatcher,
  type ResponseMatcher,
} from "./response_matcher.ts";

export { type ResponseMatcher, wildcardValue } from "./response_matcher.ts";

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

/**
 * A name or value of an operation: placeholders no one knows stay as written, known ones
 * without a value are empty (Caddy's `HeaderOps.ApplyTo` uses `ReplaceKnown` throughout).
 */
function known(s: string): Template {
  return compileTemplate(s, { keepUnknown: true });
}

function templates(fields: Record<string, string[]> | undefined): [Template, Template[]][] {
  return Object.entries(fields ?? {}).map(([k, v]) => [known(k), v.map(known)]);
}

function matchDelete(pattern: string, name: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*") && pattern.endsWith("*")) {
    return name.includes(pattern.slice(1, -1));
  }
  if (pattern.startsWith("*")) return name.endsWith(pattern.slice(1));
  if (pattern.endsWith("*")) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

/** No operations. */
const NONE: HeaderOps = { apply() {}, deletes: () => false, size: 0 };

/**
 * Compiles decoded header operations (none when `config` is undefined).
 *
 * @example
 * ```ts ignore
 * const ops = compileHeaderOps({ set: { "X-Served-By": ["{system.hostname}"] } });
 * ops.apply(headers, c);
 * ```
 */
export function compileHeaderOps(config: HeaderOpsConfig | undefined): HeaderOps {
  if (!config) return NONE;
  const add = templates(config.add);
  const set = templates(config.set);
  const del = (config.delete ?? []).map((d) => known(d.toLowerCase()));
  const replace: [string, Replacement[]][] = Object.entries(config.replace ?? {}).map((
    [field, list],
  ) => [
    field.toLowerCase(),
    list.map((r) => ({
      search: r.search !== undefined ? known(r.search) : undefined,
      regexp: r.search_regexp !== undefined ? goRegExp(r.search_regexp, "g") : undefined,
      replace: known(goReplacement(r.replace ?? "")),
    })),
  ]);
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

/**
 * Decodes and compiles a `HeaderOps` object at `where` (none when `raw` is undefined).
 *
 * @example
 * ```ts ignore
 * const ops = parseHeaderOps({ set: { "X-Served-By": ["{system.hostname}"] } }, "headers");
 * ```
 */
export function parseHeaderOps(raw: Raw | undefined, where: string): HeaderOps {
  return raw ? compileHeaderOps(decodeHeaderOps(new Decoder(raw, where))) : NONE;
}

/** Decodes and compiles a response matcher `{status_code: [...], headers: {...}}` at `where`. */
export function parseResponseMatcher(raw: Raw, where: string): ResponseMatcher {
  return compileResponseMatcher(decodeResponseMatcher(new Decoder(raw, where)));
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
