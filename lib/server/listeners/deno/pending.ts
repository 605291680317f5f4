/**
 * A connection before HTTP on the `deno` engine, as listener wrappers see it
 * (`PendingConnection`): its first bytes are read from the Deno connection itself, never more
 * than the wrapper says may belong to it (`fill`'s `atMost`), so a PROXY header is taken off
 * and everything after it is still in the socket for Deno's HTTP server. Deno cannot give
 * bytes back to a socket; when a wrapper leaves some unconsumed (no PROXY header came, only
 * the request), the connection is served through a relay (`relay.ts`).
 *
 * @module
 */
import type { PeerAddress, PendingConnection } from "../../module/listener.ts";

/** How much one `fill` reads when the wrapper gives no bound. */
const DEFAULT_READ = 16 * 1024;
/** Longest a refused connection is read (and what it sends dropped) before it closes (ms). */
export const LINGER_MS = 1000;
/** Most bytes read from a refused connection before it closes. */
export const LINGER_BYTES = 64 * 1024;

function cancelRead(conn: Deno.Conn): void {
  const d = Deno as unknown as Record<symbol | string, unknown>;
  const i = d[d.internal as symbol] as {
    core?: { cancelRead?(rid: number): void; internalRidSymbol?: symbol };
  } | undefined;
  const rid = i?.core?.internalRidSymbol
    ? (conn as unknown as Record<symbol, number>)[i.core.internalRidSymbol]
    : undefined;
  if (rid !== undefined && i?.core?.cancelRead) i.core.cancelRead(rid);
  else conn.close(); // no way to stop a read but closing
}

/** A `PendingConnection` over an accepted Deno connection. */
export class DenoPendingConnection implements PendingConnection {
  remote: PeerAddress;
  readonly socketRemote: PeerAddress;
  buffered: Uint8Array = new Uint8Array(0);
  #ended = false;
  #closed = false;

  constructor(readonly conn: Deno.Conn, peer: PeerAddress, readonly deadline?: number) {
    this.remote = this.socketRemote = peer;
  }

  /** True once a wrapper answered or closed the connection. */
  get closed(): boolean {
    return this.#closed;
  }

  async fill(deadline?: number, atMost?: number): Promise<"data" | "eof" | "timeout"> {
    if (this.#ended || this.#closed) return "eof";
    const until = Math.min(deadline ?? Infinity, this.deadline ?? Infinity);
    const buf = new Uint8Array(Math.max(1, atMost ?? DEFAULT_READ));
    const read = this.conn.read(buf);
    let n: number | null;
    if (until === Infinity) {
      n = await read.catch(() => null);
    } else {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((r) => {
        timer = setTimeout(() => r("timeout"), Math.max(0, until - performance.now()));
      });
      const first = await Promise.race([read.catch(() => null), timedOut]);
      clearTimeout(timer);
      if (first === "timeout") {
        // the read must be over before the socket can go on (to Deno's HTTP server)
        cancelRead(this.conn);
        const late = await read.catch(() => undefined);
        if (late === undefined) return "timeout";
        n = late;
      } else n = first;
    }
    if (n === null) {
      this.#ended = true;
      return "eof";
    }
    const next = new Uint8Array(this.buffered.length + n);
    next.set(this.buffered);
    next.set(buf.subarray(0, n), this.buffered.length);
    this.buffered = next;
    return "data";
  }

  consume(n: number): void {
    this.buffered = this.buffered.subarray(n);
  }

  answer(bytes: Uint8Array): void {
    this.#closed = true;
    const conn = this.conn;
    (async () => {
      try {
        for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
        await conn.closeWrite();
      } catch { /* gone */ }
      try {
        conn.close();
      } catch { /* closed */ }
    })();
  }

  /**
   * Closes the connection: the sending side first, then what the client still sends is read
   * and dropped for a moment (at most {@link LINGER_MS}, {@link LINGER_BYTES}), so that the
   * close reaches it as an end of stream rather than a reset of the bytes it sent after the
   * part a wrapper read.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const conn = this.conn;
    const timer = setTimeout(() => {
      try {
        conn.close();
      } catch { /* closed */ }
    }, LINGER_MS);
    (async () => {
      try {
        await conn.closeWrite();
        const buf = new Uint8Array(16 * 1024);
        for (let total = 0, n; total < LINGER_BYTES && (n = await conn.read(buf)) !== null;) {
          total += n;
        }
      } catch { /* gone */ }
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* closed */ }
    })();
  }
}
