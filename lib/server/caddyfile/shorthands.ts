/**
 * Placeholder shorthands of the Gatehousefile: `{host}` → `{http.request.host}`,
 * `{header.X}` → `{http.request.header.X}`, `{re.name.1}` → `{http.regexp.name.1}` and the
 * rest of Caddy's list. Applied to every token of every site before its directives run.
 *
 * @module
 */
import type { Token } from "./lexer.ts";

/** The fixed shorthands: `[shorthand, placeholder]` pairs. */
export const PLACEHOLDER_SHORTHANDS: readonly (readonly [string, string])[] = [
  ["{host}", "{http.request.host}"],
  ["{hostport}", "{http.request.hostport}"],
  ["{port}", "{http.request.port}"],
  ["{orig_method}", "{http.request.orig_method}"],
  ["{orig_uri}", "{http.request.orig_uri}"],
  ["{orig_path}", "{http.request.orig_uri.path}"],
  ["{orig_dir}", "{http.request.orig_uri.path.dir}"],
  ["{orig_file}", "{http.request.orig_uri.path.file}"],
  ["{orig_query}", "{http.request.orig_uri.query}"],
  ["{orig_?query}", "{http.request.orig_uri.prefixed_query}"],
  ["{method}", "{http.request.method}"],
  ["{uri}", "{http.request.uri}"],
  ["{%uri}", "{http.request.uri_escaped}"],
  ["{path}", "{http.request.uri.path}"],
  ["{%path}", "{http.request.uri.path_escaped}"],
  ["{dir}", "{http.request.uri.path.dir}"],
  ["{file}", "{http.request.uri.path.file}"],
  ["{query}", "{http.request.uri.query}"],
  ["{%query}", "{http.request.uri.query_escaped}"],
  ["{?query}", "{http.request.uri.prefixed_query}"],
  ["{remote}", "{http.request.remote}"],
  ["{remote_host}", "{http.request.remote.host}"],
  ["{remote_port}", "{http.request.remote.port}"],
  ["{scheme}", "{http.request.scheme}"],
  ["{uuid}", "{http.request.uuid}"],
  ["{tls_cipher}", "{http.request.tls.cipher_suite}"],
  ["{tls_version}", "{http.request.tls.version}"],
  ["{tls_client_fingerprint}", "{http.request.tls.client.fingerprint}"],
  ["{tls_client_issuer}", "{http.request.tls.client.issuer}"],
  ["{tls_client_serial}", "{http.request.tls.client.serial}"],
  ["{tls_client_subject}", "{http.request.tls.client.subject}"],
  ["{tls_client_certificate_pem}", "{http.request.tls.client.certificate_pem}"],
  ["{tls_client_certificate_der_base64}", "{http.request.tls.client.certificate_der_base64}"],
  ["{upstream_hostport}", "{http.reverse_proxy.upstream.hostport}"],
  ["{client_ip}", "{http.vars.client_ip}"],
];

/**
 * The shorthands with a parameter, `{prefix.NAME}` → `{long.NAME}`: `[short prefix, long
 * prefix, the characters NAME may have (a regular expression)]`, in the order they apply.
 */
export const PARAMETERIZED_SHORTHANDS: readonly (readonly [string, string, string])[] = [
  ["header.", "http.request.header.", "[\\w-]*"],
  ["cookie.", "http.request.cookie.", "[\\w-]*"],
  ["labels.", "http.request.host.labels.", "[\\w-]*"],
  ["path.", "http.request.uri.path.", "[\\w-]*"],
  ["file.", "http.request.uri.path.file.", "[\\w-]*"],
  ["query.", "http.request.uri.query.", "[\\w-]*"],
  ["re.", "http.regexp.", "[\\w\\-.]*"],
  ["vars.", "http.vars.", "[\\w-]*"],
  ["rp.", "http.reverse_proxy.", "[\\w\\-.]*"],
  ["resp.", "http.intercept.", "[\\w\\-.]*"],
  ["err.", "http.error.", "[\\w\\-.]*"],
  ["file_match.", "http.matchers.file.", "[\\w-]*"],
];

/**
 * The parameterized shorthands as `[pattern, replacement]`, e.g. `/\{header\.([\w-]*)\}/g`
 * → `{http.request.header.$1}`.
 */
export const PARAMETERIZED_PATTERNS: readonly (readonly [RegExp, string])[] =
  PARAMETERIZED_SHORTHANDS.map(([short, long, chars]) =>
    [new RegExp(`\\{${short.replaceAll(".", "\\.")}(${chars})\\}`, "g"), `{${long}$1}`] as const
  );

const SIMPLE = new Map(PLACEHOLDER_SHORTHANDS.map(([a, b]) => [a, b]));
const SIMPLE_RE = new RegExp(
  PLACEHOLDER_SHORTHANDS.map(([a]) => a.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
  "g",
);

/**
 * Expands the shorthands in one string (fixed ones first, leftmost match wins, then the
 * parameterized ones).
 *
 * @example
 * ```ts
 * import { expandShorthands } from "./shorthands.ts";
 * expandShorthands("{host}{path} {header.X-Id}");
 * // "{http.request.host}{http.request.uri.path} {http.request.header.X-Id}"
 * ```
 */
export function expandShorthands(text: string): string {
  if (!text.includes("{")) return text;
  let out = text.replace(SIMPLE_RE, (m) => SIMPLE.get(m)!);
  for (const [re, rep] of PARAMETERIZED_PATTERNS) out = out.replace(re, rep);
  return out;
}

/** Expands the shorthands in every token of a segment, in place. */
export function expandSegment(segment: Token[]): void {
  for (let i = 0; i < segment.length; i++) {
    const text = expandShorthands(segment[i].text);
    if (text !== segment[i].text) segment[i] = { ...segment[i], text };
  }
}

/**
 * The shorthand a placeholder was expanded from, if `token` is one of the fixed expansions
 * (e.g. `{http.request.host}` → `{host}`); used to refuse them as `map` destinations.
 */
export function wasReplacedShorthand(token: string): string | undefined {
  const t = token.replace(/^[{}]+|[{}]+$/g, "");
  for (const [short, long] of PLACEHOLDER_SHORTHANDS) {
    if (t === long.replace(/^[{}]+|[{}]+$/g, "")) return short;
  }
  return undefined;
}
