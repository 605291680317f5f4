/**
 * `remote_ip` matcher: the peer address is inside one of `ranges` (CIDR or single address,
 * `private_ranges`). With `forwarded` (deprecated in Caddy), the first `X-Forwarded-For`
 * address is used instead.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder, type Raw } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { ipInRanges, parseIP, parseRanges } from "../../net/ip.ts";

/**
 * `http.matchers.remote_ip` (Caddy's `MatchRemoteIP`, `modules/caddyhttp/ip_matchers.go`):
 * the address of the connection's peer is in one of the ranges.
 */
export type RemoteIPMatcherConfig = {
  /** IP ranges (`10.0.0.0/8`) or addresses; `private_ranges` stands for the private networks. */
  ranges?: string[];
  /** Deprecated in Caddy: read the first `X-Forwarded-For` address instead of the peer's. */
  forwarded?: boolean;
};

/** `http.matchers.client_ip` (Caddy's `MatchClientIP`): the client IP (trusted proxies honoured). */
export type ClientIPMatcherConfig = {
  /** IP ranges (`10.0.0.0/8`) or addresses; `private_ranges` stands for the private networks. */
  ranges?: string[];
};

/** The fields of {@linkcode RemoteIPMatcherConfig}. */
export const REMOTE_IP_FIELDS: readonly (keyof RemoteIPMatcherConfig)[] = ["ranges", "forwarded"];

/** The fields of {@linkcode ClientIPMatcherConfig}. */
export const CLIENT_IP_FIELDS: readonly (keyof ClientIPMatcherConfig)[] = ["ranges"];

/**
 * Decodes a `remote_ip` matcher (known fields, ranges that parse).
 *
 * @example
 * ```ts
 * import { decodeRemoteIPMatcher } from "./remote_ip.ts";
 * decodeRemoteIPMatcher({ ranges: ["10.0.0.0/8"] }).ranges; // ["10.0.0.0/8"]
 * ```
 */
export function decodeRemoteIPMatcher(raw: Raw): RemoteIPMatcherConfig {
  const d = new Decoder(raw, "http.matchers.remote_ip").fields(REMOTE_IP_FIELDS);
  const out: RemoteIPMatcherConfig = {};
  const list = d.strings("ranges");
  d.ipRanges("ranges"); // refuses a range that does not parse
  if (list !== undefined) out.ranges = list;
  const forwarded = d.bool("forwarded");
  if (forwarded !== undefined) out.forwarded = forwarded;
  return out;
}

/**
 * Decodes a `client_ip` matcher (known fields, ranges that parse).
 *
 * @example
 * ```ts
 * import { decodeClientIPMatcher } from "./remote_ip.ts";
 * decodeClientIPMatcher({ ranges: ["private_ranges"] }).ranges; // ["private_ranges"]
 * ```
 */
export function decodeClientIPMatcher(raw: Raw): ClientIPMatcherConfig {
  const d = new Decoder(raw, "http.matchers.client_ip").fields(CLIENT_IP_FIELDS);
  const list = d.strings("ranges");
  d.ipRanges("ranges"); // refuses a range that does not parse
  return list === undefined ? {} : { ranges: list };
}

/** Builds a remote_ip matcher from its decoded config. */
export function remoteIPMatcher(config: RemoteIPMatcherConfig): RequestMatcher {
  const ranges = parseRanges(config.ranges ?? []);
  const forwarded = config.forwarded ?? false;
  return {
    match(c) {
      let addr = c.remoteHost;
      if (forwarded) {
        const xff = c.headers.get("x-forwarded-for");
        if (xff) addr = xff.split(",")[0].trim();
      }
      const ip = parseIP(addr);
      return ip !== null && ipInRanges(ip, ranges);
    },
  };
}

/** Builds a client_ip matcher from its decoded config. */
export function clientIPMatcher(config: ClientIPMatcherConfig): RequestMatcher {
  const ranges = parseRanges(config.ranges ?? []);
  return {
    match(c) {
      const ip = parseIP(c.clientIP);
      return ip !== null && ipInRanges(ip, ranges);
    },
  };
}

/** Registry entry. */
export const remoteIPMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.remote_ip",
  create: (config) => remoteIPMatcher(decodeRemoteIPMatcher(config)),
};

/** `client_ip` matcher: like `remote_ip` on the client IP (trusted proxies honoured). */
export const clientIPMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.client_ip",
  create: (config) => clientIPMatcher(decodeClientIPMatcher(config)),
};
