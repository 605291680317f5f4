/**
 * The `pki` app (module id `pki`): certificate authorities by id
 * (`certificate_authorities`). With none configured, the default CA `local` is provisioned;
 * any other id must be configured. Every 10 minutes each CA checks its intermediate and renews
 * it inside its renewal window.
 *
 * Gatehouse differs from Caddy in one default: a CA installs its root into the system trust
 * stores at start only with `install_trust: true` (Caddy: unless `false`). Run
 * `gatehouse trust` to install it explicitly.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import type { App, Logger } from "../module/instance.ts";
import type { Storage } from "../module/storage.ts";
import { Decoder } from "../config/decode.ts";
import { type CAConfig, CertificateAuthority, decodeCAConfig, DEFAULT_CA_ID } from "./ca.ts";

/** The roots already said to be untrusted, by PEM: once per process. */
const HINTED = new Set<string>();

/**
 * Says, once per process and root, that the system does not trust a CA's root yet, and what
 * to run: certificates of the local CA fail in browsers and curl until it does.
 */
async function hintTrust(ca: CertificateAuthority): Promise<void> {
  if (HINTED.has(ca.rootPem)) return;
  HINTED.add(ca.rootPem);
  try {
    const { systemTrusts } = await import("./truststore.ts");
    if (await systemTrusts(ca.rootPem) !== false) return;
  } catch {
    return; // no telling: nothing to say
  }
  ca.log.warn(
    `the root certificate of CA ${ca.id} is not trusted by this system yet: browsers and ` +
      "curl refuse the certificates it issues until `gatehouse trust` installs it " +
      '(or "install_trust": true in the CA\'s config)',
    { ca: ca.id, certificate: ca.rootLocation },
  );
}

/** How often CAs check their intermediate (Caddy: 10 minutes). */
export const PKI_MAINTENANCE_MS = 10 * 60_000;

/** The running `pki` app of one config. */
export class PkiApp implements App {
  /** Provisioned CAs by id. */
  readonly cas: Map<string, CertificateAuthority>;
  #timer?: ReturnType<typeof setInterval>;
  #pending = new Map<string, Promise<CertificateAuthority>>();

  private constructor(
    cas: Map<string, CertificateAuthority>,
    readonly storage: Storage,
    readonly log: Logger,
  ) {
    this.cas = cas;
  }

  /** Decodes the app and provisions every configured CA (or `local`). */
  static async create(config: Record<string, unknown>, ctx: ProvisionContext): Promise<PkiApp> {
    const d = new Decoder(config, "pki");
    // the field audit lists this field itself (the pki app's own decoder)
    for (const k of Object.keys(config)) {
      if (k !== "certificate_authorities") d.fail(`unknown field "${k}"`, "unknown_field");
    }
    const raw = config.certificate_authorities ?? {};
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      d.failAt("certificate_authorities", "must be an object");
    }
    const log = ctx.logger("pki");
    const cas = new Map<string, CertificateAuthority>();
    for (const [id, caRaw] of Object.entries(raw as Record<string, unknown>)) {
      const where = `pki.certificate_authorities.${id}`;
      const cfg: CAConfig = decodeCAConfig(caRaw, where);
      const storageRaw = (caRaw as Record<string, unknown>).storage;
      const storage = storageRaw === undefined
        ? ctx.storage
        : await ctx.loadModule<Storage & { cleanup?(): void }>(
          "caddy.storage",
          "module",
          storageRaw,
        );
      try {
        cas.set(id, await CertificateAuthority.provision(id, cfg, storage, log.named(`ca.${id}`)));
      } catch (e) {
        throw new Error(`provisioning CA '${id}': ${(e as Error).message}`, { cause: e });
      }
    }
    const app = new PkiApp(cas, ctx.storage, log);
    if (cas.size === 0) await app.getCA(DEFAULT_CA_ID);
    return app;
  }

  /**
   * The CA `id`; `local` is provisioned on first use when not configured, any other unknown
   * id throws.
   */
  async getCA(id: string): Promise<CertificateAuthority> {
    const have = this.cas.get(id);
    if (have) return have;
    if (id !== DEFAULT_CA_ID) throw new Error(`no certificate authority configured with id: ${id}`);
    let p = this.#pending.get(id);
    if (!p) {
      p = CertificateAuthority.provision(id, {}, this.storage, this.log.named(`ca.${id}`));
      this.#pending.set(id, p);
    }
    try {
      const ca = await p;
      this.cas.set(id, ca);
      return ca;
    } finally {
      this.#pending.delete(id);
    }
  }

  /** Installs roots where asked (`install_trust: true`) and starts intermediate upkeep. */
  async start(): Promise<void> {
    for (const ca of this.cas.values()) {
      if (!ca.installTrust) {
        await hintTrust(ca);
        continue;
      }
      try {
        const { installRoot } = await import("./truststore.ts");
        const done = await installRoot(ca.rootPem, ca.id);
        ca.log.info("root certificate installed in the trust stores", { stores: done });
      } catch (e) {
        ca.log.error("failed to install root certificate", {
          error: (e as Error).message,
          certificate: ca.rootLocation,
        });
      }
    }
    await this.maintain();
    this.#timer = setInterval(() => void this.maintain(), PKI_MAINTENANCE_MS);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Renews intermediates that are in their renewal window (errors are logged). */
  async maintain(): Promise<void> {
    for (const ca of this.cas.values()) {
      try {
        await ca.maintain();
      } catch (e) {
        this.log.error("renewing intermediate certificate", {
          ca: ca.id,
          error: (e as Error).message,
        });
      }
    }
  }

  /** Stops the upkeep timer. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Same as stop. */
  cleanup(): void {
    this.stop();
  }
}

/**
 * Registry entry of the `pki` app.
 *
 * @example
 * ```ts
 * import { pkiAppModule } from "./app.ts";
 * pkiAppModule.id; // "pki"
 * ```
 */
export const pkiAppModule: ModuleDefinition<PkiApp> = {
  id: "pki",
  create: (config, ctx) => PkiApp.create(config, ctx),
};
