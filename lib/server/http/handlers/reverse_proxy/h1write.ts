/**
 * How the HTTP/1.1 client writes a request, for two transport fields:
 *
 * - `write_buffer_size`: writes gather in a buffer of that many bytes, as Go's `bufio.Writer`
 *   under its transport: the buffer goes out when it is full, when the request ends, after
 *   each chunk of a chunked body, and after the head when the body waits for `100 Continue`;
 *   a write larger than the buffer goes straight out. Unset, every piece goes out as it comes.
 * - `expect_continue_timeout`: a request with `Expect: 100-continue` and a body sends its head
 *   and holds the body until the upstream answers `100 Continue`, or the time is up, as Go's
 *   client. A final response first: the body is sent anyway, unless the response closes the
 *   connection (Go's rule; the connection then is not reused).
 *
 * @module
 */
import { type ByteConn, writeAll } from "./byte_conn.ts";

/** Where a request's bytes go: straight out, or through a write buffer. */
export interface RequestWriter {
  /** Writes (or buffers) `p`; the bytes may be kept until `flush`. */
  write(p: Uint8Array): Promise<void>;
  /** Sends whatever is buffered. */
  flush(): Promise<void>;
}

/**
 * The writer for a connection: buffered when `size` > 0 (`write_buffer_size`).
 *
 * @example
 * ```ts ignore
 * const w = requestWriter(conn, 4096);
 * await w.write(head);
 * await w.flush();
 * ```
 */
export function requestWriter(conn: ByteConn, size: number): RequestWriter {
  if (size <= 0) return { write: (p) => writeAll(conn, p), flush: () => Promise.resolve() };
  // Bytes are copied in as they come (the buffer grows up to `size`, never allocated whole).
  let pending: Uint8Array[] = [];
  let length = 0;
  const flush = async () => {
    if (!length) return;
    const out = pending.length === 1 ? pending[0] : new Uint8Array(length);
    if (pending.length > 1) {
      let o = 0;
      for (const p of pending) {
        out.set(p, o);
        o += p.length;
      }
    }
    pending = [];
    length = 0;
    await writeAll(conn, out);
  };
  const keep = (p: Uint8Array) => {
    pending.push(p.slice());
    length += p.length;
  };
  return {
    async write(p: Uint8Array) {
      while (length + p.length > size) {
        if (length === 0) {
          await writeAll(conn, p); // larger than the buffer, nothing buffered: straight out
          return;
        }
        const room = size - length;
        keep(p.subarray(0, room));
        p = p.subarray(room);
        await flush();
      }
      if (p.length) keep(p);
    },
    flush,
  };
}

/** The wait for `100 Continue` of one request. */
export interface ContinueGate {
  /** True: send the body; false: do not. */
  readonly wait: Promise<boolean>;
  /** Ends the wait (idempotent): `send` says whether the body goes. */
  open(send: boolean): void;
}

/**
 * A wait for `100 Continue` that ends by itself after `ms` with the body sent.
 *
 * @example
 * ```ts
 * import { continueGate } from "./h1write.ts";
 * const gate = continueGate(1000);
 * gate.open(true); // the upstream said 100 Continue
 * ```
 */
export function continueGate(ms: number): ContinueGate {
  let done = false;
  let resolve!: (send: boolean) => void;
  const wait = new Promise<boolean>((r) => (resolve = r));
  const timer = setTimeout(() => open(true), ms);
  const open = (send: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    resolve(send);
  };
  return { wait, open };
}
