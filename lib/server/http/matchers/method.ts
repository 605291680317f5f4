/**
 * `method` matcher: the request method is one of the listed (upper-case) methods.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestMatcher } from "../handler.ts";
import { stringList } from "./values.ts";

/**
 * `http.matchers.method` (Caddy's `MatchMethod`, `modules/caddyhttp/matchers.go`): the
 * methods a request may have (compared upper-cased).
 */
export type MethodMatcherConfig = string[];

/**
 * Decodes a `method` matcher: an array of strings.
 *
 * @example
 * ```ts
 * import { decodeMethodMatcher } from "./method.ts";
 * decodeMethodMatcher(["GET", "HEAD"]); // ["GET", "HEAD"]
 * ```
 */
export function decodeMethodMatcher(raw: unknown): MethodMatcherConfig {
  return stringList(raw, "http.matchers.method");
}

/** Builds a method matcher from its decoded config. */
export function methodMatcher(config: MethodMatcherConfig): RequestMatcher {
  const methods = new Set(config.map((m) => m.toUpperCase()));
  if (methods.size === 1) {
    const only = [...methods][0];
    return { match: (c) => c.method === only };
  }
  return { match: (c) => methods.has(c.method) };
}

/** Registry entry. */
export const methodMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.method",
  create: (raw) => methodMatcher(decodeMethodMatcher(raw)),
};
