/**
 * DNS provider modules (namespace `dns.providers`, Caddy's and libdns's shape): a provider
 * changes records of a DNS zone through its operator's API. The DNS-01 challenge (see
 * `solver.ts`) adds one TXT record and deletes it afterwards; the `tls` app's `dns` field
 * names a default provider for every module that needs one.
 *
 * Record names are relative to their zone, as libdns has them: `_acme-challenge.www` in zone
 * `example.com.` is `_acme-challenge.www.example.com.`; `@` is the zone's apex. Zones are
 * absolute (with the trailing dot).
 *
 * Plugin packages add providers by registering modules `dns.providers.<name>` whose instances
 * implement {@link DnsProvider} (see docs/plugins.md).
 *
 * @module
 */
import type { ProvisionContext } from "../../module/mod.ts";
import type { ModuleInstance } from "../../module/instance.ts";
import { ConfigError } from "../../config/error.ts";
import type { Resolver } from "./resolvers.ts";

/** One DNS record (libdns's `RR`). */
export interface DnsRecord {
  /** Record type, upper case: `TXT`, `A`, `CNAME` ... */
  type: string;
  /** Name relative to the zone (`@` for the apex). */
  name: string;
  /** Record data (for TXT: the text, unquoted). */
  data: string;
  /** Time to live in ms (0: the provider's default). */
  ttlMs?: number;
}

/**
 * What the DNS-01 challenge needs from a provider (libdns `RecordAppender` and
 * `RecordDeleter`); the `tls` app's default provider must also get and set records, as
 * Caddy requires.
 */
export interface DnsProvider extends ModuleInstance {
  /** Adds records to `zone` (never replacing others); resolves with the records added. */
  appendRecords(zone: string, records: DnsRecord[], signal?: AbortSignal): Promise<DnsRecord[]>;
  /** Deletes these exact records (name, type, data) from `zone`; resolves with those deleted. */
  deleteRecords(zone: string, records: DnsRecord[], signal?: AbortSignal): Promise<DnsRecord[]>;
  /** Every record of `zone` the provider can list. */
  getRecords?(zone: string, signal?: AbortSignal): Promise<DnsRecord[]>;
  /** Replaces the records of each (name, type) given with the ones given. */
  setRecords?(zone: string, records: DnsRecord[], signal?: AbortSignal): Promise<DnsRecord[]>;
  /**
   * The zone `fqdn` belongs to, when the provider knows it without asking DNS (a provider for
   * one server that holds every name); otherwise the zone is found by SOA lookups.
   */
  zoneOf?(fqdn: string): string | undefined;
}

/** Lower case with one trailing dot. */
export function absoluteFqdn(name: string): string {
  const n = name.trim().toLowerCase();
  return n.endsWith(".") ? n : `${n}.`;
}

/**
 * The name of `fqdn` relative to `zone` (libdns `RelativeName`): `@` for the apex.
 *
 * @example
 * ```ts
 * import { relativeName } from "./provider.ts";
 * relativeName("_acme-challenge.www.example.com.", "example.com."); // "_acme-challenge.www"
 * ```
 */
export function relativeName(fqdn: string, zone: string): string {
  const f = absoluteFqdn(fqdn);
  const z = absoluteFqdn(zone);
  if (z === ".") return f.slice(0, -1) || "@";
  if (f === z) return "@";
  if (f.endsWith(`.${z}`)) return f.slice(0, -(z.length + 1));
  return f.slice(0, -1);
}

/**
 * The absolute name of `name` in `zone` (libdns `AbsoluteName`).
 *
 * @example
 * ```ts
 * import { absoluteName } from "./provider.ts";
 * absoluteName("_acme-challenge", "example.com."); // "_acme-challenge.example.com."
 * ```
 */
export function absoluteName(name: string, zone: string): string {
  const z = absoluteFqdn(zone);
  if (name === "@" || name === "") return z;
  if (name.endsWith(".")) return name.toLowerCase();
  return z === "." ? `${name.toLowerCase()}.` : `${name.toLowerCase()}.${z}`;
}

function isProvider(v: unknown, full: boolean): v is DnsProvider {
  const p = v as Partial<DnsProvider> | null;
  return typeof p?.appendRecords === "function" && typeof p.deleteRecords === "function" &&
    (!full || (typeof p.getRecords === "function" && typeof p.setRecords === "function"));
}

/**
 * Loads a `dns.providers.<name>` module from its JSON (`{"name": "...", ...}`); `full` asks
 * for the four libdns operations (the `tls` app's default provider).
 */
export async function loadDnsProvider(
  ctx: ProvisionContext,
  raw: unknown,
  where: string,
  full = false,
): Promise<DnsProvider> {
  const name = (raw as Record<string, unknown> | null)?.name;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || typeof name !== "string") {
    throw new ConfigError(
      "invalid_config",
      `${where}: must be an object naming a DNS provider module, e.g. {"name": "challtestsrv"}`,
    );
  }
  let provider: unknown;
  try {
    provider = await ctx.loadModule<DnsProvider>("dns.providers", "name", raw);
  } catch (e) {
    throw new ConfigError("invalid_config", `${where}: ${(e as Error).message}`);
  }
  if (!isProvider(provider, full)) {
    throw new ConfigError(
      "invalid_config",
      `${where}: module dns.providers.${name} does not ${
        full ? "get, set, append and delete" : "append and delete"
      } DNS records`,
    );
  }
  return provider;
}

/** The `tls` app's defaults for DNS work, per running config (keyed by its abort signal). */
export interface DnsDefaults {
  /** `apps.tls.dns`: the default provider. */
  provider?: DnsProvider;
  /** `apps.tls.resolvers`: default resolvers of DNS challenges. */
  resolvers: Resolver[];
}

const defaults = new WeakMap<AbortSignal, DnsDefaults>();

/** Records the `tls` app's DNS defaults of the config whose signal is `signal`. */
export function setDnsDefaults(signal: AbortSignal, value: DnsDefaults): void {
  defaults.set(signal, value);
}

/** The `tls` app's DNS defaults of a config (none when its `tls` app set none). */
export function dnsDefaults(signal: AbortSignal): DnsDefaults {
  return defaults.get(signal) ?? { resolvers: [] };
}
