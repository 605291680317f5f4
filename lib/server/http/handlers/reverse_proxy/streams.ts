/**
 * Long-lived streams of `reverse_proxy` (upgraded connections and WebSocket relays) and the
 * settings that govern them, as Caddy's: `stream_timeout` closes each stream that long after
 * it began; when the config that opened them is unloaded they are closed, after
 * `stream_close_delay` when set (so a reload does not make every client reconnect at once);
 * `stream_buffer_size` caps the bytes copied at once in each direction of a byte tunnel
 * (default 32 KiB, like Caddy's buffer). A WebSocket relayed on the `deno` listener engine
 * moves whole messages, which are not split.
 *
 * @module
 */
import type { Tunnel } from "../../../module/listener.ts";
import { HandlerError } from "../../errors.ts";
import type { RequestContext } from "../../context.ts";
import { endToEnd } from "./transport.ts";

/** Default bytes copied at once per direction. */
export const DEFAULT_STREAM_BUFFER = 32 * 1024;

/** The stream settings of one proxy handler. */
export interface StreamOptions {
  /** Close streams this long after they began (ms; 0 = never). */
  timeoutMs: number;
  /** Keep streams open this long after the config is unloaded (ms; 0 = close at once). */
  closeDelayMs: number;
  /** Largest chunk copied at once in each direction of a byte tunnel. */
  bufferSize: number;
}

/** Splits chunks larger than `size` (what a copy buffer of that size does). */
function rechunk(size: number): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform(chunk, ctl) {
      for (let i = 0; i < chunk.length; i += size) ctl.enqueue(chunk.subarray(i, i + size));
    },
  });
}

/** The open streams of one proxy handler. */
export class Streams {
  #open = new Set<() => void>();
  #closed = false;
  constructor(readonly options: StreamOptions) {}

  /** Number of open streams. */
  get size(): number {
    return this.#open.size;
  }

  /** Tracks a stream; returns the function to call once it ended by itself. */
  track(close: () => void): () => void {
    if (this.#closed) {
      close();
      return () => {};
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const end = () => {
      clearTimeout(timer);
      this.#open.delete(stop);
    };
    const stop = () => {
      end();
      close();
    };
    if (this.options.timeoutMs > 0) timer = setTimeout(stop, this.options.timeoutMs);
    this.#open.add(stop);
    return end;
  }

  /**
   * Relays bytes both ways between a taken-over client connection and an upstream connection
   * until both directions end; an error on either side closes both.
   */
  relay(client: Tunnel, upstream: Tunnel): void {
    const closeBoth = () => {
      client.close();
      upstream.close();
    };
    const done = this.track(closeBoth);
    const size = this.options.bufferSize;
    Promise.all([
      client.readable.pipeThrough(rechunk(size)).pipeTo(upstream.writable),
      upstream.readable.pipeThrough(rechunk(size)).pipeTo(client.writable),
    ]).then(closeBoth, closeBoth).finally(done);
  }

  /** Closes every stream, after the close delay when one is set (config unloaded). */
  closeAll(): void {
    this.#closed = true;
    const all = [...this.#open];
    this.#open.clear();
    if (all.length === 0) return;
    const run = () => all.forEach((f) => f());
    if (this.options.closeDelayMs <= 0) run();
    else {
      const t = setTimeout(run, this.options.closeDelayMs);
      Deno.unrefTimer(t);
    }
  }
}

/** True when every protocol a 101 names is one the request asked for (case-insensitive). */
function requested(asked: string, switched: string): boolean {
  const names = (v: string) => v.split(",").map((p) => p.trim().toLowerCase()).filter(Boolean);
  const list = names(asked);
  const to = names(switched);
  return to.length > 0 && to.every((p) => list.includes(p));
}

/**
 * Completes an upstream's `101 Switching Protocols`: takes the client connection over (only
 * possible where the listener offers it: the `node` engine) and relays both tunnels. Returns
 * a placeholder response that is never sent.
 */
export function switchProtocols(
  c: RequestContext,
  o: {
    dial: string;
    upgrade: string | null;
    tunnel: Tunnel | undefined;
    fields: [string, string][];
    streams: Streams;
  },
  applyHeaderOps: (h: Headers) => void,
): Response {
  const client = c.info.upgrade;
  if (!o.tunnel || !client || o.upgrade === null) {
    o.tunnel?.close();
    // Deno.serve hands out no raw connection: only WebSocket upgrades relay there.
    throw new HandlerError(
      502,
      `upstream ${o.dial} switched protocols; only WebSocket upgrades can be proxied ` +
        `on this server (listener_engine "node" relays every protocol)`,
      "reverse_proxy",
    );
  }
  const switched = o.fields.find((f) => f[0] === "upgrade")?.[1];
  if (switched !== undefined && !requested(o.upgrade, switched)) {
    // as Go's ReverseProxy: a switch to a protocol nobody asked for (h2c to a WebSocket
    // request) would open a tunnel the client did not ask for
    o.tunnel.close();
    throw new HandlerError(
      502,
      `upstream ${o.dial} switched to protocol ${JSON.stringify(switched)} when ${
        JSON.stringify(o.upgrade)
      } was requested`,
      "reverse_proxy",
    );
  }
  const h = new Headers(endToEnd(o.fields));
  applyHeaderOps(h);
  h.set("connection", "Upgrade");
  h.set("upgrade", switched ?? o.upgrade);
  o.streams.relay(client.accept(101, [...h]), o.tunnel);
  return new Response(null, { status: 200 }); // not sent: the connection was taken over
}
