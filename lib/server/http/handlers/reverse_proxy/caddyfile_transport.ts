/**
 * Gatehousefile syntax of what `reverse_proxy` plugs in: the `http` transport, load-balancing
 * selection policies, dynamic upstream sources (`a`, `srv`, `multi`) and network proxies.
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../../../caddyfile/dispenser.ts";
import { type SyntaxSet, unmarshalModule } from "../../../caddyfile/registry.ts";
import { goAtoiStrict, parseSize } from "../../../caddyfile/values.ts";
import { parseDuration } from "../../../config/duration.ts";
import type { SelectionPolicyConfig } from "./config.ts";
import type {
  HttpTransportConfig,
  KeepAliveConfig,
  NetworkProxyConfig,
  TransportTLSConfig,
  TrustPoolConfig,
} from "./transport_config.ts";
import type {
  ASourceConfig,
  LookupFields,
  MultiSourceConfig,
  SRVSourceConfig,
  UpstreamSourceConfig,
} from "./upstream_sources/config.ts";

type Obj = Record<string, unknown>;
/** A module's fields without its inline key (`policy`, `source`, `protocol`). */
type ModuleFields<T, K extends keyof T> = Omit<T, K>;

/** Subdirectives of the `http` transport. */
const HTTP_TRANSPORT_OPTIONS = [
  "read_buffer",
  "write_buffer",
  "max_response_header",
  "read_timeout",
  "write_timeout",
  "proxy_protocol",
  "forward_proxy_url",
  "network_proxy",
  "dial_timeout",
  "response_header_timeout",
  "expect_continue_timeout",
  "dial_fallback_delay",
  "resolvers",
  "tls",
  "tls_client_auth",
  "tls_insecure_skip_verify",
  "tls_curves",
  "tls_timeout",
  "tls_trusted_ca_certs",
  "tls_server_name",
  "tls_renegotiation",
  "tls_except_ports",
  "tls_trust_pool",
  "keepalive",
  "keepalive_interval",
  "keepalive_idle_conns",
  "keepalive_idle_conns_per_host",
  "versions",
  "compression",
  "max_conns_per_host",
  "local_address",
];

function dur(d: Dispenser, what: string): number {
  return d.duration((text, reason) => `${what} '${text}': ${reason}`);
}

function int(d: Dispenser, what: string): number {
  try {
    return goAtoiStrict(d.val());
  } catch (e) {
    throw d.err(`${what} '${d.val()}': ${(e as Error).message}`);
  }
}

function size(d: Dispenser, what: string): number {
  try {
    return parseSize(d.val());
  } catch (e) {
    throw d.err(`invalid ${what} size '${d.val()}': ${(e as Error).message}`);
  }
}

/** Sets `o[k]`, or removes it for a zero value (Go's `omitempty`). */
function put<T extends object, K extends keyof T>(o: T, k: K, v: T[K]): void {
  if (v === 0 || v === "" || v === undefined) delete o[k];
  else o[k] = v;
}

/** The `http` transport. */
export function httpTransport(d: Dispenser): ModuleFields<HttpTransportConfig, "protocol"> {
  d.next();
  const t: ModuleFields<HttpTransportConfig, "protocol"> = {};
  const tls = (): TransportTLSConfig => (t.tls ??= {});
  const keep = (): KeepAliveConfig => (t.keep_alive ??= {});
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    switch (k) {
      case "read_buffer":
      case "write_buffer":
        if (!d.nextArg()) throw d.argErr();
        put(
          t,
          k === "read_buffer" ? "read_buffer_size" : "write_buffer_size",
          size(d, k.replace("_", " ")),
        );
        break;
      case "max_response_header":
        if (!d.nextArg()) throw d.argErr();
        put(t, "max_response_header_size", size(d, "max response header"));
        break;
      case "read_timeout":
      case "write_timeout":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, dur(d, `invalid ${k.replace("_", " ")} duration`));
        break;
      case "proxy_protocol":
        if (!d.nextArg()) throw d.argErr();
        if (d.val() !== "v1" && d.val() !== "v2") {
          throw d.err(`invalid proxy protocol version '${d.val()}'`);
        }
        t.proxy_protocol = d.val();
        break;
      case "forward_proxy_url":
        if (!d.nextArg()) throw d.argErr();
        t.network_proxy = { url: d.val(), from: "url" };
        break;
      case "network_proxy": {
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        const np = unmarshalModule(d, `caddy.network_proxy.${name}`) as Obj;
        t.network_proxy = { ...np, from: name } as NetworkProxyConfig;
        break;
      }
      case "dial_timeout":
      case "response_header_timeout":
      case "expect_continue_timeout":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, dur(d, "bad timeout value"));
        break;
      case "dial_fallback_delay":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, dur(d, "bad fallback delay value"));
        break;
      case "resolvers": {
        const a = d.remainingArgs();
        t.resolver = a.length ? { addresses: a } : {};
        if (a.length === 0) throw d.err("must specify at least one resolver address");
        break;
      }
      case "tls":
        tls();
        break;
      case "tls_client_auth": {
        const a = d.remainingArgs();
        if (a.length === 1) tls().client_certificate_automate = a[0];
        else if (a.length === 2) {
          tls().client_certificate_file = a[0];
          tls().client_certificate_key_file = a[1];
        } else throw d.argErr();
        break;
      }
      case "tls_insecure_skip_verify":
        if (d.nextArg()) throw d.argErr();
        tls().insecure_skip_verify = true;
        break;
      case "tls_curves": {
        const a = d.remainingArgs();
        if (a.length === 0) throw d.argErr();
        tls().curves = a;
        break;
      }
      case "tls_timeout":
        if (!d.nextArg()) throw d.argErr();
        put(tls(), "handshake_timeout", dur(d, "bad timeout value"));
        break;
      case "tls_trusted_ca_certs": {
        const a = d.remainingArgs();
        if (a.length === 0) throw d.argErr();
        if (tls().ca) throw d.err("cannot specify both 'tls_trust_pool' and 'tls_trusted_ca_certs");
        tls().root_ca_pem_files = a;
        break;
      }
      case "tls_server_name":
        if (!d.nextArg()) throw d.argErr();
        put(tls(), "server_name", d.val());
        break;
      case "tls_renegotiation":
        tls();
        if (!d.nextArg()) throw d.argErr();
        if (!["never", "once", "freely"].includes(d.val())) throw d.argErr();
        tls().renegotiation = d.val();
        break;
      case "tls_except_ports": {
        const a = d.remainingArgs();
        tls().except_ports = a;
        if (a.length === 0) throw d.argErr();
        break;
      }
      case "tls_trust_pool": {
        if (!d.nextArg()) throw d.argErr();
        const name = d.val();
        const ca = unmarshalModule(d, `tls.ca_pool.source.${name}`) as Obj;
        if (tls().root_ca_pem_files?.length) {
          throw d.err("cannot specify both 'tls_trust_pool' and 'tls_trusted_ca_certs'");
        }
        if (tls().ca) throw d.err('cannot specify "tls_trust_pool" twice in caddyfile');
        tls().ca = { ...ca, provider: name } as TrustPoolConfig;
        break;
      }
      case "keepalive":
        if (!d.nextArg()) throw d.argErr();
        if (d.val() === "off") keep().enabled = false;
        else put(keep(), "idle_timeout", dur(d, "bad duration value"));
        break;
      case "keepalive_interval":
        if (!d.nextArg()) throw d.argErr();
        put(keep(), "probe_interval", dur(d, "bad interval value"));
        break;
      case "keepalive_idle_conns":
      case "keepalive_idle_conns_per_host":
        if (!d.nextArg()) throw d.argErr();
        put(
          keep(),
          k === "keepalive_idle_conns" ? "max_idle_conns" : "max_idle_conns_per_host",
          int(d, "bad integer value"),
        );
        break;
      case "versions": {
        const a = d.remainingArgs();
        t.versions = a;
        if (a.length === 0) throw d.argErr();
        break;
      }
      case "compression":
        if (d.nextArg() && d.val() === "off") t.compression = false;
        break;
      case "max_conns_per_host":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, int(d, "bad integer value"));
        break;
      case "local_address":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, d.val());
        break;
      default:
        throw d.unknownSubdirective(HTTP_TRANSPORT_OPTIONS);
    }
  }
  return t;
}

function noArgs(d: Dispenser): Record<string, never> {
  d.next();
  if (d.nextArg()) throw d.argErr();
  return {};
}

function fallback(d: Dispenser, into: { fallback?: SelectionPolicyConfig }): void {
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "fallback") {
      throw d.unknownSubdirective(["fallback"], "unrecognized option '%s'");
    }
    if (!d.nextArg()) throw d.argErr();
    if (into.fallback) throw d.err("fallback selection policy already specified");
    const name = d.val();
    const sel = unmarshalModule(d, `http.reverse_proxy.selection_policies.${name}`) as Obj;
    into.fallback = { ...sel, policy: name } as SelectionPolicyConfig;
  }
}

function keyed(field: "key" | "field") {
  return (d: Dispenser): { key?: string; field?: string; fallback?: SelectionPolicyConfig } => {
    d.next();
    if (!d.nextArg()) throw d.argErr();
    const out: { key?: string; field?: string; fallback?: SelectionPolicyConfig } = {};
    put(out, field, d.val());
    fallback(d, out);
    return out;
  };
}

const RESOLVER_OPTIONS = ["refresh", "resolvers", "dial_timeout", "dial_fallback_delay"];

function resolverAndDialing(
  d: Dispenser,
  u: LookupFields & { refresh?: number | string },
  k: string,
): boolean {
  switch (k) {
    case "refresh":
      if (!d.nextArg()) throw d.argErr();
      try {
        put(u, "refresh", parseDuration(d.val()));
      } catch (e) {
        throw d.err(`parsing refresh interval duration: ${(e as Error).message}`);
      }
      return true;
    case "resolvers": {
      const a = d.remainingArgs();
      u.resolver = a.length ? { addresses: a } : {};
      if (a.length === 0) throw d.err("must specify at least one resolver address");
      return true;
    }
    case "dial_timeout":
      if (!d.nextArg()) throw d.argErr();
      put(u, k, dur(d, "bad timeout value"));
      return true;
    case "dial_fallback_delay":
      if (!d.nextArg()) throw d.argErr();
      put(u, k, dur(d, "bad delay value"));
      return true;
  }
  return false;
}

const NO_ARGS_POLICIES = [
  "random",
  "least_conn",
  "round_robin",
  "first",
  "ip_hash",
  "client_ip_hash",
  "uri_hash",
];

/** `lb_policy weighted_round_robin <weights...>`. */
function weightedRoundRobin(d: Dispenser): { weights: number[] } {
  d.next();
  const args = d.remainingArgs();
  if (args.length === 0) throw d.argErr();
  const weights = args.map((w) => {
    if (!/^[+-]?\d+$/.test(w)) {
      throw d.err(
        `invalid weight value '${w}': strconv.Atoi: parsing ${JSON.stringify(w)}: invalid syntax`,
      );
    }
    const n = Number(w);
    if (n < 0) throw d.err(`invalid weight value '${w}': weight should be non-negative`);
    return n;
  });
  return { weights };
}

/** `lb_policy random_choose <n>`. */
function randomChoose(d: Dispenser): { choose?: number } {
  d.next();
  if (!d.nextArg()) throw d.argErr();
  const out: { choose?: number } = {};
  put(out, "choose", int(d, "invalid choice value"));
  return out;
}

/** `lb_policy cookie [<name> [<secret>]] { fallback <policy>; max_age <duration> }`. */
function cookiePolicy(
  d: Dispenser,
): { name?: string; secret?: string; max_age?: number; fallback?: SelectionPolicyConfig } {
  const args = d.remainingArgs();
  const out: {
    name?: string;
    secret?: string;
    max_age?: number;
    fallback?: SelectionPolicyConfig;
  } = {};
  if (args.length < 1 || args.length > 3) throw d.argErr();
  if (args.length >= 2) put(out, "name", args[1]);
  if (args.length === 3) put(out, "secret", args[2]);
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k === "fallback") {
      if (!d.nextArg()) throw d.argErr();
      if (out.fallback) throw d.err("fallback selection policy already specified");
      const name = d.val();
      const sel = unmarshalModule(d, `http.reverse_proxy.selection_policies.${name}`) as Obj;
      out.fallback = { ...sel, policy: name } as SelectionPolicyConfig;
    } else if (k === "max_age") {
      if (!d.nextArg()) throw d.argErr();
      if (out.max_age) throw d.err("cookie max_age already specified");
      let v: number;
      try {
        v = parseDuration(d.val());
      } catch {
        throw d.err(`invalid duration: ${d.val()}`);
      }
      if (v <= 0) {
        throw d.err(`invalid duration: ${d.val()}, max_age should be non-zero and positive`);
      }
      if (d.nextArg()) throw d.argErr();
      out.max_age = v;
    } else throw d.unknownSubdirective(["fallback", "max_age"], "unrecognized option '%s'");
  }
  return out;
}

/** `dynamic srv [<name>] { service; proto; name; grace_period; refresh; resolvers; ... }`. */
function srvSource(d: Dispenser): ModuleFields<SRVSourceConfig, "source"> {
  d.next();
  const args = d.remainingArgs();
  if (args.length > 1) throw d.argErr();
  const u: ModuleFields<SRVSourceConfig, "source"> = {};
  if (args.length > 0) put(u, "name", args[0]);
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (resolverAndDialing(d, u, k)) continue;
    if (k === "service" || k === "proto" || k === "name") {
      if (!d.nextArg()) throw d.argErr();
      if (u[k]) throw d.err(`srv ${k} has already been specified`);
      put(u, k, d.val());
    } else if (k === "grace_period") {
      if (!d.nextArg()) throw d.argErr();
      put(u, k, dur(d, "bad grace period value"));
    } else {
      throw d.unknownSubdirective(
        [...RESOLVER_OPTIONS, "service", "proto", "name", "grace_period"],
        "unrecognized srv option '%s'",
      );
    }
  }
  return u;
}

/** `dynamic a [<name> [<port>]] { name; port; versions ipv4|ipv6; refresh; resolvers; ... }`. */
function aSource(d: Dispenser): ModuleFields<ASourceConfig, "source"> {
  d.next();
  const args = d.remainingArgs();
  if (args.length > 2) throw d.argErr();
  const u: ModuleFields<ASourceConfig, "source"> = {};
  if (args.length > 0) put(u, "name", args[0]);
  if (args.length === 2) put(u, "port", args[1]);
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (resolverAndDialing(d, u, k)) continue;
    if (k === "name" || k === "port") {
      if (!d.nextArg()) throw d.argErr();
      if (u[k]) throw d.err(`a ${k} has already been specified`);
      put(u, k, d.val());
    } else if (k === "versions") {
      const a = d.remainingArgs();
      if (a.length === 0) throw d.err("must specify at least one version");
      const v = u.versions ??= {};
      for (const x of a) {
        if (x !== "ipv4" && x !== "ipv6") {
          throw d.err(`unsupported version: '${x}'${didYouMean(x, ["ipv4", "ipv6"])}`);
        }
        v[x] = true;
      }
    } else {
      throw d.unknownSubdirective(
        [...RESOLVER_OPTIONS, "name", "port", "versions"],
        "unrecognized a option '%s'",
      );
    }
  }
  return u;
}

/** `dynamic multi { <source> ...; ... }`. */
function multiSource(d: Dispenser): ModuleFields<MultiSourceConfig, "source"> {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const sources: UpstreamSourceConfig[] = [];
  for (const n = d.nesting(); d.nextBlock(n);) {
    const name = d.val();
    const src = unmarshalModule(d, `http.reverse_proxy.upstreams.${name}`) as Obj;
    sources.push({ ...src, source: name } as UpstreamSourceConfig);
  }
  return sources.length ? { sources } : {};
}

/** The transport, selection policy, upstream source and network proxy module syntaxes. */
export const syntax: SyntaxSet = {
  modules: {
    "http.reverse_proxy.transport.http": httpTransport,
    ...Object.fromEntries(
      NO_ARGS_POLICIES.map((p) => [`http.reverse_proxy.selection_policies.${p}`, noArgs]),
    ),
    "http.reverse_proxy.selection_policies.weighted_round_robin": weightedRoundRobin,
    "http.reverse_proxy.selection_policies.random_choose": randomChoose,
    "http.reverse_proxy.selection_policies.query": keyed("key"),
    "http.reverse_proxy.selection_policies.header": keyed("field"),
    "http.reverse_proxy.selection_policies.cookie": cookiePolicy,
    "http.reverse_proxy.upstreams.srv": srvSource,
    "http.reverse_proxy.upstreams.a": aSource,
    "http.reverse_proxy.upstreams.multi": multiSource,
    "caddy.network_proxy.url": (d) => {
      d.next();
      d.next();
      return { url: d.val() };
    },
    "caddy.network_proxy.none": () => ({}),
  },
};
