/**
 * `vars` matcher (`{"name": ["value"]}`, a `{placeholder}` key reads that placeholder; a
 * missing variable or placeholder reads as "") and `vars_regexp` matcher
 * (`{"name": {name, pattern}}`).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { NamedRegexp } from "../regexp.ts";
import { compileTemplate, getterFor, type Template } from "../replacer.ts";

/**
 * A variable's value as a string (Go's `%v`); a missing one is "" (current Caddy, since 2.8:
 * 2.6.2 compared `<nil>`, so a `not` of an empty match held for a missing placeholder and
 * `forward_auth` set a copied header the auth reply lacked to "").
 */
export function varString(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function reader(key: string): (c: RequestContext) => string {
  if (key.startsWith("{") && key.endsWith("}") && key.split("{").length === 2) {
    const g = getterFor(key.slice(1, -1));
    return (c) => g(c) ?? "";
  }
  return (c) => varString(c.getVar(key));
}

/** Registry entry for `vars`. */
export const varsMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.vars",
  create(config) {
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new ConfigError("invalid_config", "http.matchers.vars: must be an object");
    }
    const entries: [(c: RequestContext) => string, Template[]][] = Object.entries(config).map((
      [k, v],
    ) => {
      if (!Array.isArray(v)) {
        throw new ConfigError("invalid_config", `http.matchers.vars.${k}: must be an array`);
      }
      return [reader(k), v.map((s) => compileTemplate(String(s)))];
    });
    return {
      match(c) {
        if (entries.length === 0) return true;
        for (const [read, vals] of entries) {
          const actual = read(c);
          for (const v of vals) if (v.render(c) === actual) return true;
        }
        return false;
      },
    };
  },
};

/** Registry entry for `vars_regexp`. */
export const varsRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.vars_regexp",
  create(config) {
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new ConfigError("invalid_config", "http.matchers.vars_regexp: must be an object");
    }
    const entries = Object.entries(config).map(([k, v]) =>
      [k, reader(k), new NamedRegexp(v, `http.matchers.vars_regexp.${k}`)] as const
    );
    return {
      match(c) {
        for (const [, read, re] of entries) {
          if (re.match(read(c), c)) return true;
        }
        return false;
      },
    };
  },
};
