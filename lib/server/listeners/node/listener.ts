/**
 * The `node` listener engine: HTTP/1.1 on `node:http` and HTTP/2 on `node:http2` (over TLS by
 * ALPN, `h2` and `http/1.1` on one port; cleartext `h2c` with prior knowledge where the
 * listener's options allow it), with the same handler contract as `Deno.serve` (a web
 * `Request` in, a `Response` out). It exists for what `Deno.serve` does not give: the raw
 * connection of an `Upgrade` request (any protocol, not only WebSocket), the TLS session of a
 * request (version, cipher suite, resumption, SNI, ALPN, client certificates), the socket
 * (timeouts, header limit, listener wrappers) and HTTP/2 server push. It costs throughput
 * (about 2.5x the CPU per request of `Deno.serve` on the respond benchmark), so it is chosen
 * per server (`listener_engine`).
 *
 * Every connection comes through one `node:net` server (the front): listener wrappers run
 * there, then TLS (`node/tls.ts`), then the protocol: the ALPN result, or on
 * cleartext listeners with h2c the first bytes (the HTTP/2 preface), send it to the HTTP/1.1
 * server or to the HTTP/2 side (`node/h2.ts`).
 *
 * Node's modules load when the first such listener opens.
 *
 * @module
 */
import type http from "node:http";
import type net from "node:net";
import type tls from "node:tls";
import type { Duplex } from "node:stream";
import type {
  ConnectionOptions,
  RawUpgrade,
  ServeInfo,
  TlsCertificateSource,
} from "../../module/listener.ts";
import { DEFAULT_CONNECTION_OPTIONS } from "../../module/listener.ts";
import { peerOf, wrapConnection } from "./front.ts";
import { send, sendRaw, toRequest } from "./messages.ts";
import { applyServerTimeouts, armRequestTimers } from "./timeouts.ts";
import { nodeTls, tlsFacts } from "./tls.ts";
import { nodeH2, startsWithPreface } from "./h2.ts";
import { statusText } from "../../net/status.ts";
import { headAnswer } from "../head.ts";
import { tunnelOf, view } from "./streams.ts";
import { FIRST_BYTES_WAIT_MS, firstBytes, PLAIN_HTTP_PREFIX, triage } from "../plain_http.ts";

export { tlsFacts };

/** Where and how a node listener binds, and where its requests go. */
export interface NodeListenOptions {
  /** TCP host (empty for all interfaces) and port, or a unix socket path. */
  hostname?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /** Binds with SO_REUSEPORT (worker processes sharing the address). */
  reusePort?: boolean;
  /** Unix socket path. */
  path?: string;
  /** An inherited listening socket (descriptor number), adopted instead of binding one. */
  fd?: number;
  /**
   * When the listener terminates TLS: the certificate source to ask at each handshake (by SNI,
   * through `SNICallback`; clients without SNI get the answer for `""`).
   */
  tls?: { source: () => TlsCertificateSource };
  /** The listen address reported to handlers (`ServeInfo.localAddress`), once bound. */
  localAddress: () => string;
  /** Answers one request. */
  handler(request: Request, info: ServeInfo): Response | Promise<Response>;
  /**
   * The connection options in force (read at each new connection, so a reload that keeps the
   * socket applies new timeouts and wrappers to new connections); defaults when absent.
   */
  connection?: () => ConnectionOptions;
  /** Told when a connection's client certificate is refused (the connection is closed). */
  onClientRefused?(reason: string, remote: ServeInfo["remoteAddr"]): void;
}

/** A running node listener. */
export interface NodeHttpServer {
  /** The bound TCP port (0 for unix sockets). */
  readonly port: number;
  /** The bound TCP address (empty for unix sockets). */
  readonly host: string;
  /** Stops accepting, lets in-flight requests finish and closes idle connections. */
  shutdown(): Promise<void>;
  /** Resolves when every connection is closed after `shutdown`. */
  readonly finished: Promise<void>;
  /** TLS: certificates changed (the one for clients without SNI is refreshed). */
  certificatesChanged(): void;
  /** Connections open right now (TLS: handshakes completed), idle or busy. */
  readonly connections: number;
}

/** How long a connection accepted during shutdown may wait before sending its request (ms). */
const SHUTDOWN_IDLE_MS = 1000;

/**
 * Starts a node listener.
 *
 * @example
 * ```ts
 * import { serveNode } from "./listener.ts";
 * const s = await serveNode({
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   localAddress: () => "127.0.0.1:0",
 *   handler: () => new Response("hi"),
 * });
 * await s.shutdown();
 * ```
 */
export async function serveNode(o: NodeListenOptions): Promise<NodeHttpServer> {
  const scheme = o.tls ? "https" : "http";
  // Node's own limits would differ from the Deno engine's: no whole-request time limit (a long
  // upload or stream is not cut at 5 minutes) and Go's 1 MiB header limit, as Caddy.
  const limits = { requestTimeout: 0, maxHeaderSize: 1 << 20 };
  const conn = () => o.connection?.() ?? DEFAULT_CONNECTION_OPTIONS;
  const h1 = (await import("node:http")).default.createServer(limits);
  const secure = o.tls ? await nodeTls(o.tls.source) : undefined;
  let closing = false;
  let inFlight = 0;
  // Every open connection until its socket closes (for TLS, the TLS socket: the one requests
  // come on), and the open ones with no request in flight. Both forget a socket when it
  // closes, so a listener holds nothing of the connections that are gone.
  const open = new Set<net.Socket>();
  const idle = new Set<net.Socket>();
  // Peer addresses a listener wrapper (PROXY protocol) gave, by the socket HTTP is read from.
  const peers = new WeakMap<object, ServeInfo["remoteAddr"]>();
  // A connection's TLS session does not change: its facts are read once per connection.
  const sessions = new WeakMap<object, NonNullable<ServeInfo["tls"]>>();
  const info = (s: net.Socket | Duplex): ServeInfo => {
    const i: ServeInfo = {
      remoteAddr: peers.get(s) ?? peerOf(s as net.Socket),
      localAddress: o.localAddress(),
    };
    if (o.tls) {
      let facts = sessions.get(s);
      if (!facts) sessions.set(s, facts = tlsFacts(s as tls.TLSSocket));
      i.tls = { ...facts };
    }
    return i;
  };
  // A connection's client certificates are checked once, before its first request is served.
  const verdicts = new WeakMap<object, Promise<boolean>>();
  const admitted = (s: net.Socket | Duplex, facts: ServeInfo["tls"]): true | Promise<boolean> => {
    const auth = o.tls?.source().clientAuth?.(facts?.serverName ?? "");
    if (!auth) return true;
    let v = verdicts.get(s);
    if (!v) {
      v = auth.check(facts?.clientCertificates ?? []).then((why) => {
        if (why !== null) o.onClientRefused?.(why, peers.get(s) ?? peerOf(s as net.Socket));
        return why === null;
      }, () => false);
      verdicts.set(s, v);
    }
    return v;
  };
  const badRequest = (res: http.ServerResponse) => {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    res.end("400 Bad Request");
  };

  const onRequest = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    inFlight++;
    armRequestTimers(res, socket, conn());
    let settle!: () => void;
    const si = info(socket);
    si.completed = new Promise<void>((r) => (settle = r));
    res.on("close", () => {
      inFlight--;
      if (!socket.destroyed) {
        if (closing) socket.end();
        else idle.add(socket);
      }
      settle();
    });
    if (o.tls) {
      const ok = admitted(socket, si.tls);
      if (ok !== true && !(await ok)) {
        // refused client certificate: the connection ends without an answer
        socket.destroy();
        return;
      }
    }
    if (closing) res.setHeader("connection", "close");
    let request: Request | null;
    try {
      request = toRequest(req, scheme, o.localAddress(), true);
    } catch {
      request = null;
    }
    if (request === null) {
      badRequest(res);
      return;
    }
    let response: Response;
    try {
      response = await o.handler(request, si);
    } catch {
      response = new Response("500 Internal Server Error", { status: 500 });
    }
    if (closing && !res.headersSent) res.setHeader("connection", "close");
    // HEAD: the length the body would have had (node:http sends none of its own)
    if (req.method === "HEAD") response = await headAnswer(response);
    await send(res, response, req.method === "HEAD");
  };
  const onUpgrade = async (req: http.IncomingMessage, socket: net.Socket, head: Uint8Array) => {
    idle.delete(socket);
    socket.on("error", () => {});
    let request: Request | null;
    try {
      request = toRequest(req, scheme, o.localAddress(), false);
    } catch {
      request = null;
    }
    if (request === null) {
      // closed once written (sendRaw's reason: nobody reads this socket any more)
      socket.write("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      socket.destroySoon();
      return;
    }
    const si = info(socket);
    if (o.tls) {
      const ok = admitted(socket, si.tls);
      if (ok !== true && !(await ok)) {
        socket.destroy();
        return;
      }
    }
    let sent: RawUpgrade["sent"];
    const upgrade: RawUpgrade = {
      get accepted() {
        return sent !== undefined;
      },
      get sent() {
        return sent;
      },
      accept(status, headers) {
        if (sent) throw new Error("upgrade already accepted");
        sent = { status, headers };
        let text = `HTTP/1.1 ${status} ${statusText(status)}\r\n`;
        for (const [k, v] of headers) text += `${k}: ${v}\r\n`;
        socket.write(text + "\r\n");
        return tunnelOf(socket, view(head));
      },
    };
    si.upgrade = upgrade;
    let response: Response;
    try {
      response = await o.handler(request, si);
    } catch {
      response = new Response("500 Internal Server Error", { status: 500 });
    }
    if (!upgrade.accepted) await sendRaw(socket, response, req.method === "HEAD");
    else response.body?.cancel().catch(() => {});
  };
  const onClientError = (e: Error & { code?: string }, socket: net.Socket) => {
    if (!socket.writable) socket.destroy();
    else if (e.code === "HPE_HEADER_OVERFLOW") {
      socket.end("HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\r\n");
    } else if (e.code === "ERR_HTTP_REQUEST_TIMEOUT" || e.message === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.end("HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\r\n");
    } else socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
  };
  h1.on("request", onRequest);
  h1.on("upgrade", onUpgrade);
  h1.on("clientError", onClientError);
  // The HTTP/1.1 server does not listen itself (the front below accepts): it counts as
  // listening while open, so kept-alive connections stay, and its timeout checks run.
  Object.defineProperty(h1, "listening", { get: () => !closing });
  const h2 = await nodeH2({
    scheme,
    localAddress: o.localAddress,
    conn,
    info,
    admitted,
    handler: o.handler,
    busy: (started) => void (inFlight += started ? 1 : -1),
  });
  const opened = (s: net.Socket, http2: boolean) => {
    open.add(s);
    if (!http2) idle.add(s);
    s.once("close", () => {
      open.delete(s);
      idle.delete(s);
    });
    // Accepted while shutting down: its first request is answered (with `Connection: close`);
    // a client that sends none is closed after a moment.
    if (closing && !http2) setTimeout(() => idle.has(s) && s.end(), SHUTDOWN_IDLE_MS);
  };
  h1.on("connection", (s: net.Socket) => opened(s, false));
  /** A connection ready for HTTP: its TLS handshake (if any) is done. */
  const speak = (s: net.Socket | Duplex, http2: boolean) => {
    // protocols without h1: what does not start HTTP/2 is closed, as Caddy's listener does
    if (!http2 && conn().h1 === false) return void s.destroy();
    if (http2) {
      opened(s as net.Socket, true);
      h2.attach(s);
    } else h1.emit("connection", s);
  };
  secure?.server.on("secureConnection", (t: tls.TLSSocket) => speak(t, t.alpnProtocol === "h2"));
  /** A cleartext connection: HTTP/2 when h2c is on and it starts with the preface. */
  const cleartext = async (s: net.Socket, c: ConnectionOptions) => {
    if (!c.h2c) {
      speak(s, false);
      s.resume();
      return;
    }
    const wait = c.readHeaderTimeoutMs || c.readTimeoutMs || c.idleTimeoutMs;
    const http2 = await startsWithPreface(s, wait);
    if (http2 === null || closing) return void s.destroy();
    speak(s, http2);
    s.resume();
  };

  // as node's HTTP servers accept: half-open allowed (an upgraded tunnel's half close), no Nagle
  const front = (await import("node:net")).default.createServer({
    allowHalfOpen: true,
    noDelay: true,
  }, (raw: net.Socket) => {
    const c = conn();
    applyServerTimeouts(h1, c);
    // Under TLS the raw socket ends with the client's FIN, as node's TLS servers accept (half
    // open would leave it in CLOSE-WAIT once the TLS socket above it is gone).
    if (o.tls) raw.allowHalfOpen = false;
    if (!c.wrappers.length) {
      if (secure) {
        // plain HTTP to the HTTPS port gets Go's 400 (its first bytes are read and put back)
        firstBytes(raw, PLAIN_HTTP_PREFIX, FIRST_BYTES_WAIT_MS).then((first) => {
          if (closing) return void raw.destroy();
          if (triage(raw, first) !== "tls") return;
          secure.offer(c.alpn);
          secure.server.emit("connection", raw);
        });
      } else if (c.h2c) cleartext(raw, c);
      else h1.emit("connection", raw);
      return;
    }
    raw.on("error", () => {});
    const deadlineMs = c.readHeaderTimeoutMs || c.readTimeoutMs || undefined;
    wrapConnection(raw, c.wrappers, { tls: !!o.tls, deadlineMs }).then(async (w) => {
      if (!w || closing) return void w?.stream.destroy();
      if (secure) {
        const t = await secure.over(w.stream, w.serverName ?? "", c.alpn);
        if (!t || closing) return void w.stream.destroy();
        peers.set(t, w.remote);
        t.on("error", () => t.destroy());
        t.on("secure", () => {
          if (t.alpnProtocol !== "h2") return speak(t, false);
          opened(t, true);
          h2.attach(t); // the session reads it through a duplex (see h2.ts)
        });
      } else {
        peers.set(w.stream, w.remote);
        await cleartext(w.stream as net.Socket, c);
      }
    }, () => raw.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    const ready = () => {
      front.off("error", reject);
      resolve();
    };
    if (o.fd !== undefined) front.listen({ fd: o.fd }, ready);
    else if (o.path !== undefined) front.listen(o.path, ready);
    else {front.listen(
        { port: o.port ?? 0, host: o.hostname || undefined, reusePort: o.reusePort },
        ready,
      );}
  });
  applyServerTimeouts(h1, conn());
  h1.emit("listening"); // starts the server's timeout checks
  const address = front.address();
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  return {
    port: typeof address === "object" && address ? address.port : 0,
    host: typeof address === "object" && address ? address.address : "",
    get connections() {
      return open.size;
    },
    finished,
    certificatesChanged() {
      secure?.refresh().catch(() => {});
    },
    shutdown() {
      if (closing) return finished;
      closing = true;
      front.close(() => finish());
      h1.close(() => {});
      h2.shutdown();
      for (const s of idle) s.end();
      idle.clear();
      if (inFlight === 0) h1.closeIdleConnections?.();
      return Promise.resolve();
    },
  };
}
