/**
 * The `tls` app (module id `tls`): the certificates of a config and their automation, in
 * Caddy's JSON.
 *
 * - `certificates.load_files` / `load_pem`: certificates used as given (a missing file or a
 *   bad PEM fails the load and the running config stays); `certificates.automate`: names to
 *   manage even when no server names them.
 * - `automation`: policies and issuers (see `automation.ts`); managed certificates are
 *   obtained at start and renewed inside their renewal window (see `manager.ts`).
 * - `session_tickets`: only empty (Caddy's default: tickets on, keys the library's own); any
 *   setting in it is refused. `disable_ocsp_stapling`: nothing is stapled here, so it holds.
 *
 * Listeners get a {@link CertificateGetter} per server (`getter`), which picks the
 * certificate for each handshake's server name from the cache.
 *
 * @module
 */
import type { App, ModuleDefinition, ProvisionContext } from "../module.ts";
import { certificateFacts } from "../pki/x509.ts";
import {
  type Automation,
  type AutomationPolicy,
  decodeAutomation,
  isInternalName,
  matchWildcard,
  qualifiesForCertificate,
} from "./automation.ts";
import {
  type CachedCertificate,
  CertificateCache,
  type CertificateGetter,
  normalizeName,
} from "./cache.ts";
import {
  loadCertificates,
  type LoadedCertificate,
  tlsCheckFields,
  TlsConfigError,
} from "./certificates.ts";
import type { Issuer } from "./issuer.ts";
import { CertificateManager } from "./manager.ts";
import type { ConnectionPolicy } from "./policies.ts";

/** The running `tls` app of one config. */
export class TlsApp implements App {
  /** Certificates loaded from `load_files` and `load_pem`, in config order. */
  readonly certificates: LoadedCertificate[];
  /** Every certificate served (loaded and managed). */
  readonly cache: CertificateCache = new CertificateCache();
  readonly #automation: Automation;
  readonly #ctx: ProvisionContext;
  readonly #manager: CertificateManager;
  readonly #toManage = new Map<string, AutomationPolicy>();
  #defaultInternal?: AutomationPolicy;

  private constructor(
    certificates: LoadedCertificate[],
    automation: Automation,
    ctx: ProvisionContext,
  ) {
    this.certificates = certificates;
    this.#automation = automation;
    this.#ctx = ctx;
    this.#manager = new CertificateManager(
      this.cache,
      ctx.logger("tls.obtain"),
      automation.renewIntervalMs,
      ctx.signal,
    );
  }

  /** Decodes the app, loads certificates, provisions automation policies. */
  static async create(config: Record<string, unknown>, ctx: ProvisionContext): Promise<TlsApp> {
    tlsCheckFields(config, [
      "certificates",
      "automation",
      "session_tickets",
      "disable_ocsp_stapling",
    ], "tls");
    const tickets = config.session_tickets;
    if (tickets !== undefined && tickets !== null && Object.keys(tickets as object).length) {
      throw new TlsConfigError(
        "unsupported",
        "tls.session_tickets: session ticket keys are kept and rotated by the TLS library here " +
          "(tickets on); none of their settings can be changed: remove session_tickets",
      );
    }
    const certsRaw = config.certificates as Record<string, unknown> | undefined;
    let automate: string[] = [];
    let loaders = certsRaw;
    if (
      certsRaw && typeof certsRaw === "object" && !Array.isArray(certsRaw) &&
      certsRaw.automate !== undefined
    ) {
      const { automate: a, ...rest } = certsRaw;
      if (!Array.isArray(a) || a.some((n) => typeof n !== "string")) {
        throw new TlsConfigError(
          "invalid_config",
          "tls.certificates.automate: must be an array of strings",
        );
      }
      automate = a as string[];
      loaders = rest;
    }
    const loaded = await loadCertificates(loaders);
    const app = new TlsApp(loaded, await decodeAutomation(config.automation, ctx), ctx);
    for (const c of loaded) {
      let facts;
      try {
        facts = await certificateFacts(c.cert);
      } catch (e) {
        throw new TlsConfigError(
          "certificate_load",
          `${c.source}: certificate: ${(e as Error).message}`,
        );
      }
      app.cache.add({
        cert: c.cert,
        key: c.key,
        names: c.names,
        tags: c.tags,
        notBefore: facts.notBefore.getTime(),
        notAfter: facts.notAfter.getTime(),
        managed: false,
        source: c.source,
      });
    }
    await app.manage(automate);
    return app;
  }

  /** Loaded or managed certificates covering `name` (automatic HTTPS skips such names). */
  matchingCertificates(name: string): CachedCertificate[] {
    return this.cache.matching(name);
  }

  /** Names given to {@link manage} so far. */
  get managedNames(): string[] {
    return [...this.#toManage.keys()];
  }

  /** True when a configured policy names `name` in its subjects. */
  hasPolicyFor(name: string): boolean {
    return this.#automation.policies.some((p) => p.subjects.some((s) => matchWildcard(name, s)));
  }

  /** The policy managing `name` (configured, else the internal or public default). */
  async policyFor(name: string): Promise<AutomationPolicy> {
    for (const p of this.#automation.policies) {
      if (!p.subjects.length || p.subjects.some((s) => matchWildcard(name, s))) return p;
    }
    if (isInternalName(name)) {
      if (!this.#defaultInternal) {
        const issuer = await this.#ctx.loadModule<Issuer>("tls.issuance", "module", {
          module: "internal",
        });
        this.#defaultInternal = {
          subjects: [],
          issuers: [issuer],
          renewalWindowRatio: 1 / 3,
          storage: this.#ctx.storage,
          where: "the default internal policy",
          implicit: true,
        };
      }
      return this.#defaultInternal;
    }
    throw new TlsConfigError(
      "unsupported",
      `${name}: a public name needs the ACME issuer, which is not available in this version; ` +
        `use the internal issuer for it (tls internal, or an automation policy with ` +
        `{"module":"internal"}), or load a certificate for it (tls.certificates)`,
    );
  }

  /**
   * Adds names to manage (their policy must be able to issue; a public name without an ACME
   * issuer throws). Certificates are obtained when the app starts.
   */
  async manage(names: string[]): Promise<void> {
    for (const raw of names) {
      const name = normalizeName(raw);
      if (this.#toManage.has(name)) continue;
      if (!qualifiesForCertificate(name)) {
        throw new TlsConfigError("invalid_config", `${raw}: not a name a certificate can have`);
      }
      const policy = await this.policyFor(name);
      if (!policy.issuers.length) {
        throw new TlsConfigError(
          "unsupported",
          `${name}: ${policy.where} has no issuer that can obtain its certificate ` +
            `(ACME is not available in this version; add {"module":"internal"} to its issuers)`,
        );
      }
      this.#toManage.set(name, policy);
      if (this.#started) this.#manager.manage(name, policy);
    }
  }

  #started = false;
  #markStarted!: () => void;
  /** Resolves when the app started (handshakes for managed names wait for it). */
  readonly #startedPromise = new Promise<void>((r) => (this.#markStarted = r));

  /** Starts obtaining and renewing managed certificates. */
  start(): void {
    this.#started = true;
    this.#markStarted();
    for (const [name, policy] of this.#toManage) this.#manager.manage(name, policy);
    this.#manager.start();
  }

  /** Resolves once every managed certificate being loaded or obtained is done. */
  settled(): Promise<void> {
    return this.#manager.settled();
  }

  /** Renews what is due now (tests; the timer does it every `renew_interval`). */
  checkRenewals(): void {
    this.#manager.checkRenewals();
  }

  /** Stops renewals. */
  stop(): void {
    this.#manager.stop();
  }

  /** Same as stop. */
  cleanup(): void {
    this.#manager.stop();
  }

  /**
   * The certificate getter of a server with these connection policies; `listenHost` is the
   * listener's host (used for clients that send no SNI when it is an IP).
   */
  getter(policies: ConnectionPolicy[], listenHost: string): CertificateGetter {
    const cache = this.cache;
    const managed = this.#toManage;
    const started = this.#startedPromise;
    // deno-lint-ignore no-this-alias
    const app = this;
    const list = policies.length ? policies : [{ sni: [], anyTag: [], allTags: [] }];
    const ip = /^[0-9.]+$|:/.test(listenHost) && listenHost !== "" ? normalizeName(listenHost) : "";
    return {
      async getCertificate(serverName: string) {
        let name = normalizeName(serverName);
        if (!name) name = ip || (list.find((p) => p.defaultSni)?.defaultSni ?? "");
        const policy =
          list.find((p) => !p.sni.length || p.sni.some((s) => matchWildcard(name, s))) ??
            list[0];
        const filter = (c: CachedCertificate) =>
          (!policy.anyTag.length || policy.anyTag.some((t) => c.tags.includes(t))) &&
          policy.allTags.every((t) => c.tags.includes(t));
        if (name && managed.has(name) && !app.#started) {
          let t: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([started, new Promise((r) => (t = setTimeout(r, 30_000)))]);
          clearTimeout(t);
        }
        if (name) await cache.settle(name);
        let found = name ? cache.matching(name, filter)[0] : undefined;
        if (!found && policy.fallbackSni) found = cache.matching(policy.fallbackSni, filter)[0];
        if (!found && !normalizeName(serverName)) {
          const all = cache.all().filter(filter);
          if (all.length === 1) found = all[0];
        }
        return found ? { cert: found.cert, key: found.key } : null;
      },
      subscribe: (fn) => cache.subscribe(fn),
    };
  }
}

/**
 * Registry entry of the `tls` app.
 *
 * @example
 * ```ts
 * import { registerModule } from "../module.ts";
 * import { tlsAppModule } from "./app.ts";
 * registerModule(tlsAppModule); // done once by lib/server/tls/mod.ts
 * ```
 */
export const tlsAppModule: ModuleDefinition<TlsApp> = {
  id: "tls",
  create: (config, ctx) => TlsApp.create(config, ctx),
};
