/**
 * Certificate managers (an automation policy's `get_certificate`, namespace
 * `tls.get_certificate`, Caddy's `certmanagers.go`): modules asked for a certificate during a
 * handshake when the cache has none for the server name. The first that returns one is
 * served; the certificate is not cached by the `tls` app (the manager decides).
 *
 * `http` (`tls.get_certificate.http`): `url` is fetched with the query parameters
 * `server_name` (the SNI) and, when the listener is bound to one address, `local_ip`. An
 * answer `200` with a PEM body holding the chain (leaf first) and its private key is the
 * certificate; `204` means "not mine" (the next manager or the usual handling); any other
 * status is an error (logged; the handshake fails). Caddy also sends `signature_schemes` and
 * `cipher_suites` from the ClientHello: the listeners here do not expose them, so they are
 * not sent. On the `deno` engine a listener keeps its answer for a name until its
 * certificates change (see `listeners/deno/listener.ts`), so the URL is asked once per name there; the
 * `node` engine asks at every handshake, as Caddy does.
 *
 * `tailscale` is refused at load (see `unavailable.ts`).
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { certificateFacts } from "../pki/x509.ts";
import type { CertifiedKey } from "../module/listener.ts";
import { Decoder } from "../config/decode.ts";

/** What a manager learns of a handshake. */
export interface HandshakeInfo {
  /** The SNI (lower case; empty when none was sent). */
  serverName: string;
  /** The listener's address when it is bound to one (not a wildcard address). */
  localIp?: string;
}

/** A certificate manager module (certmagic's `Manager`). */
export interface CertificateManagerModule extends ModuleInstance {
  /** A certificate for the handshake, or null when this manager has none for it. */
  getCertificate(hello: HandshakeInfo): Promise<CertifiedKey | null>;
}

const FETCH_TIMEOUT_MS = 10_000;

/** `tls.get_certificate.http`: a certificate fetched from a URL per handshake. */
export class HttpCertGetter implements CertificateManagerModule {
  /** The configured URL. */
  readonly url: URL;

  /** Creates a getter for `url` (http or https). */
  constructor(url: URL) {
    this.url = url;
  }

  /** Asks the URL (see the module doc for the exchange). */
  async getCertificate(hello: HandshakeInfo): Promise<CertifiedKey | null> {
    const u = new URL(this.url);
    u.searchParams.set("server_name", hello.serverName);
    if (hello.localIp) u.searchParams.set("local_ip", hello.localIp);
    const r = await fetch(u, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (r.status === 204) {
      await r.body?.cancel();
      return null;
    }
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${this.url.origin}: got HTTP ${r.status}`);
    const certs = body.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
    const key = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/.exec(
      body,
    );
    if (!certs?.length || !key) {
      throw new Error(
        `${this.url.origin}: the answer must hold PEM certificates and a PEM private key`,
      );
    }
    const facts = await certificateFacts(certs[0]);
    if (Date.now() > facts.notAfter.getTime()) {
      throw new Error(`${this.url.origin}: the certificate for ${hello.serverName} has expired`);
    }
    return { cert: certs.join("\n") + "\n", key: key[0] + "\n" };
  }

  /** Nothing to release. */
  cleanup(): void {}
}

/**
 * Registry entry of `tls.get_certificate.http`.
 *
 * @example
 * ```ts
 * import { httpCertGetterModule } from "./cert_managers.ts";
 * httpCertGetterModule.id; // "tls.get_certificate.http"
 * ```
 */
export const httpCertGetterModule: ModuleDefinition<HttpCertGetter> = {
  id: "tls.get_certificate.http",
  create(config) {
    const d: Decoder = new Decoder(config, "tls.get_certificate.http").fields(["url"]);
    const raw = d.value("url");
    let url: URL | undefined;
    try {
      url = typeof raw === "string" ? new URL(raw) : undefined;
    } catch { /* refused below */ }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      d.failAt(
        "url",
        `required, an http(s) URL answering certificates (got ${JSON.stringify(raw)})`,
      );
    }
    return new HttpCertGetter(url);
  },
};
