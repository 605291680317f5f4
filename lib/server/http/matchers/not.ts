/**
 * `not` matcher: a list of matcher sets; matches when none of them matches.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileMatcherSets, provisionMatcherSets } from "../routes.ts";

/** Registry entry. */
export const notMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.not",
  async create(config, ctx) {
    // Caddy accepts one set as an object or several as an array.
    const raw = Array.isArray(config) ? config : [config];
    const any = compileMatcherSets(await provisionMatcherSets(raw, ctx, "http.matchers.not"));
    return { match: (c) => any === null ? false : !any(c) };
  },
};
