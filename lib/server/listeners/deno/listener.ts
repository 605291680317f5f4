/**
 * HTTPS on the `deno` listener engine with a certificate chosen per handshake by server name.
 *
 * `Deno.serve` takes one certificate per listener. Deno 2.9 has, internally, what SNI needs:
 * `Deno.listenTls` with a certificate resolver (called with the client's SNI, may be async)
 * and `serveHttpOnConnection` (Deno.serve's HTTP/1.1 + HTTP/2 server on one connection). Both
 * are reached through `Deno[Deno.internal]`; when a Deno lacks them, the listener falls back to
 * `Deno.serve` with the certificate of the empty server name (one certificate, no SNI) and
 * says so in the log.
 *
 * Two kinds of listener (a generation each):
 * - **fixed**: when the certificate getter says one certificate answers every name
 *   (`fixedCertificate`: it covers every host the server's routes serve, no on-demand policy),
 *   the listener holds that certificate itself, as `Deno.serve` does: one TLS configuration
 *   for the listener's life, built once, with its session cache, so clients resume sessions.
 *   A name no certificate covers and no route serves gets it too (the client's name check
 *   fails) instead of a failed handshake.
 * - **resolver**: otherwise Deno asks the getter once per server name and keeps the answer for
 *   the listener's life (errors too), building a TLS configuration per handshake from it (no
 *   session resumption across connections).
 *
 * Neither can change its answer, so when it would change (renewal, a reload with other
 * certificates, a name that had none, a second certificate appearing) the listener is replaced
 * by a new one bound to the same port (SO_REUSEPORT, which needs `--unstable-net`: the
 * project's deno.json sets it, `gatehouse start` passes it). Connections are accepted here and
 * each is served on its own (see `accept.ts`), so the old listener closes without touching
 * what it accepted: keep-alive connections go on with the certificate they were made with.
 * When the routes may upgrade connections (WebSocket), HTTP/1.1 connections are relayed to a
 * loopback server instead, which can hand them over (see `upgrade_relay.ts`).
 * What the kernel still holds for the old socket when it closes (connections it completed,
 * handshakes under way) would be reset, so the port is handed over first: new connections are
 * steered to the new socket and the old one closes once nothing can reach it any more (see
 * `handover.ts`; Linux, needs the `ffi` permission). One replacement at a time: a
 * change during a handover waits for it. Where the handover is impossible (no `ffi`
 * permission, another process's socket on the address), the old listener closes at a quiet
 * moment (nothing to accept for 2 ms, at most 1 s), which leaves the instant it closes: a
 * connection the kernel queued for it just then is reset unless `net.ipv4.tcp_migrate_req=1`
 * (Linux then hands such connections to the new socket); the log says so once. Without
 * `--unstable-net`, HTTPS listeners of the `deno` engine run on the `node` engine instead (see
 * `listeners.ts`).
 *
 * @module
 */
import { type Libc, libc } from "./_libc.ts";
import { answeredPlainHttp, deferAccept, deferListenerAccept } from "./plain_http_peek.ts";
import type { CertifiedKey } from "../../module/listener.ts";
import { normalizeName } from "../../net/host.ts";
import {
  type AcceptLoop,
  acceptLoop,
  ConnectionSet,
  peerOfConn,
  type ServeOnConnection,
} from "./accept.ts";
import { certificateNames, pemDecode } from "../../pki/der.ts";
import {
  beginHandover,
  cancelHandover,
  handoverUnavailable,
  newListener,
  type OwnSocket,
  pin,
  unavailableWhy,
} from "./handover.ts";
import {
  type BoundAddress,
  type LinuxSockets,
  linuxSockets,
  type Unavailable,
} from "./linux_sockets.ts";
import { serveOneCertificate } from "./one_certificate.ts";
import type { DenoTlsOptions, DenoTlsServer } from "./tls_server.ts";

interface Internals {
  resolverSymbol: symbol;
  serveHttpOnConnection: ServeOnConnection;
}

function internals(): Internals | undefined {
  const d = Deno as unknown as Record<symbol | string, unknown>;
  const i = d[d.internal as symbol] as Partial<Internals> | undefined;
  if (typeof i?.resolverSymbol !== "symbol" || typeof i.serveHttpOnConnection !== "function") {
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
  mode: "fixed" | "resolver";
  /** fixed: the certificate held. */
  fixed?: string;
  /** The ALPN protocols offered, joined by commas. */
  alpn: string;
  /** resolver: what was answered per name. */
  answers: Map<string, string | null>;
  loop: AcceptLoop;
  /** resolver: the server names Deno asked for, as it asked (what a successor is warmed with). */
  snis: Set<string>;
  /** The listening socket, when identified (a handover needs it). */
  socket?: OwnSocket;
  /** Why the socket is not identified. */
  unknown?: string;
}

/**
 * The server names a new resolver listener is asked for before it takes over: those its
 * predecessor was asked for and had a certificate for (asking again for a name that had none
 * could ask an on-demand permission endpoint again), or, after a listener holding one
 * certificate, that certificate's DNS names (wildcards aside) and no name at all.
 */
function warmNames(old: Generation, next: Generation): string[] {
  if (next.mode !== "resolver") return [];
  if (old.mode === "resolver") {
    return [...old.snis].filter((sni) => old.answers.get(normalizeName(sni)));
  }
  const names = new Set([""]);
  try {
    for (const n of certificateNames(pemDecode(old.fixed ?? "")[0]?.der ?? new Uint8Array())) {
      if (!n.startsWith("*.") && !n.includes(":") && !/^[\d.]+$/.test(n)) names.add(n);
    }
  } catch { /* no names to add */ }
  return [...names];
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
  if (!i) return await serveOneCertificate(o);
  let port = o.port;
  let generations = 0;
  let stopping = false;
  const connections = new ConnectionSet();
  const serve = (conn: Deno.TlsConn) => {
    const since = performance.now();
    const options = (relay: boolean) => ({
      handler: o.handler,
      peer: peerOfConn(conn),
      localAddress: o.localAddress,
      tls: true,
      connection: o.connection?.(),
      since,
      relay,
    });
    if (!o.upgrades?.()) return connections.serve(i.serveHttpOnConnection, conn, options(false));
    // routes that may upgrade: HTTP/1.1 connections (every WebSocket: HTTP/2 has no upgrade)
    // are relayed to a server that can hand them over (see upgrade_relay.ts)
    conn.handshake().then((h) => {
      connections.serve(i.serveHttpOnConnection, conn, options(h.alpnProtocol !== "h2"));
    }).catch(() => {
      try {
        conn.close();
      } catch { /* closed */ }
    });
  };
  const retiring = new Set<Promise<void>>();
  let current: Generation;
  let checking: Promise<void> | undefined;
  let again = false;
  /** The handover in progress: the next replacement waits for it. */
  let handingOver: Promise<void> | undefined;
  // workers share the address: a handover would steer every worker's connections
  const kernel: LinuxSockets | Unavailable | "shared" = o.shared ? "shared" : linuxSockets();
  let bound: BoundAddress | undefined;
  /** This server's listening sockets the kernel still listed at the last open: inode → fd. */
  const ours = new Map<number, number>();

  const open = (fixed: CertifiedKey | null): Generation => {
    const answers = new Map<string, string | null>();
    const snis = new Set<string>();
    const resolver = async (sni: string): Promise<CertifiedKey> => {
      const name = normalizeName(sni);
      if (snis.size < MAX_ANSWERS_PER_GENERATION) snis.add(sni);
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
    const options: Record<string | symbol, unknown> = {
      hostname: o.hostname,
      port,
      alpnProtocols: alpn,
      reusePort: true,
    };
    if (fixed) Object.assign(options, { cert: fixed.cert, key: fixed.key });
    else options[i.resolverSymbol] = resolver;
    const expected = typeof kernel === "string" ? -1 : kernel.nextDescriptor();
    const listener = Deno.listenTls(
      options as unknown as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem,
    );
    const addr = listener.addr as Deno.NetAddr;
    port = addr.port;
    bound ??= { family: addr.hostname.includes(":") ? 6 : 4, address: addr.hostname, port };
    generations++;
    /** The C library once the socket defers accepting: connections are peeked at. */
    let peek: Libc | undefined;
    const gen: Generation = {
      mode: fixed ? "fixed" : "resolver",
      fixed: fixed?.cert,
      alpn: alpn.join(","),
      answers,
      snis,
      loop: acceptLoop(listener, (conn) => {
        // plain HTTP to this HTTPS port gets Go's 400 (see plain_http_peek.ts)
        if (peek && answeredPlainHttp(peek, conn)) return;
        serve(conn);
      }),
    };
    if (typeof kernel !== "string") {
      const socket = newListener(kernel, bound, ours, expected);
      if (typeof socket === "string") gen.unknown = socket;
      else {
        gen.socket = socket;
        const c = libc();
        if (typeof c !== "string" && deferAccept(c, socket.fd)) peek = c;
      }
    } else if (kernel === "shared") {
      // a worker's listener (no handover of its own): its socket is found by its address
      const c = libc();
      if (typeof c !== "string" && deferListenerAccept(c, listener)) peek = c;
    }
    o.onListener?.();
    return gen;
  };

  const retire = (g: Generation, quiet: boolean) => {
    track(g.loop.close(quiet));
  };

  const track = (p: Promise<void>) => {
    const tracked = p.catch(() => {}).finally(() => retiring.delete(tracked));
    retiring.add(tracked);
    return tracked;
  };

  /** Hands the port over from `old` to `next` (pinned to `old` already: see `rotate`). */
  const handOver = (k: LinuxSockets, at: BoundAddress, old: Generation & { socket: OwnSocket }) => {
    const next = current;
    const fallBack = (why: string) => {
      cancelHandover(k, old.socket);
      handoverUnavailable(o.log, why, port);
      retire(old, true);
    };
    if (!next.socket) return fallBack(next.unknown ?? "the new listening socket was not found");
    const socket = next.socket;
    handingOver = track((async () => {
      const h = await beginHandover(k, at, old.socket, socket, warmNames(old, next));
      if (typeof h === "string") return fallBack(h);
      if (h.warmed.unanswered > 0) {
        o.log?.("a new TLS listener did not answer every probe before taking over", {
          port,
          names: h.warmed.unanswered,
        });
      }
      try {
        const { unfinished } = await h.drained(() => stopping);
        if (unfinished > 0 && !stopping) {
          o.log?.("replaced TLS listener closed with handshakes still under way: they are reset", {
            port,
            handshakes: unfinished,
          });
        }
      } catch (e) {
        o.log?.("TLS listener handover failed", { error: (e as Error).message, port });
      }
      await old.loop.close(false);
      await h.finish(() => !stopping && current === next).catch((e) =>
        o.log?.("TLS listener handover failed", { error: (e as Error).message, port })
      );
    })()).finally(() => (handingOver = undefined));
  };

  const rotate = (fixed: CertifiedKey | null, why: string, name?: string) => {
    const old = current;
    // before the new socket listens, new connections are pinned to the old one
    let pinned: string | undefined = kernel === "shared"
      ? "worker processes share the address"
      : typeof kernel === "string"
      ? unavailableWhy(kernel)
      : !old.socket || !bound
      ? (old.unknown ?? "the listening socket was not identified")
      : pin(kernel, old.socket);
    const first = generations === 1;
    current = open(fixed);
    // The first listener replaced before it answered any handshake with another certificate
    // than the one taking over (the certificates obtained once the server started) is nothing
    // to report: that is every start, also when a client's handshake came between the
    // certificate's arrival and the replacement and already got it.
    const served = old.mode === "fixed" ||
      [...old.answers.values()].some((c) => c !== null && c !== fixed?.cert);
    if (!first || served) {
      o.log?.(`certificates changed: replacing the TLS listener (${why})`, {
        port,
        mode: current.mode,
        ...(name === undefined ? {} : { name }),
      });
    }
    if (pinned === undefined && typeof kernel !== "string" && bound && old.socket) {
      return handOver(kernel, bound, { ...old, socket: old.socket });
    }
    pinned ??= "the listening socket was not identified";
    handoverUnavailable(o.log, pinned, port);
    retire(old, true);
  };

  const check = async () => {
    const g = current;
    const getter = o.getter();
    const fixed = (await getter.fixedCertificate?.().catch(() => null)) ?? null;
    if (o.alpn && o.alpn().join(",") !== g.alpn) return rotate(fixed, "protocols changed");
    if (fixed) {
      if (g.mode !== "fixed" || g.fixed !== fixed.cert) {
        rotate(fixed, "one certificate for every name");
      }
      return;
    }
    if (g.mode === "fixed") return rotate(null, "the certificate depends on the server name");
    if (g.answers.size > MAX_ANSWERS_PER_GENERATION) return rotate(null, "too many names answered");
    for (const [name, had] of g.answers) {
      const now = await getter.getCertificate(name).catch(() => null);
      if ((now ? now.cert : null) !== had) {
        return rotate(null, "a name's certificate changed", name);
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
        while (handingOver && !stopping) await handingOver; // one replacement at a time
        if (stopping) return;
        try {
          await check();
        } catch (e) {
          o.log?.("replacing the TLS listener failed", { error: (e as Error).message, port });
        }
      } while (again);
    })().finally(() => (checking = undefined));
  }

  current = open((await o.getter().fixedCertificate?.().catch(() => null)) ?? null);
  let finishAll!: () => void;
  const finished = new Promise<void>((r) => (finishAll = r));
  return {
    get port() {
      return port;
    },
    get generations() {
      return generations;
    },
    get mode() {
      return current.mode;
    },
    get connections() {
      return connections.size;
    },
    async shutdown() {
      if (stopping) return;
      stopping = true;
      await checking;
      // stop accepting at once (the address is free again), then let the connections drain
      retire(current, false);
      await Promise.all([...retiring]);
      void connections.shutdown().then(() => finishAll());
    },
    finished,
    certificatesChanged: schedule,
  };
}
