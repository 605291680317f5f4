/**
 * The `zerossl` issuer (module `tls.issuance.zerossl`): certificates from ZeroSSL, either
 * through its REST API (`api_key`, validation by HTTP file or CNAME: `zerossl_api.ts`) or
 * through its ACME endpoint with External Account Binding credentials fetched from its API
 * (`api_key` or `email`, with every field of the `acme` issuer: an `AcmeIssuer`). Which one a
 * config means is decided in `zerossl/config.ts`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../module/mod.ts";
import type { ModuleInstance } from "../../module/instance.ts";
import type { Issuer } from "../issuer.ts";
import { parseZeroSslIssuerConfig } from "../zerossl/config.ts";
import { zerosslEabForApiKey, zerosslEabForEmail } from "../zerossl/eab.ts";
import { createAcmeIssuer, loadDnsChallenge } from "./acme.ts";
import { ZeroSslApiIssuer } from "./zerossl_api.ts";

/**
 * Registry entry of the `zerossl` issuer.
 *
 * @example
 * ```ts ignore
 * const issuer = await ctx.loadModule<Issuer>("tls.issuance", "module", {
 *   module: "zerossl",
 *   api_key: "{env.ZEROSSL_API_KEY}",
 * });
 * ```
 */
export const zerosslIssuerModule: ModuleDefinition<Issuer & ModuleInstance> = {
  id: "tls.issuance.zerossl",
  async create(
    config: Record<string, unknown>,
    ctx: ProvisionContext,
  ): Promise<Issuer & ModuleInstance> {
    const logger = ctx.logger("tls.issuance.zerossl");
    const parsed = parseZeroSslIssuerConfig(config, "issuer");
    if (parsed.form === "api") {
      const cname = parsed.cname
        ? await loadDnsChallenge(ctx, parsed.cname, "cname_validation")
        : undefined;
      return new ZeroSslApiIssuer(parsed, ctx.storage, logger, cname);
    }
    const issuer = await createAcmeIssuer(parsed.acme, ctx, logger);
    if (!parsed.acme.externalAccount) {
      issuer.eabSource = parsed.apiKey
        ? zerosslEabForApiKey(parsed.apiKey, logger, parsed.apiUrl)
        : zerosslEabForEmail(parsed.acme.email!, logger, parsed.apiUrl);
    }
    return issuer;
  },
};
