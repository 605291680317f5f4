/**
 * Standalone challenge listeners (certmagic's `httpSolver` / `tlsALPNSolver`): while a
 * challenge is pending, the solver tries to bind the challenge port. When the port is free
 * (no server of ours listens there), it answers from a small listener of its own for as long
 * as challenges need it. When the port is taken, HTTP-01 is answered by the server already
 * there (the `http` app answers it before its routes); TLS-ALPN-01 cannot be (see
 * {@link holdTlsAlpnSolver}).
 *
 * @module
 */
import type { Logger } from "../../module.ts";
import { answerHttpChallenge } from "./challenges.ts";

interface Held {
  count: number;
  close(): Promise<void>;
}

const held = new Map<string, Held>();
const opening = new Map<string, Promise<Held | null>>();

function inUse(e: unknown): boolean {
  const err = e as { code?: string; name?: string };
  return e instanceof Deno.errors.AddrInUse || err?.code === "EADDRINUSE" ||
    err?.name === "AddrInUse";
}

/** Takes a reference on the listener `key`, opening it first (null: the port is taken). */
/** A challenge listener reference: `standalone` is false when another server had the port. */
export interface SolverHold {
  /** True when this solver bound the port itself. */
  standalone: boolean;
  /** Drops the reference (the listener closes with the last one). */
  release(): Promise<void>;
}

async function acquire(
  key: string,
  open: () => Promise<Held | null>,
): Promise<SolverHold> {
  let h = held.get(key);
  if (!h) {
    let p = opening.get(key);
    if (!p) {
      p = open().finally(() => opening.delete(key));
      opening.set(key, p);
    }
    const opened = await p;
    if (!opened) return { standalone: false, release: async () => {} };
    h = held.get(key) ?? opened;
    held.set(key, h);
  }
  const mine = h;
  mine.count++;
  let released = false;
  return {
    standalone: true,
    release: async () => {
      if (released) return;
      released = true;
      if (--mine.count === 0) {
        if (held.get(key) === mine) held.delete(key);
        await mine.close();
      }
    },
  };
}

/**
 * Makes sure HTTP-01 requests on `host:port` reach the challenge answers while the returned
 * release function is not called: binds a small server when the port is free, else relies on
 * the server already there.
 *
 * @example
 * ```ts ignore
 * const hold = await holdHttpSolver("", 80, logger);
 * try { ... } finally { await hold.release(); }
 * ```
 */
export function holdHttpSolver(
  host: string,
  port: number,
  logger: Logger,
): Promise<SolverHold> {
  const key = `http/${host}:${port}`;
  return acquire(key, () => {
    let server: Deno.HttpServer;
    try {
      server = Deno.serve({
        hostname: host || "0.0.0.0",
        port,
        onListen() {},
        onError: () => new Response(null, { status: 500 }),
      }, async (req) => (await answerHttpChallenge(req)) ?? new Response(null, { status: 404 }));
    } catch (e) {
      if (inUse(e)) {
        logger.debug("http-01 challenge port in use; the server on it answers", { port });
        return Promise.resolve(null);
      }
      throw e;
    }
    logger.info("started standalone http-01 challenge server", { address: `${host}:${port}` });
    return Promise.resolve({
      count: 0,
      close: async () => {
        await server.shutdown();
        logger.debug("stopped standalone http-01 challenge server", { port });
      },
    });
  });
}

const alpnQueues = new Map<string, Promise<void>>();

/**
 * Answers TLS-ALPN-01 handshakes on `host:port` with `certificate` (the challenge certificate
 * of one name) until the returned hold is released: a TLS listener offering only
 * `acme-tls/1`. One challenge at a time holds a port (later ones wait for it): the listener
 * has one certificate. When the port is taken — by an HTTPS listener of ours or anything
 * else — `standalone` is false and nothing answers: Deno's per-handshake certificate path
 * (the one HTTPS listeners use) refuses a certificate with the critical `acmeIdentifier`
 * extension, so the challenge cannot be answered there (the caller uses HTTP-01 instead).
 *
 * @example
 * ```ts ignore
 * const hold = await holdTlsAlpnSolver("", 443, challengeCert, logger);
 * ```
 */
export async function holdTlsAlpnSolver(
  host: string,
  port: number,
  certificate: { cert: string; key: string },
  logger: Logger,
): Promise<SolverHold> {
  const key = `${host}:${port}`;
  const before = alpnQueues.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  const tail = before.then(() => mine);
  alpnQueues.set(key, tail);
  const finish = () => {
    done();
    if (alpnQueues.get(key) === tail) alpnQueues.delete(key);
  };
  await before;
  let listener: Deno.TlsListener;
  try {
    listener = Deno.listenTls({
      hostname: host || "0.0.0.0",
      port,
      cert: certificate.cert,
      key: certificate.key,
      alpnProtocols: ["acme-tls/1"],
    });
  } catch (e) {
    finish();
    if (inUse(e)) {
      logger.debug("tls-alpn-01 challenge port in use", { port });
      return { standalone: false, release: async () => {} };
    }
    throw e;
  }
  logger.info("started standalone tls-alpn-01 challenge server", { address: key });
  const conns = new Set<Deno.TlsConn>();
  const loop = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      conn.handshake().catch(() => {}).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })().catch(() => {});
  let released = false;
  return {
    standalone: true,
    release: async () => {
      if (released) return;
      released = true;
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await loop;
      logger.debug("stopped standalone tls-alpn-01 challenge server", { port });
      finish();
    },
  };
}
