/**
 * The HTTP/3 listener: a QUIC endpoint (`Deno.QuicEndpoint`, `--unstable-net`) on a UDP port,
 * ALPN `h3`, each accepted connection served by `H3Connection`.
 *
 * **One certificate per UDP port.** Deno's QUIC server takes one certificate chain per
 * listener (`endpoint.listen({cert, key})`) and has no certificate resolver: the TLS handshake
 * cannot choose a certificate by the client's server name, as the TCP listeners do. So the
 * endpoint holds one certificate:
 * - the certificate getter's fixed certificate when it has one (one certificate answers every
 *   name the server serves: the common case of one site, or one certificate for all);
 * - else, of the certificates the server's host names get, the one that covers most of them
 *   (the first name's on a tie); with no host names, the one for clients that send no name.
 *
 * `serves(host)` says whether the held certificate covers a host (its DNS and IP names, a
 * wildcard as the whole left-most label): only those hosts are told about HTTP/3 (Alt-Svc),
 * so a browser never comes over QUIC for a name whose certificate it would refuse; the other
 * hosts of the server are served over HTTP/1.1 and HTTP/2 as before. A certificate change
 * (renewal, a reload, a first certificate) is picked up by listening again on the same
 * endpoint: new connections get the new certificate, open ones keep theirs; no socket is
 * replaced.
 *
 * **Early data.** Deno's QUIC server accepts TLS 1.3 early data at the TLS level, but a
 * connection is only handed here once its handshake completed, so no request that arrived in
 * 0-RTT is served before the client proved it holds the session: a replayed 0-RTT flight never
 * completes a handshake and is never served (the effect of quic-go's `Allow0RTT: false`, which
 * Caddy's `allow_0rtt` leaves off by default).
 *
 * **Limits** (Caddy 2.6.2's quic-go defaults): 100 concurrent request streams and 100
 * unidirectional streams per connection, 30 s idle timeout, header sections up to
 * `max_header_bytes` (431 beyond). The timeouts of `read_timeout` and the like apply to the TCP
 * listeners only, as in Caddy.
 *
 * An inherited UDP socket (`fdgram/N`) is served by the same endpoint once its own socket was
 * replaced by the inherited one (see `inherited.ts`).
 *
 * `shutdown` stops new handshakes at once and sends every connection GOAWAY; `finished`
 * resolves when the last one closed (see `connection.ts`). The endpoint is kept for the next
 * listener on its address (see `endpoints.ts`: Deno frees its port only when it is collected).
 *
 * @module
 */
import type { CertificateGetter, CertifiedKey, ConnHandler } from "../../module/listener.ts";
import { normalizeName } from "../../net/host.ts";
import { certificateNames, pemDecode } from "../../pki/der.ts";
import { H3Connection } from "./connection.ts";
import { takeEndpoint } from "./endpoints.ts";

/** Caddy 2.6.2's quic-go defaults. */
export const H3_LIMITS = Object.freeze({
  maxIdleTimeoutMs: 30_000,
  maxConcurrentBidirectionalStreams: 100,
  maxConcurrentUnidirectionalStreams: 100,
});

/** At most this many host names are asked for their certificate when choosing one. */
const MAX_NAMES_ASKED = 200;

/** Options of an HTTP/3 listener. */
export interface H3ListenOptions {
  /** Host to bind ("0.0.0.0", "::" or an address). */
  hostname: string;
  /** UDP port; 0 picks one. */
  port: number;
  /** An inherited UDP socket to serve on instead (`fdgram/N`; `hostname` and `port` unused). */
  inheritedFd?: number;
  /** The certificate getter to ask now (the newest config's). */
  getter(): CertificateGetter;
  /** The host names the server serves (route host matchers), to choose a certificate by. */
  names(): readonly string[];
  /** Answers one request. */
  handler: ConnHandler;
  /** The listen address requests report as `localAddress`. */
  localAddress(): string;
  /** `max_header_bytes` for new connections. */
  maxHeaderBytes(): number;
  /** Logs listener events (certificate choice, connection errors). */
  log?(msg: string, fields?: Record<string, unknown>): void;
}

/** A running HTTP/3 listener. */
export interface H3Server {
  /** The bound UDP port. */
  readonly port: number;
  /** Stops new handshakes; open connections get GOAWAY and finish. */
  shutdown(): Promise<void>;
  /** Resolves when every connection closed and the endpoint is closed. */
  readonly finished: Promise<void>;
  /** Chooses the certificate again (the getter's certificates changed). */
  certificatesChanged(): void;
  /** True when the certificate held covers `host` (a host name or IP, port allowed). */
  serves(host: string): boolean;
  /** The certificate held (PEM chain), null before one was found. */
  readonly certificate: string | null;
  /** Open connections. */
  readonly connections: number;
  /** Resolves once the first choice of a certificate is made (tests, logs). */
  readonly ready: Promise<void>;
}

/** True when a certificate name (`*.example.com` allowed) covers `host` (lower case, no port). */
function covers(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  if (!pattern.startsWith("*.")) return false;
  const dot = host.indexOf(".");
  return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
}

/** The host of `host[:port]` or `[v6]:port`, as certificates name it. */
function hostOnly(host: string): string {
  if (host.startsWith("[")) return normalizeName(host.slice(0, host.indexOf("]") + 1));
  const colon = host.lastIndexOf(":");
  return normalizeName(colon >= 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host);
}

/**
 * Chooses the certificate of an HTTP/3 listener (see the module doc); null when there is
 * none.
 */
export async function chooseCertificate(
  getter: CertificateGetter,
  names: readonly string[],
): Promise<CertifiedKey | null> {
  const fixed = await getter.fixedCertificate?.().catch(() => null);
  if (fixed) return fixed;
  // chosen ahead of any handshake: never a certificate obtained (or asked for) on demand
  const held = (name: string) =>
    (getter.heldCertificate ?? getter.getCertificate).call(getter, name).catch(() => null);
  const counts = new Map<string, { key: CertifiedKey; n: number; first: number }>();
  let asked = 0;
  for (const raw of names) {
    const name = normalizeName(raw);
    if (!name || name.includes("*") || asked >= MAX_NAMES_ASKED) continue;
    asked++;
    const got = await held(name);
    if (!got) continue;
    const seen = counts.get(got.cert);
    if (seen) seen.n++;
    else counts.set(got.cert, { key: got, n: 1, first: asked });
  }
  let best: { key: CertifiedKey; n: number; first: number } | undefined;
  for (const c of counts.values()) {
    if (!best || c.n > best.n || (c.n === best.n && c.first < best.first)) best = c;
  }
  if (best) return best.key;
  return await held("");
}

/**
 * Opens an HTTP/3 listener.
 *
 * @example
 * ```ts ignore
 * const h3 = await serveH3({ hostname: "0.0.0.0", port: 443, getter: () => g, names: () => [],
 *   handler, localAddress: () => ":443", maxHeaderBytes: () => 1 << 20 });
 * ```
 */
export function serveH3(o: H3ListenOptions): H3Server {
  const slot = takeEndpoint(o.hostname, o.port, o.inheritedFd);
  const port = slot.port;
  let held: string | null = null;
  let heldNames: string[] = [];
  /** `serves` answers by host, for the certificate held now. */
  const served = new Map<string, boolean>();
  let stopping = false;
  const connections = new Set<H3Connection>();
  let checking: Promise<void> | undefined;
  let again = false;

  const accept = (incoming: Deno.QuicIncoming) => {
    incoming.accept<false>().then((conn) => {
      if (stopping) {
        conn.close({ closeCode: 0x100, reason: "" });
        return;
      }
      const c = new H3Connection(conn, {
        handler: o.handler,
        localAddress: o.localAddress(),
        maxHeaderBytes: o.maxHeaderBytes(),
        log: o.log,
      });
      connections.add(c);
      c.closed.finally(() => connections.delete(c));
    }, () => {/* the handshake failed: nothing to serve */});
  };

  const listen = (key: CertifiedKey) => {
    // listening again on the endpoint replaces the certificate of new connections
    slot.listen({
      alpnProtocols: ["h3"],
      cert: key.cert,
      key: key.key,
      maxIdleTimeout: H3_LIMITS.maxIdleTimeoutMs,
      maxConcurrentBidirectionalStreams: H3_LIMITS.maxConcurrentBidirectionalStreams,
      maxConcurrentUnidirectionalStreams: H3_LIMITS.maxConcurrentUnidirectionalStreams,
    });
    slot.owner = accept;
    held = key.cert;
    served.clear();
    try {
      heldNames = certificateNames(pemDecode(key.cert)[0]?.der ?? new Uint8Array());
    } catch {
      heldNames = [];
    }
  };

  const check = async () => {
    const key = await chooseCertificate(o.getter(), o.names());
    if (stopping) return;
    if (!key) {
      o.log?.("HTTP/3: no certificate to serve; HTTP/3 waits for one", { port });
      return;
    }
    if (key.cert === held) return;
    try {
      listen(key);
    } catch (e) {
      o.log?.("HTTP/3: the certificate cannot be used", { error: (e as Error).message, port });
    }
  };

  const schedule = () => {
    if (stopping) return;
    if (checking) {
      again = true;
      return;
    }
    checking = (async () => {
      do {
        again = false;
        await check().catch((e) =>
          o.log?.("HTTP/3: choosing a certificate failed", { error: (e as Error).message, port })
        );
      } while (again && !stopping);
    })().finally(() => (checking = undefined));
  };

  schedule();
  const ready = checking ?? Promise.resolve();
  let finishAll!: () => void;
  const finished = new Promise<void>((r) => (finishAll = r));

  return {
    port,
    get certificate() {
      return held;
    },
    get connections() {
      return connections.size;
    },
    ready: ready.then(() => {}),
    serves(host: string): boolean {
      if (held === null || heldNames.length === 0) return false;
      let yes = served.get(host);
      if (yes === undefined) {
        const name = hostOnly(host);
        yes = heldNames.some((n) => covers(n, name));
        if (served.size >= 1024) served.clear();
        served.set(host, yes);
      }
      return yes;
    },
    certificatesChanged: schedule,
    async shutdown() {
      if (stopping) return;
      stopping = true;
      await checking;
      slot.park();
      void Promise.all([...connections].map((c) => c.goaway().catch(() => {}))).then(finishAll);
    },
    finished,
  };
}
