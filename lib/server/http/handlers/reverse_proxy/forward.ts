/**
 * What `reverse_proxy` sends upstream and back: the forwarded request's header fields
 * (hop-by-hop ones and those `Connection` names left out, `Host` the settled request host,
 * `X-Forwarded-For/Proto/Host` set, incoming ones kept only from a trusted peer: one in the
 * handler's `trusted_proxies`, or one the server trusts — its `trusted_proxies`, or a unix
 * socket peer with `trusted_proxies_unix`), and the client response's fields.
 *
 * @module
 */
import type { Raw } from "../../../config/decode.ts";
import type { RequestContext } from "../../context.ts";
import type { HttpHandler } from "../../handler.ts";
import {
  type HeaderOps,
  parseHeaderOps,
  parseResponseMatcher,
  type ResponseMatcher,
} from "../../header_ops.ts";
import { ipInRanges, type IPRange, parseIP } from "../../../net/ip.ts";
import type { ProxyHeadersConfig } from "./config.ts";
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

/** The header operations of decoded `headers` (`where` is its path, for template errors). */
export function proxyHeaderOps(
  c: ProxyHeadersConfig | undefined,
  where: string,
): { reqOps: HeaderOps; resOps: HeaderOps; resRequire: ResponseMatcher | null } {
  const reqOps = parseHeaderOps(c?.request, `${where}.request`);
  let resOps = parseHeaderOps(undefined, "");
  let resRequire: ResponseMatcher | null = null;
  if (c?.response) {
    const { require, deferred: _d, ...ops } = c.response;
    resOps = parseHeaderOps(ops, `${where}.response`);
    if (require) resRequire = parseResponseMatcher(require as Raw, `${where}.response.require`);
  }
  return { reqOps, resOps, resRequire };
}

/**
 * What goes upstream of one request: the method and URI (after `rewrite`; the request keeps
 * its own) and the protocol switch asked for. One per request, shared by its attempts.
 */
export interface Outgoing {
  /** The upstream request's method. */
  method: string;
  /** The upstream request's URI (path and query). */
  uri: string;
  /** A WebSocket the `deno` listener engine relays message by message. */
  ws: boolean;
  /** The protocols of `Upgrade` asked for upstream (the connection can be taken over), or null. */
  upgrade: string | null;
}

/** What goes upstream: the request's method and URI, or what `rewrite` makes them. */
export function outgoing(
  c: RequestContext,
  rewrite: HttpHandler | null,
  ws: boolean,
  upgrade: string | null,
): Outgoing {
  const out: Outgoing = { method: c.method, uri: c.uri, ws, upgrade };
  if (!rewrite) return out;
  const saved = [c.method, c.rawPath, c.query] as const;
  rewrite.serveHTTP(c, (r) => {
    out.method = r.method;
    out.uri = r.uri;
    return new Response(null);
  });
  [c.method, c.rawPath, c.query] = saved;
  return out;
}
