/**
 * Standalone challenge listeners (certmagic's `httpSolver` / `tlsALPNSolver`): while a
 * challenge is pending, the solver tries to bind the challenge port. When the port is free
 * (no server of ours listens there), it answers from a small listener of its own for as long
 * as challenges need it, shared by concurrent challenges (reference-counted). When the port is
 * taken, HTTP-01 is answered by the server already there (the `http` app answers it before its
 * routes); TLS-ALPN-01 cannot be (see {@link holdTlsAlpnSolver}).
 *
 * @module
 */
import type { Logger } from "../../module/instance.ts";
import { answerHttpChallenge } from "./challenges.ts";
import { clientHelloFromRecords, MAX_CLIENT_HELLO, parseClientHello } from "./client_hello.ts";
import { alertRecord, type ChallengeIdentity, HandshakeRefused, serverFlight } from "./tls13.ts";

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

/** A challenge listener reference: `standalone` is false when another server had the port. */
export interface SolverHold {
  /** True when this solver bound the port itself. */
  standalone: boolean;
  /** Drops the reference (the listener closes with the last one). */
  release(): Promise<void>;
}

/** Takes a reference on the listener `key`, opening it first (null: the port is taken). */
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

const alpnIdentities = new Map<string, Map<string, ChallengeIdentity>>();

/** Reads one ClientHello (bounded in size and time) and answers it with the name's identity. */
async function answerTlsAlpn(conn: Deno.Conn, identities: Map<string, ChallengeIdentity>) {
  const timer = setTimeout(() => conn.close(), 10_000);
  try {
    let buf = new Uint8Array(0);
    let message: Uint8Array | null | undefined;
    const chunk = new Uint8Array(4096);
    while ((message = clientHelloFromRecords(buf)) === undefined) {
      const n = await conn.read(chunk);
      if (n === null) return;
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      if (buf.length > MAX_CLIENT_HELLO + 5 * 4) return;
    }
    const hello = message && parseClientHello(message);
    if (!hello) {
      await conn.write(alertRecord(50)).catch(() => {});
      return;
    }
    const identity = identities.get(hello.serverName);
    if (!identity) {
      await conn.write(alertRecord(112)).catch(() => {}); // unrecognized_name
      return;
    }
    try {
      await conn.write(await serverFlight(hello, identity));
    } catch (e) {
      if (e instanceof HandshakeRefused) await conn.write(alertRecord(e.alert)).catch(() => {});
      return;
    }
    // The validator sends its Finished and closes; wait for that (bounded by the timer).
    while ((await conn.read(chunk)) !== null) { /* discard */ }
  } catch {
    /* the peer went away */
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/**
 * Answers TLS-ALPN-01 handshakes for `name` on `host:port` with the challenge certificate
 * until the returned hold is released. Deno's TLS stack refuses to load a certificate with the
 * critical `acmeIdentifier` extension, so this binds a plain TCP listener and answers with the
 * handshake of `tls13.ts` (shared by concurrent challenges, chosen by SNI). When the port is
 * taken — by an HTTPS listener of ours or anything else — `standalone` is false and nothing
 * answers: the caller uses another challenge type.
 *
 * @example
 * ```ts ignore
 * const hold = await holdTlsAlpnSolver("", 443, "example.com", identity, logger);
 * ```
 */
export async function holdTlsAlpnSolver(
  host: string,
  port: number,
  name: string,
  identity: ChallengeIdentity,
  logger: Logger,
): Promise<SolverHold> {
  const key = `tls/${host}:${port}`;
  const identities = alpnIdentities.get(key) ?? new Map<string, ChallengeIdentity>();
  const hold = await acquire(key, () => {
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ hostname: host || "0.0.0.0", port });
    } catch (e) {
      if (inUse(e)) {
        logger.debug("tls-alpn-01 challenge port in use", { port });
        return Promise.resolve(null);
      }
      throw e;
    }
    alpnIdentities.set(key, identities);
    logger.info("started standalone tls-alpn-01 challenge server", { address: `${host}:${port}` });
    const conns = new Set<Promise<void>>();
    const loop = (async () => {
      for await (const conn of listener) {
        const p = answerTlsAlpn(conn, identities).finally(() => conns.delete(p));
        conns.add(p);
      }
    })().catch(() => {});
    return Promise.resolve({
      count: 0,
      close: async () => {
        alpnIdentities.delete(key);
        listener.close();
        await loop;
        await Promise.all(conns);
        logger.debug("stopped standalone tls-alpn-01 challenge server", { port });
      },
    });
  });
  if (!hold.standalone) return hold;
  const live = alpnIdentities.get(key) ?? identities;
  live.set(name, identity);
  return {
    standalone: true,
    release: async () => {
      if (live.get(name) === identity) live.delete(name);
      await hold.release();
    },
  };
}
