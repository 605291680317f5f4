/**
 * `host` matcher: the Host header (without port) equals one of the names, case-insensitively;
 * `*` stands for exactly one label (`*.example.com`); names may hold placeholders.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { splitHostPort } from "../context.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileTemplate, hasPlaceholder, type Template } from "../replacer.ts";
import { stringList } from "./values.ts";

/**
 * `http.matchers.host` (Caddy's `MatchHost`, `modules/caddyhttp/matchers.go`): the host names
 * a request's Host (without its port) may be, compared case-insensitively. A `*` label stands
 * for exactly one label (`*.example.com` matches `a.example.com`, not `a.b.example.com`; `*`
 * alone matches one-label hosts like `localhost`); names may hold placeholders. A name listed
 * twice is refused. The names of a route's host matchers are also the names automatic HTTPS
 * manages.
 */
export type HostMatcherConfig = string[];

/**
 * Decodes a `host` matcher: an array of strings, none repeated (case-insensitively).
 *
 * @example
 * ```ts
 * import { decodeHostMatcher } from "./host.ts";
 * decodeHostMatcher(["example.com", "*.example.com"]).length; // 2
 * ```
 */
export function decodeHostMatcher(raw: unknown): HostMatcherConfig {
  const path = "http.matchers.host";
  const hosts = stringList(raw, path);
  const seen = new Set<string>();
  for (const host of hosts) {
    const h = host.toLowerCase();
    if (seen.has(h)) throw new ConfigError("invalid_config", `host repeated: ${h}`, { path });
    seen.add(h);
  }
  return hosts;
}

function wildcardMatch(pattern: string[], host: string): boolean {
  const labels = host.split(".");
  if (labels.length !== pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== "*" && pattern[i] !== labels[i]) return false;
  }
  return true;
}

/** Builds a host matcher from its decoded config. */
export function hostMatcher(config: HostMatcherConfig): RequestMatcher {
  const hosts = config.map((h) => h.toLowerCase());
  const exact = new Set<string>();
  const wild: string[][] = [];
  const dynamic: Template[] = [];
  for (const h of hosts) {
    if (hasPlaceholder(h)) dynamic.push(compileTemplate(h));
    else if (h.includes("*")) wild.push(h.split("."));
    else exact.add(h);
  }
  const single = hosts.length === 1 && exact.size === 1 ? hosts[0] : null;
  return {
    match(c: RequestContext): boolean {
      let host = c.host;
      if (host.indexOf(":") >= 0 || host.startsWith("[")) host = splitHostPort(host)[0];
      host = host.toLowerCase();
      if (single !== null) return host === single;
      if (exact.has(host)) return true;
      for (const w of wild) if (wildcardMatch(w, host)) return true;
      for (const t of dynamic) {
        const h = t.render(c).toLowerCase();
        if (h.includes("*") ? wildcardMatch(h.split("."), host) : h === host) return true;
      }
      return false;
    },
  };
}

/** Registry entry. */
export const hostMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.host",
  create: (raw) => hostMatcher(decodeHostMatcher(raw)),
};
