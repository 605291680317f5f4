/**
 * `url_pattern` matcher (Caddy's `http.matchers.url_pattern`): matches the request against a
 * WHATWG URL pattern (the web platform's `URLPattern`), e.g. `/books/:id` or
 * `https://example.com/users/:name`. A pattern with no scheme matches any scheme, host and
 * port; `base_url` resolves a relative one; `ignore_case` matches case-insensitively. The
 * path is cleaned first (slashes merged unless the pattern's path has `//`). Named groups
 * become `{http.url_pattern.<component>.<name>}` (`pathname`, `hostname`, `search`...).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { asObject, checkFields, optBool, optString } from "../config.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { cleanPath } from "../pathutil.ts";

const COMPONENTS = [
  "protocol",
  "username",
  "password",
  "hostname",
  "port",
  "pathname",
  "search",
  "hash",
] as const;

/** Builds a url_pattern matcher from its JSON. */
export function urlPatternMatcher(config: Record<string, unknown>): RequestMatcher {
  const where = "http.matchers.url_pattern";
  const raw = asObject(config, where);
  checkFields(raw, ["pattern", "base_url", "ignore_case"], where);
  const pattern = optString(raw, "pattern", where) ?? "";
  const base = optString(raw, "base_url", where) ?? "";
  const ignoreCase = optBool(raw, "ignore_case", where) ?? false;
  const input = base === "" && !pattern.includes("://") ? `*://*:*${pattern}` : pattern;
  let compiled: URLPattern;
  try {
    compiled = base
      ? new URLPattern(input, base, { ignoreCase })
      : new URLPattern(input, { ignoreCase });
  } catch (e) {
    throw new ConfigError(
      "invalid_config",
      `${where}: unable to parse URL pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`,
    );
  }
  let patternPath = pattern;
  const scheme = patternPath.indexOf("://");
  if (scheme >= 0) {
    patternPath = patternPath.slice(scheme + 3);
    const slash = patternPath.indexOf("/");
    patternPath = slash >= 0 ? patternPath.slice(slash) : "";
  }
  const mergeSlashes = !patternPath.includes("//");
  return {
    match(c) {
      const path = cleanPath(c.path, mergeSlashes);
      const target = encodeURI(path).replace(/\?/g, "%3F").replace(/#/g, "%23") +
        (c.query ? `?${c.query}` : "");
      let result: URLPatternResult | null;
      try {
        result = compiled.exec(target, `${c.scheme}://${c.host}`);
      } catch {
        return false;
      }
      if (!result) return false;
      for (const comp of COMPONENTS) {
        for (const [name, value] of Object.entries(result[comp].groups)) {
          if (value !== undefined) c.setPlaceholder(`http.url_pattern.${comp}.${name}`, value);
        }
      }
      return true;
    },
  };
}

/** Registry entry. */
export const urlPatternMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.url_pattern",
  create: (config) => urlPatternMatcher(config),
};
