/**
 * What the `http` transport refuses with `versions: ["3"]` (HTTP/3 to upstreams, `h3client.ts`):
 * other versions beside it (as Caddy: its HTTP/3 transport replaces the others), a transport
 * without `tls` (QUIC is always TLS), and the fields that have no meaning or no support over
 * QUIC here: `tls.insecure_skip_verify` (Deno's QUIC client always checks the certificate),
 * `tls.renegotiation` (TLS 1.3), `network_proxy`, and the TCP connection fields
 * (`keep_alive`, `max_conns_per_host`, `read_buffer_size`, `write_buffer_size`, `resolver`,
 * `dial_fallback_delay`, `expect_continue_timeout`). Each by name, never accepted and ignored.
 *
 * @module
 */
import { ConfigError } from "../../../config/error.ts";

const TCP_FIELDS: Record<string, string> = {
  keep_alive: "QUIC connections are kept open and closed by QUIC's idle timeout",
  max_conns_per_host: "one QUIC connection per upstream carries every request",
  read_buffer_size: "QUIC streams are read as Deno's QUIC delivers them",
  write_buffer_size: "QUIC streams are written as the body comes",
  resolver: "Deno's QUIC client resolves names with the system's resolver",
  dial_fallback_delay: "Deno's QUIC client dials the first address it resolves",
  expect_continue_timeout: "request bodies go at once over HTTP/3",
};

function refused(where: string, field: string, why: string): never {
  throw new ConfigError(
    "invalid_config",
    `${where}.${field}: not supported by Gatehouse's upstream client with versions 3 (${why})`,
  );
}

/**
 * Throws for a transport config (`raw`, at `where`) that cannot speak HTTP/3 as asked.
 *
 * @example
 * ```ts
 * import { refuseForHttp3 } from "./h3_transport.ts";
 * refuseForHttp3({ versions: ["3"], tls: {} }, ["3"], "reverse_proxy.transport"); // fine
 * ```
 */
export function refuseForHttp3(
  raw: Record<string, unknown>,
  versions: string[],
  where: string,
): void {
  if (versions.some((v) => v !== "3")) {
    refused(where, "versions", "HTTP/3 to upstreams cannot be combined with other versions");
  }
  const tls = raw.tls;
  if (tls === undefined || tls === null || typeof tls !== "object") {
    refused(where, "versions", "HTTP/3 runs over QUIC, which is always TLS: add tls");
  }
  const t = tls as Record<string, unknown>;
  if (t.insecure_skip_verify === true) {
    refused(
      `${where}.tls`,
      "insecure_skip_verify",
      "Deno's QUIC client always checks the certificate",
    );
  }
  if (t.renegotiation !== undefined && t.renegotiation !== "never") {
    refused(`${where}.tls`, "renegotiation", "QUIC is TLS 1.3, which never renegotiates");
  }
  const proxy = raw.network_proxy as { from?: unknown } | undefined;
  if (proxy !== undefined && proxy !== null && proxy.from !== "none") {
    refused(where, "network_proxy", "QUIC is not relayed through forward proxies");
  }
  for (const [field, why] of Object.entries(TCP_FIELDS)) {
    if (raw[field] !== undefined && raw[field] !== null) refused(where, field, why);
  }
}
