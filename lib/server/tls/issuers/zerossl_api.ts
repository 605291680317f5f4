/**
 * The `zerossl` issuer's REST API form (certmagic's `ZeroSSLIssuer`): a certificate is
 * created from the CSR, each name is validated by HTTP file (served by the `http` app, or by a
 * standalone listener on `alternate_http_port` / the `http_port` when no server of ours has it)
 * or by CNAME record (`cname_validation`, through a DNS provider), ZeroSSL is asked to check,
 * the certificate is polled until issued (1 s, 2 s, 4 s, then every 5 s, at most 15 minutes)
 * and downloaded with its CA bundle. A certificate not issued is cancelled. Certificates live
 * in storage under `certificates/zerossl/`, with ZeroSSL's certificate object as `issuer_data`
 * (its id is what `revoke` needs).
 *
 * @module
 */
import type { Logger, ModuleInstance } from "../../module/instance.ts";
import { sleep, type Storage } from "../../module/storage.ts";
import { x509 } from "../../pki/x509.ts";
import { createCsr } from "../acme/crypto.ts";
import { challengePorts } from "../acme/ports.ts";
import { holdHttpSolver } from "../acme/solvers.ts";
import type { IssuedCertificate, Issuer, IssueRequest } from "../issuer.ts";
import type { PresentedRecord } from "../dns/solver.ts";
import { type CertificateObject, type VerificationMethod, ZeroSslApi } from "../zerossl/api.ts";
import { cleanUpCname, type CnameOptions, presentCname, waitForCname } from "../zerossl/cname.ts";
import type { ZeroSslApiConfig } from "../zerossl/config.ts";
import {
  addValidationSource,
  presentFileValidation,
  setValidationLogger,
  ZEROSSL_STORAGE_PREFIX,
} from "../zerossl/validation.ts";

/** Longest wait for a validated certificate to be issued. */
export const ISSUE_TIMEOUT_MS = 15 * 60_000;
/** Time given to cancelling a certificate that was not issued. */
export const CANCEL_TIMEOUT_MS = 10_000;
/** Delays between polls of a certificate being issued (the last one repeats). */
export const POLL_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 5_000];

function toHex(b: ArrayBuffer | Uint8Array): string {
  return Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
}

/** The running `zerossl` issuer of one policy, on ZeroSSL's REST API. */
export class ZeroSslApiIssuer implements Issuer, ModuleInstance {
  /** Certificates of this issuer live under `certificates/zerossl/` (certmagic's key). */
  readonly issuerKey = ZEROSSL_STORAGE_PREFIX;
  /** The decoded config. */
  readonly config: ZeroSslApiConfig;
  /** The CNAME validation's provider and settings, when `cname_validation` is set. */
  readonly cname?: CnameOptions;
  readonly #api: ZeroSslApi;
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #dropSource: () => void;

  constructor(
    config: ZeroSslApiConfig,
    storage: Storage,
    logger: Logger,
    cname?: CnameOptions,
  ) {
    this.config = config;
    this.cname = cname;
    this.#storage = storage;
    this.#logger = logger;
    this.#api = new ZeroSslApi({ baseUrl: config.apiUrl, accessKey: config.apiKey });
    this.#dropSource = addValidationSource(storage);
    setValidationLogger(logger);
  }

  /** Wildcards can only be validated by CNAME. */
  accepts(name: string): boolean {
    return !name.startsWith("*.") || this.cname !== undefined;
  }

  /** Obtains a certificate for `request.names` with `request.key` from ZeroSSL's API. */
  async issue(request: IssueRequest): Promise<IssuedCertificate> {
    const { names, signal } = request;
    const log = {
      info: (msg: string, f: Record<string, unknown> = {}) =>
        this.#logger.info(msg, { identifiers: names, ...f }),
    };
    const csrPem = await createCsr(names, request.key);
    log.info("creating certificate");
    const created = await this.#api.createCertificate(
      csrPem,
      names,
      this.config.validityDays,
      signal,
    );
    const id = created.id;
    log.info("created certificate", { cert_id: id });
    const undo: (() => Promise<void>)[] = [];
    let issued = false;
    try {
      const method = await this.#present(created, names, undo, signal);
      log.info("validating identifiers", { cert_id: id, verification_method: method });
      let cert = await this.#api.verifyIdentifiers(id, method, signal);
      if (cert.status === "pending_validation") {
        log.info("validations initiated; waiting for certificate to be issued", { cert_id: id });
        cert = await this.#waitIssued(id, signal);
      } else if (cert.status !== "issued") {
        throw new Error(`ZeroSSL certificate ${id}: unexpected status ${cert.status}`);
      }
      const bundle = await this.#api.downloadCertificate(id, signal);
      const chain = `${bundle.certificate.trim()}\n${bundle.caBundle.trim()}\n`.replace(
        /\n\n+$/,
        "\n",
      );
      await this.#checkMatches(chain, request.key.keys.publicKey, id);
      issued = true;
      log.info("successfully downloaded issued certificate", { cert_id: id });
      return { certificatePem: chain, issuerData: cert };
    } finally {
      for (const fn of undo.reverse()) await fn().catch(() => {});
      if (!issued) {
        // Bounded, and not tied to the config's signal: it also runs while stopping.
        await this.#api.cancelCertificate(id, AbortSignal.timeout(CANCEL_TIMEOUT_MS)).then(
          () => log.info("canceled certificate", { cert_id: id }),
          (e) =>
            this.#logger.error("unable to cancel certificate", {
              identifiers: names,
              cert_id: id,
              error: (e as Error).message,
            }),
        );
      }
    }
  }

  /** Publishes what ZeroSSL checks; pushes the undo steps; resolves with the method. */
  async #present(
    cert: CertificateObject,
    names: string[],
    undo: (() => Promise<void>)[],
    signal?: AbortSignal,
  ): Promise<VerificationMethod> {
    const methods = cert.validation?.other_methods ?? {};
    const details = (name: string) => {
      const v = methods[name];
      if (!v) {
        throw new Error(`ZeroSSL gave no validation details for ${name} (certificate ${cert.id})`);
      }
      return v;
    };
    if (!this.cname) {
      const port = this.config.alternateHttpPort ?? challengePorts().http;
      const hold = await holdHttpSolver(this.config.listenHost, port, this.#logger);
      undo.push(() => hold.release());
      for (const name of names) {
        const v = details(name);
        const content = Array.isArray(v.file_validation_content)
          ? v.file_validation_content.join("\n")
          : "";
        undo.push(
          await presentFileValidation(
            { name, url: v.file_validation_url_http, content },
            this.#storage,
          ),
        );
      }
      return "HTTP_CSR_HASH";
    }
    const cname = this.cname;
    const records: [string, PresentedRecord][] = [];
    for (const name of names) {
      const v = details(name);
      const rec = await presentCname(
        cname,
        v.cname_validation_p1,
        v.cname_validation_p2,
        this.#logger,
        signal,
      );
      undo.push(() => cleanUpCname(cname, rec, this.#logger));
      records.push([name, rec]);
    }
    for (const [name, rec] of records) {
      const why = await waitForCname(cname, rec, this.#logger, signal);
      // As certmagic: ZeroSSL decides in the end; a slow record is only logged.
      if (why) {
        this.#logger.warn("failed CNAME record propagation check", {
          domain: name,
          error: why,
        });
      }
    }
    return "CNAME_CSR_HASH";
  }

  async #waitIssued(id: string, signal?: AbortSignal): Promise<CertificateObject> {
    const end = Date.now() + ISSUE_TIMEOUT_MS;
    for (let i = 0;; i++) {
      await sleep(POLL_DELAYS_MS[Math.min(i, POLL_DELAYS_MS.length - 1)], signal);
      const cert = await this.#api.getCertificate(id, signal);
      if (cert.status === "issued") return cert;
      if (cert.status !== "pending_validation") {
        throw new Error(`ZeroSSL certificate ${id}: unexpected status ${cert.status}`);
      }
      if (Date.now() > end) {
        throw new Error(
          `ZeroSSL certificate ${id} still pending validation after ${
            ISSUE_TIMEOUT_MS / 60_000
          } min`,
        );
      }
    }
  }

  /** Refuses a downloaded certificate that is not for our key. */
  async #checkMatches(chain: string, publicKey: CryptoKey, id: string): Promise<void> {
    const x = await x509();
    let leaf: InstanceType<typeof x.X509Certificate>;
    try {
      leaf = new x.X509Certificate(
        chain.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/)![0],
      );
    } catch (e) {
      throw new Error(`ZeroSSL certificate ${id}: unreadable PEM: ${(e as Error).message}`);
    }
    const ours = toHex(await crypto.subtle.exportKey("spki", publicKey));
    if (toHex(leaf.publicKey.rawData) !== ours) {
      throw new Error(`ZeroSSL certificate ${id}: its public key is not the one of the CSR`);
    }
  }

  /**
   * Revokes a certificate this issuer obtained, by the ZeroSSL id kept as its `issuer_data`
   * (reason 0, 1, 3, 4 or 5).
   */
  async revoke(_chainPem: string, reason: number = 0, issuerData?: unknown): Promise<void> {
    const id = (issuerData as { id?: unknown } | undefined)?.id;
    if (typeof id !== "string" || !id) {
      throw new Error(
        "no ZeroSSL certificate id is stored with this certificate (issuer_data); " +
          "revoke it in ZeroSSL's dashboard",
      );
    }
    await this.#api.revokeCertificate(id, reason);
    this.#logger.info("certificate revoked", { cert_id: id, reason });
  }

  /** Stops answering validations shared through storage for this issuer. */
  cleanup(): void {
    this.#dropSource();
  }
}
