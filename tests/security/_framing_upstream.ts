/**
 * An HTTP/1.1 upstream on a raw socket that frames requests as RFC 9112 says and answers the
 * way nginx, node or Go do: the answer goes out as soon as a request head is read (before its
 * body), and the body the head declared (Content-Length, or chunked) is then read and dropped
 * before the next request is parsed. So whatever a proxy declares and does not send is taken
 * from the next request on the connection: the upstream that request smuggling needs.
 * Every request it parsed is recorded (method, target, fields, body), with the raw bytes.
 *
 * @module
 */

/** One request as this upstream parsed it. */
export interface Parsed {
  method: string;
  target: string;
  /** Field lines as received, names lower-cased. */
  fields: [string, string][];
  body: string;
  /** The connection it came on (0, 1, ...). */
  conn: number;
}

function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return s;
}

/** The upstream; `answer` picks the body of the reply to each request (default `ok <target>`). */
export class FramingUpstream {
  readonly listener: Deno.Listener;
  readonly port: number;
  /** Requests in the order they were parsed. */
  readonly requests: Parsed[] = [];
  /** Raw bytes received, per connection. */
  readonly raw: string[] = [];
  #conns = new Set<Deno.Conn>();
  #serving: Promise<void>;

  constructor(readonly answer: (p: Parsed) => string = (p) => `ok ${p.method} ${p.target}`) {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = (this.listener.addr as Deno.NetAddr).port;
    this.#serving = this.#accept();
  }

  /** The dial address. */
  get dial(): string {
    return `127.0.0.1:${this.port}`;
  }

  async #accept(): Promise<void> {
    try {
      for await (const c of this.listener) {
        this.#conns.add(c);
        this.#serve(c, this.raw.push("") - 1).catch(() => {}).finally(() => {
          this.#conns.delete(c);
          try {
            c.close();
          } catch { /* closed */ }
        });
      }
    } catch { /* closed */ }
  }

  async #serve(c: Deno.Conn, id: number): Promise<void> {
    let buf = "";
    const scratch = new Uint8Array(65536);
    const more = async (): Promise<boolean> => {
      const n = await c.read(scratch);
      if (n === null) return false;
      const s = latin1(scratch.subarray(0, n));
      buf += s;
      this.raw[id] += s;
      return true;
    };
    const line = async (): Promise<string | null> => {
      let i = buf.indexOf("\r\n");
      while (i < 0) {
        if (!(await more())) return null;
        i = buf.indexOf("\r\n");
      }
      const l = buf.slice(0, i);
      buf = buf.slice(i + 2);
      return l;
    };
    const bytes = async (n: number): Promise<string | null> => {
      while (buf.length < n) if (!(await more())) return null;
      const s = buf.slice(0, n);
      buf = buf.slice(n);
      return s;
    };
    while (true) {
      const start = await line();
      if (start === null) return;
      const [method, target] = start.split(" ");
      const fields: [string, string][] = [];
      while (true) {
        const l = await line();
        if (l === null) return;
        if (l === "") break;
        const colon = l.indexOf(":");
        fields.push([l.slice(0, colon).trim().toLowerCase(), l.slice(colon + 1).trim()]);
      }
      const p: Parsed = { method, target, fields, body: "", conn: id };
      this.requests.push(p);
      const text = this.answer(p);
      await c.write(
        new TextEncoder().encode(
          `HTTP/1.1 200 OK\r\nContent-Length: ${text.length}\r\n\r\n${text}`,
        ),
      );
      // The body as the head declared it, read after the answer (as nginx discards it).
      const te = fields.find(([k]) => k === "transfer-encoding")?.[1];
      const cl = fields.find(([k]) => k === "content-length")?.[1];
      if (te !== undefined) {
        while (true) {
          const size = await line();
          if (size === null) return;
          const n = parseInt(size, 16);
          if (Number.isNaN(n)) return;
          if (n === 0) {
            while ((await line()) !== "") { /* trailers */ }
            break;
          }
          const data = await bytes(n + 2);
          if (data === null) return;
          p.body += data.slice(0, n);
        }
      } else if (cl !== undefined) {
        const n = Number(cl);
        if (!Number.isSafeInteger(n)) return; // "5, 5" and the like: refused, as Go does
        const data = await bytes(n);
        if (data === null) return;
        p.body = data;
      }
    }
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    this.listener.close();
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await this.#serving;
  }
}

/** Sends raw bytes on a new connection and reads until the peer closes (or `ms` passes). */
export async function exchange(port: number, bytes: string, ms = 10000): Promise<string> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port });
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes.charCodeAt(i) & 0xff;
  const timer = setTimeout(() => {
    try {
      c.close();
    } catch { /* closed */ }
  }, ms);
  let text = "";
  try {
    await c.write(out);
    const buf = new Uint8Array(65536);
    while (true) {
      const n = await c.read(buf);
      if (n === null) break;
      text += latin1(buf.subarray(0, n));
    }
  } catch {
    /* reset or closed by the watchdog */
  } finally {
    clearTimeout(timer);
    try {
      c.close();
    } catch { /* closed */ }
  }
  return text;
}
