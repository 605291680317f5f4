/**
 * What an `acme_server` endpoint works with: the settings, the store, the CA and where the
 * requests are answered from.
 *
 * @module
 */
import type { PkiApp } from "../../../pki/app.ts";
import type { ACMEServerSettings } from "./config.ts";
import type { ACMEStore } from "./store.ts";

/** Everything an endpoint works with. */
export interface Ctx {
  /** The settings. */
  cfg: ACMEServerSettings;
  /** Accounts, orders, authorizations and certificates. */
  store: ACMEStore;
  /** The `pki` app, whose CA signs. */
  pki: PkiApp;
  /** `https://host/acme/<ca>` (no trailing slash). */
  base: string;
  /** Logs at INFO level. */
  log: (msg: string, fields: Record<string, unknown>) => void;
}
