/**
 * The table of the `tls` app's modules, registered on import: the app (certificates for HTTPS
 * listeners, their automation), the `internal`, `acme` and `zerossl` issuers
 * (`tls.issuance.*`), the `http` certificate manager (`tls.get_certificate.http`), the revoke
 * endpoint (`admin.api.tls_revoke`) and the DNS providers (`dns/mod.ts`). Each entry names its
 * Gatehousefile syntax where it has one. Importing this file is enough to make `apps.tls`
 * configs work; a module's code loads when a config first uses it.
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
import { type ModuleDefinition, registerTable } from "../module/mod.ts";
import type { SyntaxEntry } from "../caddyfile/registry.ts";
import { DNS_PROVIDERS } from "./dns/mod.ts";

const issuerSyntax = async () => (await import("./issuers_caddyfile.ts")).syntax;

/** Every module of the `tls` app. */
export const TLS_MODULES: readonly SyntaxEntry[] = [
  {
    id: "tls",
    load: async () => (await import("./app.ts")).tlsAppModule as unknown as ModuleDefinition,
    syntax: async () => (await import("./caddyfile.ts")).syntax,
  },
  {
    id: "tls.issuance.internal",
    load: async () => (await import("./internal_issuer.ts")).internalIssuerModule,
    syntax: issuerSyntax,
  },
  {
    id: "tls.issuance.acme",
    load: async () => (await import("./issuers/acme.ts")).acmeIssuerModule,
    syntax: issuerSyntax,
  },
  {
    id: "tls.issuance.zerossl",
    load: async () => (await import("./issuers/zerossl.ts")).zerosslIssuerModule,
    syntax: issuerSyntax,
  },
  {
    id: "tls.get_certificate.http",
    load: async () => (await import("./cert_managers.ts")).httpCertGetterModule,
    syntax: issuerSyntax,
  },
  {
    id: "admin.api.tls_revoke",
    load: async () => (await import("./revoke_admin.ts")).tlsRevokeAdminModule,
  },
];

registerTable(TLS_MODULES);
registerTable(DNS_PROVIDERS);

export { DNS_PROVIDERS };
export { loadCertificates, type LoadedCertificate, parseCertificate } from "./certificates.ts";
export { type ConnectionPolicy, parseConnectionPolicies } from "./policies.ts";
export type { CertifiedKey } from "../module/listener.ts";
export type { CertificateGetter } from "../module/listener.ts";
