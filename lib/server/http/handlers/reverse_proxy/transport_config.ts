/**
 * The config of the `http` transport of `reverse_proxy` (module
 * `http.reverse_proxy.transport.http`), field by field as Caddy's `HTTPTransport`
 * (`modules/caddyhttp/reverseproxy/httptransport.go`), its decoder, and the settings the
 * upstream client runs on. What the client honours: `tls` (`insecure_skip_verify`,
 * `server_name`, a trust pool: `ca` with provider `inline` or `file`, or `root_ca_pool` /
 * `root_ca_pem_files`; `renegotiation` `never`, or `once` / `freely` through OpenSSL;
 * `except_ports`), `network_proxy` (`none`, or `url` naming an `http://` forward proxy for
 * plain upstreams), `local_address` (the IP to dial from), `dial_timeout` (default 3s),
 * `response_header_timeout`, `expect_continue_timeout`, `write_buffer_size`,
 * `proxy_protocol` (`v1` or `v2`: the PROXY header each upstream connection starts with,
 * proxy_protocol.ts), `compression` (on by default, as Go's transport: a request without `Accept-Encoding`, not
 * HEAD and without `Range`, asks for gzip, and a gzip answer is decoded for the client;
 * `false`: never asked), `versions`
 * (`1.1`; `h2c` for HTTP/2 to plain upstreams, `2` for HTTP/2 over TLS — with `1.1` too,
 * chosen per upstream by ALPN —, `3` alone for HTTP/3:
 * `h3_transport.ts`), and the connection
 * fields of `transport_connections.ts` (`keep_alive`, `max_conns_per_host`,
 * `max_response_header_size`, `read_buffer_size`, `resolver`, `dial_fallback_delay`), which
 * apply to HTTP/2 connections as Go's transport applies them (see h2client.ts). Any other
 * field of Caddy's HTTP transport is refused by name, never accepted and ignored.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { type Duration, durationMs } from "../../../config/duration.ts";
import { parseIP } from "../../../net/ip.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import type { DialOptions } from "./h1conn.ts";
import type { PoolLimits } from "./h1client.ts";
import type { Renegotiation } from "./openssl_conn.ts";
import {
  checkConnectionFields,
  type ConnectionFieldsConfig,
  connectionOptions,
} from "./transport_connections.ts";

export type { Duration } from "../../../config/duration.ts";
export type {
  ConnectionFieldsConfig,
  KeepAliveConfig,
  UpstreamResolverConfig,
} from "./transport_connections.ts";
import { opensslUnavailable } from "./openssl.ts";
import { refuseForHttp3 } from "./h3_transport.ts";
import type { ProxyProtocolVersion } from "./proxy_protocol.ts";

/** `tls.ca`: a trust pool module (`tls.ca_pool.source.<provider>`). */
export type TrustPoolConfig =
  | {
    /** Certificates given in the config. */
    provider: "inline";
    /** Base64 DER certificates. */
    trusted_ca_certs?: string[];
    /** PEM files. */
    trusted_ca_certs_pem_files?: string[];
  }
  | {
    /** Certificates read from files. */
    provider: "file";
    /** PEM files. */
    pem_files?: string[];
  };

/** `tls`: TLS to the upstream (an empty object enables it with the defaults). */
export type TransportTLSConfig = {
  /** The trust pool replacing the system's (a `tls.ca_pool.source` module). */
  ca?: TrustPoolConfig;
  /** Base64 DER certificates to trust (older than `ca`). */
  root_ca_pool?: string[];
  /** PEM files of certificates to trust (older than `ca`). */
  root_ca_pem_files?: string[];
  /** Refused: no client certificate is presented to upstreams. */
  client_certificate_file?: string;
  /** Refused, as `client_certificate_file`. */
  client_certificate_key_file?: string;
  /** Refused, as `client_certificate_file`. */
  client_certificate_automate?: string;
  /** Skip the verification of the upstream's certificate (testing only). */
  insecure_skip_verify?: boolean;
  /** Refused: the handshake is bounded by `dial_timeout`. */
  handshake_timeout?: Duration;
  /** The name sent (SNI) and verified; the upstream address's host by default. */
  server_name?: string;
  /** `never` (the default), or `once` / `freely` (through OpenSSL, which needs FFI). */
  renegotiation?: string;
  /** Upstream ports dialed without TLS although TLS is configured. */
  except_ports?: string[];
  /** Refused: the TLS library chooses the curves. */
  curves?: string[];
};

/** `network_proxy`: a `caddy.network_proxy` module (`from` names it). */
export type NetworkProxyConfig = {
  /** `url` (a forward proxy) or `none` (dial directly). */
  from: string;
  /** The forward proxy, `http://[user:pass@]host[:port]` (`from: "url"`). */
  url?: string;
};

/**
 * `http.reverse_proxy.transport.http`; the fields of resolving, dialing and keeping
 * connections (`resolver`, `dial_fallback_delay`, `keep_alive`, `max_conns_per_host`,
 * `max_response_header_size`, `read_buffer_size`) are {@linkcode ConnectionFieldsConfig}.
 */
export type HttpTransportConfig = ConnectionFieldsConfig & {
  /** The module name (`http` when absent). */
  protocol?: "http";
  /** TLS to the upstream. */
  tls?: TransportTLSConfig;
  /** Ask for gzip when the client did not ask for an encoding, and decode it (default true). */
  compression?: boolean;
  /** The PROXY protocol header sent first on each upstream connection (`v1` or `v2`). */
  proxy_protocol?: ProxyProtocolVersion;
  /** Refused: use `network_proxy`. */
  forward_proxy_url?: string;
  /** How long connecting may take (default 3s). */
  dial_timeout?: Duration;
  /** How long the response head may take once the request is written (default: no limit). */
  response_header_timeout?: Duration;
  /** How long a body waits for `100 Continue` (default: it goes at once). */
  expect_continue_timeout?: Duration;
  /** Bytes gathered before an HTTP/1.1 write (0: writes go out as they come). */
  write_buffer_size?: number;
  /** Refused: use `response_header_timeout`. */
  read_timeout?: Duration;
  /** Refused: use `response_header_timeout`. */
  write_timeout?: Duration;
  /** HTTP versions: `1.1`, `2` (over TLS) or `h2c` (plain), or `3` alone (HTTP/3). */
  versions?: string[];
  /** The local IP address upstream connections are dialed from. */
  local_address?: string;
  /** A forward proxy, or none. */
  network_proxy?: NetworkProxyConfig;
};

/** The fields of {@linkcode HttpTransportConfig} the client accepts. */
export const HTTP_TRANSPORT_FIELDS: readonly (keyof HttpTransportConfig)[] = [
  "protocol",
  "proxy_protocol",
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
];

const TLS_FIELDS: readonly (keyof TransportTLSConfig)[] = [
  "insecure_skip_verify",
  "server_name",
  "ca",
  "root_ca_pool",
  "root_ca_pem_files",
  "renegotiation",
  "except_ports",
];

/** Fields of Caddy's HTTP transport this client does not implement, with what to do. */
const UNSUPPORTED: Record<string, string> = {
  forward_proxy_url: "upstreams are dialed directly; use network_proxy",
  read_timeout: "use response_header_timeout",
  write_timeout: "use response_header_timeout",
};

const TLS_UNSUPPORTED: readonly (keyof TransportTLSConfig)[] = [
  "client_certificate_file",
  "client_certificate_key_file",
  "client_certificate_automate",
  "handshake_timeout",
  "curves",
];

/** Transport settings (`transport` with `protocol: "http"`), as the upstream client runs. */
export interface TransportOptions {
  /** Use TLS to the upstream. */
  tls: boolean;
  /** Skip certificate verification. */
  insecure: boolean;
  /** SNI / verification name (without placeholders). */
  serverName?: string;
  /**
   * `server_name` with placeholders: rendered per request (Caddy's `ReplaceAll`, unknown
   * ones empty) into the request's `RoundTrip.serverName`.
   */
  serverNameTemplate?: Template;
  /** Trusted CA certificates (PEM) replacing the system's (`tls.ca`, `root_ca_*`). */
  ca?: string[];
  /**
   * A forward HTTP proxy (`network_proxy` from `url`): requests go to it in absolute form,
   * with `Proxy-Authorization` when the URL has credentials.
   */
  proxy?: { dial: string; authorization?: string };
  /** The local IP address upstream connections are dialed from (`local_address`). */
  localAddress?: string;
  /** `versions` has `2`: HTTP/2 (by ALPN) to TLS upstreams. */
  h2?: boolean;
  /** `versions` has `1.1`: with `h2`, TLS upstreams choose between the two by ALPN. */
  h1?: boolean;
  /** `versions` has `h2c`: HTTP/2 with prior knowledge to plain upstreams. */
  h2c?: boolean;
  /** `versions` is `3`: HTTP/3 (QUIC) to TLS upstreams (`h3client.ts`). */
  h3?: boolean;
  /** `proxy_protocol`: the PROXY header each upstream connection starts with (proxy_protocol.ts). */
  proxyProtocol?: ProxyProtocolVersion;
  /** `tls.renegotiation` (default `never`). */
  renegotiation?: Renegotiation;
  /** `expect_continue_timeout` (ms, 0: bodies go at once). */
  expectContinueMs?: number;
  /** `write_buffer_size` (bytes, 0: HTTP/1.1 writes go out as they come). */
  writeBufferSize?: number;
  /**
   * How names are resolved and dialed (`resolver`, `dial_fallback_delay`, `tls.except_ports`,
   * `read_buffer_size`, `keep_alive.probe_interval`), beside `localAddress`.
   */
  dial?: Omit<DialOptions, "localAddress">;
  /** Connection reuse and limits (`keep_alive`, `max_conns_per_host`, `max_response_header_size`). */
  pool?: PoolLimits;
  /** Connect timeout (ms). */
  dialTimeout: number;
  /** Time to wait for response headers (ms, 0 = none). */
  responseHeaderTimeout: number;
  /**
   * `compression` (default true): a request without `Accept-Encoding` (not HEAD, no `Range`)
   * asks for gzip, and a gzip answer is decoded (upstream_client.ts).
   */
  compression: boolean;
}

/** A base64 DER certificate as PEM. */
function derToPem(b64: string): string {
  const body = b64.replace(/\s+/g, "").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}

/** Refuses a field the client does not implement. */
function refuse(d: Decoder, field: string, why: string): never {
  d.failAt(field, `not supported by Gatehouse's upstream client (${why})`);
}

/**
 * A forward proxy URL (`http://[user:pass@]host[:port]`) as a dial address and credentials,
 * or why it is refused (`invalid`: not a URL; `refused`: not an `http://` one).
 */
function forwardProxy(
  raw: string,
): { dial: string; authorization?: string } | { invalid?: string; refused?: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { invalid: `not a URL: ${JSON.stringify(raw)}` };
  }
  if (u.protocol !== "http:") {
    return { refused: `only http:// forward proxies, got ${u.protocol}//` };
  }
  const dial = `${u.hostname}:${u.port || "80"}`;
  if (!u.username && !u.password) return { dial };
  const cred = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return { dial, authorization: `Basic ${btoa(cred)}` };
}

/** The trust pool fields of `tls` (`ca` with provider `inline` or `file`, or the older ones). */
function checkTrustPool(tls: Decoder): TrustPoolConfig | undefined {
  tls.strings("root_ca_pool");
  tls.strings("root_ca_pem_files");
  const ca = tls.object("ca");
  if (!ca) return undefined;
  const provider = ca.string("provider");
  if (provider === "inline") {
    ca.fields(["provider", "trusted_ca_certs", "trusted_ca_certs_pem_files"]);
    const out: TrustPoolConfig = { provider };
    const certs = ca.strings("trusted_ca_certs");
    if (certs) out.trusted_ca_certs = certs;
    const files = ca.strings("trusted_ca_certs_pem_files");
    if (files) out.trusted_ca_certs_pem_files = files;
    return out;
  }
  if (provider === "file") {
    ca.fields(["provider", "pem_files"]);
    const out: TrustPoolConfig = { provider };
    const files = ca.strings("pem_files");
    if (files) out.pem_files = files;
    return out;
  }
  ca.fail(
    `trust pool provider ${
      JSON.stringify(provider)
    } is not available (inline or file; module tls.ca_pool.source.${provider})`,
  );
}

/**
 * Decodes and checks an `http` transport (types, known fields, refused fields by name, the
 * values the client cannot honour); nothing is read from disk here.
 *
 * @example
 * ```ts
 * import { decodeHttpTransport } from "./transport_config.ts";
 * decodeHttpTransport({ protocol: "http", versions: ["h2c"] }, "transport").versions; // ["h2c"]
 * ```
 */
export function decodeHttpTransport(raw: Raw, where: string): HttpTransportConfig {
  const d = new Decoder(raw, where);
  const protocol = d.string("protocol") ?? "http";
  if (protocol !== "http") {
    d.fail(
      `unsupported transport protocol ${protocol} (module http.reverse_proxy.transport.${protocol})`,
    );
  }
  for (const k of Object.keys(raw)) if (k in UNSUPPORTED) refuse(d, k, UNSUPPORTED[k]);
  const out: HttpTransportConfig = {};
  if (raw.protocol !== undefined && raw.protocol !== null) out.protocol = "http";
  const proxy = d.object("network_proxy");
  if (proxy) {
    proxy.fields(["from", "url"]);
    const from = proxy.string("from");
    if (from === "url") {
      const url = proxy.string("url") ?? "";
      const fp = forwardProxy(url);
      if ("invalid" in fp) proxy.failAt("url", fp.invalid!);
      if ("refused" in fp) refuse(proxy, "url", fp.refused!);
      out.network_proxy = { from, url };
    } else if (from !== "none") {
      refuse(
        d,
        "network_proxy",
        `from "url" or "none" (upstreams are never dialed through environment proxies)`,
      );
    } else out.network_proxy = { from };
  }
  const pp = d.string("proxy_protocol");
  if (pp !== undefined) {
    if (pp !== "v1" && pp !== "v2") {
      d.failAt(
        "proxy_protocol",
        `unexpected proxy protocol version ${JSON.stringify(pp)} (v1 or v2)`,
      );
    }
    out.proxy_protocol = pp as ProxyProtocolVersion;
  }
  const local = d.string("local_address");
  if (local !== undefined) {
    if (local !== "" && parseIP(local.replace(/^\[|\]$/g, "")) === null) {
      d.failAt("local_address", `not an IP address: ${JSON.stringify(local)}`);
    }
    out.local_address = local;
  }
  d.fields(HTTP_TRANSPORT_FIELDS);
  Object.assign(out, checkConnectionFields(d));
  const compression = d.bool("compression");
  if (compression !== undefined) out.compression = compression;
  const versions = d.strings("versions");
  for (const v of versions ?? []) {
    if (v !== "1.1" && v !== "2" && v !== "h2c" && v !== "3") {
      refuse(d, "versions", `version ${JSON.stringify(v)} (1.1, 2, h2c or 3)`);
    }
  }
  if (versions?.includes("3")) refuseForHttp3(raw, versions, where);
  if (versions) out.versions = versions;
  const tls = d.object("tls");
  if (tls) {
    for (const k of TLS_UNSUPPORTED) {
      if (k in tls.raw) {
        refuse(
          tls,
          k,
          "only insecure_skip_verify, server_name, a trust pool, renegotiation and except_ports",
        );
      }
    }
    tls.fields(TLS_FIELDS);
    const t: TransportTLSConfig = {};
    const reneg = tls.string("renegotiation");
    if (reneg && reneg !== "never" && reneg !== "once" && reneg !== "freely") {
      tls.failAt("renegotiation", `unknown value ${JSON.stringify(reneg)} (never, once or freely)`);
    }
    if (reneg !== undefined) t.renegotiation = reneg;
    const except = tls.strings("except_ports");
    for (const p of except ?? []) {
      const n = Number(p);
      if (!/^\d{1,5}$/.test(p) || n < 1 || n > 65535) {
        tls.failAt("except_ports", `not a port: ${JSON.stringify(p)}`);
      }
    }
    if (except) t.except_ports = except;
    const ca = checkTrustPool(tls);
    if (ca) t.ca = ca;
    const pool = tls.strings("root_ca_pool");
    if (pool) t.root_ca_pool = pool;
    const pems = tls.strings("root_ca_pem_files");
    if (pems) t.root_ca_pem_files = pems;
    // these two are read at the transport's path, as they always were
    const at = new Decoder(tls.raw, where);
    const insecure = at.bool("insecure_skip_verify");
    if (insecure !== undefined) t.insecure_skip_verify = insecure;
    const name = at.string("server_name");
    if (name !== undefined) t.server_name = name;
    out.tls = t;
  }
  if (out.proxy_protocol && out.network_proxy?.from === "url") {
    refuse(
      d,
      "proxy_protocol",
      "through a forward proxy the header would go to the proxy, not to the upstream",
    );
  }
  if (out.network_proxy?.from === "url" && tls) {
    refuse(
      d,
      "network_proxy",
      "TLS upstreams through a forward proxy (CONNECT) are not implemented",
    );
  }
  if (versions) {
    const h2 = tls ? versions.includes("2") : versions.includes("h2c");
    if (h2 && out.network_proxy?.from === "url") {
      refuse(d, "versions", "HTTP/2 through a forward proxy");
    }
  }
  const cont = d.duration("expect_continue_timeout");
  if (cont !== undefined) out.expect_continue_timeout = raw.expect_continue_timeout as Duration;
  const writeBuffer = d.number("write_buffer_size");
  if (writeBuffer !== undefined) {
    if (!Number.isInteger(writeBuffer) || writeBuffer < 0 || writeBuffer > 64 << 20) {
      d.failAt("write_buffer_size", `must be a whole number from 0 to ${64 << 20}`);
    }
    out.write_buffer_size = writeBuffer;
  }
  if (d.duration("dial_timeout") !== undefined) out.dial_timeout = raw.dial_timeout as Duration;
  if (d.duration("response_header_timeout") !== undefined) {
    out.response_header_timeout = raw.response_header_timeout as Duration;
  }
  return out;
}

/** Milliseconds of a decoded duration. */
function ms(v: Duration | undefined): number | undefined {
  return v === undefined ? undefined : durationMs(v);
}

function readPems(files: readonly string[], d: Decoder): string[] {
  return files.map((f) => {
    try {
      return Deno.readTextFileSync(f);
    } catch (e) {
      d.fail(`reading CA certificate file ${f}: ${(e as Error).message}`);
    }
  });
}

/** The trust pool of a decoded `tls` (reads the PEM files). */
function trustPool(tls: TransportTLSConfig, where: string): string[] | undefined {
  const pool: string[] = [];
  const at = new Decoder(tls, where);
  for (const der of tls.root_ca_pool ?? []) pool.push(derToPem(der));
  pool.push(...readPems(tls.root_ca_pem_files ?? [], at));
  const ca = tls.ca;
  if (ca) {
    const caAt = new Decoder(ca, `${where}.ca`);
    if (ca.provider === "inline") {
      for (const der of ca.trusted_ca_certs ?? []) pool.push(derToPem(der));
      pool.push(...readPems(ca.trusted_ca_certs_pem_files ?? [], caAt));
    } else pool.push(...readPems(ca.pem_files ?? [], caAt));
  }
  return pool.length ? pool : undefined;
}

/**
 * The settings the upstream client runs on, from a decoded transport (the defaults when there
 * is none): reads the trust pool's files, and refuses what this process cannot do (OpenSSL
 * renegotiation without FFI, keep-alive probes off Linux).
 *
 * @example
 * ```ts
 * import { decodeHttpTransport, transportOptions } from "./transport_config.ts";
 * transportOptions(decodeHttpTransport({ dial_timeout: "1s" }, "t"), "t").dialTimeout; // 1000
 * ```
 */
export function transportOptions(
  c: HttpTransportConfig | undefined,
  where: string,
): TransportOptions {
  const t: TransportOptions = {
    tls: false,
    insecure: false,
    dialTimeout: 3000,
    responseHeaderTimeout: 0,
    compression: true,
  };
  if (!c) return t;
  if (c.compression === false) t.compression = false;
  const np = c.network_proxy;
  if (np?.from === "url") t.proxy = forwardProxy(np.url ?? "") as TransportOptions["proxy"];
  if (c.local_address) t.localAddress = c.local_address.replace(/^\[|\]$/g, "");
  const { dial, pool } = connectionOptions(c, where);
  const tls = c.tls;
  if (tls) {
    const reneg = tls.renegotiation || "never";
    if (reneg === "once" || reneg === "freely") {
      // Deno's TLS client (rustls) never renegotiates: such upstreams get OpenSSL's
      const why = opensslUnavailable();
      if (why) refuse(new Decoder(tls, `${where}.tls`), "renegotiation", `"${reneg}": ${why}`);
      t.renegotiation = reneg;
    }
    if (tls.except_ports?.length) dial.exceptPorts = new Set(tls.except_ports.map(Number));
    t.tls = true;
    t.ca = trustPool(tls, `${where}.tls`);
    t.insecure = tls.insecure_skip_verify ?? false;
    const name = tls.server_name;
    // "" is no name: the dial host's, as Go's transport takes it
    if (name?.includes("{")) t.serverNameTemplate = compileTemplate(name);
    else if (name) t.serverName = name;
  }
  if (c.proxy_protocol) t.proxyProtocol = c.proxy_protocol;
  if (c.versions) {
    t.h2 = c.versions.includes("2");
    t.h1 = c.versions.includes("1.1");
    t.h2c = c.versions.includes("h2c");
    t.h3 = c.versions.includes("3");
  }
  const cont = ms(c.expect_continue_timeout);
  if (cont !== undefined && cont > 0) t.expectContinueMs = cont;
  if (c.write_buffer_size) t.writeBufferSize = c.write_buffer_size;
  t.dial = dial;
  t.pool = pool;
  t.dialTimeout = ms(c.dial_timeout) ?? 3000;
  t.responseHeaderTimeout = ms(c.response_header_timeout) ?? 0;
  return t;
}

/**
 * Decodes a `transport` and settles the client's settings from it; throws naming the first
 * field it cannot honour.
 *
 * @example
 * ```ts
 * import { parseTransport } from "./transport_config.ts";
 * parseTransport({ protocol: "http", tls: {} }, "transport").tls; // true
 * ```
 */
export function parseTransport(raw: Raw | undefined, where: string): TransportOptions {
  return transportOptions(raw ? decodeHttpTransport(raw, where) : undefined, where);
}
