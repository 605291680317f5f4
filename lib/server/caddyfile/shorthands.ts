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

/** Shorthands with a parameter: `[pattern, replacement]`. */
const PARAMETERIZED: readonly [RegExp, string][] = [
  [/\{header\.([\w-]*)\}/g, "{http.request.header.$1}"],
  [/\{cookie\.([\w-]*)\}/g, "{http.request.cookie.$1}"],
  [/\{labels\.([\w-]*)\}/g, "{http.request.host.labels.$1}"],
  [/\{path\.([\w-]*)\}/g, "{http.request.uri.path.$1}"],
  [/\{file\.([\w-]*)\}/g, "{http.request.uri.path.file.$1}"],
  [/\{query\.([\w-]*)\}/g, "{http.request.uri.query.$1}"],
  [/\{re\.([\w\-.]*)\}/g, "{http.regexp.$1}"],
  [/\{vars\.([\w-]*)\}/g, "{http.vars.$1}"],
  [/\{rp\.([\w\-.]*)\}/g, "{http.reverse_proxy.$1}"],
  [/\{resp\.([\w\-.]*)\}/g, "{http.intercept.$1}"],
  [/\{err\.([\w\-.]*)\}/g, "{http.error.$1}"],
  [/\{file_match\.([\w-]*)\}/g, "{http.matchers.file.$1}"],
];

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
  for (const [re, rep] of PARAMETERIZED) out = out.replace(re, rep);
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
