/**
 * The `tls` app (module id `tls`): holds the certificates of a config, loaded from
 * `certificates.load_files` and `certificates.load_pem` as in Caddy's JSON. The `http` app
 * asks it for certificates when a server has `tls_connection_policies`. Loading fails (and
 * the running config stays) when a file is missing or a PEM is not a certificate/key.
 * Certificate automation (ACME, internal issuer) belongs to the internal CA work; a config
 * asking for it is refused at load with a clear error.
 *
 * @module
 */
import type { App, ModuleDefinition } from "../module.ts";
import {
  loadCertificates,
  type LoadedCertificate,
  tlsCheckFields,
  TlsConfigError,
} from "./certificates.ts";

/** The running `tls` app of one config. */
export class TlsApp implements App {
  /** Loaded certificates, in config order (`load_files` first, then `load_pem`). */
  readonly certificates: LoadedCertificate[];

  private constructor(certificates: LoadedCertificate[]) {
    this.certificates = certificates;
  }

  /** Decodes the app config and loads every certificate. Throws a TlsConfigError. */
  static async create(config: Record<string, unknown>): Promise<TlsApp> {
    if (config.automation !== undefined) {
      throw new TlsConfigError(
        "unsupported",
        "tls.automation: automatic certificate management is not supported; " +
          "load certificates with tls.certificates.load_files or load_pem",
      );
    }
    tlsCheckFields(config, ["certificates", "session_tickets", "disable_ocsp_stapling"], "tls");
    return new TlsApp(await loadCertificates(config.certificates));
  }

  /** Nothing runs: listeners belong to the `http` app. */
  start(): void {}

  /** Nothing to stop. */
  stop(): void {}

  /** Nothing to release: certificates are plain strings. */
  cleanup(): void {}
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
  create: (config) => TlsApp.create(config),
};
