/**
 * TLS on the node listener engine: the TLS server that answers each handshake from the
 * certificate source (by SNI, or one fixed certificate for every name), offers the ALPN
 * protocols the listener's connection options list (`h2`, `http/1.1`), asks for client
 * certificates when a connection policy authenticates clients, and starts TLS over a stream a
 * listener wrapper handed on. Also the TLS facts of a connection in the numbers Go's
 * `tls.ConnectionState` (and so Caddy's logs) use.
 *
 * @module
 */
import type net from "node:net";
import type tls from "node:tls";
import type { Duplex } from "node:stream";
import type { ServeInfo, TlsCertificateSource } from "../../module/listener.ts";
import { view } from "./streams.ts";

/** IANA cipher suite numbers by OpenSSL and IANA name (TLS 1.3 and the usual TLS 1.2 ones). */
const CIPHER_SUITES: Record<string, number> = {
  TLS_AES_128_GCM_SHA256: 0x1301,
  TLS_AES_256_GCM_SHA384: 0x1302,
  TLS_CHACHA20_POLY1305_SHA256: 0x1303,
  "ECDHE-ECDSA-AES128-GCM-SHA256": 0xc02b,
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 0xc02b,
  "ECDHE-ECDSA-AES256-GCM-SHA384": 0xc02c,
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 0xc02c,
  "ECDHE-RSA-AES128-GCM-SHA256": 0xc02f,
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 0xc02f,
  "ECDHE-RSA-AES256-GCM-SHA384": 0xc030,
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 0xc030,
  "ECDHE-RSA-CHACHA20-POLY1305": 0xcca8,
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 0xcca8,
  "ECDHE-ECDSA-CHACHA20-POLY1305": 0xcca9,
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 0xcca9,
};

const TLS_VERSIONS: Record<string, number> = {
  "TLSv1": 0x0301,
  "TLSv1.1": 0x0302,
  "TLSv1.2": 0x0303,
  "TLSv1.3": 0x0304,
};

/**
 * The TLS facts of a node TLS socket, in the numbers Go's `tls.ConnectionState` (and so Caddy's
 * logs) use: version 772 is TLS 1.3, cipher suite 4866 is TLS_AES_256_GCM_SHA384.
 *
 * @example
 * ```ts
 * import { tlsFacts } from "./tls.ts";
 * // tlsFacts(request.socket) → { version: 772, cipherSuite: 4866, resumed: false, ... }
 * ```
 */
export function tlsFacts(s: tls.TLSSocket): NonNullable<ServeInfo["tls"]> {
  const cipher = s.getCipher?.();
  const name = cipher?.standardName ?? cipher?.name ?? "";
  const sni = (s as unknown as { servername?: string | false }).servername;
  const facts: NonNullable<ServeInfo["tls"]> = {
    version: TLS_VERSIONS[s.getProtocol?.() ?? ""] ?? 0,
    cipherSuite: CIPHER_SUITES[name] ?? CIPHER_SUITES[cipher?.name ?? ""] ?? 0,
    resumed: !!s.isSessionReused?.(),
    proto: typeof s.alpnProtocol === "string" ? s.alpnProtocol : "",
    serverName: typeof sni === "string" ? sni : "",
  };
  const chain = peerChain(s);
  if (chain.length) facts.clientCertificates = chain;
  return facts;
}

/** The certificates a TLS peer sent, leaf first (DER). */
function peerChain(s: tls.TLSSocket): Uint8Array[] {
  const out: Uint8Array[] = [];
  let c: tls.DetailedPeerCertificate | undefined;
  try {
    c = s.getPeerCertificate?.(true) as tls.DetailedPeerCertificate | undefined;
  } catch {
    return out;
  }
  const seen = new Set<string>();
  while (c && c.raw && c.raw.length) {
    const der = view(c.raw);
    const key = `${der.length}:${c.fingerprint256 ?? ""}`;
    if (seen.has(key)) break;
    seen.add(key);
    out.push(der.slice());
    c = c.issuerCertificate;
  }
  return out;
}

/** The TLS side of a node listener. */
export interface NodeTls {
  /** Accepts raw connections (`emit("connection", socket)`); emits `secureConnection`. */
  readonly server: tls.Server;
  /** Offers `alpn` to the connections accepted from now on. */
  offer(alpn: readonly string[]): void;
  /** Certificates or client authentication changed: new handshakes follow. */
  refresh(): Promise<void>;
  /**
   * TLS over a stream the listener wrappers handed on, with the certificate for `serverName`
   * looked up first (Deno's TLS over a stream cannot wait for an asynchronous SNI callback);
   * null when there is no certificate for the name. Emits `secure` when the handshake is done.
   */
  over(
    stream: net.Socket | Duplex,
    serverName: string,
    alpn: readonly string[],
  ): Promise<tls.TLSSocket | null>;
}

/**
 * Starts the TLS side of a node listener over a certificate source (asked at each handshake).
 *
 * @example
 * ```ts ignore
 * const t = await nodeTls(() => source);
 * t.server.on("secureConnection", (s) => console.log(s.alpnProtocol));
 * t.server.emit("connection", rawSocket);
 * ```
 */
export async function nodeTls(source: () => TlsCertificateSource): Promise<NodeTls> {
  const nodeTls = (await import("node:tls")).default;
  // Contexts are reused while the certificate is the same one.
  const contexts = new Map<string, tls.SecureContext>();
  const contextOf = (c: { cert: string; key: string }) => {
    let ctx = contexts.get(c.cert);
    if (!ctx) {
      if (contexts.size > 1000) contexts.clear();
      ctx = nodeTls.createSecureContext({ cert: c.cert, key: c.key });
      contexts.set(c.cert, ctx);
    }
    return ctx;
  };
  const sniCallback = (name: string, cb: (e: Error | null, ctx?: tls.SecureContext) => void) => {
    source().getCertificate(name.toLowerCase()).then(
      (c) => c ? cb(null, contextOf(c)) : cb(new Error(`no certificate for ${name}`)),
      (e) => cb(e as Error),
    );
  };
  // One certificate for every name (see `fixedCertificate`): the server's own context answers
  // every handshake and no SNI callback runs. Deno's TLS server reads the callback per
  // connection (`_SNICallback`); the per-handshake path costs ~10% more CPU per handshake and
  // ~100 MiB more resident under a handshake load (measured in bench/http).
  const fixedOf = async () => {
    const s = source();
    if (s.requestsClientCertificates) return null; // client checks follow the SNI
    return (await s.fixedCertificate?.().catch(() => null)) ?? null;
  };
  const fixed = await fixedOf();
  const first = fixed ?? await source().getCertificate("");
  const server = nodeTls.createServer({
    // asked per server below; verified by the connection policy's check, not by OpenSSL
    requestCert: !!source().requestsClientCertificates,
    rejectUnauthorized: false,
    ...(first ? { cert: first.cert, key: first.key } : {}),
    ALPNProtocols: ["h2", "http/1.1"],
    SNICallback: sniCallback,
  });
  // Deno's TLS server reads these per connection: a reload's changes reach new connections.
  const slots = server as unknown as {
    _SNICallback?: unknown;
    ALPNProtocols?: string[];
    requestCert: boolean;
  };
  const sniSwitch = "_SNICallback" in server;
  if (sniSwitch && fixed) slots._SNICallback = null;
  let last = first?.cert;
  let offered: readonly string[] = [];
  return {
    server,
    offer(alpn) {
      if (alpn === offered) return;
      offered = alpn;
      slots.ALPNProtocols = [...alpn];
    },
    async refresh() {
      // a reload may start or stop authenticating clients: new connections follow it
      slots.requestCert = !!source().requestsClientCertificates;
      const one = await fixedOf();
      const c = one ?? await source().getCertificate("").catch(() => null);
      if (c && c.cert !== last) {
        last = c.cert;
        server.setSecureContext({ cert: c.cert, key: c.key });
      }
      if (sniSwitch) slots._SNICallback = one ? null : sniCallback;
    },
    async over(stream, serverName, alpn) {
      const c = await source().getCertificate(serverName).catch(() => null);
      if (!c) return null;
      const secureContext = contextOf(c);
      return new nodeTls.TLSSocket(stream as net.Socket, {
        isServer: true,
        ALPNProtocols: [...alpn],
        requestCert: !!source().requestsClientCertificates,
        rejectUnauthorized: false,
        secureContext,
        SNICallback: (_name: string, cb: (e: Error | null, ctx?: tls.SecureContext) => void) =>
          cb(null, secureContext),
      });
    },
  };
}
