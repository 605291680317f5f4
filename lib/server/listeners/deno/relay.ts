/**
 * Serving a connection whose first bytes were already read (a listener wrapper looked for a
 * PROXY header and found the request instead): Deno cannot put bytes back into a socket, and
 * its HTTP server reads only from sockets. So the connection is paired with a fresh one over
 * a loopback socket of the relay's own: Deno's HTTP server serves the accepted end, and the
 * bytes read so far, then everything both ways, are copied between the client and the other
 * end. Each pair is matched by a random 128-bit token the relay writes first; a connection to
 * the relay's port that does not show a waiting token within 5 s is closed unserved. (A unix
 * socket would need a writable directory, and Deno names requests on one `http+unix:`.)
 * This costs two extra socket operations per chunk, only on such connections; a PROXY header
 * that arrives takes nothing from what follows, so those connections are served directly.
 *
 * @module
 */

/** Bytes of the token that pairs the two ends. */
const TOKEN_BYTES = 16;
/** Longest wait for the accepted end to show its token (ms). */
const PAIR_MS = 5000;

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * Copies `from` to `to` until `from` ends: true when it ended, false when either side failed.
 * `buf`: the buffer to read into (default a new one of 16 KiB).
 */
export async function copy(
  from: Deno.Conn,
  to: Deno.Conn,
  buf: Uint8Array = new Uint8Array(16 * 1024),
): Promise<boolean> {
  try {
    for (let n; (n = await from.read(buf)) !== null;) {
      for (let off = 0; off < n;) off += await to.write(buf.subarray(off, n));
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Copies `from` to `to` until `from` ends, then half-closes `to` (either failing: both close).
 * `buf`: the buffer to read into (default a new one of 16 KiB).
 */
export async function pump(from: Deno.Conn, to: Deno.Conn, buf?: Uint8Array): Promise<void> {
  if (await copy(from, to, buf)) {
    await to.closeWrite().catch(() => {});
    return;
  }
  // either side gone: the other goes too
  try {
    to.close();
  } catch { /* closed */ }
  try {
    from.close();
  } catch { /* closed */ }
}

/** Reads exactly `n` bytes (null when the peer ends first). */
async function readExactly(conn: Deno.Conn, n: number): Promise<Uint8Array | null> {
  const out = new Uint8Array(n);
  for (let got = 0; got < n;) {
    const r = await conn.read(out.subarray(got));
    if (r === null) return null;
    got += r;
  }
  return out;
}

/** The relay of one listener pool: opened on first use, closed with the pool. */
export class Relay {
  #listener?: Deno.TcpListener;
  #port = 0;
  #opening?: Promise<void>;
  #waiting = new Map<string, (inner: Deno.Conn) => void>();
  #failed?: string;

  /**
   * Serves `outer` (whose first bytes, `first`, were read) through a fresh socket pair: `serve`
   * gets the accepted end, as if it were `outer` with those bytes still unread. Resolves false
   * when the relay cannot open (no loopback port): `outer` is then closed.
   */
  async serve(
    outer: Deno.Conn,
    first: Uint8Array,
    serve: (inner: Deno.Conn) => void,
  ): Promise<boolean> {
    try {
      await this.#open();
    } catch (e) {
      this.#failed ??= (e as Error).message;
      try {
        outer.close();
      } catch { /* closed */ }
      return false;
    }
    const token = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES));
    const key = hex(token);
    const paired = new Promise<Deno.Conn | null>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(key);
        resolve(null);
      }, PAIR_MS);
      this.#waiting.set(key, (inner) => {
        clearTimeout(timer);
        resolve(inner);
      });
    });
    let client: Deno.Conn;
    try {
      client = await Deno.connect({ hostname: "127.0.0.1", port: this.#port });
      await client.write(token);
      for (let off = 0; off < first.length;) off += await client.write(first.subarray(off));
    } catch {
      this.#waiting.delete(key);
      try {
        outer.close();
      } catch { /* closed */ }
      return false;
    }
    const inner = await paired;
    if (!inner) {
      client.close();
      outer.close();
      return false;
    }
    serve(inner);
    void pump(outer, client);
    // the server's end decides: once it is done, so is the client's connection
    void pump(client, outer).finally(() => {
      try {
        outer.close();
      } catch { /* closed */ }
      try {
        client.close();
      } catch { /* closed */ }
    });
    return true;
  }

  /** Why the relay could not open, if it could not. */
  get failure(): string | undefined {
    return this.#failed;
  }

  #open(): Promise<void> {
    if (this.#listener) return Promise.resolve();
    // a failed bind rejects the promise (a throw inside then)
    this.#opening ??= Promise.resolve().then(() => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      this.#port = listener.addr.port;
      this.#listener = listener;
      void (async () => {
        for (;;) {
          let conn: Deno.TcpConn;
          try {
            conn = await listener.accept();
          } catch {
            return;
          }
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), PAIR_MS)));
          void Promise.race([readExactly(conn, TOKEN_BYTES), late]).then((t) => {
            clearTimeout(timer);
            const take = t ? this.#waiting.get(hex(t)) : undefined;
            if (!take) return conn.close();
            this.#waiting.delete(hex(t!));
            take(conn);
          }, () => conn.close());
        }
      })();
    });
    return this.#opening;
  }

  /** Closes the relay socket (pairs in use go on). */
  close(): Promise<void> {
    try {
      this.#listener?.close();
    } catch { /* closed */ }
    this.#listener = undefined;
    this.#opening = undefined;
    return Promise.resolve();
  }
}
