/**
 * `not` matcher: a list of matcher sets; matches when none of them matches.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileMatcherSets, type MatcherSetConfig, provisionMatcherSets } from "../routes.ts";

/**
 * `http.matchers.not` (Caddy's `MatchNot`, `modules/caddyhttp/matchers.go`): matcher sets, any
 * of which (its matchers all matching) makes the `not` fail. Caddy reads one set given as an
 * object as a list of that set.
 */
export type NotMatcherConfig = MatcherSetConfig[];

/**
 * Decodes a `not` matcher: its sets as a list (each set is decoded when it is provisioned).
 *
 * @example
 * ```ts
 * import { decodeNotMatcher } from "./not.ts";
 * decodeNotMatcher({ path: ["/admin/*"] }).length; // 1
 * ```
 */
export function decodeNotMatcher(raw: unknown): NotMatcherConfig {
  return (Array.isArray(raw) ? raw : [raw]) as NotMatcherConfig;
}

/** Registry entry. */
export const notMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.not",
  async create(config, ctx) {
    const sets = await provisionMatcherSets(decodeNotMatcher(config), ctx, "http.matchers.not");
    const any = compileMatcherSets(sets);
    return { match: (c) => any === null ? false : !any(c) };
  },
};
