/**
 * The `node` listener engine: an HTTP/1.1 server on `node:http` / `node:https` with the same
 * handler contract as `Deno.serve` (a web `Request` in, a `Response` out). It exists for the two
 * things `Deno.serve` does not give: the raw connection of an `Upgrade` request (any protocol,
 * not only WebSocket) and the TLS session of a request (version, cipher suite, resumption, SNI,
 * ALPN). It costs throughput (about 2.5x the CPU per request of `Deno.serve` on the respond
 * benchmark) and speaks HTTP/1.1 only, so it is chosen per server (`listener_engine`).
 *
 * Node's modules load when the first such listener opens.
 *
 * @module
 */
import type http from "node:http";
import type net from "node:net";
import type tls from "node:tls";
import type { Duplex } from "node:stream";
import type { ConnectionOptions, RawUpgrade, ServeInfo, TlsCertificateSource } from "./module.ts";
import { DEFAULT_CONNECTION_OPTIONS } from "./listeners/options.ts";
import { peerOf, wrapConnection } from "./listeners/node_front.ts";
import { send, sendRaw, toRequest } from "./listeners/node_messages.ts";
import { applyServerTimeouts, armRequestTimers } from "./listeners/node_timeouts.ts";
import { statusText } from "./http/status.ts";
import { tunnelOf, view } from "./node_streams.ts";

/** Where and how a node listener binds, and where its requests go. */
export interface NodeListenOptions {
  /** TCP host (empty for all interfaces) and port, or a unix socket path. */
  hostname?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
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

/** IANA cipher suite numbers by OpenSSL and IANA name (TLS 1.3 and the usual TLS 1.2 ones). */
const CIPHER_SUITES: Record<string, number> = {
  TLS_AES_128_GCM_SHA256: 0x1301,
  TLS_AES_256_GCM_SHA384: 0x1302,
  TLS_CHACHA20_POLY1305_SHA256: 0x1303,
  "ECDHE-ECDSA-AES128-GCM-SHA256": 0xc02b,
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 0xc02b,
  "ECDHE-ECDSA-AES256-GCM-SHA384": 0xc02c,
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 0xc02c,
  "ECDHE-RSA-AES128-GCM-SHA256": 0xc02f,
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 0xc02f,
  "ECDHE-RSA-AES256-GCM-SHA384": 0xc030,
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 0xc030,
  "ECDHE-RSA-CHACHA20-POLY1305": 0xcca8,
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 0xcca8,
  "ECDHE-ECDSA-CHACHA20-POLY1305": 0xcca9,
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 0xcca9,
};

const TLS_VERSIONS: Record<string, number> = {
  "TLSv1": 0x0301,
  "TLSv1.1": 0x0302,
  "TLSv1.2": 0x0303,
  "TLSv1.3": 0x0304,
};

/**
 * The TLS facts of a node TLS socket, in the numbers Go's `tls.ConnectionState` (and so Caddy's
 * logs) use: version 772 is TLS 1.3, cipher suite 4866 is TLS_AES_256_GCM_SHA384.
 *
 * @example
 * ```ts
 * import { tlsFacts } from "./node_listener.ts";
 * // tlsFacts(request.socket) → { version: 772, cipherSuite: 4866, resumed: false, ... }
 * ```
 */
export function tlsFacts(s: tls.TLSSocket): NonNullable<ServeInfo["tls"]> {
  const cipher = s.getCipher?.();
  const name = cipher?.standardName ?? cipher?.name ?? "";
  const sni = (s as unknown as { servername?: string | false }).servername;
  const facts: NonNullable<ServeInfo["tls"]> = {
    version: TLS_VERSIONS[s.getProtocol?.() ?? ""] ?? 0,
    cipherSuite: CIPHER_SUITES[name] ?? CIPHER_SUITES[cipher?.name ?? ""] ?? 0,
    resumed: !!s.isSessionReused?.(),
    proto: typeof s.alpnProtocol === "string" ? s.alpnProtocol : "",
    serverName: typeof sni === "string" ? sni : "",
  };
  const chain = peerChain(s);
  if (chain.length) facts.clientCertificates = chain;
  return facts;
}

/** The certificates a TLS peer sent, leaf first (DER). */
function peerChain(s: tls.TLSSocket): Uint8Array[] {
  const out: Uint8Array[] = [];
  let c: tls.DetailedPeerCertificate | undefined;
  try {
    c = s.getPeerCertificate?.(true) as tls.DetailedPeerCertificate | undefined;
  } catch {
    return out;
  }
  const seen = new Set<string>();
  while (c && c.raw && c.raw.length) {
    const der = view(c.raw);
    const key = `${der.length}:${c.fingerprint256 ?? ""}`;
    if (seen.has(key)) break;
    seen.add(key);
    out.push(der.slice());
    c = c.issuerCertificate;
  }
  return out;
}

/**
 * Starts a node listener.
 *
 * @example
 * ```ts
 * import { serveNode } from "./node_listener.ts";
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
  let server: http.Server;
  let refreshDefault: (() => Promise<void>) | undefined;
  /**
   * TLS over a stream the listener wrappers handed on (the https server's settings), with the
   * certificate for `serverName` looked up first: Deno's TLS over a stream cannot wait for an
   * asynchronous SNI callback. Null when there is no certificate for the name.
   */
  let startTls:
    | ((stream: net.Socket | Duplex, serverName: string) => Promise<tls.TLSSocket | null>)
    | undefined;
  if (o.tls) {
    const https = (await import("node:https")).default;
    const nodeTls = (await import("node:tls")).default;
    const source = o.tls.source;
    // Contexts are reused while the certificate is the same one.
    const contexts = new Map<string, tls.SecureContext>();
    const contextOf = (c: { cert: string; key: string }) => {
      let ctx = contexts.get(c.cert);
      if (!ctx) {
        if (contexts.size > 1000) contexts.clear();
        ctx = nodeTls.createSecureContext({ cert: c.cert, key: c.key });
        contexts.set(c.cert, ctx);
      }
      return ctx;
    };
    const sniCallback = (name: string, cb: (e: Error | null, ctx?: tls.SecureContext) => void) => {
      source().getCertificate(name.toLowerCase()).then(
        (c) => c ? cb(null, contextOf(c)) : cb(new Error(`no certificate for ${name}`)),
        (e) => cb(e as Error),
      );
    };
    // One certificate for every name (see `fixedCertificate`): the server's own context answers
    // every handshake and no SNI callback runs. Deno's TLS server reads the callback per
    // connection (`_SNICallback`); the per-handshake path costs ~10% more CPU per handshake and
    // ~100 MiB more resident under a handshake load (measured in bench/http).
    const fixedOf = async () => {
      const s = source();
      if (s.requestsClientCertificates) return null; // client checks follow the SNI
      return (await s.fixedCertificate?.().catch(() => null)) ?? null;
    };
    const fixed = await fixedOf();
    const first = fixed ?? await source().getCertificate("");
    const tlsOptions = { ALPNProtocols: ["http/1.1"], SNICallback: sniCallback };
    const https_ = https.createServer({
      ...limits,
      // asked per server below; verified by the connection policy's check, not by OpenSSL
      requestCert: !!source().requestsClientCertificates,
      rejectUnauthorized: false,
      ...(first ? { cert: first.cert, key: first.key } : {}),
      ...tlsOptions,
    });
    const slot = https_ as unknown as { _SNICallback?: unknown };
    const sniSwitch = "_SNICallback" in https_;
    if (sniSwitch && fixed) slot._SNICallback = null;
    let last = first?.cert;
    refreshDefault = async () => {
      // a reload may start or stop authenticating clients: new connections follow it
      (https_ as unknown as { requestCert: boolean }).requestCert = !!source()
        .requestsClientCertificates;
      const one = await fixedOf();
      const c = one ?? await source().getCertificate("").catch(() => null);
      if (c && c.cert !== last) {
        last = c.cert;
        https_.setSecureContext({ cert: c.cert, key: c.key });
      }
      if (sniSwitch) slot._SNICallback = one ? null : sniCallback;
    };
    startTls = async (stream, serverName) => {
      const c = await source().getCertificate(serverName).catch(() => null);
      if (!c) return null;
      const secureContext = contextOf(c);
      return new nodeTls.TLSSocket(stream as net.Socket, {
        isServer: true,
        ...tlsOptions,
        requestCert: !!source().requestsClientCertificates,
        rejectUnauthorized: false,
        secureContext,
        SNICallback: (_name: string, cb: (e: Error | null, ctx?: tls.SecureContext) => void) =>
          cb(null, secureContext),
      });
    };
    server = https_;
  } else {
    const nodeHttp = (await import("node:http")).default;
    server = nodeHttp.createServer(limits);
  }
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
  const sessions = new WeakMap<net.Socket, NonNullable<ServeInfo["tls"]>>();
  const info = (s: net.Socket): ServeInfo => {
    const i: ServeInfo = { remoteAddr: peers.get(s) ?? peerOf(s), localAddress: o.localAddress() };
    if (o.tls) {
      let facts = sessions.get(s);
      if (!facts) sessions.set(s, facts = tlsFacts(s as tls.TLSSocket));
      i.tls = { ...facts };
    }
    return i;
  };
  // A connection's client certificates are checked once, before its first request is served.
  const verdicts = new WeakMap<net.Socket, Promise<boolean>>();
  const admitted = (s: net.Socket, facts: ServeInfo["tls"]): true | Promise<boolean> => {
    const auth = o.tls?.source().clientAuth?.(facts?.serverName ?? "");
    if (!auth) return true;
    let v = verdicts.get(s);
    if (!v) {
      v = auth.check(facts?.clientCertificates ?? []).then((why) => {
        if (why !== null) o.onClientRefused?.(why, peers.get(s) ?? peerOf(s));
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
      socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
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
  // TLS sockets from the wrapper path speak HTTP through a plain server with the same handlers.
  const tlsInner = startTls ? (await import("node:http")).default.createServer(limits) : undefined;
  const servers = tlsInner ? [server, tlsInner] : [server];
  for (const s of servers) {
    s.on("request", onRequest);
    s.on("upgrade", onUpgrade);
    s.on("clientError", onClientError);
    // The servers do not listen themselves (the front below accepts): they count as listening
    // while open, so kept-alive connections stay, and their timeout checks run.
    Object.defineProperty(s, "listening", { get: () => !closing });
  }
  const opened = (s: net.Socket) => {
    open.add(s);
    idle.add(s);
    s.once("close", () => {
      open.delete(s);
      idle.delete(s);
    });
    // Accepted while shutting down: its first request is answered (with `Connection: close`);
    // a client that sends none is closed after a moment.
    if (closing) setTimeout(() => idle.has(s) && s.end(), SHUTDOWN_IDLE_MS);
  };
  server.on(o.tls ? "secureConnection" : "connection", opened);
  tlsInner?.on("connection", opened);

  // as node's HTTP servers accept: half-open allowed (an upgraded tunnel's half close), no Nagle
  const front = (await import("node:net")).default.createServer({
    allowHalfOpen: true,
    noDelay: true,
  }, (raw: net.Socket) => {
    const c = conn();
    for (const s of servers) applyServerTimeouts(s, c);
    // Under TLS the raw socket ends with the client's FIN, as node's TLS servers accept (half
    // open would leave it in CLOSE-WAIT once the TLS socket above it is gone).
    if (o.tls) raw.allowHalfOpen = false;
    if (!c.wrappers.length) {
      server.emit("connection", raw);
      return;
    }
    raw.on("error", () => {});
    const deadlineMs = c.readHeaderTimeoutMs || c.readTimeoutMs || undefined;
    wrapConnection(raw, c.wrappers, { tls: !!o.tls, deadlineMs }).then(async (w) => {
      if (!w || closing) return void w?.stream.destroy();
      if (startTls && tlsInner) {
        const t = await startTls(w.stream, w.serverName ?? "");
        if (!t || closing) return void w.stream.destroy();
        peers.set(t, w.remote);
        t.on("error", () => t.destroy());
        t.on("secure", () => tlsInner.emit("connection", t));
      } else {
        peers.set(w.stream, w.remote);
        server.emit("connection", w.stream);
        w.stream.resume();
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
    else front.listen(o.port ?? 0, o.hostname || undefined, ready);
  });
  for (const s of servers) {
    applyServerTimeouts(s, conn());
    s.emit("listening"); // starts the server's timeout checks
  }
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
      refreshDefault?.().catch(() => {});
    },
    shutdown() {
      if (closing) return finished;
      closing = true;
      front.close(() => finish());
      for (const s of servers) s.close(() => {});
      for (const s of idle) s.end();
      idle.clear();
      if (inFlight === 0) server.closeIdleConnections?.();
      return Promise.resolve();
    },
  };
}
