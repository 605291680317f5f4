/**
 * A hostile HTTP/1.1 upstream on a raw socket (plain or TLS), and a `gatehouse run` process
 * in front of it. The upstream reads each request head and answers `/case/<name>[/...]` with
 * that case's bytes, exactly as written (broken framing, bad heads, early closes), then keeps
 * the connection open and serves the next request on it unless the case closes. Tests learn
 * when a case's bytes went out and whether the proxy closed that connection.
 */
import { freePort, until } from "../fixtures/helpers.ts";
import { serve, up } from "../fixtures/process.ts";

/** What the upstream writes for one case: text (latin1), bytes, or a pause (ms). */
export type Part = string | Uint8Array | { delay: number };

/** One hostile answer. */
export interface HostileCase {
  /** Parts written in order. */
  reply: Part[];
  /** Close the connection after writing (default: keep it open). */
  close?: boolean;
}

function latin1(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Per-case observations of the upstream. */
export interface CaseEvents {
  /** Resolves once a request for the case arrived. */
  hit: Promise<void>;
  /** Resolves once the case's bytes were written. */
  wrote: Promise<void>;
  /** Resolves once the connection that served the case was closed by the proxy. */
  closed: Promise<void>;
  /** Requests received for this case. */
  hits: number;
}

type Internal = CaseEvents & { arrived: () => void; done: () => void; closedNow: () => void };

/** A raw-socket upstream answering cases by request path. */
export class HostileUpstream {
  readonly listener: Deno.Listener;
  readonly dial: string;
  #cases: Record<string, HostileCase>;
  #events = new Map<string, Internal>();
  #conns = new Set<Deno.Conn>();
  #serving: Promise<void>;
  /** Connections accepted so far. */
  accepted = 0;

  #echo: boolean;

  /**
   * Serves `cases`; any other path is answered `ok: <target>`, or with the whole request
   * head as the body when `echo` is set.
   */
  constructor(
    cases: Record<string, HostileCase>,
    tls?: { cert: string; key: string },
    echo = false,
  ) {
    this.#cases = cases;
    this.#echo = echo;
    this.listener = tls
      ? Deno.listenTls({ hostname: "127.0.0.1", port: 0, ...tls })
      : Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.dial = `127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
    this.#serving = this.#accept();
  }

  /** The events of a case (created on first use). */
  events(name: string): CaseEvents {
    return this.#event(name);
  }

  #event(name: string): Internal {
    let e = this.#events.get(name);
    if (!e) {
      const h = deferred<void>();
      const w = deferred<void>();
      const c = deferred<void>();
      e = {
        hit: h.promise,
        wrote: w.promise,
        closed: c.promise,
        hits: 0,
        arrived: h.resolve,
        done: w.resolve,
        closedNow: c.resolve,
      };
      this.#events.set(name, e);
    }
    return e;
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.accepted++;
        this.#conns.add(conn);
        this.#serveConn(conn).catch(() => {}).finally(() => {
          this.#conns.delete(conn);
          try {
            conn.close();
          } catch { /* closed */ }
        });
      }
    } catch { /* listener closed */ }
  }

  async #serveConn(conn: Deno.Conn): Promise<void> {
    const buf = new Uint8Array(65536);
    let pending = "";
    let last: string | null = null;
    while (true) {
      let end = pending.indexOf("\r\n\r\n");
      while (end < 0) {
        let n: number | null;
        try {
          n = await conn.read(buf);
        } catch {
          n = null;
        }
        if (n === null) {
          if (last) this.#event(last).closedNow();
          return;
        }
        for (let i = 0; i < n; i++) pending += String.fromCharCode(buf[i]);
        end = pending.indexOf("\r\n\r\n");
      }
      const head = pending.slice(0, end);
      pending = pending.slice(end + 4);
      const target = head.split(" ")[1] ?? "";
      const name = /^\/case\/([^/?]+)/.exec(target)?.[1] ?? "";
      const text = this.#echo ? head : `ok: ${target}`;
      const c = this.#cases[name] ?? {
        reply: [`HTTP/1.1 200 OK\r\nContent-Length: ${text.length}\r\n\r\n${text}`],
      };
      const ev = this.#event(name);
      ev.hits++;
      ev.arrived();
      last = name;
      for (const part of c.reply) {
        if (typeof part === "object" && "delay" in part) {
          await new Promise((r) => setTimeout(r, part.delay));
          continue;
        }
        const bytes = typeof part === "string" ? latin1(part) : part;
        try {
          let off = 0;
          while (off < bytes.length) off += await conn.write(bytes.subarray(off));
        } catch {
          break;
        }
      }
      ev.done();
      if (c.close) {
        ev.closedNow();
        return;
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

/** A running `gatehouse run` process. */
export interface GatehouseProcess {
  /** Port of each server's first listener, by server name. */
  ports: Record<string, number>;
  /** Admin API base URL. */
  admin: string;
  /** The process id (to read its `/proc` entries). */
  pid: number;
  /** Process output so far. */
  output(): string;
  /** Stops the process (POST /stop) and removes its files. */
  stop(): Promise<void>;
}

/**
 * Starts `gatehouse run` with the given `apps.http.servers`, each listening on a free loopback
 * port, errors logged; resolves once the admin API and every server answer.
 */
export async function startGatehouse(
  servers: Record<string, Record<string, unknown>>,
): Promise<GatehouseProcess> {
  const ports: Record<string, number> = {};
  const withPorts: Record<string, Record<string, unknown>> = {};
  for (const [name, srv] of Object.entries(servers)) {
    ports[name] = freePort();
    // Loopback ports with host matchers would become HTTPS sites, as in Caddy: plain HTTP here.
    withPorts[name] = {
      automatic_https: { disable: true },
      ...srv,
      listen: [`127.0.0.1:${ports[name]}`],
    };
  }
  const config = {
    logging: { logs: { default: { level: "ERROR" } } },
    apps: { http: { servers: withPorts } },
  };
  const s = await serve(config);
  try {
    await up(s.base);
    for (const port of Object.values(ports)) {
      await until(
        async () => {
          const c = await Deno.connect({ hostname: "127.0.0.1", port });
          c.close();
          return true;
        },
        30000,
        `listener on ${port}`,
      );
    }
  } catch (e) {
    try {
      s.p.child.kill("SIGKILL");
    } catch { /* already exited */ }
    await s.p.status;
    throw new Error(`${(e as Error).message}\n${s.p.output()}`);
  }
  return {
    ports,
    admin: s.base,
    pid: s.p.child.pid,
    output: () => s.p.output(),
    async stop() {
      try {
        await fetch(`${s.base}/stop`, { method: "POST" }).then((r) => r.body?.cancel());
      } catch { /* gone */ }
      const t = setTimeout(() => s.p.child.kill("SIGKILL"), 10000);
      await s.p.status;
      clearTimeout(t);
      await Deno.remove(s.dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A `gatehouse run` process with a proxied site, a plain site and the admin API. */
export interface ProxyProcess {
  /** Port of the site proxying to the hostile upstream. */
  proxyPort: number;
  /** Port of a second site answering `other site` on its own. */
  otherPort: number;
  /** Admin API base URL. */
  admin: string;
  /** Process output so far. */
  output(): string;
  /** Stops the process (POST /stop) and removes its files. */
  stop(): Promise<void>;
}

/** Starts `gatehouse run` with `proxy` (a reverse_proxy handler config) and a static site. */
export async function startProxyProcess(
  proxy: Record<string, unknown>,
  engine: "deno" | "node" = "deno",
): Promise<ProxyProcess> {
  const g = await startGatehouse({
    proxied: { listener_engine: engine, routes: [{ handle: [proxy] }] },
    other: { routes: [{ handle: [{ handler: "static_response", body: "other site" }] }] },
  });
  return { ...g, proxyPort: g.ports.proxied, otherPort: g.ports.other };
}

/** A response read off a raw socket, and how it ended. */
export interface RawAnswer {
  status: number;
  head: string;
  body: Uint8Array;
  /** True when the body ended as its framing said (Content-Length reached, last chunk). */
  complete: boolean;
}

function indexOf(hay: Uint8Array, needle: number[], from = 0): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Decodes a chunked body; complete only with the last chunk and its empty trailer line. */
function dechunk(b: Uint8Array): { body: Uint8Array; complete: boolean } {
  const parts: number[] = [];
  let i = 0;
  while (true) {
    const e = indexOf(b, [13, 10], i);
    if (e < 0) return { body: new Uint8Array(parts), complete: false };
    const size = parseInt(new TextDecoder().decode(b.subarray(i, e)).split(";")[0], 16);
    if (Number.isNaN(size)) return { body: new Uint8Array(parts), complete: false };
    if (size === 0) {
      return { body: new Uint8Array(parts), complete: indexOf(b, [13, 10], e + 2) >= 0 };
    }
    if (e + 2 + size + 2 > b.length) {
      parts.push(...b.subarray(e + 2, Math.min(b.length, e + 2 + size)));
      return { body: new Uint8Array(parts), complete: false };
    }
    parts.push(...b.subarray(e + 2, e + 2 + size));
    i = e + 2 + size + 2;
  }
}

/**
 * Reads one response from a raw connection until its framing ends or the connection closes;
 * fails after `ms` rather than hanging (a watchdog, not a timing assertion).
 */
export async function readAnswer(conn: Deno.Conn, method = "GET", ms = 20000): Promise<RawAnswer> {
  let all = new Uint8Array(0);
  const buf = new Uint8Array(65536);
  const deadline = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed */ }
  }, ms);
  const started = Date.now();
  try {
    while (true) {
      const end = indexOf(all, [13, 10, 13, 10]);
      if (end >= 0) {
        const head = new TextDecoder().decode(all.subarray(0, end));
        const status = Number(head.split(" ")[1]);
        const rest = all.subarray(end + 4);
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
        if (method === "HEAD" || status === 204 || status === 304) {
          return { status, head, body: rest, complete: true };
        }
        if (cl && rest.length >= Number(cl[1])) {
          return { status, head, body: rest.subarray(0, Number(cl[1])), complete: true };
        }
        if (chunked) {
          const d = dechunk(rest);
          if (d.complete) return { status, head, body: d.body, complete: true };
        }
      }
      let n: number | null;
      try {
        n = await conn.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        if (Date.now() - started >= ms) throw new Error(`no complete answer within ${ms} ms`);
        const e = indexOf(all, [13, 10, 13, 10]);
        if (e < 0) return { status: 0, head: "", body: all, complete: false };
        const head = new TextDecoder().decode(all.subarray(0, e));
        const rest = all.subarray(e + 4);
        const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        return {
          status: Number(head.split(" ")[1]),
          head,
          body: chunked ? dechunk(rest).body : rest,
          // Close-delimited only when neither length nor chunked framing was given.
          complete: !chunked && !cl,
        };
      }
      const next = new Uint8Array(all.length + n);
      next.set(all);
      next.set(buf.subarray(0, n), all.length);
      all = next;
    }
  } finally {
    clearTimeout(deadline);
  }
}

/** Opens a connection and sends one request (`Connection: close` unless `keepAlive`). */
export async function sendRequest(
  port: number,
  target: string,
  o: { host?: string; method?: string; keepAlive?: boolean; extra?: string } = {},
): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = `${o.method ?? "GET"} ${target} HTTP/1.1\r\nHost: ${o.host ?? "proxy.test"}\r\n` +
    (o.keepAlive ? "" : "Connection: close\r\n") + (o.extra ?? "") + "\r\n";
  await conn.write(latin1(head));
  return conn;
}

/** GET through fetch with a watchdog: the text, or throws when nothing came in `ms`. */
export async function getText(url: string, ms = 20000): Promise<string> {
  const r = await fetch(url, { signal: AbortSignal.timeout(ms) });
  return await r.text();
}
