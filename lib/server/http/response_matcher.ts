/**
 * Response matchers (Caddy's `caddyhttp.ResponseMatcher`, `modules/caddyhttp/responsematchers.go`):
 * the config, its decoder and the compiled matcher. The `headers` handler's `require`, the
 * `encode` handler's `match` and the response handlers of `intercept` and `reverse_proxy`
 * (`handle_response[].match`) are one.
 *
 * @module
 */
import type { Decoder } from "../config/decode.ts";

/** A response matcher. */
export type ResponseMatcherConfig = {
  /**
   * If set, one of these status codes is required; a one-digit status stands for its whole
   * class (`3` for every 3xx).
   */
  status_code?: number[];
  /**
   * If set, each field must have one of the values listed (`*`, `*sub*`, `prefix*`,
   * `*suffix` or exact, as the request header matcher); an empty list requires the field,
   * null requires its absence.
   */
  headers?: Record<string, string[] | null>;
};

/** The fields of {@linkcode ResponseMatcherConfig}. */
export const RESPONSE_MATCHER_FIELDS: readonly (keyof ResponseMatcherConfig)[] = [
  "status_code",
  "headers",
];

/**
 * Decodes a response matcher (known fields; `headers` must be an object).
 *
 * @example
 * ```ts
 * import { Decoder } from "../config/decode.ts";
 * import { decodeResponseMatcher } from "./response_matcher.ts";
 * decodeResponseMatcher(Decoder.of({ status_code: [2] }, "match")).status_code; // [2]
 * ```
 */
export function decodeResponseMatcher(d: Decoder): ResponseMatcherConfig {
  d.fields(RESPONSE_MATCHER_FIELDS);
  const out: ResponseMatcherConfig = {};
  const codes = d.value("status_code");
  if (codes !== undefined) out.status_code = codes as number[];
  const headers = d.rawObject("headers");
  if (headers) out.headers = headers as Record<string, string[] | null>;
  return out;
}

/** Caddy's header value pattern test: `*`, `*sub*`, `prefix*`, `*suffix` or exact. */
export function wildcardValue(pattern: string, actual: string): boolean {
  if (pattern === "*") return true;
  if (pattern.length > 1 && pattern.startsWith("*") && pattern.endsWith("*")) {
    return actual.includes(pattern.slice(1, -1));
  }
  if (pattern.startsWith("*")) return actual.endsWith(pattern.slice(1));
  if (pattern.endsWith("*")) return actual.startsWith(pattern.slice(0, -1));
  return actual === pattern;
}

/** A compiled response matcher. */
export interface ResponseMatcher {
  /** True when the response matches. */
  match(status: number, headers: Headers): boolean;
}

/**
 * Compiles a decoded response matcher.
 *
 * @example
 * ```ts
 * import { compileResponseMatcher } from "./response_matcher.ts";
 * compileResponseMatcher({ status_code: [2] }).match(204, new Headers()); // true
 * ```
 */
export function compileResponseMatcher(config: ResponseMatcherConfig): ResponseMatcher {
  const codes = config.status_code ?? [];
  const headers = Object.entries(config.headers ?? {}).map((
    [k, v],
  ) => [k.toLowerCase(), v] as const);
  return {
    match(status, h) {
      if (codes.length) {
        const ok = codes.some((code) =>
          code < 10 ? Math.floor(status / 100) === code : status === code
        );
        if (!ok) return false;
      }
      for (const [k, vals] of headers) {
        const actual = h.get(k);
        if (vals === null) {
          if (actual !== null) return false;
          continue;
        }
        if (actual === null) return false;
        if (vals.length && !vals.some((v) => wildcardValue(v, actual))) return false;
      }
      return true;
    },
  };
}
