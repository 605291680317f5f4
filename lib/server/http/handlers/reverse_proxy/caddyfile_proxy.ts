/**
 * The subdirectives of a `reverse_proxy` segment, which `php_fastcgi` and `forward_auth` read
 * too: upstreams (arguments and `to`), `dynamic` upstreams, load balancing (`lb_*`), active
 * and passive health checks (`health_*`, `max_fails`, `unhealthy_*`, ...), streaming and
 * buffering, `header_up`/`header_down`, `method`/`rewrite`, `transport`, `trusted_proxies`,
 * named response matchers with `handle_response` / `replace_status`, `verbose_logs`.
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../../../caddyfile/dispenser.ts";
import { unmarshalModule } from "../../../caddyfile/registry.ts";
import { splitHostPort } from "../../../caddyfile/netaddr.ts";
import { jsonEqual } from "../../../caddyfile/types.ts";
import { goAtoiStrict, parseSize } from "../../../caddyfile/values.ts";
import { parseNamedResponseMatcher, parseNestedMatcherSet } from "../../matchers/caddyfile.ts";
import { applyHeaderOp } from "../headers/caddyfile.ts";
import { expandUpstream, parseUpstreamAddress } from "./caddyfile_upstream.ts";
import { type ProxyParse, replaceStatus } from "./caddyfile_response.ts";
import type {
  ActiveHealthChecksConfig,
  LoadBalancingConfig,
  PassiveHealthChecksConfig,
  ReverseProxyConfig,
  SelectionPolicyConfig,
  UpstreamSourceConfig,
} from "./config.ts";

type Obj = Record<string, unknown>;

const SUBDIRECTIVES = [
  "to",
  "dynamic",
  "lb_policy",
  "lb_retries",
  "lb_try_duration",
  "lb_try_interval",
  "lb_retry_match",
  "health_uri",
  "health_path",
  "health_upstream",
  "health_port",
  "health_headers",
  "health_method",
  "health_request_body",
  "health_interval",
  "health_timeout",
  "health_status",
  "health_body",
  "health_follow_redirects",
  "health_passes",
  "health_fails",
  "max_fails",
  "fail_duration",
  "unhealthy_request_count",
  "unhealthy_status",
  "unhealthy_latency",
  "flush_interval",
  "request_buffers",
  "response_buffers",
  "stream_buffer_size",
  "stream_timeout",
  "stream_close_delay",
  "trusted_proxies",
  "header_up",
  "header_down",
  "method",
  "rewrite",
  "transport",
  "handle_response",
  "replace_status",
  "verbose_logs",
];

const PRIVATE_RANGES = [
  "192.168.0.0/16",
  "172.16.0.0/12",
  "10.0.0.0/8",
  "127.0.0.1/8",
  "fd00::/8",
  "::1",
];

function duration(d: Dispenser, what: string): number {
  return d.duration((text, reason) => `${what} '${text}': ${reason}`);
}

function intOrDuration(d: Dispenser): number {
  if (/^[+-]?\d+$/.test(d.val())) return Number(d.val());
  return duration(d, "bad duration value");
}

function int(d: Dispenser, what: string): number {
  try {
    return goAtoiStrict(d.val());
  } catch (e) {
    throw d.err(`${what} '${d.val()}': ${(e as Error).message}`);
  }
}

function status(d: Dispenser, v: string): number {
  const s = v.length === 3 && v.endsWith("xx") ? v.slice(0, 1) : v;
  if (!/^[+-]?\d+$/.test(s)) {
    throw d.err(
      `bad status value '${d.val()}': strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`,
    );
  }
  return Number(s);
}

/** Sets `o[k]`, or removes it for a zero value (Go's `omitempty`). */
function set<T extends object, K extends keyof T>(o: T, k: K, v: T[K]): void {
  if (v === 0 || v === "" || v === false || v === undefined) delete o[k];
  else o[k] = v;
}

const HEALTH_STRINGS: Record<string, keyof ActiveHealthChecksConfig> = {
  health_uri: "uri",
  health_path: "path",
  health_method: "method",
  health_request_body: "body",
  health_body: "expect_body",
};

/**
 * Reads a `reverse_proxy` segment (also used by `php_fastcgi` and `forward_auth`, which
 * start from a prepared handler `init`).
 */
export function parseProxySegment(
  d: Dispenser,
  init: ReverseProxyConfig = { handler: "reverse_proxy" },
): ProxyParse<ReverseProxyConfig> {
  const p: ProxyParse<ReverseProxyConfig> = {
    handler: init,
    matchers: new Map(),
    handleResponse: [],
  };
  const h = p.handler;
  let commonScheme = "";
  let transport: Obj | undefined;
  let transportName = "";
  const active = (): ActiveHealthChecksConfig => ((h.health_checks ??= {}).active ??= {});
  const passive = (): PassiveHealthChecksConfig => ((h.health_checks ??= {}).passive ??= {});
  const lb = (): LoadBalancingConfig => (h.load_balancing ??= {});

  const appendUpstream = (addr: string) => {
    try {
      let pa;
      try {
        pa = parseUpstreamAddress(addr);
      } catch (e) {
        throw d.err((e as Error).message);
      }
      if (pa.scheme === "wss") {
        throw d.err("the scheme wss:// is only supported in browsers; use https:// instead");
      }
      if (pa.scheme === "ws") {
        throw d.err("the scheme ws:// is only supported in browsers; use http:// instead");
      }
      if (!["https", "http", "h2c", ""].includes(pa.scheme)) {
        throw d.err(`unsupported URL scheme ${pa.scheme}://`);
      }
      if (commonScheme !== "" && pa.scheme !== commonScheme) {
        throw d.err(
          `for now, all proxy upstreams must use the same scheme (transport protocol); expecting '${commonScheme}://' but got '${pa.scheme}://'`,
        );
      }
      commonScheme = pa.scheme;
      let dials: string[];
      try {
        dials = expandUpstream(pa);
      } catch (e) {
        throw d.err((e as Error).message);
      }
      const ups = h.upstreams ??= [];
      for (const dial of dials) ups.push(dial ? { dial } : {});
    } catch (e) {
      throw new Error(`parsing upstream '${addr}': ${(e as Error).message}`);
    }
  };

  d.next();
  for (const up of d.remainingArgs()) appendUpstream(up);

  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k.startsWith("@")) {
      parseNamedResponseMatcher(d.newFromNextSegment(), p.matchers);
      continue;
    }
    switch (k) {
      case "to": {
        const args = d.remainingArgs();
        if (args.length === 0) throw d.argErr();
        for (const up of args) appendUpstream(up);
        break;
      }
      case "dynamic": {
        if (!d.nextArg()) throw d.argErr();
        if (h.dynamic_upstreams) throw d.err("dynamic upstreams already specified");
        const name = d.val();
        const src = unmarshalModule(d, `http.reverse_proxy.upstreams.${name}`) as Obj;
        h.dynamic_upstreams = { ...src, source: name } as UpstreamSourceConfig;
        break;
      }
      case "lb_policy": {
        if (!d.nextArg()) throw d.argErr();
        if (h.load_balancing?.selection_policy) {
          throw d.err("load balancing selection policy already specified");
        }
        const name = d.val();
        const sel = unmarshalModule(d, `http.reverse_proxy.selection_policies.${name}`) as Obj;
        lb().selection_policy = { ...sel, policy: name } as SelectionPolicyConfig;
        break;
      }
      case "lb_retries":
        if (!d.nextArg()) throw d.argErr();
        set(lb(), "retries", int(d, "bad lb_retries number"));
        break;
      case "lb_try_duration":
        if (!d.nextArg()) throw d.argErr();
        set(lb(), "try_duration", duration(d, "bad duration value"));
        break;
      case "lb_try_interval":
        if (!d.nextArg()) throw d.argErr();
        set(lb(), "try_interval", duration(d, "bad interval value"));
        break;
      case "lb_retry_match": {
        let set: Obj;
        try {
          set = parseNestedMatcherSet(d);
        } catch (e) {
          throw d.err(`failed to parse lb_retry_match: ${(e as Error).message}`);
        }
        const l = lb();
        l.retry_match = [...(l.retry_match ?? []), set];
        break;
      }
      case "health_uri":
      case "health_path":
      case "health_method":
      case "health_request_body":
      case "health_body":
        if (!d.nextArg()) throw d.argErr();
        set(active(), HEALTH_STRINGS[k] as "uri", d.val());
        break;
      case "health_upstream": {
        if (!d.nextArg()) throw d.argErr();
        const a = active();
        let port: string;
        try {
          port = splitHostPort(d.val())[1];
        } catch (e) {
          throw d.err(`health_upstream is malformed '${d.val()}': ${(e as Error).message}`);
        }
        if (!/^[+-]?\d+$/.test(port)) {
          throw d.err(
            `bad port number '${d.val()}': strconv.Atoi: parsing ${
              JSON.stringify(port)
            }: invalid syntax`,
          );
        }
        a.upstream = d.val();
        break;
      }
      case "health_port": {
        if (!d.nextArg()) throw d.argErr();
        const a = active();
        if (a.upstream) {
          throw d.err("the 'health_port' subdirective is ignored if 'health_upstream' is used!");
        }
        set(a, "port", int(d, "bad port number"));
        break;
      }
      case "health_headers": {
        const hdrs: Record<string, string[]> = {};
        for (const m = d.nesting(); d.nextBlock(m);) {
          const key = d.val();
          const vals = d.remainingArgs();
          if (vals.length === 0) vals.push("");
          hdrs[key] = [...(hdrs[key] ?? []), ...vals];
        }
        active().headers = hdrs;
        break;
      }
      case "health_interval":
      case "health_timeout": {
        if (!d.nextArg()) throw d.argErr();
        const field = k === "health_interval" ? "interval" : "timeout";
        set(active(), field, duration(d, `bad ${field} value`));
        break;
      }
      case "health_status":
        if (!d.nextArg()) throw d.argErr();
        set(active(), "expect_status", status(d, d.val()));
        break;
      case "health_follow_redirects":
        if (d.nextArg()) throw d.argErr();
        active().follow_redirects = true;
        break;
      case "health_passes":
      case "health_fails": {
        if (!d.nextArg()) throw d.argErr();
        const field = k === "health_passes" ? "passes" : "fails";
        set(active(), field, int(d, `invalid ${field} count`));
        break;
      }
      case "max_fails":
        if (!d.nextArg()) throw d.argErr();
        set(passive(), "max_fails", int(d, "invalid maximum fail count"));
        break;
      case "fail_duration":
      case "unhealthy_latency":
        if (!d.nextArg()) throw d.argErr();
        set(passive(), k, duration(d, "bad duration value"));
        break;
      case "unhealthy_request_count":
        if (!d.nextArg()) throw d.argErr();
        set(passive(), k, int(d, "invalid maximum connection count"));
        break;
      case "unhealthy_status": {
        const args = d.remainingArgs();
        if (args.length === 0) throw d.argErr();
        const ps = passive();
        ps.unhealthy_status = [...(ps.unhealthy_status ?? []), ...args.map((a) => status(d, a))];
        break;
      }
      case "flush_interval":
      case "stream_timeout":
      case "stream_close_delay":
        if (!d.nextArg()) throw d.argErr();
        set(h, k, intOrDuration(d));
        break;
      case "request_buffers":
      case "response_buffers":
      case "stream_buffer_size": {
        if (!d.nextArg()) throw d.argErr();
        const v = d.val();
        let size: number;
        if (v === "unlimited") size = -1;
        else {
          try {
            size = parseSize(v);
          } catch (e) {
            throw d.err(`invalid byte size '${v}': ${(e as Error).message}`);
          }
        }
        if (d.nextArg()) throw d.argErr();
        set(h, k, size);
        break;
      }
      case "trusted_proxies":
        while (d.nextArg()) {
          const list = h.trusted_proxies ??= [];
          if (d.val() === "private_ranges") list.push(...PRIVATE_RANGES);
          else list.push(d.val());
        }
        break;
      case "header_up":
      case "header_down": {
        const hdrs = h.headers ??= {};
        const ops = hdrs[k === "header_up" ? "request" : "response"] ??= {};
        const args = d.remainingArgs();
        if (args.length < 1 || args.length > 3) throw d.argErr();
        try {
          applyHeaderOp(ops, false, args[0], args[1] ?? "", args[2]);
        } catch (e) {
          throw d.err((e as Error).message);
        }
        break;
      }
      case "method":
      case "rewrite": {
        if (!d.nextArg()) throw d.argErr();
        const r = h.rewrite ??= {};
        set(r, k === "method" ? "method" : "uri", d.val());
        if (d.nextArg()) throw d.argErr();
        break;
      }
      case "transport": {
        if (!d.nextArg()) throw d.argErr();
        if (transport || h.transport) throw d.err("transport already specified");
        transportName = d.val();
        transport = unmarshalModule(d, `http.reverse_proxy.transport.${transportName}`) as Obj;
        break;
      }
      case "handle_response":
        p.handleResponse.push(d.newFromNextSegment());
        break;
      case "replace_status":
        h.handle_response = [...(h.handle_response ?? []), replaceStatus(d, p)];
        break;
      case "verbose_logs":
        if (h.verbose_logs) throw d.err("verbose_logs already specified");
        h.verbose_logs = true;
        break;
      default:
        throw d.err(`unrecognized subdirective ${k}${didYouMean(k, SUBDIRECTIVES)}`);
    }
  }

  if ((commonScheme === "https" || commonScheme === "h2c") && !transport) {
    transport = {};
    transportName = "http";
  }
  if (transport) {
    if (transportName === "http") {
      if (commonScheme === "https" && !transport.tls) transport.tls = {};
      if (commonScheme === "http" && transport.tls) {
        throw d.err(
          "upstream address scheme is HTTP but transport is configured for HTTP+TLS (HTTPS)",
        );
      }
      if (commonScheme === "h2c") transport.versions = ["h2c", "2"];
    } else if (commonScheme === "https") {
      throw d.err(
        `upstreams are configured for HTTPS but transport module does not support TLS: ${transportName}`,
      );
    }
    if (!(transportName === "http" && jsonEqual(transport, {}))) {
      h.transport = { ...transport, protocol: transportName } as ReverseProxyConfig["transport"];
    }
  }
  return p;
}
