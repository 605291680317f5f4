/**
 * `path_regexp` matcher: `{name, pattern}` tested against the cleaned decoded path; captures
 * become `{http.regexp.<name>.N}` placeholders.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestMatcher } from "../handler.ts";
import { cleanPath } from "../pathutil.ts";
import { NamedRegexp } from "../regexp.ts";

/** Registry entry. */
export const pathRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.path_regexp",
  create(config) {
    const re = new NamedRegexp(config, "http.matchers.path_regexp");
    return { match: (c) => re.match(cleanPath(c.path, true), c) };
  },
};
