/**
 * What `reverse_proxy` sends upstream and back: the forwarded request's header fields
 * (hop-by-hop ones and those `Connection` names left out, `Host` the settled request host,
 * `X-Forwarded-For/Proto/Host` set, incoming ones kept only from a trusted peer: one in the
 * handler's `trusted_proxies`, or one the server trusts — its `trusted_proxies`, or a unix
 * socket peer with `trusted_proxies_unix`), and the client response's fields.
 *
 * @module
 */
import { asObject, checkFields, optObject } from "../../config.ts";
import type { RequestContext } from "../../context.ts";
import type { HttpHandler } from "../../handler.ts";
import {
  type HeaderOps,
  parseHeaderOps,
  parseResponseMatcher,
  type ResponseMatcher,
} from "../../header_ops.ts";
import { ipInRanges, type IPRange, parseIP } from "../../../net/ip.ts";
import { connectionNames, endToEnd, forwardedValue } from "./transport.ts";

/** A forwarded request's header fields and whether they carry a Content-Length. */
export interface Forwarded {
  fields: Iterable<[string, string]>;
  contentLength: boolean;
}

/** True when the request asks for a WebSocket. */
export function isWebSocket(c: RequestContext): boolean {
  return (c.headers.get("upgrade") ?? "").toLowerCase() === "websocket" &&
    (c.headers.get("connection") ?? "").toLowerCase().includes("upgrade");
}

/** The forwarded request's header fields, straight from the request headers. */
export function forwardedFields(
  c: RequestContext,
  trusted: readonly IPRange[],
): Forwarded & { fields: [string, string][] } {
  const hs = c.headers;
  const named = connectionNames(hs.get("connection"));
  const unix = c.info.remoteAddr.transport === "unix";
  const remote = c.remoteHost;
  let isTrusted = c.server.trustsPeer?.(c) ?? false;
  if (!isTrusted && !unix && trusted.length > 0) {
    const ip = parseIP(remote);
    isTrusted = ip !== null && ipInRanges(ip, trusted);
  }
  const fields: [string, string][] = [["host", c.host]];
  let contentLength = false;
  let xff: string | null = null;
  let xfp: string | null = null;
  let xfh: string | null = null;
  for (const pair of hs) {
    const k = pair[0];
    if (k.charCodeAt(0) === 120 /* x */) {
      if (k === "x-forwarded-for") {
        xff = xff === null ? pair[1] : `${xff}, ${pair[1]}`;
        continue;
      }
      if (k === "x-forwarded-proto") {
        xfp = pair[1];
        continue;
      }
      if (k === "x-forwarded-host") {
        xfh = pair[1];
        continue;
      }
    }
    // Host is the one settled request host (c.host), never a raw field.
    if (k === "host") continue;
    const v = forwardedValue(k, pair[1], named);
    if (v === null) continue;
    if (k === "content-length") {
      contentLength = true;
      // Repeated equal lengths (the listener refuses different ones) arrive joined as
      // "5, 5": one value goes upstream, as a parser that reads one number expects.
      const comma = v.indexOf(",");
      if (comma >= 0) {
        fields.push([k, v.slice(0, comma).trim()]);
        continue;
      }
    }
    fields.push(v === pair[1] ? pair : [k, v]);
  }
  // A unix socket peer has no address to add: untrusted, no X-Forwarded-* at all.
  if (unix && !isTrusted) return { fields, contentLength };
  if (unix) {
    if (xff) fields.push(["x-forwarded-for", xff]);
  } else {
    fields.push(["x-forwarded-for", isTrusted && xff ? `${xff}, ${remote}` : remote]);
  }
  fields.push(["x-forwarded-proto", isTrusted && xfp ? xfp : c.scheme]);
  fields.push(["x-forwarded-host", isTrusted && xfh ? xfh : c.host]);
  return { fields, contentLength };
}

/** The upstream's end-to-end response fields, plus `Server` when due. */
export function responseFields(c: RequestContext, raw: [string, string][]): [string, string][] {
  const out = endToEnd(raw);
  // With no headers waiting to be merged, the response is complete here.
  if (c.respHeaders === null) {
    if (c.serverHeader && !out.some((f) => f[0] === "server")) {
      out.push(["server", "Gatehouse"]);
    }
    c.headersFinal = true;
  }
  return out;
}

/** Decodes `headers` (`request`, `response` with `require`; `deferred` is implied). */
export function parseProxyHeaders(
  raw: unknown,
  where: string,
): { reqOps: HeaderOps; resOps: HeaderOps; resRequire: ResponseMatcher | null } {
  const cfg = raw === undefined || raw === null ? {} : asObject(raw, where);
  checkFields(cfg, ["request", "response"], where);
  const reqOps = parseHeaderOps(optObject(cfg, "request", where), `${where}.request`);
  const resRaw = optObject(cfg, "response", where);
  let resOps = parseHeaderOps(undefined, "");
  let resRequire: ResponseMatcher | null = null;
  if (resRaw) {
    const { require, deferred: _d, ...ops } = resRaw;
    resOps = parseHeaderOps(ops, `${where}.response`);
    if (require) {
      resRequire = parseResponseMatcher(asObject(require, where), `${where}.response.require`);
    }
  }
  return { reqOps, resOps, resRequire };
}

/** The method and URI of the upstream request (after `rewrite`; the request keeps its own). */
export interface UpstreamTarget {
  method: string;
  uri: string;
}

/** The upstream request's method and URI: the request's, or what `rewrite` makes them. */
export function upstreamTarget(c: RequestContext, rewrite: HttpHandler | null): UpstreamTarget {
  if (!rewrite) return { method: c.method, uri: c.uri };
  const saved = [c.method, c.rawPath, c.query] as const;
  let out: UpstreamTarget = { method: c.method, uri: c.uri };
  rewrite.serveHTTP(c, (r) => {
    out = { method: r.method, uri: r.uri };
    return new Response(null);
  });
  [c.method, c.rawPath, c.query] = saved;
  return out;
}
