/**
 * The `transport` of `reverse_proxy` (module `http.reverse_proxy.transport.http`): what the
 * upstream client honours — `tls` (`insecure_skip_verify`, `server_name`, a trust
 * pool: `ca` with provider `inline` or `file`, or `root_ca_pool` / `root_ca_pem_files`;
 * `renegotiation` `never`, or `once` / `freely` through OpenSSL; `except_ports`),
 * `network_proxy` (`none`, or `url` naming an `http://` forward proxy for plain upstreams),
 * `local_address` (the IP to dial from), `dial_timeout` (default 3s),
 * `response_header_timeout`, `expect_continue_timeout`, `write_buffer_size`,
 * `compression: false` (the client never asks upstreams for compressed bodies), `versions`
 * (`1.1`; `h2c` for HTTP/2 to plain upstreams, `2` for HTTP/2 over TLS, `3` alone for HTTP/3:
 * `h3_transport.ts`), and the connection
 * fields of `transport_connections.ts` (`keep_alive`, `max_conns_per_host`,
 * `max_response_header_size`, `read_buffer_size`, `resolver`, `dial_fallback_delay`), which
 * apply to HTTP/2 connections as Go's transport applies them (see h2client.ts). Any other
 * field of Caddy's HTTP transport is refused by name, never accepted and ignored.
 *
 * @module
 */
import {
  checkFields,
  optBool,
  optDuration,
  optNumber,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "../../config.ts";
import { ConfigError } from "../../../config/error.ts";
import { parseIP } from "../../../net/ip.ts";
import type { TransportOptions } from "./transport.ts";
import { parseConnectionFields } from "./transport_connections.ts";
import { opensslUnavailable } from "./openssl.ts";
import { refuseForHttp3 } from "./h3_transport.ts";

/** Fields of Caddy's HTTP transport this client does not implement, with what to do. */
const UNSUPPORTED: Record<string, string> = {
  proxy_protocol: "the PROXY protocol is not sent upstream",
  forward_proxy_url: "upstreams are dialed directly; use network_proxy",
  read_timeout: "use response_header_timeout",
  write_timeout: "use response_header_timeout",
};

const TLS_UNSUPPORTED = [
  "client_certificate_file",
  "client_certificate_key_file",
  "client_certificate_automate",
  "handshake_timeout",
  "curves",
];

/** A base64 DER certificate as PEM. */
function derToPem(b64: string): string {
  const body = b64.replace(/\s+/g, "").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}

function readPems(files: string[], where: string): string[] {
  return files.map((f) => {
    try {
      return Deno.readTextFileSync(f);
    } catch (e) {
      throw new ConfigError(
        "invalid_config",
        `${where}: reading CA certificate file ${f}: ${(e as Error).message}`,
      );
    }
  });
}

/** The trust pool of `tls` (`ca` with provider `inline` or `file`, or the older fields). */
function trustPool(tls: Raw, where: string): string[] | undefined {
  const pool: string[] = [];
  for (const der of optStrings(tls, "root_ca_pool", where) ?? []) pool.push(derToPem(der));
  pool.push(...readPems(optStrings(tls, "root_ca_pem_files", where) ?? [], where));
  const ca = optObject(tls, "ca", where);
  if (ca) {
    const w = `${where}.ca`;
    const provider = optString(ca, "provider", w);
    if (provider === "inline") {
      checkFields(ca, ["provider", "trusted_ca_certs", "trusted_ca_certs_pem_files"], w);
      for (const der of optStrings(ca, "trusted_ca_certs", w) ?? []) pool.push(derToPem(der));
      pool.push(...readPems(optStrings(ca, "trusted_ca_certs_pem_files", w) ?? [], w));
    } else if (provider === "file") {
      checkFields(ca, ["provider", "pem_files"], w);
      pool.push(...readPems(optStrings(ca, "pem_files", w) ?? [], w));
    } else {
      throw new ConfigError(
        "invalid_config",
        `${w}: trust pool provider ${
          JSON.stringify(provider)
        } is not available (inline or file; module tls.ca_pool.source.${provider})`,
      );
    }
  }
  return pool.length ? pool : undefined;
}

function refuse(where: string, field: string, why: string): never {
  throw new ConfigError(
    "invalid_config",
    `${where}.${field}: not supported by Gatehouse's upstream client (${why})`,
  );
}

/** A forward proxy URL (`http://[user:pass@]host[:port]`) as a dial address and credentials. */
function forwardProxy(raw: string, where: string): { dial: string; authorization?: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError("invalid_config", `${where}.url: not a URL: ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== "http:") {
    refuse(where, "url", `only http:// forward proxies, got ${u.protocol}//`);
  }
  const dial = `${u.hostname}:${u.port || "80"}`;
  if (!u.username && !u.password) return { dial };
  const cred = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return { dial, authorization: `Basic ${btoa(cred)}` };
}

/** Decodes `transport`; throws naming the first field it cannot honour. */
export function parseTransport(raw: Raw | undefined, where: string): TransportOptions {
  const t: TransportOptions = {
    tls: false,
    insecure: false,
    dialTimeout: 3000,
    responseHeaderTimeout: 0,
  };
  if (!raw) return t;
  const protocol = optString(raw, "protocol", where) ?? "http";
  if (protocol !== "http") {
    throw new ConfigError(
      "invalid_config",
      `${where}: unsupported transport protocol ${protocol} (module http.reverse_proxy.transport.${protocol})`,
    );
  }
  for (const k of Object.keys(raw)) if (k in UNSUPPORTED) refuse(where, k, UNSUPPORTED[k]);
  const proxy = optObject(raw, "network_proxy", where);
  if (proxy) {
    const w = `${where}.network_proxy`;
    checkFields(proxy, ["from", "url"], w);
    const from = optString(proxy, "from", w);
    if (from === "url") t.proxy = forwardProxy(optString(proxy, "url", w) ?? "", w);
    else if (from !== "none") {
      refuse(
        where,
        "network_proxy",
        `from "url" or "none" (upstreams are never dialed through environment proxies)`,
      );
    }
  }
  const local = optString(raw, "local_address", where);
  if (local !== undefined && local !== "") {
    const bare = local.replace(/^\[|\]$/g, "");
    if (parseIP(bare) === null) {
      throw new ConfigError(
        "invalid_config",
        `${where}.local_address: not an IP address: ${JSON.stringify(local)}`,
      );
    }
    t.localAddress = bare;
  }
  checkFields(raw, [
    "protocol",
    "local_address",
    "network_proxy",
    "tls",
    "dial_timeout",
    "response_header_timeout",
    "compression",
    "versions",
    "keep_alive",
    "max_conns_per_host",
    "max_response_header_size",
    "read_buffer_size",
    "resolver",
    "dial_fallback_delay",
    "expect_continue_timeout",
    "write_buffer_size",
  ], where);
  const { dial, pool } = parseConnectionFields(raw, where);
  if (optBool(raw, "compression", where) === true) {
    refuse(where, "compression", "bodies are relayed as the upstream encodes them");
  }
  const versions = optStrings(raw, "versions", where);
  for (const v of versions ?? []) {
    if (v !== "1.1" && v !== "2" && v !== "h2c" && v !== "3") {
      refuse(where, "versions", `version ${JSON.stringify(v)} (1.1, 2, h2c or 3)`);
    }
  }
  if (versions?.includes("3")) refuseForHttp3(raw, versions, where);
  const tls = optObject(raw, "tls", where);
  if (tls) {
    for (const k of TLS_UNSUPPORTED) {
      if (k in tls) {
        refuse(
          `${where}.tls`,
          k,
          "only insecure_skip_verify, server_name, a trust pool, renegotiation and except_ports",
        );
      }
    }
    checkFields(
      tls,
      [
        "insecure_skip_verify",
        "server_name",
        "ca",
        "root_ca_pool",
        "root_ca_pem_files",
        "renegotiation",
        "except_ports",
      ],
      `${where}.tls`,
    );
    const reneg = optString(tls, "renegotiation", `${where}.tls`) || "never";
    if (reneg === "once" || reneg === "freely") {
      // Deno's TLS client (rustls) never renegotiates: such upstreams get OpenSSL's
      const why = opensslUnavailable();
      if (why) refuse(`${where}.tls`, "renegotiation", `"${reneg}": ${why}`);
      t.renegotiation = reneg;
    } else if (reneg !== "never") {
      throw new ConfigError(
        "invalid_config",
        `${where}.tls.renegotiation: unknown value ${
          JSON.stringify(reneg)
        } (never, once or freely)`,
      );
    }
    const except = optStrings(tls, "except_ports", `${where}.tls`) ?? [];
    if (except.length) {
      dial.exceptPorts = new Set(except.map((p) => {
        const n = Number(p);
        if (!/^\d{1,5}$/.test(p) || n < 1 || n > 65535) {
          throw new ConfigError(
            "invalid_config",
            `${where}.tls.except_ports: not a port: ${JSON.stringify(p)}`,
          );
        }
        return n;
      }));
    }
    t.tls = true;
    t.ca = trustPool(tls, `${where}.tls`);
    t.insecure = optBool(tls, "insecure_skip_verify", where) ?? false;
    t.serverName = optString(tls, "server_name", where);
  }
  if (t.proxy && t.tls) {
    refuse(
      where,
      "network_proxy",
      "TLS upstreams through a forward proxy (CONNECT) are not implemented",
    );
  }
  if (versions) {
    const h2 = t.tls ? versions.includes("2") : versions.includes("h2c");
    if (h2 && t.tls && versions.includes("1.1")) {
      refuse(
        where,
        "versions",
        "choosing between 1.1 and 2 per upstream by ALPN is not implemented; list one",
      );
    }
    if (h2 && t.proxy) refuse(where, "versions", "HTTP/2 through a forward proxy");
    t.h2 = versions.includes("2");
    t.h2c = versions.includes("h2c");
    t.h3 = versions.includes("3");
  }
  const continueMs = optDuration(raw, "expect_continue_timeout", where);
  if (continueMs !== undefined && continueMs > 0) t.expectContinueMs = continueMs;
  const writeBuffer = optNumber(raw, "write_buffer_size", where);
  if (writeBuffer !== undefined) {
    if (!Number.isInteger(writeBuffer) || writeBuffer < 0 || writeBuffer > 64 << 20) {
      throw new ConfigError(
        "invalid_config",
        `${where}.write_buffer_size: must be a whole number from 0 to ${64 << 20}`,
      );
    }
    if (writeBuffer > 0) t.writeBufferSize = writeBuffer;
  }
  t.dial = dial;
  t.pool = pool;
  t.dialTimeout = optDuration(raw, "dial_timeout", where) ?? 3000;
  t.responseHeaderTimeout = optDuration(raw, "response_header_timeout", where) ?? 0;
  return t;
}
