/**
 * `header` matcher: `{"Field": ["value", ...]}`. Values may be `*` (any), `*sub*`, `prefix*`,
 * `*suffix` or exact; `[]` means the field must be present, `null` that it must be absent.
 * All fields must match. The `Host` field reads the request host.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileTemplate } from "../replacer.ts";

/**
 * `http.matchers.header` (Caddy's `MatchHeader`, `modules/caddyhttp/matchers.go`): header
 * fields to the values one of them must have. A value is exact, or `*` (any), `prefix*`,
 * `*suffix` or `*substring*`, and may hold placeholders; an empty list asks only that the
 * field be present, `null` that it be absent. Every field listed must match. `Host` reads the
 * request's host.
 */
export type HeaderMatcherConfig = Record<string, string[] | null>;

/**
 * Decodes a `header` matcher: an object of string arrays or nulls.
 *
 * @example
 * ```ts
 * import { decodeHeaderMatcher } from "./header.ts";
 * decodeHeaderMatcher({ "X-Debug": null })["X-Debug"]; // null
 * ```
 */
export function decodeHeaderMatcher(raw: unknown): HeaderMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.header");
  for (const [name, vals] of Object.entries(d.raw)) {
    if (vals !== null && (!Array.isArray(vals) || vals.some((v) => typeof v !== "string"))) {
      d.failAt(name, "must be a string array");
    }
  }
  return d.raw as HeaderMatcherConfig;
}

/** One value test. */
export type ValueTest = (actual: string, c: RequestContext) => boolean;

/** Compiles a header value pattern. */
export function valueTest(pattern: string): ValueTest {
  const t = compileTemplate(pattern);
  if (t.constant === null) return (a, c) => valueTest(t.render(c))(a, c);
  const p = t.constant;
  if (p === "*") return () => true;
  if (p.length > 1 && p.startsWith("*") && p.endsWith("*")) {
    const mid = p.slice(1, -1);
    return (a) => a.includes(mid);
  }
  if (p.startsWith("*")) {
    const s = p.slice(1);
    return (a) => a.endsWith(s);
  }
  if (p.endsWith("*")) {
    const s = p.slice(0, -1);
    return (a) => a.startsWith(s);
  }
  return (a) => a === p;
}

/** The values of a request header field (Host reads the request host). */
export function headerValues(c: RequestContext, field: string): string[] | null {
  if (field === "host") return c.host ? [c.host] : null;
  const v = c.headers.get(field);
  if (v === null) return null;
  // Deno joins repeated fields with ", "; test the whole value and each part.
  return v.indexOf(",") < 0 || field === "cookie" ? [v] : [v, ...v.split(/,\s*/)];
}

/** Builds a header matcher from its decoded config. */
export function headerMatcher(config: HeaderMatcherConfig): RequestMatcher {
  const fields: { name: string; tests: ValueTest[] | null; present: boolean }[] = [];
  for (const [name, vals] of Object.entries(config)) {
    fields.push({
      name: name.toLowerCase(),
      tests: vals === null ? null : vals.map(valueTest),
      present: Array.isArray(vals) && vals.length === 0,
    });
  }
  return {
    match(c) {
      for (const f of fields) {
        const actual = headerValues(c, f.name);
        if (f.present && actual !== null) continue;
        if (f.tests === null && actual === null) continue;
        if (actual === null || f.tests === null) return false;
        let ok = false;
        outer: for (const a of actual) {
          for (const t of f.tests) {
            if (t(a, c)) {
              ok = true;
              break outer;
            }
          }
        }
        if (!ok) return false;
      }
      return true;
    },
  };
}

/** Registry entry. */
export const headerMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.header",
  create: (raw) => headerMatcher(decodeHeaderMatcher(raw)),
};
