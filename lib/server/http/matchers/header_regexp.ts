/**
 * `header_regexp` matcher: `{"Field": {name, pattern}}`; every field must have a value that
 * matches; captures become `{http.regexp.<name>.N}`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { NamedRegexp } from "../regexp.ts";
import { headerValues } from "./header.ts";

/** Registry entry. */
export const headerRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.header_regexp",
  create(config) {
    const where = "http.matchers.header_regexp";
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new ConfigError("invalid_config", `${where}: must be an object`);
    }
    const fields = Object.entries(config).map(([k, v]) =>
      [k.toLowerCase(), new NamedRegexp(v, `${where}.${k}`)] as const
    );
    return {
      match(c) {
        for (const [name, re] of fields) {
          const vals = headerValues(c, name);
          if (!vals || !vals.some((v) => re.match(v, c))) return false;
        }
        return true;
      },
    };
  },
};
