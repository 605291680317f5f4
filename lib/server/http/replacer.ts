/**
 * Placeholders (`{http.request.host}`, `{env.HOME}`, `{time.now.unix}`...): templates are
 * parsed once at provision time into literal parts and getter functions, so rendering a
 * template per request is a few property reads and string concatenations.
 *
 * @module
 */
import type { RequestContext } from "./context.ts";
import { splitHostPort } from "./context.ts";
import { statusText } from "../net/status.ts";
import { tlsClientGetter } from "./tls_client.ts";
import { requestProto } from "../module/listener.ts";
import { ipPrefix, parseIP } from "../net/ip.ts";
import { globalPlaceholder } from "../global_placeholders.ts";

/** Reads one placeholder's value for a request; undefined when it is unknown. */
export type Getter = (c: RequestContext) => string | undefined;

/** A parsed template. */
export interface Template {
  /** The rendered value when the template has no placeholders, else null. */
  readonly constant: string | null;
  /** Renders the template for a request. */
  render(c: RequestContext): string;
}

/** Standard base64 of bytes (`{http.request.body_base64}`). */
export function encodeBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

function stringify(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return JSON.stringify(v);
}

/** Go's duration string (`1.5ms`, `2.000123s`) for milliseconds. */
export function goDuration(ms: number): string {
  if (ms < 0.001) return `${Math.round(ms * 1e6)}ns`;
  if (ms < 1) return `${+(ms * 1000).toFixed(3)}µs`;
  if (ms < 1000) return `${+ms.toFixed(6)}ms`;
  return `${+(ms / 1000).toFixed(9)}s`;
}

/**
 * The port of a listener's address (`127.0.0.1:8080`, `[::1]:443`, `:80`); "" for a socket
 * path or an inherited descriptor.
 */
function localPort(address: string): string {
  if (/^(unix|unixgram|unixpacket|fd|fdgram)\//.test(address)) return "";
  return splitHostPort(address)[1];
}

/** Go's `strconv.Atoi` on a bit count: the number, or NaN. */
function atoi(s: string): number {
  return /^[+-]?\d+$/.test(s) ? Number(s) : NaN;
}

/**
 * `{http.request.remote.host/<v4>[,<v6>]}` (Caddy's remote IP prefix): the peer's network
 * keeping that many bits (`127.0.0.0/24`); the second count is for IPv6 peers. A peer that
 * is not an IP (a unix socket) reads as its remote host, a count out of range as "".
 */
function remotePrefix(spec: string): Getter {
  const comma = spec.indexOf(",");
  const v4 = atoi(comma < 0 ? spec : spec.slice(0, comma));
  const v6 = comma < 0 ? v4 : atoi(spec.slice(comma + 1));
  return (c) => {
    const host = c.remoteHost;
    if (parseIP(host) === null) return host;
    return ipPrefix(host, host.includes(":") ? v6 : v4) ?? "";
  };
}

/** The request body read for the placeholders (see `readBody`); "" before it was read. */
function bodyText(c: RequestContext): string {
  return c.bodyBytes === null ? "" : new TextDecoder().decode(c.bodyBytes);
}

function pathFile(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

const STATIC: Record<string, Getter> = {
  // Caddy's shutdown placeholders: set while a stopping server waits out `shutdown_delay`
  "http.shutting_down": (c) => String(c.server.shutdownAt !== undefined),
  "http.time_until_shutdown": (c) =>
    c.server.shutdownAt === undefined
      ? ""
      : goDuration(Math.max(0, c.server.shutdownAt - Date.now())),
  "http.request.method": (c) => c.method,
  "http.request.scheme": (c) => c.scheme,
  "http.request.proto": (c) => requestProto(c.info),
  "http.request.host": (c) => c.hostname,
  "http.request.port": (c) => splitHostPort(c.host)[1] || (c.scheme === "https" ? "443" : "80"),
  "http.request.hostport": (c) => c.host,
  "http.request.local.port": (c) => localPort(c.info.localAddress),
  "http.request.remote": (c) => {
    const h = c.remoteHost;
    return h.includes(":") ? `[${h}]:${c.remotePort}` : `${h}:${c.remotePort}`;
  },
  "http.request.remote.host": (c) => c.remoteHost,
  "http.request.remote.port": (c) => c.remotePort,
  "http.request.client_ip": (c) => c.clientIP,
  "http.request.uri": (c) => c.uri,
  "http.request.uri.path": (c) => c.path,
  "http.request.uri.path.file": (c) => pathFile(c.path),
  "http.request.uri.path.dir": (c) => c.path.slice(0, c.path.lastIndexOf("/") + 1),
  "http.request.uri.path.file.base": (c) => {
    const f = pathFile(c.path);
    const dot = f.lastIndexOf(".");
    return dot < 0 ? f : f.slice(0, dot);
  },
  "http.request.uri.path.file.ext": (c) => {
    const f = pathFile(c.path);
    const dot = f.lastIndexOf(".");
    return dot < 0 ? "" : f.slice(dot);
  },
  "http.request.uri.query": (c) => c.query,
  "http.request.body": bodyText,
  "http.request.body_base64": (c) => c.bodyBytes === null ? "" : encodeBase64(c.bodyBytes),
  "http.request.orig_method": (c) => c.origMethod,
  "http.request.orig_uri": (c) => c.origQuery ? `${c.origRawPath}?${c.origQuery}` : c.origRawPath,
  "http.request.orig_uri.path": (c) => c.origRawPath,
  "http.request.orig_uri.path.file": (c) => pathFile(c.origRawPath),
  "http.request.orig_uri.path.dir": (c) =>
    c.origRawPath.slice(0, c.origRawPath.lastIndexOf("/") + 1),
  "http.request.orig_uri.query": (c) => c.origQuery,
  "http.request.duration": (c) => goDuration(performance.now() - c.start),
  "http.request.duration_ms": (c) => String(performance.now() - c.start),
  "http.request.uuid": (c) => {
    let id = c.extra?.get("http.request.uuid");
    if (!id) c.setPlaceholder("http.request.uuid", id = crypto.randomUUID());
    return id;
  },
  "http.request.tls.version": (c) => c.info.tls ? String(c.info.tls.version ?? "") : undefined,
  "http.request.tls.cipher_suite": (c) =>
    c.info.tls ? String(c.info.tls.cipherSuite ?? "") : undefined,
  "http.request.tls.resumed": (c) => c.info.tls ? String(!!c.info.tls.resumed) : undefined,
  "http.request.tls.proto": (c) => c.info.tls ? c.info.tls.proto ?? "" : undefined,
  "http.request.tls.server_name": (c) => c.info.tls ? c.info.tls.serverName ?? "" : undefined,
  "http.error": (c) => c.error ? c.error.message : undefined,
  "http.error.status_code": (c) => c.error ? String(c.error.status) : undefined,
  "http.error.status_text": (c) => c.error ? statusText(c.error.status) : undefined,
  "http.error.message": (c) => c.error ? c.error.message : undefined,
  "http.error.trace": (c) => c.error ? c.error.trace : undefined,
  "http.error.id": (c) => c.error ? c.error.id : undefined,
  "http.reverse_proxy.upstream.address": (c) => c.proxy?.dial,
  // the address without its network (`tcp/`, `tcp4/`, `tcp6/`), as Caddy's DialInfo.Address
  "http.reverse_proxy.upstream.hostport": (c) => c.proxy?.dial.replace(/^tcp[46]?\//i, ""),
  "http.reverse_proxy.upstream.host": (c) => c.proxy?.host,
  "http.reverse_proxy.upstream.port": (c) => c.proxy?.port,
  "http.reverse_proxy.upstream.requests": (c) => c.proxy ? String(c.proxy.requests) : undefined,
  "http.reverse_proxy.upstream.max_requests": (c) =>
    c.proxy ? String(c.proxy.maxRequests) : undefined,
  "http.reverse_proxy.upstream.fails": (c) => c.proxy ? String(c.proxy.fails) : undefined,
  "http.reverse_proxy.upstream.latency": (c) =>
    c.proxy && c.proxy.latencyMs >= 0 ? `${c.proxy.latencyMs.toFixed(3)}ms` : undefined,
  "http.reverse_proxy.upstream.latency_ms": (c) =>
    c.proxy && c.proxy.latencyMs >= 0 ? c.proxy.latencyMs.toFixed(3) : undefined,
  "http.reverse_proxy.is_transport_error": (c) => c.proxy?.transportError ? "true" : undefined,
  "http.reverse_proxy.status_code": (c) =>
    c.proxy && c.proxy.status ? String(c.proxy.status) : undefined,
  "http.reverse_proxy.status_text": (c) =>
    c.proxy && c.proxy.status ? `${c.proxy.status} ${statusText(c.proxy.status)}` : undefined,
  "http.auth.user.id": (c) => c.userId || c.extra?.get("http.auth.user.id"),
};

/** The values of a header field in a field list, joined with "," (undefined when absent). */
function joinFields(fields: [string, string][] | undefined, name: string): string | undefined {
  if (!fields) return undefined;
  let out: string | undefined;
  for (const [k, v] of fields) if (k === name) out = out === undefined ? v : `${out},${v}`;
  return out;
}

function cookie(c: RequestContext, name: string): string | undefined {
  const h = c.headers.get("cookie");
  if (!h) return undefined;
  for (const part of h.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      let v = part.slice(eq + 1).trim();
      if (v.length > 1 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      return v;
    }
  }
  return undefined;
}

function queryParam(c: RequestContext, name: string): string {
  return new URLSearchParams(c.query).get(name) ?? "";
}

/**
 * The getter for one placeholder key, resolved once at provision time.
 *
 * @example
 * ```ts
 * import { getterFor } from "./replacer.ts";
 * const host = getterFor("http.request.host");
 * ```
 */
export function getterFor(key: string): Getter {
  if (key.startsWith("http.request.duration")) durationUsed = true;
  if (key === "http.request.body" || key === "http.request.body_base64") bodyGetters++;
  const fixed = STATIC[key] ?? globalPlaceholder(key);
  if (fixed) return fixed;
  const after = (p: string) => key.slice(p.length);
  if (key.startsWith("http.request.tls.client.")) return tlsClientGetter(key);
  if (key.startsWith("http.request.header.")) {
    const name = after("http.request.header.");
    return (c) => c.headers.get(name) ?? "";
  }
  if (key.startsWith("http.request.cookie.")) {
    const name = after("http.request.cookie.");
    return (c) => cookie(c, name) ?? "";
  }
  if (key.startsWith("http.request.uri.query.")) {
    const name = after("http.request.uri.query.");
    return (c) => queryParam(c, name);
  }
  if (key.startsWith("http.request.uri.path.")) {
    const n = Number(after("http.request.uri.path."));
    if (Number.isInteger(n) && n >= 0) {
      return (c) => c.path.split("/").filter((s) => s !== "")[n] ?? "";
    }
  }
  if (key.startsWith("http.request.remote.host/")) {
    return remotePrefix(after("http.request.remote.host/"));
  }
  if (key.startsWith("http.request.host.labels.")) {
    const n = Number(after("http.request.host.labels."));
    if (Number.isInteger(n) && n >= 0) {
      return (c) => {
        const labels = c.hostname.split(".");
        return labels[labels.length - 1 - n] ?? "";
      };
    }
  }
  if (key.startsWith("http.vars.")) {
    const name = after("http.vars.");
    // Caddy keeps the client IP in the vars (`{client_ip}` in a Gatehousefile)
    if (name === "client_ip") {
      return (c) => c.vars?.has(name) ? stringify(c.vars.get(name)) : c.clientIP;
    }
    // known even when unset, as in Caddy (a variable may be set in other requests): ""
    return (c) => stringify(c.vars?.get(name)) ?? "";
  }
  if (key.startsWith("http.response.header.")) {
    const name = after("http.response.header.");
    return (c) => c.respHeaders?.get(name) ?? "";
  }
  if (key.startsWith("http.reverse_proxy.header.")) {
    const name = after("http.reverse_proxy.header.").toLowerCase();
    return (c) => joinFields(c.proxy?.headers, name);
  }
  if (key.startsWith("http.intercept.header.")) {
    const name = after("http.intercept.header.").toLowerCase();
    return (c) => c.extra?.get(`http.intercept.header.${name}`);
  }
  // Run-time placeholders: regexp captures, map outputs, upstream info, file matcher results.
  return (c) => c.extra?.get(key);
}

type Part = string | Getter;

let durationUsed = false;

let bodyGetters = 0;

/**
 * Marks the templates compiled so far, for {@linkcode readsBodySince}: the routes ask it
 * around provisioning each handler and matcher set.
 */
export function bodyPlaceholderMark(): number {
  return bodyGetters;
}

/**
 * True when a template compiled since `mark` reads `{http.request.body}` or
 * `{http.request.body_base64}`; forgets those, so a handler holding routes (a subroute) does
 * not count the ones its own routes already answer for. Their placeholders read the body a
 * route's handler or matcher read first (`RequestContext.readBody`): templates render
 * synchronously, a body arrives in pieces.
 */
export function readsBodySince(mark: number): boolean {
  const used = bodyGetters > mark;
  bodyGetters = mark;
  return used;
}

/** True once any template uses `{http.request.duration*}` (request start times are then kept). */
export function durationPlaceholderUsed(): boolean {
  return durationUsed;
}

/**
 * Parses a template. Unknown placeholders render as `empty` (Caddy's `ReplaceAll`) or, with
 * `keepUnknown`, stay as written (Caddy's `ReplaceKnown`). `\{` and `\}` are literal braces.
 *
 * @example
 * ```ts
 * import { compileTemplate } from "./replacer.ts";
 * const t = compileTemplate("Hello from {http.request.host}");
 * ```
 */
export function compileTemplate(
  input: string,
  options: {
    keepUnknown?: boolean;
    empty?: string;
    /** Applied to every placeholder's value (e.g. glob escaping for the `file` matcher). */
    escape?: (value: string) => string;
  } = {},
): Template {
  const parts: Part[] = [];
  let lit = "";
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch === "\\" && (input[i + 1] === "{" || input[i + 1] === "}")) {
      lit += input[i + 1];
      i += 2;
      continue;
    }
    if (ch === "{") {
      const end = input.indexOf("}", i + 1);
      if (end < 0) {
        lit += input.slice(i);
        break;
      }
      const key = input.slice(i + 1, end);
      const plain = getterFor(key);
      const esc = options.escape;
      const get: Getter = esc
        ? (c) => {
          const v = plain(c);
          return v === undefined ? v : esc(v);
        }
        : plain;
      const raw = input.slice(i, end + 1);
      if (lit) parts.push(lit);
      lit = "";
      const empty = options.empty ?? "";
      parts.push(
        options.keepUnknown
          ? (c) => {
            const v = get(c);
            return v === undefined ? raw : v === "" ? empty : v;
          }
          : (c) => get(c) || empty,
      );
      i = end + 1;
      continue;
    }
    lit += ch;
    i++;
  }
  if (lit) parts.push(lit);
  if (parts.every((p) => typeof p === "string")) {
    const constant = (parts as string[]).join("");
    return { constant, render: () => constant };
  }
  if (parts.length === 1) {
    const g = parts[0] as Getter;
    return { constant: null, render: (c) => g(c)! };
  }
  return {
    constant: null,
    render(c) {
      let s = "";
      for (let j = 0; j < parts.length; j++) {
        const p = parts[j];
        s += typeof p === "string" ? p : p(c);
      }
      return s;
    },
  };
}

/** Renders a template string once (convenience for rarely used values). */
export function replaceAll(c: RequestContext, input: string, empty = ""): string {
  if (input.indexOf("{") < 0) return input;
  return compileTemplate(input, { empty }).render(c);
}

/** True when the string contains a placeholder. */
export function hasPlaceholder(input: string): boolean {
  return /\{[^}]+\}/.test(input);
}
