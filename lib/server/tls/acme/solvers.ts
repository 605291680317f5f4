/**
 * Standalone challenge listeners (certmagic's `httpSolver` / `tlsALPNSolver`): while a
 * challenge is pending, the solver tries to bind the challenge port. When the port is free
 * (no server of ours listens there), it answers from a small listener of its own for as long
 * as challenges need it; when the port is taken, the server already on it answers (the `http`
 * app answers HTTP-01 before its routes; an HTTPS listener answers TLS-ALPN-01 when its engine
 * can offer `acme-tls/1`, see docs/server.md).
 *
 * One listener per address is shared by concurrent challenges (reference-counted).
 *
 * @module
 */
import type net from "node:net";
import type tls from "node:tls";
import type { Logger } from "../../module.ts";
import { answerHttpChallenge, tlsAlpnChallengeCertificate } from "./challenges.ts";

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
async function acquire(
  key: string,
  open: () => Promise<Held | null>,
): Promise<() => Promise<void>> {
  let h = held.get(key);
  if (!h) {
    let p = opening.get(key);
    if (!p) {
      p = open().finally(() => opening.delete(key));
      opening.set(key, p);
    }
    const opened = await p;
    if (!opened) return async () => {};
    h = held.get(key) ?? opened;
    held.set(key, h);
  }
  const mine = h;
  mine.count++;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (--mine.count === 0) {
      if (held.get(key) === mine) held.delete(key);
      await mine.close();
    }
  };
}

/**
 * Makes sure HTTP-01 requests on `host:port` reach the challenge answers while the returned
 * release function is not called: binds a small server when the port is free, else relies on
 * the server already there.
 *
 * @example
 * ```ts ignore
 * const release = await holdHttpSolver("", 80, logger);
 * try { ... } finally { await release(); }
 * ```
 */
export function holdHttpSolver(
  host: string,
  port: number,
  logger: Logger,
): Promise<() => Promise<void>> {
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

/**
 * Makes sure TLS-ALPN-01 handshakes on `host:port` get the challenge certificates while the
 * returned release function is not called: binds a TLS listener offering only `acme-tls/1`
 * when the port is free, else relies on the HTTPS listener already there.
 *
 * @example
 * ```ts ignore
 * const release = await holdTlsAlpnSolver("", 443, logger);
 * ```
 */
export function holdTlsAlpnSolver(
  host: string,
  port: number,
  logger: Logger,
): Promise<() => Promise<void>> {
  const key = `tls/${host}:${port}`;
  return acquire(key, async () => {
    const tlsMod: typeof tls = await import("node:tls");
    const contexts = new Map<string, tls.SecureContext>();
    const server = tlsMod.createServer({
      ALPNProtocols: ["acme-tls/1"],
      SNICallback(name, cb) {
        const c = tlsAlpnChallengeCertificate(name);
        if (!c) return cb(new Error(`no tls-alpn-01 challenge for ${name}`));
        let ctx = contexts.get(c.cert);
        if (!ctx) contexts.set(c.cert, ctx = tlsMod.createSecureContext(c));
        cb(null, ctx);
      },
    }, (socket) => socket.end());
    server.on("tlsClientError", () => {});
    const sockets = new Set<net.Socket>();
    server.on("connection", (s: net.Socket) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host || "0.0.0.0", () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (e) {
      if (inUse(e)) {
        logger.debug("tls-alpn-01 challenge port in use; the server on it answers", { port });
        return null;
      }
      throw e;
    }
    logger.info("started standalone tls-alpn-01 challenge server", {
      address: `${host}:${port}`,
    });
    return {
      count: 0,
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
          logger.debug("stopped standalone tls-alpn-01 challenge server", { port });
        }),
    };
  });
}
