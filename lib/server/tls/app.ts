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
 * - `dns`: the default DNS provider (`{"name": "<provider>", ...}`, module
 *   `dns.providers.<name>`), used by ACME issuers whose `challenges.dns` names none;
 *   `resolvers`: the default resolvers of DNS-01 propagation checks.
 * - `disable_storage_check`, `disable_storage_clean`: see `storage_clean.ts`.
 *
 * Listeners get a {@link CertificateGetter} per server (`getter`), which picks the
 * certificate for each handshake's server name from the cache.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import type { App } from "../module/instance.ts";
import { certificateFacts } from "../pki/x509.ts";
import {
  askManagers,
  type Automation,
  type AutomationPolicy,
  decodeAutomation,
  defaultPublicIssuers,
  isInternalName,
  matchWildcard,
  qualifiesForCertificate,
  wildcardCovers,
} from "./automation.ts";
import { type CachedCertificate, CertificateCache } from "./cache.ts";
import { normalizeName } from "../net/host.ts";
import type { CertificateGetter } from "../module/listener.ts";
import { loadCertificates, type LoadedCertificate } from "./certificates.ts";
import { Decoder } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import type { Issuer } from "./issuer.ts";
import { CertificateManager } from "./manager.ts";
import { OnDemand } from "./on_demand.ts";
import { loadDnsProvider, setDnsDefaults } from "./dns/provider.ts";
import { parseResolvers } from "./dns/resolvers.ts";
import { cleanStorages } from "./storage_clean.ts";
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
    const d = new Decoder(config, "tls").fields([
      "certificates",
      "automation",
      "session_tickets",
      "disable_ocsp_stapling",
      "dns",
      "resolvers",
      "disable_storage_check",
      "disable_storage_clean",
    ]);
    const tickets = d.value("session_tickets");
    if (tickets !== undefined && tickets !== null && Object.keys(tickets as object).length) {
      d.failAt(
        "session_tickets",
        "session ticket keys are kept and rotated by the TLS library here " +
          "(tickets on); none of their settings can be changed: remove session_tickets",
        "unsupported",
      );
    }
    for (const k of ["disable_storage_check", "disable_storage_clean"]) {
      const v = d.value(k);
      if (v !== undefined && typeof v !== "boolean") d.failAt(k, "must be a boolean");
    }
    // The default DNS provider and resolvers, before the issuers that use them load.
    setDnsDefaults(ctx.signal, {
      provider: d.value("dns") === undefined
        ? undefined
        : await loadDnsProvider(ctx, d.value("dns"), d.at("dns"), true),
      resolvers: parseResolvers(d.value("resolvers"), d.at("resolvers")),
    });
    const certsRaw = d.value("certificates") as Record<string, unknown> | undefined;
    let automate: string[] = [];
    let loaders = certsRaw;
    if (
      certsRaw && typeof certsRaw === "object" && !Array.isArray(certsRaw) &&
      certsRaw.automate !== undefined
    ) {
      const { automate: a, ...rest } = certsRaw;
      if (!Array.isArray(a) || a.some((n) => typeof n !== "string")) {
        new Decoder(certsRaw, d.at("certificates")).failAt(
          "automate",
          "must be an array of strings",
        );
      }
      automate = a as string[];
      loaders = rest;
    }
    const loaded = await loadCertificates(loaders);
    const app = new TlsApp(loaded, await decodeAutomation(d.value("automation"), ctx), ctx);
    app.#manager.storageCheck = d.value("disable_storage_check") !== true;
    app.#storageClean = d.value("disable_storage_clean") !== true;
    for (const c of loaded) {
      let facts;
      try {
        facts = await certificateFacts(c.cert);
      } catch (e) {
        throw new ConfigError(
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
    for (const n of automate) app.#automate.add(normalizeName(n));
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
    if (!this.#defaultPublic) {
      this.#defaultPublic = {
        subjects: [],
        issuers: await defaultPublicIssuers(this.#ctx),
        renewalWindowRatio: 1 / 3,
        storage: this.#ctx.storage,
        where: "the default public policy",
        implicit: true,
      };
    }
    return this.#defaultPublic;
  }

  #defaultPublic?: AutomationPolicy;

  /**
   * Adds names to manage (their policy must be able to issue; a public name without an ACME
   * issuer throws). Certificates are obtained when the app starts. A name covered by a
   * wildcard being managed is left to the wildcard's certificate, unless
   * `certificates.automate` names it.
   */
  async manage(names: string[]): Promise<void> {
    const batch = new Set(names.map(normalizeName));
    for (const raw of names) {
      const name = normalizeName(raw);
      if (this.#toManage.has(name)) continue;
      // A managed wildcard covers it (Caddy's managingWildcardFor), unless `automate` names it.
      if (
        !this.#automate.has(name) &&
        wildcardCovers(name, [this.#toManage, batch, this.#automate])
      ) continue;
      if (!qualifiesForCertificate(name)) {
        throw new ConfigError("invalid_config", `${raw}: not a name a certificate can have`);
      }
      const policy = await this.policyFor(name);
      if (policy.managers?.length && !policy.issuers.length) {
        this.#ctx.logger("tls").info(
          "certificates come from the policy's get_certificate managers",
          {
            identifier: name,
          },
        );
        continue;
      }
      if (!policy.issuers.length) {
        throw new ConfigError(
          "unsupported",
          `${name}: ${policy.where} has no issuer that can obtain its certificate ` +
            `(add {"module":"acme"} or {"module":"internal"} to its issuers)`,
        );
      }
      this.#toManage.set(name, policy);
      if (this.#started) this.#manager.manage(name, policy);
    }
  }

  readonly #automate = new Set<string>();

  #started = false;
  #markStarted!: () => void;
  /** Resolves when the app started (handshakes for managed names wait for it). */
  readonly #startedPromise = new Promise<void>((r) => (this.#markStarted = r));

  #storageClean = true;
  #cleanTimer?: ReturnType<typeof setInterval>;

  /** Starts obtaining and renewing managed certificates, and storage cleaning. */
  start(): void {
    this.#started = true;
    this.#markStarted();
    for (const [name, policy] of this.#toManage) this.#manager.manage(name, policy);
    this.#manager.start();
    if (this.#storageClean) {
      const every = this.#automation.storageCleanIntervalMs;
      this.#cleanTimer = setInterval(() => void this.cleanStorage(), every);
      Deno.unrefTimer(this.#cleanTimer as unknown as number);
      void this.cleanStorage();
    }
  }

  /**
   * Cleans the config's storage and every policy's own (see `storage_clean.ts`); errors are
   * logged.
   */
  cleanStorage(): Promise<void> {
    return cleanStorages(
      [this.#ctx.storage, ...this.#automation.policies.map((p) => p.storage)],
      this.#automation.storageCleanIntervalMs,
      this.#ctx.logger("tls"),
      this.#ctx.signal,
    );
  }

  /** Resolves once every managed certificate being loaded or obtained is done. */
  settled(): Promise<void> {
    return this.#manager.settled();
  }

  /** Renews what is due now (tests; the timer does it every `renew_interval`). */
  checkRenewals(): void {
    this.#manager.checkRenewals();
  }

  /** Stops renewals and storage cleaning. */
  stop(): void {
    clearInterval(this.#cleanTimer);
    this.#manager.stop();
  }

  /** Same as stop. */
  cleanup(): void {
    this.stop();
  }

  /** Revokes the certificate of a managed name and obtains a replacement (see manager). */
  revoke(name: string, reason: number): Promise<{ revoked: string; replacement: string }> {
    return this.#manager.revoke(name, reason);
  }

  #onDemand?: OnDemand;

  /**
   * True when some automation policy gets certificates at handshake time (on demand, or from
   * `get_certificate` managers).
   */
  get hasOnDemand(): boolean {
    return this.#automation.policies.some((p) => p.onDemand || !!p.managers?.length);
  }

  /**
   * On-demand TLS: when `name`'s configured policy has `on_demand` and the permission check
   * allows it, manages the name and waits for its certificate. True when one is obtained.
   */
  async #obtainOnDemand(name: string): Promise<boolean> {
    if (!this.#started || !qualifiesForCertificate(name)) return false;
    const policy = this.#automation.policies.find((p) =>
      !p.subjects.length || p.subjects.some((s) => matchWildcard(name, s))
    );
    if (!policy?.onDemand) return false;
    this.#onDemand ??= new OnDemand(
      this.#automation.onDemand ?? {},
      this.#ctx.logger("tls.on_demand"),
    );
    if (!(await this.#onDemand.allowed(name))) return false;
    try {
      await this.manage([name]);
    } catch (e) {
      this.#ctx.logger("tls.on_demand").error("cannot manage on-demand name", {
        identifier: name,
        error: (e as Error).message,
      });
      return false;
    }
    await this.cache.settle(name);
    return this.cache.matching(name).length > 0;
  }

  /**
   * The certificate getter of a server with these connection policies; `listenHost` is the
   * listener's host (used for clients that send no SNI when it is an IP); `servedNames` the
   * host names of the server's routes (a fixed certificate must cover every one of them).
   */
  getter(
    policies: ConnectionPolicy[],
    listenHost: string,
    servedNames: string[] = [],
  ): CertificateGetter {
    const cache = this.cache;
    const managed = this.#toManage;
    const started = this.#startedPromise;
    // deno-lint-ignore no-this-alias
    const app = this;
    const list = policies.length ? policies : [{ sni: [], anyTag: [], allTags: [] }];
    const ip = /^[0-9.]+$|:/.test(listenHost) && listenHost !== "" ? normalizeName(listenHost) : "";
    const filterOf = (policy: (typeof list)[number]) => (c: CachedCertificate) =>
      (!policy.anyTag.length || policy.anyTag.some((t) => c.tags.includes(t))) &&
      policy.allTags.every((t) => c.tags.includes(t));
    const lookup = async (serverName: string, obtain: boolean) => {
      let name = normalizeName(serverName);
      if (!name) name = ip || (list.find((p) => p.defaultSni)?.defaultSni ?? "");
      const policy = list.find((p) => !p.sni.length || p.sni.some((s) => matchWildcard(name, s))) ??
        list[0];
      const filter = filterOf(policy);
      if (name && managed.has(name) && !app.#started) {
        let t: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([started, new Promise((r) => (t = setTimeout(r, 30_000)))]);
        clearTimeout(t);
      }
      if (name) await cache.settle(name);
      let found = name ? cache.matching(name, filter)[0] : undefined;
      // no SNI and no certificate for the listener's IP: the policies' default_sni (certmagic
      // tries the local IP first, then the default server name)
      const defaultSni = list.find((p) => p.defaultSni)?.defaultSni;
      if (!found && !normalizeName(serverName) && ip && defaultSni) {
        found = cache.matching(defaultSni, filter)[0];
      }
      if (!found && name && obtain) {
        const external = await askManagers(
          app.#automation.policies,
          name,
          ip,
          app.#ctx.logger("tls.get_certificate"),
        );
        if (external) return external;
      }
      if (!found && name && !managed.has(name) && obtain) {
        found = (await app.#obtainOnDemand(name)) ? cache.matching(name, filter)[0] : undefined;
      }
      if (!found && policy.fallbackSni) found = cache.matching(policy.fallbackSni, filter)[0];
      if (!found && !normalizeName(serverName)) {
        const all = cache.all().filter(filter);
        if (all.length === 1) found = all[0];
      }
      return found ? { cert: found.cert, key: found.key } : null;
    };
    return {
      getCertificate: (serverName: string) => lookup(serverName, true),
      heldCertificate: (serverName: string) => lookup(serverName, false),
      fixedCertificate() {
        // a name could get a certificate of its own: on demand, or once it is obtained
        if (app.hasOnDemand || (managed.size && !app.#started)) return Promise.resolve(null);
        for (const name of managed.keys()) {
          if (!cache.matching(name).length) return Promise.resolve(null);
        }
        const found = new Set<CachedCertificate>();
        for (const p of list) for (const c of cache.all()) if (filterOf(p)(c)) found.add(c);
        if (found.size !== 1) return Promise.resolve(null);
        const [one] = found;
        // every name the server's routes serve gets this certificate (so SNI cannot matter
        // for any of them); other names get it too instead of a failed handshake
        for (const raw of servedNames) {
          const name = normalizeName(raw);
          const policy = list.find((p) =>
            !p.sni.length || p.sni.some((s) => matchWildcard(name, s))
          ) ??
            list[0];
          if (cache.matching(name, filterOf(policy))[0] !== one) return Promise.resolve(null);
        }
        return Promise.resolve({ cert: one.cert, key: one.key });
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
 * import { registerModule } from "../module/mod.ts";
 * import { tlsAppModule } from "./app.ts";
 * registerModule(tlsAppModule); // done once by lib/server/tls/mod.ts
 * ```
 */
export const tlsAppModule: ModuleDefinition<TlsApp> = {
  id: "tls",
  create: (config, ctx) => TlsApp.create(config, ctx),
};
