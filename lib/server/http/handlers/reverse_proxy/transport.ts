/**
 * The HTTP transport of `reverse_proxy`: one upstream round trip over `node:http` (keep-alive
 * pooled), which, unlike `fetch`, sends the Host header we choose, adds no headers of its own
 * and passes compressed bodies through untouched. Bodies stream both ways. Also the
 * hop-by-hop header rules and the WebSocket relay.
 *
 * @module
 */
import type http from "node:http";
import type httpsType from "node:https";
import type { Tunnel } from "../../../module.ts";
import { tunnelOf, view } from "../../../node_streams.ts";
import { splitDial } from "./upstreams.ts";

let nodeHttp: typeof http;
let nodeHttps: typeof httpsType;

/** Loads `node:http` and `node:https` on first use (TLS upstreams, active health checks). */
export async function loadNodeHttp(): Promise<{ http: typeof http; https: typeof httpsType }> {
  nodeHttp ??= (await import("node:http")).default;
  nodeHttps ??= (await import("node:https")).default;
  return { http: nodeHttp, https: nodeHttps };
}

/** A failure to connect: safe to retry on another upstream. */
export class DialError extends Error {
  /** Stable code. */
  readonly code = "dial";
}

/** The upstream took too long (504). */
export class UpstreamTimeout extends Error {
  /** Stable code. */
  readonly code = "timeout";
}

/** Transport settings (`transport` with `protocol: "http"`). */
export interface TransportOptions {
  /** Use TLS to the upstream. */
  tls: boolean;
  /** Skip certificate verification. */
  insecure: boolean;
  /** SNI / verification name. */
  serverName?: string;
  /** Connect timeout (ms). */
  dialTimeout: number;
  /** Time to wait for response headers (ms, 0 = none). */
  responseHeaderTimeout: number;
}

/** A keep-alive connection pool for one proxy handler. */
export async function makeAgent(o: TransportOptions): Promise<http.Agent> {
  const { http, https } = await loadNodeHttp();
  return o.tls
    ? new https.Agent({
      keepAlive: true,
      rejectUnauthorized: !o.insecure,
      servername: o.serverName,
    })
    : new http.Agent({ keepAlive: true });
}

const HOP = [
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

const HOP_BY_HOP: ReadonlySet<string> = new Set(HOP);

/**
 * The header names a `Connection` value lists (lower case); null when there is none.
 *
 * @example
 * ```ts
 * import { connectionNames } from "./transport.ts";
 * connectionNames("keep-alive, X-Hop"); // Set { "keep-alive", "x-hop" }
 * ```
 */
export function connectionNames(value: string | null): Set<string> | null {
  if (!value) return null;
  let named: Set<string> | null = null;
  for (const n of value.split(",")) {
    const t = n.trim().toLowerCase();
    if (t) (named ??= new Set()).add(t);
  }
  return named;
}

/**
 * What a proxy forwards of one header (name in lower case): its value; `trailers` for a `Te`
 * that asks for them; null for other hop-by-hop headers and those `Connection` names.
 */
export function forwardedValue(
  name: string,
  value: string,
  named: Set<string> | null,
): string | null {
  if (named !== null && named.has(name)) return null;
  if (!HOP_BY_HOP.has(name)) return value;
  if (name === "te" && value.split(",").some((t) => t.trim().toLowerCase() === "trailers")) {
    return "trailers";
  }
  return null;
}

/** The end-to-end fields of a header list (names in lower case): hop-by-hop ones removed. */
export function endToEnd(fields: Iterable<[string, string]>): [string, string][] {
  const list = [...fields];
  let connection: string | null = null;
  for (const [k, v] of list) {
    if (k === "connection") connection = connection === null ? v : `${connection}, ${v}`;
  }
  const named = connectionNames(connection);
  const out: [string, string][] = [];
  for (const pair of list) {
    const v = forwardedValue(pair[0], pair[1], named);
    if (v === pair[1]) out.push(pair);
    else if (v !== null) out.push([pair[0], v]);
  }
  return out;
}

/** The result of a round trip. */
export interface UpstreamResponse {
  /** Status code. */
  status: number;
  /** Response headers. */
  headers: Headers;
  /** Body: a stream, the whole body for small ones, or null for no body. */
  body: ReadableStream<Uint8Array> | Uint8Array | null;
  /** After `101 Switching Protocols`: the connection, for the caller to relay or close. */
  tunnel?: Tunnel;
}

function nodeTarget(dial: string): { host?: string; port?: number; socketPath?: string } {
  if (dial.startsWith("unix/")) return { socketPath: dial.slice(5) };
  const { host, port } = splitDial(dial);
  return { host, port: port ? Number(port) : 80 };
}

function nodeHeaders(h: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of h) {
    if (k === "set-cookie") continue;
    out[k] = v;
  }
  const cookies = h.getSetCookie();
  if (cookies.length) out["set-cookie"] = cookies;
  return out;
}

function toWeb(res: http.IncomingMessage, onDone: () => void): ReadableStream<Uint8Array> {
  let finished = false;
  const done = () => {
    if (!finished) {
      finished = true;
      onDone();
    }
  };
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      res.on("data", (d: Uint8Array) => {
        ctl.enqueue(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
        if ((ctl.desiredSize ?? 1) <= 0) res.pause();
      });
      res.on("end", () => {
        done();
        try {
          ctl.close();
        } catch { /* cancelled */ }
      });
      res.on("error", (e) => {
        done();
        try {
          ctl.error(e);
        } catch { /* cancelled */ }
      });
      res.on("close", done);
    },
    pull() {
      res.resume();
    },
    cancel() {
      res.destroy();
      done();
    },
  }, { highWaterMark: 4 });
}

const DIAL_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENOENT",
]);

/**
 * Sends one request upstream and resolves when the response headers arrive. `onDone` runs
 * once the response body ended (or failed), for in-flight request counting.
 */
export function roundTrip(
  agent: http.Agent,
  o: TransportOptions,
  dial: string,
  method: string,
  path: string,
  headers: Headers,
  body: ReadableStream<Uint8Array> | null,
  onDone: () => void,
): Promise<UpstreamResponse> {
  return new Promise<UpstreamResponse>((resolve, reject) => {
    let settled = false;
    let connected = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      onDone();
      reject(e);
    };
    const mod = o.tls ? nodeHttps : nodeHttp;
    const req = mod.request({
      ...nodeTarget(dial),
      method,
      path,
      headers: nodeHeaders(headers),
      agent,
      setHost: false,
    } as http.RequestOptions, (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      clearTimeout(headerTimer);
      const h = new Headers();
      const raw = res.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) h.append(raw[i], raw[i + 1]);
      const noBody = method === "HEAD" || res.statusCode === 204 || res.statusCode === 304;
      if (noBody) {
        res.resume();
        res.on("end", onDone);
        res.on("close", onDone);
      }
      resolve({
        status: res.statusCode ?? 502,
        headers: h,
        body: noBody ? null : toWeb(res, onDone),
      });
    });
    const dialTimer = o.dialTimeout > 0
      ? setTimeout(() => {
        if (!connected) {
          req.destroy();
          fail(new DialError(`dial ${dial}: timeout`));
        }
      }, o.dialTimeout)
      : undefined;
    const headerTimer = o.responseHeaderTimeout > 0
      ? setTimeout(() => {
        req.destroy();
        fail(new UpstreamTimeout(`upstream ${dial}: no response headers in time`));
      }, o.responseHeaderTimeout)
      : undefined;
    req.on("upgrade", (res, socket, head: Uint8Array) => {
      clearTimeout(headerTimer);
      const h = new Headers();
      const raw = res.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) h.append(raw[i], raw[i + 1]);
      socket.on("error", () => {});
      if (settled) {
        socket.destroy();
        return;
      }
      settled = true;
      onDone();
      resolve({
        status: res.statusCode ?? 101,
        headers: h,
        body: null,
        tunnel: tunnelOf(socket, view(head)),
      });
    });
    req.on("socket", (s) => {
      const onConnect = () => {
        connected = true;
        clearTimeout(dialTimer);
      };
      if ((s as unknown as { connecting?: boolean }).connecting) s.once("connect", onConnect);
      else onConnect();
    });
    req.on("error", (e: Error & { code?: string }) => {
      clearTimeout(dialTimer);
      clearTimeout(headerTimer);
      if (!connected && DIAL_CODES.has(e.code ?? "")) {
        fail(new DialError(`dial ${dial}: ${e.message}`));
      } else fail(e);
    });
    req.on("close", () => {
      clearTimeout(dialTimer);
      clearTimeout(headerTimer);
    });
    if (!body) {
      req.end();
      return;
    }
    (async () => {
      const reader = body.getReader();
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!req.write(value)) await new Promise<void>((r) => req.once("drain", () => r()));
        }
        req.end();
      } catch (e) {
        req.destroy();
        fail(e);
      }
    })();
  });
}

/**
 * Relays a WebSocket: connects to the upstream first (so its subprotocol is known), then
 * upgrades the client connection and passes messages and closes both ways.
 */
export async function relayWebSocket(
  request: Request,
  url: string,
  headers: Headers,
): Promise<Response> {
  const protocols = (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",").map((s) => s.trim()).filter(Boolean);
  const fwd = new Headers(headers);
  for (const k of [...fwd.keys()]) if (k.startsWith("sec-websocket-")) fwd.delete(k);
  fwd.delete("host");
  const upstream = new WebSocket(url, { protocols, headers: fwd } as unknown as string[]);
  upstream.binaryType = "arraybuffer";
  await new Promise<void>((resolve, reject) => {
    upstream.onopen = () => resolve();
    upstream.onerror = () => reject(new DialError(`websocket dial ${url} failed`));
  });
  const { socket, response } = Deno.upgradeWebSocket(request, {
    protocol: upstream.protocol || undefined,
  });
  socket.binaryType = "arraybuffer";
  const pending: (string | ArrayBuffer)[] = [];
  socket.onopen = () => {
    for (const m of pending) socket.send(m);
    pending.length = 0;
  };
  upstream.onmessage = (e) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(e.data);
    else if (socket.readyState === WebSocket.CONNECTING) pending.push(e.data);
  };
  socket.onmessage = (e) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(e.data);
  };
  const closeCode = (code: number) => (code === 1005 || code === 1006 ? 1000 : code);
  upstream.onclose = (e) => {
    if (socket.readyState <= WebSocket.OPEN) socket.close(closeCode(e.code), e.reason);
  };
  socket.onclose = (e) => {
    if (upstream.readyState <= WebSocket.OPEN) upstream.close(closeCode(e.code), e.reason);
  };
  upstream.onerror = () => {
    if (socket.readyState <= WebSocket.OPEN) socket.close(1011, "upstream error");
  };
  socket.onerror = () => {
    if (upstream.readyState <= WebSocket.OPEN) upstream.close(1011, "client error");
  };
  return response;
}
