/**
 * The `admin` section of a config, decoded strictly with the shared decoder
 * (`decode.ts`) before anything of the new config runs: field types as Caddy's
 * `AdminConfig` (a wrong type or an unknown field is refused with the field's path), then the
 * parts Gatehouse does not implement (`config.load`, `identity`, `remote`) are refused rather
 * than accepted and ignored.
 *
 * @module
 */
import { parseNetworkAddress } from "../net/address.ts";
import { ConfigError } from "./error.ts";
import { Decoder } from "./decode.ts";

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
  throw new ConfigError("invalid_config", `${where}: ${what}`, { path: where });
}

function decodeIdentity(d: Decoder): void {
  d.fields(["identifiers", "issuers"]);
  d.strings("identifiers");
  d.objects("issuers");
  d.fail(
    "a managed identity of the admin endpoint (certificates for remote administration) is not supported; remove it",
  );
}

function decodeRemote(d: Decoder): void {
  d.fields(["listen", "access_control"]);
  d.string("listen");
  for (const acl of d.objects("access_control") ?? []) {
    acl.fields(["public_keys", "permissions"]);
    acl.strings("public_keys");
    for (const perm of acl.objects("permissions") ?? []) {
      perm.fields(["paths", "methods"]);
      perm.strings("paths");
      perm.strings("methods");
    }
  }
  d.fail("the remote admin endpoint is not supported; remove it");
}

function decodeSettings(d: Decoder): AdminConfig["config"] {
  d.fields(["persist", "load", "load_delay"]);
  const persist = d.bool("persist");
  if (d.has("load")) {
    Decoder.of(d.value("load"), d.at("load"));
    d.failAt("load", "pulling the config from a loader module is not supported");
  }
  if (d.duration("load_delay") !== undefined) {
    d.failAt("load_delay", "only used with admin.config.load, which is not supported");
  }
  return persist === undefined ? {} : { persist };
}

function decodeOrigins(d: Decoder): string[] | undefined {
  const origins = d.strings("origins");
  origins?.forEach((o, i) => {
    if (!o.includes("://")) return;
    try {
      new URL(o);
    } catch {
      refuse(`${d.at("origins")}[${i}]`, `${JSON.stringify(o)} is not a valid origin URL`);
    }
  });
  return origins;
}

function decodeListen(d: Decoder): string | undefined {
  const listen = d.string("listen");
  if (!listen) return undefined;
  let addr;
  try {
    addr = parseNetworkAddress(listen);
  } catch (e) {
    d.failAt("listen", (e as Error).message);
  }
  if (addr.startPort !== addr.endPort) d.failAt("listen", `one port, not a range: ${listen}`);
  return listen;
}

/**
 * Decodes a config's `admin` section (absent or null = all defaults). Throws a
 * `ConfigError` naming the field (`admin.origins: ...`) on a wrong type, an unknown field,
 * a malformed listen address or origin URL, and on the parts that are not implemented.
 *
 * @example
 * ```ts
 * import { decodeAdminConfig } from "./admin.ts";
 * decodeAdminConfig({ listen: "localhost:2019", origins: ["localhost:2019"] });
 * // { disabled: false, listen: "localhost:2019", enforce_origin: false, origins: [...], config: {} }
 * ```
 */
export function decodeAdminConfig(raw: unknown): AdminConfig {
  if (raw === undefined || raw === null) {
    return { disabled: false, enforce_origin: false, config: {} };
  }
  const d = Decoder.of(raw, "admin").fields(ADMIN_FIELDS);
  const disabled = d.bool("disabled") ?? false;
  const listen = decodeListen(d);
  const enforce_origin = d.bool("enforce_origin") ?? false;
  const origins = decodeOrigins(d);
  const settings = d.object("config");
  const identity = d.object("identity");
  const remote = d.object("remote");
  const config = settings ? decodeSettings(settings) : {};
  if (identity) decodeIdentity(identity);
  if (remote) decodeRemote(remote);
  return { disabled, ...(listen ? { listen } : {}), enforce_origin, origins, config };
}
