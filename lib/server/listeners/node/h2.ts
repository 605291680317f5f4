/**
 * HTTP/2 on the node listener engine (`node:http2`): the sessions of the connections that
 * negotiated `h2` by ALPN or started with the HTTP/2 preface on a listener with `h2c`. Each
 * stream is answered by the listener's handler like an HTTP/1.1 request, with the limits
 * Go's HTTP/2 server (and so Caddy) applies:
 *
 * - `idle_timeout`: a session with no open stream for that long gets a GOAWAY and closes;
 * - `read_timeout`: per stream, the request body read fails when it has not ended in time;
 * - `write_timeout`: per stream, a response not finished in time is reset (INTERNAL_ERROR);
 * - `max_header_bytes`: advertised as SETTINGS_MAX_HEADER_LIST_SIZE (plus 320, as Go); a
 *   longer header list is answered `431`;
 * - at most 250 concurrent streams per session (Go's default);
 * - floods bounded per connection before nghttp2 sees them (streams reset before their answer,
 *   CONTINUATION and SETTINGS floods: GOAWAY ENHANCE_YOUR_CALM; `h2_frames.ts`).
 *
 * Server push: a request on a stream the client lets the server push on gets `ServeInfo.push`,
 * which sends a PUSH_PROMISE and serves the promised request through the same handler on the
 * pushed stream (pushed requests cannot push themselves).
 *
 * @module
 */
import type http2 from "node:http2";
import type net from "node:net";
import type { Duplex } from "node:stream";
import type { ConnectionOptions, ServeInfo } from "../../module/listener.ts";
import { headerListSize, sendH2, toH2Request } from "./h2_messages.ts";
import { h2Front } from "./h2_frames.ts";
import { headAnswer } from "../head.ts";

/** What the HTTP/2 side needs of its listener. */
export interface H2Host {
  /** `https` for TLS listeners, else `http`. */
  scheme: string;
  /** The listen address (fallback authority and `ServeInfo.localAddress`). */
  localAddress(): string;
  /** The connection options in force. */
  conn(): ConnectionOptions;
  /** A new ServeInfo for a request on `socket` (peer address, TLS facts). */
  info(socket: net.Socket | Duplex): ServeInfo;
  /** Whether the connection's client certificate is accepted (TLS client authentication). */
  admitted(socket: net.Socket | Duplex, facts: ServeInfo["tls"]): true | Promise<boolean>;
  /** Answers one request. */
  handler(request: Request, info: ServeInfo): Response | Promise<Response>;
  /** A request started (true) or ended (false): graceful shutdown waits for them. */
  busy(started: boolean): void;
}

/** The HTTP/2 side of a node listener. */
export interface H2Side {
  /**
   * Starts an HTTP/2 session on a connection (TLS with ALPN `h2`, or h2c). The session reads it
   * through the frame front (`h2_frames.ts`: the client's GOAWAY frames kept out, floods
   * bounded), which is also how Deno's HTTP/2 reads a TLS socket that runs over another duplex.
   */
  attach(socket: net.Socket | Duplex): void;
  /** Sends every session a GOAWAY; each closes when its streams are done. */
  shutdown(): void;
}

/** Whether the client of a session sent GOAWAY (the frame itself never reaches nghttp2). */
interface PeerGoaway {
  sent: boolean;
  session?: http2.ServerHttp2Session;
}

interface SessionState {
  socket: net.Socket | Duplex;
  /** The client sent GOAWAY: no more pushed streams on this session. */
  peerGoaway: PeerGoaway;
  opened(): void;
  closed(): void;
}

/** Go's HTTP/2 default for concurrent streams per connection. */
const MAX_STREAMS = 250;
/** Go adds this to `max_header_bytes` for the HTTP/2 header list limit (10 fields of 32). */
const HEADER_LIST_SLACK = 320;

/** How long a session accepted during shutdown may wait before opening its first stream (ms). */
const SHUTDOWN_IDLE_MS = 1000;

const TOO_LARGE = "<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>";

/** The HTTP/2 preface a client with prior knowledge starts with (RFC 9113 3.4). */
const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * Reads the first bytes of a plain connection (put back afterwards) and tells whether it starts
 * with the HTTP/2 preface; false for anything else, null when the client sent nothing in
 * `waitMs` or closed.
 *
 * @example
 * ```ts ignore
 * if (await startsWithPreface(socket, 10_000)) h2.attach(socket); else h1.emit("connection", socket);
 * ```
 */
export function startsWithPreface(socket: net.Socket, waitMs: number): Promise<boolean | null> {
  return new Promise((resolve) => {
    let got = new Uint8Array(0);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (v: boolean | null) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
      socket.pause();
      if (got.length) socket.unshift(got);
      resolve(v);
    };
    const onData = (chunk: Uint8Array) => {
      const next = new Uint8Array(got.length + chunk.length);
      next.set(got);
      next.set(chunk, got.length);
      got = next;
      const n = Math.min(got.length, PREFACE.length);
      for (let i = 0; i < n; i++) if (got[i] !== PREFACE[i]) return done(false);
      if (got.length >= PREFACE.length) done(true);
    };
    const onEnd = () => done(null);
    if (waitMs > 0) timer = setTimeout(() => done(null), waitMs);
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.resume();
  });
}

/**
 * Starts the HTTP/2 side of a node listener.
 *
 * @example
 * ```ts ignore
 * const h2 = await nodeH2(host);
 * tlsServer.on("secureConnection", (s) => s.alpnProtocol === "h2" && h2.attach(s));
 * ```
 */
export async function nodeH2(host: H2Host): Promise<H2Side> {
  const nodeHttp2 = (await import("node:http2")).default;
  const nodeStream = await import("node:stream");
  const server = nodeHttp2.createServer({ settings: { maxConcurrentStreams: MAX_STREAMS } });
  const sessions = new Set<http2.ServerHttp2Session>();
  /** Per session: its connection, and the count of its open streams (for the idle timer). */
  const states = new WeakMap<http2.Http2Session, SessionState>();
  let attaching: net.Socket | Duplex | undefined;
  let attachingGoaway: PeerGoaway = { sent: false };
  let closing = false;
  let listLimit = 0;

  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    attachingGoaway.session = session;
    let open = 0;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      const ms = host.conn().idleTimeoutMs;
      clearTimeout(idle);
      if (ms > 0 && open === 0) idle = setTimeout(() => session.close(), ms);
    };
    states.set(session, {
      socket: attaching ?? (session.socket as net.Socket),
      peerGoaway: attachingGoaway,
      opened() {
        open++;
        clearTimeout(idle);
        // accepted while shutting down: its first stream is answered, then the session ends
        if (closing) session.close();
      },
      closed() {
        if (--open === 0) arm();
      },
    });
    session.on("error", () => {});
    session.on("close", () => {
      clearTimeout(idle);
      sessions.delete(session);
    });
    if (closing) idle = setTimeout(() => session.close(), SHUTDOWN_IDLE_MS);
    else arm();
  });
  server.on(
    "stream",
    (stream: http2.ServerHttp2Stream, _h: unknown, _f: unknown, raw: string[]) => {
      serve(stream, raw, true).catch(() => stream.destroy());
    },
  );

  /** Serves one stream (a client's, or one this side pushed) through the handler. */
  async function serve(
    stream: http2.ServerHttp2Stream,
    raw: readonly string[],
    canPush: boolean,
  ): Promise<void> {
    // First of all: a stream can come here already destroyed by a session error (a HEADERS
    // and, in the same read, a frame that ends the session), and its error event, with no
    // listener, would end the process.
    stream.on("error", () => {});
    const session = stream.session;
    const state = session && states.get(session);
    if (!session || !state) return void stream.destroy();
    const socket = state.socket;
    const c = host.conn();
    state.opened();
    host.busy(true);
    let settle!: () => void;
    let writeTimer: ReturnType<typeof setTimeout> | undefined;
    stream.once("close", () => {
      clearTimeout(writeTimer);
      state.closed();
      host.busy(false);
      settle();
    });
    if (c.writeTimeoutMs > 0) {
      writeTimer = setTimeout(() => {
        if (!stream.destroyed && !stream.writableFinished) stream.close(2 /* INTERNAL_ERROR */);
      }, c.writeTimeoutMs);
    }
    const info = host.info(socket);
    info.http2 = true;
    info.completed = new Promise<void>((r) => (settle = r));
    const ok = host.admitted(socket, info.tls);
    if (ok !== true && !(await ok)) {
      // refused client certificate: the connection ends without an answer
      session.destroy();
      return;
    }
    if (headerListSize(raw) > c.maxHeaderBytes + HEADER_LIST_SLACK) {
      stream.resume();
      await sendH2(stream, new Response(TOO_LARGE, { status: 431 }), false);
      return;
    }
    let request: Request | null;
    try {
      request = toH2Request(stream, raw, host.scheme, host.localAddress(), c.readTimeoutMs);
    } catch {
      request = null;
    }
    if (request === null) {
      stream.resume();
      await sendH2(stream, new Response("400 Bad Request", { status: 400 }), false);
      return;
    }
    if (canPush && stream.pushAllowed && !state.peerGoaway.sent) {
      info.push = (m, p, h) => push(stream, m, p, h);
    }
    let response: Response;
    try {
      response = await host.handler(request, info);
    } catch {
      response = new Response("500 Internal Server Error", { status: 500 });
    }
    if (request.method === "HEAD") response = await headAnswer(response);
    const closeSession = await sendH2(stream, response, request.method === "HEAD");
    if (!stream.destroyed && !stream.readableEnded) {
      // As Go's server: the answer is complete while the client is still sending a body that
      // nobody reads. RST_STREAM NO_ERROR after the answer's last frame stops it, so its unread
      // bytes no longer hold the connection's flow-control window and the session can end.
      // (destroy, not close(NO_ERROR): Deno's close with NO_ERROR after the writable side
      // finished never resets the stream.)
      const stop = () => {
        if (!stream.destroyed && !stream.readableEnded) stream.destroy();
      };
      if (stream.writableFinished) stop();
      else stream.once("finish", stop);
    }
    if (closeSession) session.close();
  }

  /** Promises `method path` to the client on `parent`'s session, then serves it. */
  function push(
    parent: http2.ServerHttp2Stream,
    method: "GET" | "HEAD",
    path: string,
    headers: Headers,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      if (parent.destroyed || !parent.pushAllowed || states.get(parent.session!)?.peerGoaway.sent) {
        return reject(new Error("the client does not accept pushed streams now"));
      }
      const promised: http2.OutgoingHttpHeaders = { ":method": method, ":path": path };
      for (const [k, v] of headers) promised[k] = v;
      try {
        parent.pushStream(promised, (err, pushed, sent) => {
          if (err) return reject(err);
          resolve();
          const raw: string[] = [];
          for (const [k, v] of Object.entries(sent)) {
            for (const one of Array.isArray(v) ? v : [v]) raw.push(k, String(one));
          }
          serve(pushed, raw, false).catch(() => pushed.destroy());
        });
      } catch (e) {
        reject(e);
      }
    });
  }

  return {
    attach(socket) {
      const limit = host.conn().maxHeaderBytes + HEADER_LIST_SLACK;
      if (limit !== listLimit) {
        listLimit = limit;
        server.updateSettings({ maxConcurrentStreams: MAX_STREAMS, maxHeaderListSize: limit });
      }
      // The session reads the client's bytes less its GOAWAY frames (see h2_frames.ts). What
      // nghttp2 would do with one is done here: no more pushes, and the session ends once its
      // streams are done (our GOAWAY, then the connection closes), after the frames that came
      // before the GOAWAY have been read (a request sent just before it is still answered).
      const goaway: PeerGoaway = { sent: false };
      const filtered = h2Front(nodeStream, socket, () => {
        goaway.sent = true;
        const close = () => {
          if (filtered.destroyed) return;
          if (filtered.readableLength > 0) return void setTimeout(close, 1);
          setTimeout(() => goaway.session?.close(), 0);
        };
        close();
      });
      attaching = socket;
      attachingGoaway = goaway;
      try {
        server.emit("connection", filtered);
      } finally {
        attaching = undefined;
      }
    },
    shutdown() {
      closing = true;
      for (const s of sessions) s.close();
    },
  };
}
