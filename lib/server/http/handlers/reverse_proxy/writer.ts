/**
 * `reverse_proxy` handler → `reverse_proxy [<upstreams...>] { ... }`: load balancing, health
 * checks, buffering, headers up and down, rewrite, transport, `handle_response` routes with
 * named response matchers, `replace_status`; `forward_auth` when the handler is its expansion
 * (`writer_forward_auth.ts`). The `http` transport's block is `writer_transport.ts`, the
 * routes `php_fastcgi` expands to `writer_php_fastcgi.ts`.
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { Ctx, Directive, HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { headerOpLines } from "../headers/writer.ts";
import { canonicalHeader, nestedSetLines } from "../../../caddyfile/writer/matchers.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { handleResponseLines } from "../../../caddyfile/writer/response_matcher.ts";
import { bare, type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import { durationText } from "../../../config/duration.ts";
import type {
  ActiveHealthChecksConfig,
  FastCGITransportConfig,
  HealthChecksConfig,
  HttpTransportConfig,
  LoadBalancingConfig,
  PassiveHealthChecksConfig,
  ProxyHeadersConfig,
  ReverseProxyConfig,
} from "./config.ts";
import { forwardAuthOf } from "./writer_forward_auth.ts";
import { httpTransportLines } from "./writer_transport.ts";

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

function lbLines(lb: Fields<LoadBalancingConfig>, out: Line[]): void {
  const sp = lb.obj("selection_policy");
  if (sp) {
    const { policy, ...opts } = sp;
    const args: string[] = [String(policy)];
    const keys = Object.keys(opts);
    if (keys.length === 0) out.push(line(["lb_policy", ...args]));
    else if (
      (policy === "header" || policy === "query") && keys.join() === "field" ||
      policy === "header" && keys.sort().join() === "fallback,field"
    ) {
      out.push(line(["lb_policy", String(policy), String(opts.field)]));
      if (opts.fallback) {
        lb.problems.add(lb.at("selection_policy"), "a fallback policy has no form here");
      }
    } else if (
      policy === "weighted_round_robin" && keys.join() === "weights" && Array.isArray(opts.weights)
    ) {
      out.push(line(["lb_policy", "weighted_round_robin", ...opts.weights.map(String)]));
    } else if (policy === "cookie" && keys.every((k) => k === "name" || k === "secret")) {
      out.push(
        line([
          "lb_policy",
          "cookie",
          ...(opts.name ? [String(opts.name)] : []),
          ...(opts.secret ? [String(opts.secret)] : []),
        ]),
      );
    } else {lb.problems.add(
        lb.at("selection_policy"),
        `options of lb policy ${policy} have no form here`,
      );}
  }
  const retries = lb.num("retries");
  if (retries !== undefined) out.push(line(["lb_retries", String(retries)]));
  dur(lb, "try_duration", "lb_try_duration", out);
  dur(lb, "try_interval", "lb_try_interval", out);
  const rm = lb.arr("retry_match") ?? [];
  rm.forEach((set, i) => {
    const lines = nestedSetLines(set, childPath(lb.at("retry_match"), i), lb.problems);
    if (!lines) return;
    if (lines.length === 1 && !lines[0].block) {
      out.push({ words: [bare("lb_retry_match"), ...lines[0].words] });
    } else out.push(line(["lb_retry_match"], lines));
  });
}

function healthLines(hc: Fields<HealthChecksConfig>, out: Line[]): void {
  const a = hc.fields("active") as Fields<ActiveHealthChecksConfig> | undefined;
  if (a) {
    const uri = a.str("uri");
    if (uri !== undefined) out.push(line(["health_uri", uri]));
    const path = a.str("path");
    if (path !== undefined) out.push(line(["health_path", path]));
    const up = a.str("upstream");
    if (up !== undefined) out.push(line(["health_upstream", up]));
    const port = a.num("port");
    if (port !== undefined) out.push(line(["health_port", String(port)]));
    const headers = a.obj("headers");
    if (headers) {
      out.push(
        line(
          ["health_headers"],
          Object.entries(headers).map(([k, v]) =>
            line([k, ...(Array.isArray(v) ? v.map(String) : [])])
          ),
        ),
      );
    }
    const method = a.str("method");
    if (method !== undefined) out.push(line(["health_method", method]));
    const body = a.str("body");
    if (body !== undefined) out.push(line(["health_request_body", body]));
    dur(a, "interval", "health_interval", out);
    dur(a, "timeout", "health_timeout", out);
    const st = a.num("expect_status");
    if (st !== undefined) out.push(line(["health_status", String(st)]));
    const eb = a.str("expect_body");
    if (eb !== undefined) out.push(line(["health_body", eb]));
    if (a.bool("follow_redirects")) out.push(line(["health_follow_redirects"]));
    const passes = a.num("passes");
    if (passes !== undefined) out.push(line(["health_passes", String(passes)]));
    const fails = a.num("fails");
    if (fails !== undefined) out.push(line(["health_fails", String(fails)]));
    a.done("active health checks");
  }
  const p = hc.fields("passive") as Fields<PassiveHealthChecksConfig> | undefined;
  if (p) {
    const mf = p.num("max_fails");
    if (mf !== undefined) out.push(line(["max_fails", String(mf)]));
    dur(p, "fail_duration", "fail_duration", out);
    const urc = p.num("unhealthy_request_count");
    if (urc !== undefined) out.push(line(["unhealthy_request_count", String(urc)]));
    const us = p.arr("unhealthy_status");
    if (us) out.push(line(["unhealthy_status", ...us.map(String)]));
    dur(p, "unhealthy_latency", "unhealthy_latency", out);
    p.done("passive health checks");
  }
}

/** `reverse_proxy`, or `forward_auth` when the handler is one's expansion. */
export const writer: HandlerReverser<ReverseProxyConfig> = (f, ctx: Ctx) => {
  const fa = forwardAuthOf(f.value);
  if (!fa) return proxyDirective(f, ctx, 0);
  const inner = new Fields<ReverseProxyConfig>(fa.rest, f.path, f.problems);
  inner.skip("handler");
  const d = proxyDirective(inner, ctx, 1);
  inner.done("the forward_auth handler");
  f.skip(...(f.rest() as (keyof ReverseProxyConfig)[]));
  const own = [line(["uri", fa.uri])];
  if (fa.copy.length) {
    own.push(
      line([
        "copy_headers",
        ...fa.copy.map(([a, b]) => canonicalHeader(a) === b ? a : `${a}>${b}`),
      ]),
    );
  }
  return { name: "forward_auth", args: d.args, block: [...own, ...d.block ?? []] };
};

/** The `reverse_proxy` directive; `handle_response` entries before `from` are left out. */
function proxyDirective(f: Fields<ReverseProxyConfig>, ctx: Ctx, from: number): Directive {
  const args: Token[] = [];
  const block: Line[] = [];
  const transport = f.fields("transport") as
    | Fields<HttpTransportConfig & Omit<FastCGITransportConfig, "protocol">>
    | undefined;
  const ups = f.arr("upstreams") ?? [];
  const dials: string[] = [];
  ups.forEach((u, i) => {
    if (isObject(u) && typeof u.dial === "string" && Object.keys(u).length === 1) {
      dials.push(u.dial);
    } else {f.problems.add(
        childPath(f.at("upstreams"), i),
        "only upstreams with a dial address have a form",
      );}
  });
  args.push(...dials.map((d) => word(d)));
  // any source's fields, each written as its subdirective
  const dyn = f.fields("dynamic_upstreams");
  if (dyn) {
    const src = dyn.str("source");
    const b: Line[] = [];
    for (const k of dyn.rest()) {
      const v = dyn.take(k);
      const d = ["refresh", "dial_timeout", "dial_fallback_delay", "grace_period"].includes(k)
        ? durationText(v)
        : undefined;
      if (d !== undefined) b.push(line([k, d]));
      else if (typeof v === "string" || typeof v === "number") b.push(line([k, String(v)]));
      else if (Array.isArray(v)) b.push(line([k, ...v.map(String)]));
      else if (isObject(v) && k === "resolver" && Array.isArray(v.addresses)) {
        b.push(line(["resolvers", ...v.addresses.map(String)]));
      } else if (isObject(v) && k === "versions") {
        b.push(line(["versions", ...Object.keys(v).filter((x) => v[x] === true)]));
      } else f.problems.add(dyn.at(k), "this dynamic upstream option has no form here");
    }
    block.push(line(["dynamic", src ?? ""], b.length ? b : undefined));
  }
  const lb = f.fields("load_balancing") as Fields<LoadBalancingConfig> | undefined;
  if (lb) {
    lbLines(lb, block);
    lb.done("load_balancing");
  }
  const hc = f.fields("health_checks") as Fields<HealthChecksConfig> | undefined;
  if (hc) {
    healthLines(hc, block);
    hc.done("health_checks");
  }
  dur(f, "flush_interval", "flush_interval", block);
  for (const k of ["request_buffers", "response_buffers", "stream_buffer_size"] as const) {
    const n = f.num(k);
    if (n !== undefined) block.push(line([k, n === -1 ? "unlimited" : String(n)]));
  }
  dur(f, "stream_timeout", "stream_timeout", block);
  dur(f, "stream_close_delay", "stream_close_delay", block);
  const tp = f.strs("trusted_proxies");
  if (tp) block.push(line(["trusted_proxies", ...tp]));
  const headers = f.fields("headers") as Fields<ProxyHeadersConfig> | undefined;
  if (headers) {
    const req = headers.fields("request");
    if (req) {
      for (const l of headerOpLines(req) ?? []) {
        block.push({ words: [bare("header_up"), ...l.words] });
      }
      req.done("header_up operations");
    }
    const resp = headers.fields("response");
    if (resp) {
      for (const l of headerOpLines(resp) ?? []) {
        block.push({ words: [bare("header_down"), ...l.words] });
      }
      resp.done("header_down operations");
    }
    headers.done("the proxy's header operations");
  }
  const rw = f.fields("rewrite");
  if (rw) {
    const m = rw.str("method");
    if (m !== undefined) block.push(line(["method", m]));
    const uri = rw.str("uri");
    if (uri !== undefined) block.push(line(["rewrite", uri]));
    rw.done("the proxy's rewrite");
  }
  if (transport) {
    const proto = transport.str("protocol");
    if (proto === "http") {
      const lines = httpTransportLines(transport);
      if (lines.length === 0) {
        f.problems.warn(transport.path, "the default http transport is implied and not written");
      } else block.push(line(["transport", "http"], lines));
    } else if (proto === "fastcgi") {
      const lines: Line[] = [];
      const root = transport.str("root");
      if (root !== undefined) lines.push(line(["root", root]));
      const sp = transport.strs("split_path");
      if (sp) lines.push(line(["split", ...sp]));
      const env = transport.obj("env");
      for (const [k, v] of Object.entries(env ?? {})) lines.push(line(["env", k, String(v)]));
      for (const k of ["resolve_root_symlink", "capture_stderr"] as const) {
        if (transport.bool(k)) lines.push(line([k]));
      }
      for (const k of ["dial_timeout", "read_timeout", "write_timeout"] as const) {
        dur(transport, k, k, lines);
      }
      block.push(line(["transport", "fastcgi"], lines.length ? lines : undefined));
    } else {
      f.problems.add(
        transport.has("protocol") ? transport.at("protocol") : transport.path,
        `transport ${proto} has no form here`,
      );
    }
    transport.done(`the ${proto} transport`);
  }
  block.push(...handleResponseLines(f, ctx, from));
  if (f.bool("verbose_logs")) block.push(line(["verbose_logs"]));
  return { name: "reverse_proxy", args, block: block.length ? block : undefined };
}
