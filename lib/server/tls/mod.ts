/**
 * Registers the `tls` app (certificates for HTTPS listeners). Importing this file is enough
 * to make `apps.tls` configs work.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module.ts";
 * getModule("tls"); // defined
 * ```
 *
 * @module
 */
import { getModule, registerModule } from "../module.ts";
import { tlsAppModule } from "./app.ts";

if (!getModule(tlsAppModule.id)) registerModule(tlsAppModule);

export {
  loadCertificates,
  type LoadedCertificate,
  parseCertificate,
  TlsConfigError,
  type TlsConfigErrorCode,
} from "./certificates.ts";
export { type ConnectionPolicy, parseConnectionPolicies, selectCertificate } from "./policies.ts";
