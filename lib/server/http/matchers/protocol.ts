/**
 * `protocol` matcher: `http`, `https`, `grpc`, `http/1.1`, `http/2`, `http/2+`, `http/3` ...
 * Deno does not expose the HTTP version of plain-text requests; they count as HTTP/1.1, TLS
 * requests with ALPN `h2` as HTTP/2, requests of the HTTP/3 listener as HTTP/3.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import type { RequestMatcher } from "../handler.ts";
import { stringValue } from "./values.ts";

/**
 * `http.matchers.protocol` (Caddy's `MatchProtocol`, `modules/caddyhttp/matchers.go`): `http`,
 * `https` or `grpc`, or an HTTP version (`http/1.1`, `http/2`, `http/3`), or a least version
 * (`http/2+`); compared case-insensitively. An unknown name never matches.
 */
export type ProtocolMatcherConfig = string;

/**
 * Decodes a `protocol` matcher: a string.
 *
 * @example
 * ```ts
 * import { decodeProtocolMatcher } from "./protocol.ts";
 * decodeProtocolMatcher("https"); // "https"
 * ```
 */
export function decodeProtocolMatcher(raw: unknown): ProtocolMatcherConfig {
  return stringValue(raw, "http.matchers.protocol");
}

function version(c: RequestContext): number {
  if (c.info.http3) return 3;
  return c.info.http2 || c.info.tls?.proto === "h2" ? 2 : 1.1;
}

const TESTS: Readonly<Record<string, (c: RequestContext) => boolean>> = {
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

/** Builds a protocol matcher from its decoded config. */
export function protocolMatcher(config: ProtocolMatcherConfig): RequestMatcher {
  const t = TESTS[config.toLowerCase()];
  return { match: t ?? (() => false) };
}

/** Registry entry. */
export const protocolMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.protocol",
  create: (config) => protocolMatcher(decodeProtocolMatcher(config)),
};
