/**
 * One certificate authority of the `pki` app: a root and an intermediate (signing)
 * certificate, kept in storage under Caddy's layout (`pki/authorities/<id>/root.crt`,
 * `root.key`, `intermediate.crt`, `intermediate.key`), generated on first use and the same
 * from then on, across restarts, reloads and every instance sharing the storage (creation
 * runs under the storage lock `pki_ca_<id>`). The intermediate renews itself when 20 % of its
 * lifetime is left; the root is never replaced.
 *
 * Config (`apps.pki.certificate_authorities.<id>`, Caddy's fields): `name`,
 * `root_common_name`, `intermediate_common_name` (both may use `{pki.ca.name}` and
 * `{time.now.year}`), `intermediate_lifetime` (of generated intermediates, 7 days by default;
 * shorter than what is left of the root's, as Caddy checks), `install_trust`, `root` /
 * `intermediate` (`{certificate, private_key, format: "pem_file"}`: files used instead of
 * generated ones), `storage`.
 *
 * @module
 */
import { Decoder, type Raw } from "../config/decode.ts";
import { goDurationString } from "../config/duration.ts";
import type { Logger } from "../module/instance.ts";
import { loadText, type Storage, storageKeys, withLock } from "../module/storage.ts";
import {
  certificateFacts,
  generateKey,
  importKey,
  inRenewalWindow,
  type KeyPair,
  LIFETIMES,
  makeIntermediate,
  makeRoot,
} from "./x509.ts";

/** The id of the default CA. */
export const DEFAULT_CA_ID = "local";
/** Default user-facing name of a CA. */
export const DEFAULT_CA_NAME = "Gatehouse Local Authority";
/** Default root common name template. */
export const DEFAULT_ROOT_CN = "{pki.ca.name} - {time.now.year} ECC Root";
/** Default intermediate common name template. */
export const DEFAULT_INTERMEDIATE_CN = "{pki.ca.name} - ECC Intermediate";
/** Share of the intermediate's lifetime left when it is renewed (Caddy: 0.2). */
export const INTERMEDIATE_RENEWAL_RATIO = 0.2;

/** A certificate/key pair given in the config instead of a generated one. */
export interface KeyPairFiles {
  /** Path of the PEM certificate. */
  certificate: string;
  /** Path of the PEM private key. */
  private_key: string;
  /** Only `pem_file`. */
  format?: string;
}

/** The decoded config of one CA. */
export interface CAConfig {
  name?: string;
  root_common_name?: string;
  intermediate_common_name?: string;
  /** Lifetime of generated intermediates (a duration; 0 or unset: 7 days). */
  intermediate_lifetime?: number | string;
  install_trust?: boolean;
  root?: KeyPairFiles;
  intermediate?: KeyPairFiles;
}

/** The CA info record of `GET /pki/ca/<id>`. */
export interface CAInfo {
  id: string;
  name: string;
  root_common_name: string;
  intermediate_common_name: string;
  root_certificate: string;
  intermediate_certificate: string;
}

interface Signer {
  pem: string;
  key: KeyPair;
  notBefore: Date;
  notAfter: Date;
}

const CA_FIELDS = [
  "name",
  "root_common_name",
  "intermediate_common_name",
  "intermediate_lifetime",
  "install_trust",
  "root",
  "intermediate",
  "storage",
];

const KEY_PAIR_FIELDS = ["certificate", "private_key", "format"];

/** Checks a CA config object; throws a ConfigError with the path of the bad field. */
export function decodeCAConfig(raw: unknown, where: string): CAConfig {
  const d: Decoder = Decoder.of(raw, where);
  // the field audit lists these fields itself (the pki app's own decoder)
  for (const k of Object.keys(d.raw)) {
    if (!CA_FIELDS.includes(k)) d.fail(`unknown field "${k}"`, "unknown_field");
  }
  for (const k of ["name", "root_common_name", "intermediate_common_name"]) {
    const v = d.value(k);
    if (v !== undefined && typeof v !== "string") d.failAt(k, "must be a string");
  }
  const lifetime = d.duration("intermediate_lifetime");
  if (lifetime !== undefined && lifetime < 0) {
    d.failAt("intermediate_lifetime", "must not be negative");
  }
  const installTrust = d.value("install_trust");
  if (installTrust !== undefined && typeof installTrust !== "boolean") {
    d.failAt("install_trust", "must be a boolean");
  }
  for (const k of ["root", "intermediate"]) {
    const kp = d.value(k);
    if (kp === undefined) continue;
    if (typeof kp !== "object" || kp === null) d.failAt(k, "must be an object");
    const pair: Decoder = new Decoder(kp as Raw, d.at(k));
    for (const f of Object.keys(pair.raw)) {
      if (!KEY_PAIR_FIELDS.includes(f)) pair.fail(`unknown field "${f}"`, "unknown_field");
    }
    const format = pair.value("format");
    if (format !== undefined && format !== "pem_file") {
      pair.failAt("format", 'only "pem_file" is supported');
    }
    if (
      typeof pair.value("certificate") !== "string" || typeof pair.value("private_key") !== "string"
    ) {
      pair.fail("certificate and private_key file paths are required");
    }
  }
  return d.raw as CAConfig;
}

function fill(template: string, name: string): string {
  return template.replaceAll("{pki.ca.name}", name)
    .replaceAll("{time.now.year}", String(new Date().getFullYear()));
}

async function readPair(files: KeyPairFiles, what: string): Promise<Signer> {
  let pem: string;
  let keyPem: string;
  try {
    pem = await Deno.readTextFile(files.certificate);
    keyPem = await Deno.readTextFile(files.private_key);
  } catch (e) {
    throw new Error(
      `${what}: reading ${files.certificate} / ${files.private_key}: ${(e as Error).message}`,
    );
  }
  const facts = await certificateFacts(pem);
  return {
    pem,
    key: await importKey(keyPem),
    notBefore: facts.notBefore,
    notAfter: facts.notAfter,
  };
}

/** A provisioned certificate authority. */
export class CertificateAuthority {
  /** The CA's id (`local` by default). */
  readonly id: string;
  /** User-facing name. */
  readonly name: string;
  /** Whether the `pki` app installs the root into the trust stores at start. */
  readonly installTrust: boolean;
  /** Lifetime of the intermediates this CA generates (ms). */
  readonly intermediateLifetimeMs: number;
  readonly #rootCNTemplate: string;
  readonly #interCNTemplate: string;
  #root!: Signer;
  #inter!: Signer;
  #rootKey?: KeyPair;

  private constructor(
    id: string,
    readonly config: CAConfig,
    readonly storage: Storage,
    readonly log: Logger,
  ) {
    this.id = id;
    this.name = config.name || DEFAULT_CA_NAME;
    this.installTrust = config.install_trust ?? false;
    this.intermediateLifetimeMs = Decoder.of(config, "").duration("intermediate_lifetime") ||
      LIFETIMES.intermediate;
    this.#rootCNTemplate = config.root_common_name || DEFAULT_ROOT_CN;
    this.#interCNTemplate = config.intermediate_common_name || DEFAULT_INTERMEDIATE_CN;
  }

  /** Loads the CA from storage (or the configured files), creating what is missing. */
  static async provision(
    id: string,
    config: CAConfig,
    storage: Storage,
    log: Logger,
  ): Promise<CertificateAuthority> {
    if (!id) throw new Error("a CA id is required (use 'local' for the default CA)");
    const ca = new CertificateAuthority(id, config, storage, log);
    await ca.#load();
    return ca;
  }

  /** Root common name as configured (placeholders filled). */
  get rootCommonName(): string {
    return fill(this.#rootCNTemplate, this.name);
  }

  /** Intermediate common name as configured (placeholders filled). */
  get intermediateCommonName(): string {
    return fill(this.#interCNTemplate, this.name);
  }

  /** PEM of the root certificate. */
  get rootPem(): string {
    return this.#root.pem;
  }

  /** PEM of the current intermediate certificate. */
  get intermediatePem(): string {
    return this.#inter.pem;
  }

  /** Where the root certificate is, for messages (`storage:pki/...` or a file path). */
  get rootLocation(): string {
    return this.config.root
      ? this.config.root.certificate
      : `storage:${storageKeys.caRootCert(this.id)}`;
  }

  /** The signer of leaf certificates: the intermediate (or the root with `signWithRoot`). */
  signer(signWithRoot = false): { pem: string; key: KeyPair; chain: string } {
    if (signWithRoot) {
      if (!this.#rootKey) throw new Error(`CA ${this.id}: the root key is not loaded`);
      return { pem: this.#root.pem, key: this.#rootKey, chain: this.#root.pem };
    }
    return { pem: this.#inter.pem, key: this.#inter.key, chain: this.#inter.pem };
  }

  /** The record of `GET /pki/ca/<id>`. */
  info(): CAInfo {
    return {
      id: this.id,
      name: this.name,
      root_common_name: this.rootCommonName,
      intermediate_common_name: this.intermediateCommonName,
      root_certificate: this.#root.pem,
      intermediate_certificate: this.#inter.pem,
    };
  }

  async #load(): Promise<void> {
    if (this.config.root) {
      this.#root = await readPair(this.config.root, `CA ${this.id} root`);
      this.#rootKey = this.#root.key;
    }
    if (this.config.intermediate) {
      this.#inter = await readPair(this.config.intermediate, `CA ${this.id} intermediate`);
    }
    if (this.#root && this.#inter) return;
    if (this.#root) this.#checkIntermediateLifetime();
    // Generated parts are created once for everyone sharing the storage.
    const k = storageKeys;
    const stored = async () => ({
      root: await loadText(this.storage, k.caRootCert(this.id)),
      rootKey: await loadText(this.storage, k.caRootKey(this.id)),
      inter: await loadText(this.storage, k.caIntermediateCert(this.id)),
      interKey: await loadText(this.storage, k.caIntermediateKey(this.id)),
    });
    let s = await stored();
    const complete = (this.#root || (s.root && s.rootKey)) &&
      (this.#inter || (s.inter && s.interKey));
    if (!complete) {
      await withLock(this.storage, k.caLock(this.id), async () => {
        s = await stored();
        if (!this.#root && !(s.root && s.rootKey)) {
          const key = await generateKey();
          const root = await makeRoot(this.rootCommonName, key);
          await this.storage.store(k.caRootCert(this.id), new TextEncoder().encode(root.pem));
          await this.storage.store(k.caRootKey(this.id), new TextEncoder().encode(key.pem));
          s.root = root.pem;
          s.rootKey = key.pem;
          s.inter = s.interKey = undefined; // a new root needs a new intermediate
          this.log.info("generated root certificate", { ca: this.id, location: this.rootLocation });
        }
        if (!this.#inter && !(s.inter && s.interKey)) {
          await this.#loadRoot(s.root!, s.rootKey!);
          this.#checkIntermediateLifetime();
          const gen = await this.#generateIntermediate();
          s.inter = gen.pem;
          s.interKey = gen.key.pem;
        }
      });
    }
    if (!this.#root) await this.#loadRoot(s.root!, s.rootKey!);
    if (!this.#inter) {
      this.#checkIntermediateLifetime();
      const facts = await certificateFacts(s.inter!);
      this.#inter = { pem: s.inter!, key: await importKey(s.interKey!), ...facts };
    }
  }

  /**
   * Caddy's check before it loads or generates an intermediate: the intermediate's lifetime is
   * shorter than what is left of the root's (`modules/caddypki/ca.go`, `Provision`).
   */
  #checkIntermediateLifetime(): void {
    if (this.config.intermediate) return;
    const left = this.#root.notAfter.getTime() - Date.now();
    if (this.intermediateLifetimeMs >= left) {
      throw new Error(
        "intermediate certificate lifetime must be less than actual root certificate " +
          `lifetime (${goDurationString(left)})`,
      );
    }
  }

  async #loadRoot(pem: string, keyPem: string): Promise<void> {
    if (this.#root?.pem === pem && this.#rootKey) return;
    const facts = await certificateFacts(pem);
    const key = await importKey(keyPem);
    this.#root = { pem, key, notBefore: facts.notBefore, notAfter: facts.notAfter };
    this.#rootKey = key;
  }

  async #generateIntermediate(): Promise<Signer> {
    if (!this.#rootKey) throw new Error(`CA ${this.id}: no root key to sign an intermediate`);
    const key = await generateKey();
    const cert = await makeIntermediate(
      this.intermediateCommonName,
      key,
      this.#root.pem,
      this.#rootKey,
      this.intermediateLifetimeMs,
    );
    const k = storageKeys;
    await this.storage.store(k.caIntermediateCert(this.id), new TextEncoder().encode(cert.pem));
    await this.storage.store(k.caIntermediateKey(this.id), new TextEncoder().encode(key.pem));
    this.#inter = { pem: cert.pem, key, notBefore: cert.notBefore, notAfter: cert.notAfter };
    this.log.info("generated intermediate certificate", {
      ca: this.id,
      not_after: cert.notAfter.toISOString(),
    });
    return this.#inter;
  }

  /**
   * Renews the intermediate when it is inside its renewal window (or picks up the one another
   * instance renewed). Resolves true when the signer changed.
   */
  async maintain(): Promise<boolean> {
    if (this.config.intermediate) return false;
    if (!inRenewalWindow(this.#inter.notBefore, this.#inter.notAfter, INTERMEDIATE_RENEWAL_RATIO)) {
      return false;
    }
    const before = this.#inter.pem;
    await withLock(this.storage, storageKeys.caLock(this.id), async () => {
      const pem = await loadText(this.storage, storageKeys.caIntermediateCert(this.id));
      const keyPem = await loadText(this.storage, storageKeys.caIntermediateKey(this.id));
      if (pem && keyPem && pem !== before) {
        const facts = await certificateFacts(pem);
        if (!inRenewalWindow(facts.notBefore, facts.notAfter, INTERMEDIATE_RENEWAL_RATIO)) {
          this.#inter = { pem, key: await importKey(keyPem), ...facts };
          return;
        }
      }
      if (!this.#rootKey) {
        const rootKeyPem = await loadText(this.storage, storageKeys.caRootKey(this.id));
        if (!rootKeyPem) throw new Error(`CA ${this.id}: the root key is missing from storage`);
        this.#rootKey = await importKey(rootKeyPem);
      }
      this.log.info("intermediate expires soon; renewing", {
        ca: this.id,
        time_remaining_ms: this.#inter.notAfter.getTime() - Date.now(),
      });
      await this.#generateIntermediate();
    });
    return this.#inter.pem !== before;
  }
}
