/**
 * The `acme` issuer (module `tls.issuance.acme`, Caddy's `ACMEIssuer`): gets certificates
 * from an ACME CA (RFC 8555) — Let's Encrypt by default, any `ca` directory URL otherwise —
 * with an account kept in storage, HTTP-01 and TLS-ALPN-01 challenges, or the DNS-01
 * challenge through a DNS provider module (`challenges.dns`; then the only one used, and
 * wildcard names can be certified), External Account Binding (for ZeroSSL's directories,
 * fetched from ZeroSSL's API for the `email` when none is configured), preferred chains, and
 * revocation.
 *
 * The challenge ports default to the `http` app's `http_port` / `https_port` (80 / 443) and
 * may be moved with `challenges.http.alternate_port` / `challenges.tls-alpn.alternate_port`
 * (the ports the CA connects to stay 80 / 443 in production; alternate ports serve setups
 * that forward those to other ports, and test CAs such as Pebble).
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../module/mod.ts";
import type { Logger, ModuleInstance } from "../../module/instance.ts";
import { safeKey, type Storage } from "../../module/storage.ts";
import {
  type Account,
  type AccountOptions,
  forgetAccount,
  getAccount,
  issuerKey,
} from "../acme/account.ts";
import { addDistributedSource, setChallengeLogger } from "../acme/challenges.ts";
import { challengePorts } from "../acme/ports.ts";
import { configureOrigin, explainAcmeError, setAcmeDebugLogger } from "../acme/lib.ts";
import { createCsr } from "../acme/crypto.ts";
import { type OrderResult, runOrder } from "../acme/order.ts";
import type { IssuedCertificate, Issuer, IssueRequest } from "../issuer.ts";
import {
  type AcmeIssuerConfig,
  type DnsChallengeConfig,
  parseAcmeIssuerConfig,
} from "./acme_config.ts";
import { dnsDefaults, loadDnsProvider } from "../dns/provider.ts";
import type { DnsChallengeOptions } from "../dns/solver.ts";
import { ConfigError } from "../../config/error.ts";
import { isZeroSslDirectory, zerosslEabForEmail } from "../zerossl/eab.ts";

/** Reasons of RFC 5280 §5.3.1 accepted by `revoke`. */
export type RevocationReason = 0 | 1 | 3 | 4 | 5;

/** The running `acme` issuer of one automation policy. */
export class AcmeIssuer implements Issuer, ModuleInstance {
  /** The decoded config. */
  readonly config: AcmeIssuerConfig;
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #failed = new Set<string>();
  readonly #attempts = new Map<string, number>();
  readonly #dropSource: () => void;

  /** The DNS-01 challenge's provider and settings, when `challenges.dns` is configured. */
  readonly dns?: DnsChallengeOptions;

  /**
   * Where EAB credentials come from when `external_account` is not set, asked only when a new
   * account is registered (the `zerossl` issuer sets it). For ZeroSSL's own directories the
   * default is ZeroSSL's API with the `email` (as Caddy does).
   */
  eabSource?: () => Promise<{ keyId: string; macKey: string }>;

  constructor(
    config: AcmeIssuerConfig,
    storage: Storage,
    logger: Logger,
    dns?: DnsChallengeOptions,
  ) {
    this.config = config;
    this.dns = dns;
    this.#storage = storage;
    this.#logger = logger;
    for (const url of [config.ca, config.testCa]) {
      if (!url) continue;
      configureOrigin(new URL(url).origin, {
        roots: config.trustedRoots,
        timeoutMs: config.timeoutMs,
      });
    }
    this.#dropSource = addDistributedSource({ storage, prefix: this.storagePrefix });
  }

  /** The issuer's storage key (`<host>-<path>` of its CA), as certmagic names it. */
  get issuerKey(): string {
    return issuerKey(this.config.ca);
  }

  /** `acme/<issuerKey>`: where this issuer keeps accounts and challenge tokens. */
  get storagePrefix(): string {
    return `acme/${safeKey(this.issuerKey)}`;
  }

  #accountOptions(ca: string): AccountOptions {
    return {
      directoryUrl: ca,
      email: this.config.email,
      accountKeyPem: this.config.accountKey,
      eab: this.config.externalAccount,
      eabSource: this.eabSource ??
        (isZeroSslDirectory(ca) && this.config.email
          ? zerosslEabForEmail(this.config.email, this.#logger)
          : undefined),
      storage: this.#storage,
    };
  }

  /** The account for `ca`, registered on first use. */
  account(ca: string = this.config.ca): Promise<Account> {
    return getAccount(this.#accountOptions(ca), this.#logger);
  }

  /** Wildcards need the DNS-01 challenge: accepted only when it is configured. */
  accepts(name: string): boolean {
    return !name.startsWith("*.") || this.dns !== undefined;
  }

  async #order(
    ca: string,
    names: string[],
    csrPem: string,
    signal?: AbortSignal,
  ): Promise<OrderResult> {
    const run = async () => {
      const { client } = await this.account(ca);
      // Read after the first request to the CA: the http app has started by then.
      const ports = challengePorts();
      const solvers = {
        types: this.config.challengeTypes,
        httpPort: this.config.httpPort ?? ports.http,
        tlsPort: this.config.tlsAlpnPort ?? ports.https,
        bindHost: this.config.bindHost,
        shared: { storage: this.#storage, prefix: this.storagePrefix },
        dns: this.dns,
      };
      return runOrder(client, {
        names,
        csrPem,
        solvers,
        failed: this.#failed,
        logger: this.#logger,
        preferredChains: this.config.preferredChains,
        signal,
      });
    };
    try {
      return await run().catch((e) => {
        throw explainAcmeError(e, ca);
      });
    } catch (e) {
      // The CA lost the account (a test CA restarted, an account deactivated): register anew.
      if (/account.*(does not exist|not found|unable to find|deactivated)/i.test(String(e))) {
        this.#logger.warn("ACME account unknown to the CA; registering a new one", { ca });
        await forgetAccount(this.#accountOptions(ca));
        return await run().catch((e2) => {
          throw explainAcmeError(e2, ca);
        });
      }
      throw e;
    }
  }

  /**
   * Obtains a certificate for `request.names` with `request.key`. After a failed attempt for
   * the same names, a configured `test_ca` is tried first (a dry run that spares the
   * production CA's rate limits).
   */
  async issue(request: IssueRequest): Promise<IssuedCertificate> {
    const id = request.names.join(",");
    const attempt = this.#attempts.get(id) ?? 0;
    const csrPem = await createCsr(request.names, request.key);
    try {
      if (attempt > 0 && this.config.testCa) {
        this.#logger.info("trying the test CA first after a failed attempt", {
          identifiers: request.names,
          test_ca: this.config.testCa,
        });
        await this.#order(this.config.testCa, request.names, csrPem, request.signal);
      }
      const { chain } = await this.#order(this.config.ca, request.names, csrPem, request.signal);
      this.#attempts.delete(id);
      return { certificatePem: chain };
    } catch (e) {
      this.#attempts.set(id, attempt + 1);
      throw e;
    }
  }

  /**
   * Revokes a certificate this issuer's account obtained (reason 0 unspecified, 1 key
   * compromise, 3 affiliation changed, 4 superseded, 5 cessation of operation).
   */
  async revoke(chainPem: string, reason: number = 0): Promise<void> {
    if (![0, 1, 3, 4, 5].includes(reason)) {
      throw new Error(`revocation reason must be 0, 1, 3, 4 or 5, got ${reason}`);
    }
    const { client } = await this.account();
    const leaf = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/);
    if (!leaf) throw new Error("revoke: no certificate in PEM");
    await client.revokeCertificate(leaf[0], { reason: reason as RevocationReason });
    this.#logger.info("certificate revoked", { ca: this.config.ca, reason });
  }

  /** Stops answering challenges shared through storage for this issuer. */
  cleanup(): void {
    this.#dropSource();
  }
}

/**
 * Registry entry of the `acme` issuer.
 *
 * @example
 * ```ts ignore
 * const issuer = await ctx.loadModule<AcmeIssuer>("tls.issuance", "module", {
 *   module: "acme",
 *   email: "me@example.com",
 * });
 * ```
 */
export const acmeIssuerModule: ModuleDefinition<AcmeIssuer> = {
  id: "tls.issuance.acme",
  async create(config: Record<string, unknown>, ctx: ProvisionContext): Promise<AcmeIssuer> {
    const logger = ctx.logger("tls.issuance.acme");
    const parsed = parseAcmeIssuerConfig(config, "issuer");
    if (isZeroSslDirectory(parsed.ca) && !parsed.email && !parsed.externalAccount) {
      throw new ConfigError(
        "invalid_config",
        "issuer: ZeroSSL's ACME directory needs External Account Binding: set email (the " +
          "credentials are then fetched from ZeroSSL for that address) or external_account",
      );
    }
    return await createAcmeIssuer(parsed, ctx, logger);
  },
};

/**
 * The DNS provider and settings of a decoded DNS challenge config (`challenges.dns`, or the
 * `zerossl` issuer's `cname_validation`): its `provider`, else the `tls` app's `dns`; its
 * resolvers, else the `tls` app's. `field` names the config in errors.
 */
export async function loadDnsChallenge(
  ctx: ProvisionContext,
  cfg: DnsChallengeConfig,
  field: "challenges.dns" | "cname_validation",
): Promise<DnsChallengeOptions> {
  const defaults = dnsDefaults(ctx.signal);
  const provider = cfg.providerRaw
    ? await loadDnsProvider(ctx, cfg.providerRaw, `issuer.${field}.provider`)
    : defaults.provider;
  if (!provider) {
    throw new ConfigError(
      "invalid_config",
      `issuer.${field}: ${field === "cname_validation" ? "CNAME validation" : "DNS challenge"} ` +
        `enabled, but no DNS provider configured (set ${field}.provider, e.g. ` +
        `{"name": "challtestsrv"}, or the tls app's dns)`,
    );
  }
  return {
    provider,
    ttlMs: cfg.ttlMs,
    propagationDelayMs: cfg.propagationDelayMs,
    propagationTimeoutMs: cfg.propagationTimeoutMs,
    resolvers: cfg.resolvers.length ? cfg.resolvers : defaults.resolvers,
    overrideDomain: cfg.overrideDomain,
  };
}

/**
 * An `acme` issuer from a decoded config (its DNS provider loaded), logging to `logger`; the
 * `zerossl` issuer's ACME form is made here too.
 *
 * @example
 * ```ts ignore
 * const issuer = await createAcmeIssuer(parseAcmeIssuerConfig(raw, "issuer"), ctx, logger);
 * ```
 */
export async function createAcmeIssuer(
  parsed: AcmeIssuerConfig,
  ctx: ProvisionContext,
  logger: Logger,
): Promise<AcmeIssuer> {
  setAcmeDebugLogger(logger.named("acme_client"));
  setChallengeLogger(logger);
  const dns = parsed.dns ? await loadDnsChallenge(ctx, parsed.dns, "challenges.dns") : undefined;
  return new AcmeIssuer(parsed, ctx.storage, logger, dns);
}
