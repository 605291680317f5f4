/**
 * `reverse_proxy`'s `http` transport → `transport http { ... }` (timeouts, buffers, TLS,
 * keep-alive, versions, resolvers, proxy protocol, network proxy).
 *
 * @module
 */
import { poolSpec } from "../../../caddyfile/writer/trust_pool.ts";
import { durationText } from "../../../config/duration.ts";
import { type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";
import type {
  HttpTransportConfig,
  KeepAliveConfig,
  TransportTLSConfig,
} from "./transport_config.ts";

// deno-lint-ignore no-explicit-any
function dur<T extends Record<string, any>>(
  f: Fields<T>,
  key: keyof T & string,
  sub: string,
  out: Line[],
): void {
  if (!f.has(key)) return;
  const d = durationText(f.take(key));
  if (d === undefined) f.problems.add(f.at(key), "must be a duration");
  else out.push(line([sub, d]));
}

// deno-lint-ignore no-explicit-any
function num<T extends Record<string, any>>(
  f: Fields<T>,
  key: keyof T & string,
  sub: string,
  out: Line[],
): void {
  const n = f.num(key);
  if (n !== undefined) out.push(line([sub, String(n)]));
}

/** The block of `transport http` (empty when the transport has no settings). */
export function httpTransportLines(t: Fields<HttpTransportConfig>): Line[] {
  const out: Line[] = [];
  num(t, "read_buffer_size", "read_buffer", out);
  num(t, "write_buffer_size", "write_buffer", out);
  dur(t, "read_timeout", "read_timeout", out);
  dur(t, "write_timeout", "write_timeout", out);
  num(t, "max_response_header_size", "max_response_header", out);
  const pp = t.str("proxy_protocol");
  if (pp !== undefined) out.push(line(["proxy_protocol", pp]));
  const np = t.obj("network_proxy");
  if (np) {
    if (np.from === "url" && typeof np.url === "string" && Object.keys(np).length === 2) {
      out.push(line(["network_proxy", "url", np.url]));
    } else if (np.from === "none" && Object.keys(np).length === 1) {
      out.push(line(["network_proxy", "none"]));
    } else t.problems.add(t.at("network_proxy"), "this network proxy has no form here");
  }
  dur(t, "dial_timeout", "dial_timeout", out);
  dur(t, "dial_fallback_delay", "dial_fallback_delay", out);
  dur(t, "response_header_timeout", "response_header_timeout", out);
  dur(t, "expect_continue_timeout", "expect_continue_timeout", out);
  const res = t.obj("resolver");
  if (res) {
    const addrs = res.addresses;
    if (Array.isArray(addrs) && addrs.length && Object.keys(res).length === 1) {
      out.push(line(["resolvers", ...addrs.map(String)]));
    } else t.problems.add(t.at("resolver"), "only resolver addresses have a form");
  }
  const tls = t.fields("tls") as Fields<TransportTLSConfig> | undefined;
  if (tls) {
    const before = out.length;
    const ca = tls.str("client_certificate_automate");
    if (ca !== undefined) out.push(line(["tls_client_auth", ca]));
    const cf = tls.str("client_certificate_file"), kf = tls.str("client_certificate_key_file");
    if (cf !== undefined && kf !== undefined) out.push(line(["tls_client_auth", cf, kf]));
    if (tls.bool("insecure_skip_verify")) out.push(line(["tls_insecure_skip_verify"]));
    const curves = tls.strs("curves");
    if (curves) out.push(line(["tls_curves", ...curves]));
    dur(tls, "handshake_timeout", "tls_timeout", out);
    const pem = tls.strs("root_ca_pem_files");
    if (pem) out.push(line(["tls_trusted_ca_certs", ...pem]));
    const sn = tls.str("server_name");
    if (sn !== undefined) out.push(line(["tls_server_name", sn]));
    const rn = tls.str("renegotiation");
    if (rn !== undefined) out.push(line(["tls_renegotiation", rn]));
    const ex = tls.strs("except_ports");
    if (ex) out.push(line(["tls_except_ports", ...ex]));
    if (tls.has("ca")) {
      const spec = poolSpec(tls.take("ca"), tls.at("ca"), tls.problems);
      if (spec) out.push(line(["tls_trust_pool", ...spec.words], spec.block));
    }
    tls.done("the transport's TLS settings");
    if (out.length === before) out.push(line(["tls"]));
  }
  const ka = t.fields("keep_alive") as Fields<KeepAliveConfig> | undefined;
  if (ka) {
    if (ka.bool("enabled") === false) out.push(line(["keepalive", "off"]));
    dur(ka, "idle_timeout", "keepalive", out);
    dur(ka, "probe_interval", "keepalive_interval", out);
    num(ka, "max_idle_conns", "keepalive_idle_conns", out);
    num(ka, "max_idle_conns_per_host", "keepalive_idle_conns_per_host", out);
    ka.done("keep_alive");
  }
  const versions = t.strs("versions");
  if (versions) out.push(line(["versions", ...versions]));
  if (t.bool("compression") === false) out.push(line(["compression", "off"]));
  num(t, "max_conns_per_host", "max_conns_per_host", out);
  const la = t.str("local_address");
  if (la !== undefined) out.push(line(["local_address", la]));
  if (isObject(t.value) && t.has("forward_proxy_url")) {
    const u = t.str("forward_proxy_url");
    if (u !== undefined) out.push(line(["forward_proxy_url", u]));
  }
  return out;
}
