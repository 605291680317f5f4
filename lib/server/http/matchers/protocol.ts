/**
 * `protocol` matcher: `http`, `https`, `grpc`, `http/1.1`, `http/2`, `http/2+`, `http/3` ...
 * Deno does not expose the HTTP version of plain-text requests; they count as HTTP/1.1, TLS
 * requests with ALPN `h2` as HTTP/2, requests of the HTTP/3 listener as HTTP/3.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";

function version(c: RequestContext): number {
  if (c.info.http3) return 3;
  return c.info.http2 || c.info.tls?.proto === "h2" ? 2 : 1.1;
}

/** Registry entry. */
export const protocolMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.protocol",
  create(config) {
    const p = config as unknown;
    if (typeof p !== "string") {
      throw new ConfigError("invalid_config", "http.matchers.protocol: must be a string");
    }
    const tests: Record<string, (c: RequestContext) => boolean> = {
      grpc: (c) => (c.headers.get("content-type") ?? "").startsWith("application/grpc"),
      https: (c) => c.scheme === "https",
      http: (c) => c.scheme !== "https",
      "http/1.0": () => false,
      "http/1.0+": () => true,
      "http/1.1": (c) => version(c) === 1.1,
      "http/1.1+": () => true,
      "http/2": (c) => version(c) === 2,
      "http/2+": (c) => version(c) >= 2,
      "http/3": (c) => version(c) === 3,
      "http/3+": (c) => version(c) === 3,
    };
    const t = tests[p.toLowerCase()];
    return { match: t ?? (() => false) };
  },
};
