/**
 * Transport pieces of `reverse_proxy` around the HTTP/1.1 client (h1client.ts): the errors
 * that decide retries and 504s, the hop-by-hop header rules, the WebSocket relay of the `deno`
 * listener engine, and `node:http` loading for active health checks over TLS. The transport's
 * settings are `transport_config.ts`.
 *
 * @module
 */
import type http from "node:http";
import type httpsType from "node:https";

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

/**
 * Settles once the client's exchange is over: the listener's `completed`, or the request
 * aborted (the client left). Deno settles `completed` only after a response went out, so a
 * client that leaves before the upstream answers is seen through the request's signal;
 * without it the upstream connection (or HTTP/2 stream) of every abandoned request stayed
 * open until the upstream answered, if ever.
 */
export function clientGone(request: Request, completed?: Promise<void>): Promise<unknown> {
  const signal = request.signal;
  if (signal.aborted) return Promise.resolve();
  const aborted = new Promise<void>((r) =>
    signal.addEventListener("abort", () => r(), { once: true })
  );
  return completed ? Promise.race([completed, aborted]) : aborted;
}

/**
 * True when a request's fields ask for `100 Continue` before its body (`Expect:
 * 100-continue`, names in lower case).
 *
 * @example
 * ```ts
 * import { expectsContinue } from "./transport.ts";
 * expectsContinue([["expect", "100-continue"]]); // true
 * ```
 */
export function expectsContinue(fields: Iterable<[string, string]>): boolean {
  for (const [k, v] of fields) {
    if (k === "expect" && v.split(",").some((t) => t.trim().toLowerCase() === "100-continue")) {
      return true;
    }
  }
  return false;
}

const HOP = [
  // Caddy's hopHeaders start with it: an upstream's HTTP/3 (or other) endpoint is no client's
  "alt-svc",
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  // h2c's upgrade settings: for the one connection (RFC 7540 section 3.2.1), even when the
  // client leaves it out of Connection
  "http2-settings",
];

const HOP_BY_HOP: ReadonlySet<string> = new Set(HOP);

/**
 * The protocols of a request's `Upgrade` field a proxy asks its upstream for: every one but
 * `h2c`, whose upgrade RFC 9113 (section 3.1) deprecates and which, relayed, would open an
 * HTTP/2 tunnel whose requests no route sees; null when none is left.
 *
 * @example
 * ```ts
 * import { relayedUpgrade } from "./transport.ts";
 * relayedUpgrade("h2c"); // null
 * relayedUpgrade("websocket"); // "websocket"
 * ```
 */
export function relayedUpgrade(value: string | null): string | null {
  if (value === null) return null;
  const kept = value.split(",").map((p) => p.trim()).filter((p) =>
    p !== "" && p.toLowerCase() !== "h2c"
  );
  return kept.length === 0 ? null : kept.join(", ");
}

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

/**
 * Relays a WebSocket: connects to the upstream first (so its subprotocol is known), then
 * upgrades the client connection and passes messages and closes both ways.
 */
export async function relayWebSocket(
  request: Request,
  url: string,
  headers: Headers,
  track?: (close: () => void) => () => void,
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
  const done = track?.(() => {
    for (const ws of [socket, upstream]) closeSafely(ws, 1000, "going away");
  });
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
  upstream.onclose = (e) => {
    done?.();
    closeSafely(socket, e.code, e.reason);
  };
  socket.onclose = (e) => {
    done?.();
    closeSafely(upstream, e.code, e.reason);
  };
  upstream.onerror = () => closeSafely(socket, 1000, "upstream error");
  socket.onerror = () => closeSafely(upstream, 1000, "client error");
  return response;
}

/**
 * Closes `ws` with the other side's close code and reason where the WebSocket API allows them
 * (1000 and 3000–4999, a reason of at most 123 bytes), else with 1000: `close` throws for any
 * other code (1001 going away, 1011...), and a throw from these event handlers would end the
 * process.
 */
function closeSafely(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState > WebSocket.OPEN) return;
  const allowed = code === 1000 || (code >= 3000 && code <= 4999);
  const short = new TextEncoder().encode(reason).length <= 123 ? reason : "";
  try {
    ws.close(allowed ? code : 1000, short);
  } catch {
    try {
      ws.close();
    } catch { /* closing already */ }
  }
}
