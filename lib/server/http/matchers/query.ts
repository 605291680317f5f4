/**
 * `query` matcher: `{"key": ["value", "*"]}`; matches when any listed key has its first value
 * equal to a listed value (`*` = any value). `{}` matches requests without a query.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileTemplate, type Template } from "../replacer.ts";

/** Registry entry. */
export const queryMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.query",
  create(config) {
    const where = "http.matchers.query";
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new ConfigError("invalid_config", `${where}: must be an object`);
    }
    const params: [Template, Template[]][] = [];
    for (const [k, v] of Object.entries(config)) {
      if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
        throw new ConfigError("invalid_config", `${where}.${k}: must be a string array`);
      }
      params.push([compileTemplate(k), (v as string[]).map((s) => compileTemplate(s))]);
    }
    return {
      match(c) {
        if (c.query.includes(";")) return false; // Go's ParseQuery rejects semicolons
        const parsed = new URLSearchParams(c.query);
        for (const [k, vals] of params) {
          const first = parsed.get(k.render(c));
          if (first === null) continue;
          for (const v of vals) {
            const want = v.render(c);
            if (want === "*" || want === first) return true;
          }
        }
        return params.length === 0 && c.query === "";
      },
    };
  },
};
