/**
 * Registers the `tls` app (certificates for HTTPS listeners, their automation), the
 * `internal`, `acme` and `zerossl` issuers (`tls.issuance.internal`, `tls.issuance.acme`,
 * `tls.issuance.zerossl`) and the revoke endpoint (`admin.api.tls_revoke`). Importing this
 * file is enough to make `apps.tls` configs work; an issuer's code loads when a config first
 * uses it.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("tls"); // defined
 * ```
 *
 * @module
 */
import { getModule, type ModuleDefinition, registerModule } from "../module/mod.ts";
import { tlsAppModule } from "./app.ts";
import "./dns/mod.ts";

const internalIssuer: ModuleDefinition = {
  id: "tls.issuance.internal",
  async create(config, ctx) {
    const { internalIssuerModule } = await import("./internal_issuer.ts");
    return await internalIssuerModule.create(config, ctx);
  },
};

const acmeIssuer: ModuleDefinition = {
  id: "tls.issuance.acme",
  async create(config, ctx) {
    const { acmeIssuerModule } = await import("./issuers/acme.ts");
    return await acmeIssuerModule.create(config, ctx);
  },
};

const zerosslIssuer: ModuleDefinition = {
  id: "tls.issuance.zerossl",
  async create(config, ctx) {
    const { zerosslIssuerModule } = await import("./issuers/zerossl.ts");
    return await zerosslIssuerModule.create(config, ctx);
  },
};

const httpCertGetter: ModuleDefinition = {
  id: "tls.get_certificate.http",
  async create(config, ctx) {
    const { httpCertGetterModule } = await import("./cert_managers.ts");
    return await httpCertGetterModule.create(config, ctx);
  },
};

const revokeAdmin: ModuleDefinition = {
  id: "admin.api.tls_revoke",
  async create(config, ctx) {
    const { tlsRevokeAdminModule } = await import("./revoke_admin.ts");
    return await tlsRevokeAdminModule.create(config, ctx);
  },
};

for (
  const m of [
    tlsAppModule as unknown as ModuleDefinition,
    internalIssuer,
    acmeIssuer,
    zerosslIssuer,
    httpCertGetter,
    revokeAdmin,
  ]
) {
  if (!getModule(m.id)) registerModule(m);
}

export { loadCertificates, type LoadedCertificate, parseCertificate } from "./certificates.ts";
export { type ConnectionPolicy, parseConnectionPolicies } from "./policies.ts";
export type { CertifiedKey } from "../module/listener.ts";
export type { CertificateGetter } from "../module/listener.ts";
