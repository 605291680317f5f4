/**
 * Node sockets and messages as web streams, with backpressure both ways: the shared plumbing
 * of the `node` listener engine and of `reverse_proxy`'s TLS upstream tunnels.
 *
 * @module
 */
import type http from "node:http";
import type net from "node:net";
import type { Tunnel } from "../../module/listener.ts";

/** A Uint8Array view of a node Buffer's bytes (no copy). */
export function view(d: Uint8Array): Uint8Array {
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** A node socket (or message) as a byte stream with backpressure; `first` comes first. */
export function readableOf(
  src: net.Socket | http.IncomingMessage,
  first?: Uint8Array,
): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      if (first?.length) ctl.enqueue(first.slice());
      src.on("data", (d: Uint8Array) => {
        if (ended) return;
        ctl.enqueue(view(d));
        if ((ctl.desiredSize ?? 1) <= 0) src.pause();
      });
      const end = () => {
        if (ended) return;
        ended = true;
        try {
          ctl.close();
        } catch { /* cancelled */ }
      };
      src.on("end", end);
      src.on("close", () => {
        if (ended) return;
        ended = true;
        // A message closed before its end lost its connection; a socket's close is its end.
        try {
          if ("socket" in src && !(src as http.IncomingMessage).complete) {
            ctl.error(new Error("client connection closed before the request body ended"));
          } else ctl.close();
        } catch { /* cancelled */ }
      });
      src.on("error", (e: Error) => {
        if (ended) return;
        ended = true;
        try {
          ctl.error(e);
        } catch { /* cancelled */ }
      });
    },
    pull() {
      src.resume();
    },
    cancel() {
      ended = true;
      src.resume();
    },
  }, { highWaterMark: 4 });
}

/** What `writeTo` writes to: a socket, an HTTP/1.1 response or an HTTP/2 stream. */
export interface NodeWritable {
  readonly destroyed: boolean;
  write(chunk: Uint8Array): boolean;
  on(event: "drain" | "close", fn: () => void): unknown;
  off(event: "drain" | "close", fn: () => void): unknown;
}

/** Writes to a node writable with backpressure; false when it closed first. */
export function writeTo(dst: NodeWritable, chunk: Uint8Array): Promise<boolean> {
  if (dst.destroyed) return Promise.resolve(false);
  if (dst.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      dst.off("drain", onDrain);
      dst.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    dst.on("drain", onDrain);
    dst.on("close", onClose);
  });
}

/** A node socket as a tunnel: closing the writable half-closes the socket. */
export function tunnelOf(socket: net.Socket, first: Uint8Array): Tunnel {
  return {
    readable: readableOf(socket, first),
    writable: new WritableStream<Uint8Array>({
      async write(chunk) {
        if (!(await writeTo(socket, chunk))) throw new Error("connection closed");
      },
      close() {
        socket.end();
      },
      abort() {
        socket.destroy();
      },
    }),
    close() {
      socket.destroy();
    },
  };
}
