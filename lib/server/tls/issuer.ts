/**
 * The seam between certificate management and the places certificates come from: an issuer
 * module (namespace `tls.issuance`, one file per issuer: `internal_issuer.ts`, and the ACME
 * issuer beside it) turns a set of names and a fresh key into a certificate chain. Management
 * (`manager.ts`) does the rest: storage, locks, renewal, the cache.
 *
 * @module
 */
import type { ModuleInstance } from "../module/instance.ts";
import type { KeyPair } from "../pki/x509.ts";

/** What an issuer is asked for. */
export interface IssueRequest {
  /** DNS names and IP addresses for the certificate (lower case). */
  names: string[];
  /** The certificate's key pair (the issuer puts the public key in the certificate or CSR). */
  key: KeyPair;
  /** Aborted when the config that asked is stopped. */
  signal?: AbortSignal;
}

/** What an issuer answers. */
export interface IssuedCertificate {
  /** PEM chain, leaf first. */
  certificatePem: string;
  /**
   * What the issuer keeps about the certificate (e.g. the CA's id for it): stored beside it as
   * `issuer_data` (certmagic's layout) and given back to `revoke`.
   */
  issuerData?: unknown;
}

/** A certificate issuer (certmagic's `Issuer`). */
export interface Issuer extends ModuleInstance {
  /**
   * Where this issuer's certificates live in storage (`certificates/<issuerKey>/…`): the CA
   * id for `internal`, the directory host and path for ACME.
   */
  readonly issuerKey: string;
  /** Whether the names are ones this issuer can certify (ACME: public names only). */
  accepts?(name: string): boolean;
  /** Obtains a certificate. Throws with a message naming the issuer on failure. */
  issue(request: IssueRequest): Promise<IssuedCertificate>;
  /**
   * Revokes a certificate this issuer obtained (RFC 5280 reason code); `issuerData` is what
   * `issue` answered with it, when storage still has it.
   */
  revoke?(certificatePem: string, reason: number, issuerData?: unknown): Promise<void>;
}
