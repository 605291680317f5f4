/**
 * The `admin` section of a config, decoded strictly with the shared decoder
 * (`http/config.ts`) before anything of the new config runs: field types as Caddy's
 * `AdminConfig` (a wrong type or an unknown field is refused with the field's path), then the
 * parts Gatehouse does not implement (`config.load`, `identity`, `remote`) are refused rather
 * than accepted and ignored.
 *
 * @module
 */
import {
  asObject,
  checkFields,
  optArray,
  optBool,
  optDuration,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "../http/config.ts";
import { HttpConfigError } from "../http/errors.ts";
import { parseNetworkAddress } from "../address.ts";

/** The decoded `admin` section (Caddy's field names). */
export interface AdminConfig {
  /** No admin endpoint at all. */
  disabled: boolean;
  /** The endpoint's network address; undefined = the engine's default. */
  listen?: string;
  /** Every request must come from an allowed origin, not only a browser's. */
  enforce_origin: boolean;
  /** Allowed origins; undefined = the listen address (and loopback names on loopback). */
  origins?: string[];
  /** `admin.config`: only `persist` is honoured. */
  config: { persist?: boolean };
}

/** Fields of `admin`, as Caddy 2.6.2's `AdminConfig`. */
export const ADMIN_FIELDS: readonly string[] = [
  "disabled",
  "listen",
  "enforce_origin",
  "origins",
  "config",
  "identity",
  "remote",
];

function refuse(where: string, what: string): never {
  throw new HttpConfigError("invalid_config", `${where}: ${what}`);
}

/** An array field whose elements are objects, each decoded by `each` at `where.key[i]`. */
function objects(o: Raw, key: string, where: string, each: (v: Raw, at: string) => void): void {
  optArray(o, key, where)?.forEach((v, i) => {
    const at = `${where}.${key}[${i}]`;
    if (v !== null) each(asObject(v, at), at);
  });
}

function decodeIdentity(raw: Raw): void {
  checkFields(raw, ["identifiers", "issuers"], "admin.identity");
  optStrings(raw, "identifiers", "admin.identity");
  objects(raw, "issuers", "admin.identity", () => {});
  refuse(
    "admin.identity",
    "a managed identity of the admin endpoint (certificates for remote administration) is not supported; remove it",
  );
}

function decodeRemote(raw: Raw): void {
  checkFields(raw, ["listen", "access_control"], "admin.remote");
  optString(raw, "listen", "admin.remote");
  objects(raw, "access_control", "admin.remote", (acl, at) => {
    checkFields(acl, ["public_keys", "permissions"], at);
    optStrings(acl, "public_keys", at);
    objects(acl, "permissions", at, (perm, at2) => {
      checkFields(perm, ["paths", "methods"], at2);
      optStrings(perm, "paths", at2);
      optStrings(perm, "methods", at2);
    });
  });
  refuse("admin.remote", "the remote admin endpoint is not supported; remove it");
}

function decodeSettings(raw: Raw): AdminConfig["config"] {
  checkFields(raw, ["persist", "load", "load_delay"], "admin.config");
  const persist = optBool(raw, "persist", "admin.config");
  const load = raw.load;
  if (load !== undefined && load !== null) {
    asObject(load, "admin.config.load");
    refuse("admin.config.load", "pulling the config from a loader module is not supported");
  }
  if (optDuration(raw, "load_delay", "admin.config") !== undefined) {
    refuse("admin.config.load_delay", "only used with admin.config.load, which is not supported");
  }
  return persist === undefined ? {} : { persist };
}

function decodeOrigins(raw: Raw): string[] | undefined {
  const origins = optStrings(raw, "origins", "admin");
  origins?.forEach((o, i) => {
    if (!o.includes("://")) return;
    try {
      new URL(o);
    } catch {
      refuse(`admin.origins[${i}]`, `${JSON.stringify(o)} is not a valid origin URL`);
    }
  });
  return origins;
}

function decodeListen(raw: Raw): string | undefined {
  const listen = optString(raw, "listen", "admin");
  if (!listen) return undefined;
  let addr;
  try {
    addr = parseNetworkAddress(listen);
  } catch (e) {
    refuse("admin.listen", (e as Error).message);
  }
  if (addr.startPort !== addr.endPort) refuse("admin.listen", `one port, not a range: ${listen}`);
  return listen;
}

/**
 * Decodes a config's `admin` section (absent or null = all defaults). Throws an
 * `HttpConfigError` naming the field (`admin.origins: ...`) on a wrong type, an unknown field,
 * a malformed listen address or origin URL, and on the parts that are not implemented.
 *
 * @example
 * ```ts
 * import { decodeAdminConfig } from "./config.ts";
 * decodeAdminConfig({ listen: "localhost:2019", origins: ["localhost:2019"] });
 * // { disabled: false, listen: "localhost:2019", enforce_origin: false, origins: [...], config: {} }
 * ```
 */
export function decodeAdminConfig(raw: unknown): AdminConfig {
  if (raw === undefined || raw === null) {
    return { disabled: false, enforce_origin: false, config: {} };
  }
  const o = asObject(raw, "admin");
  checkFields(o, ADMIN_FIELDS, "admin");
  const disabled = optBool(o, "disabled", "admin") ?? false;
  const listen = decodeListen(o);
  const enforce_origin = optBool(o, "enforce_origin", "admin") ?? false;
  const origins = decodeOrigins(o);
  const settings = optObject(o, "config", "admin");
  const identity = optObject(o, "identity", "admin");
  const remote = optObject(o, "remote", "admin");
  const config = settings ? decodeSettings(settings) : {};
  if (identity) decodeIdentity(identity);
  if (remote) decodeRemote(remote);
  return { disabled, ...(listen ? { listen } : {}), enforce_origin, origins, config };
}
