/**
 * HTTPS on the `deno` listener engine with a certificate chosen per handshake by server name.
 *
 * `Deno.serve` takes one certificate per listener. Deno 2.9 has, internally, what SNI needs:
 * `Deno.listenTls` with a certificate resolver (called with the client's SNI, may be async)
 * and `serveHttpOnListener` (Deno.serve's HTTP/1.1 + HTTP/2 server on that listener). Both are
 * reached through `Deno[Deno.internal]`; when a Deno lacks them, the listener falls back to
 * `Deno.serve` with the certificate of the empty server name (one certificate, no SNI) and
 * says so in the log.
 *
 * Deno keeps a listener's answer for each server name for the listener's life (errors too).
 * So when the certificate for a name this listener already answered changes (renewal, a
 * reload with other certificates, a name that had none), the listener is replaced by a new
 * one (a generation) that asks again. The generations overlap on one port (SO_REUSEPORT), so
 * no connection is refused: this needs `--unstable-net` (the project's deno.json sets it;
 * `gatehouse start` passes it). The old generation then drains for a second, answering
 * HTTP/1.1 requests with `Connection: close` so that busy clients move to the new one between
 * two requests, and stops: its in-flight requests finish, its idle connections close (HTTP/2
 * clients get a GOAWAY). A connection the old generation accepted but had not read a request
 * from at that instant (mid-handshake) is closed. Without `--unstable-net`, HTTPS listeners of
 * the `deno` engine run on the `node` engine instead (see `listeners.ts`), which chooses per
 * handshake with no cache and needs no replacement.
 *
 * @module
 */
import type { CertificateGetter, CertifiedKey } from "./cache.ts";
import { normalizeName } from "./cache.ts";

/** Options of a Deno-engine TLS listener. */
export interface DenoTlsOptions {
  /** Host to bind ("0.0.0.0", "::" or an address). */
  hostname: string;
  /** Port; 0 picks one (later generations reuse it). */
  port: number;
  /** The getter to ask now (the newest config's). */
  getter(): CertificateGetter;
  /** Answers one request. */
  handler(
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ): Response | Promise<Response>;
  /** Logs what happened (replacement, fallback). */
  log?(msg: string, fields?: Record<string, unknown>): void;
  /** The ALPN protocols to offer (default `h2`, `http/1.1`); a change replaces the listener. */
  alpn?(): string[];
  /** Called when a listener generation (a new listening socket) opened. */
  onListener?(): void;
}

/** A running Deno-engine TLS listener. */
export interface DenoTlsServer {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting; in-flight requests finish. */
  shutdown(): Promise<void>;
  /** Resolves when every generation finished. */
  readonly finished: Promise<void>;
  /** Re-checks the names answered so far and replaces the listener when one changed. */
  certificatesChanged(): void;
  /** How many listener generations were opened (tests, logs). */
  readonly generations: number;
}

interface Internals {
  resolverSymbol: symbol;
  serveHttpOnListener(
    listener: Deno.TlsListener,
    signal: AbortSignal,
    handler: DenoTlsOptions["handler"],
    onError: (e: unknown) => Response,
    onListen: () => void,
  ): { shutdown(): Promise<void>; finished: Promise<void> };
}

function internals(): Internals | undefined {
  const d = Deno as unknown as Record<symbol | string, unknown>;
  const i = d[d.internal as symbol] as Partial<Internals> | undefined;
  if (typeof i?.resolverSymbol !== "symbol" || typeof i.serveHttpOnListener !== "function") {
    return undefined;
  }
  return i as Internals;
}

/** True when this Deno runs with `--unstable-net` (SO_REUSEPORT on TLS listeners allowed). */
export function reusePortAvailable(): boolean {
  return Deno.build.os === "linux" &&
    typeof (Deno as unknown as Record<string, unknown>).listenDatagram === "function";
}

/** Resolver answers a generation keeps before it is replaced (bounds Deno's per-name cache). */
export const MAX_ANSWERS_PER_GENERATION = 10_000;

interface Generation {
  server: { shutdown(): Promise<void>; finished: Promise<void> };
  alpn: string;
  answers: Map<string, string | null>;
  draining: boolean;
}

/** How long a replaced generation keeps answering (with `Connection: close`) before it stops. */
export const DRAIN_MS = 1000;

function closing(res: Response): Response {
  try {
    res.headers.set("connection", "close");
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set("connection", "close");
    return copy;
  }
}

function onError(): Response {
  return new Response("500 Internal Server Error", { status: 500 });
}

/**
 * Opens a Deno-engine TLS listener.
 *
 * @example
 * ```ts ignore
 * const s = await serveDenoTls({ hostname: "127.0.0.1", port: 0, getter: () => g, handler });
 * ```
 */
export async function serveDenoTls(o: DenoTlsOptions): Promise<DenoTlsServer> {
  const i = reusePortAvailable() ? internals() : undefined;
  let port = o.port;
  let generations = 0;
  let stopping = false;
  const draining = new Set<Promise<void>>();
  let current: Generation;
  let checking: Promise<void> | undefined;
  let again = false;

  if (!i) {
    o.log?.(
      "SNI and live certificates need --unstable-net and Deno's certificate resolver: " +
        "serving one certificate on this listener",
      { port },
    );
    const one = await o.getter().getCertificate("");
    if (!one) throw new Error("no certificate for clients without SNI, and SNI is unavailable");
    const server = Deno.serve({
      hostname: o.hostname,
      port,
      cert: one.cert,
      key: one.key,
      onListen() {},
    }, o.handler);
    port = (server.addr as Deno.NetAddr).port;
    return {
      port,
      generations: 1,
      shutdown: () => server.shutdown(),
      finished: server.finished,
      certificatesChanged() {},
    };
  }

  const open = (): Generation => {
    const answers = new Map<string, string | null>();
    const resolver = async (sni: string): Promise<CertifiedKey> => {
      const name = normalizeName(sni);
      let got: CertifiedKey | null = null;
      try {
        got = await o.getter().getCertificate(name);
      } finally {
        answers.set(name, got ? got.cert : null);
        if (answers.size > MAX_ANSWERS_PER_GENERATION) schedule();
      }
      if (!got) throw new Error(`no certificate for ${JSON.stringify(name)}`);
      return got;
    };
    const alpn = o.alpn?.() ?? ["h2", "http/1.1"];
    const listener = Deno.listenTls(
      {
        hostname: o.hostname,
        port,
        alpnProtocols: alpn,
        reusePort: true,
        [i.resolverSymbol]: resolver,
      } as unknown as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem,
    );
    port = (listener.addr as Deno.NetAddr).port;
    const gen = { answers, draining: false, alpn: alpn.join(",") } as Generation;
    const handler = (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
      if (!gen.draining || !req.headers.has("host")) return o.handler(req, info);
      // HTTP/1.1 on a replaced listener: the client reconnects (to the new one) after this.
      const res = o.handler(req, info);
      return res instanceof Response ? closing(res) : res.then(closing);
    };
    gen.server = i.serveHttpOnListener(
      listener,
      new AbortController().signal,
      handler,
      onError,
      () => {},
    );
    gen.server.finished.catch(() => {});
    generations++;
    o.onListener?.();
    return gen;
  };

  const retire = (g: Generation, drainMs = 0) => {
    g.draining = true;
    const p = new Promise((r) => setTimeout(r, drainMs))
      .then(() => g.server.shutdown())
      .then(() => g.server.finished)
      .catch(() => {});
    const tracked = p.finally(() => draining.delete(tracked));
    draining.add(tracked);
    return p;
  };

  const rotate = () => {
    const old = current;
    current = open();
    void retire(old, DRAIN_MS);
  };

  const check = async () => {
    const g = current;
    if (g.answers.size > MAX_ANSWERS_PER_GENERATION) return rotate();
    if (o.alpn && o.alpn().join(",") !== g.alpn) {
      o.log?.("protocols changed: replacing the TLS listener", { port });
      return rotate();
    }
    const getter = o.getter();
    for (const [name, had] of g.answers) {
      const now = await getter.getCertificate(name).catch(() => null);
      if ((now ? now.cert : null) !== had) {
        o.log?.("certificates changed: replacing the TLS listener", { name, port });
        return rotate();
      }
    }
  };

  function schedule(): void {
    if (stopping) return;
    if (checking) {
      again = true;
      return;
    }
    checking = (async () => {
      do {
        again = false;
        await new Promise((r) => setTimeout(r, 20)); // several changes at once: one check
        if (stopping) return;
        try {
          await check();
        } catch (e) {
          o.log?.("replacing the TLS listener failed", { error: (e as Error).message, port });
        }
      } while (again);
    })().finally(() => (checking = undefined));
  }

  current = open();
  let finishAll!: () => void;
  const finished = new Promise<void>((r) => (finishAll = r));
  return {
    get port() {
      return port;
    },
    get generations() {
      return generations;
    },
    async shutdown() {
      stopping = true;
      await checking;
      void retire(current);
      void Promise.all([...draining]).then(() => finishAll());
    },
    finished,
    certificatesChanged: schedule,
  };
}
