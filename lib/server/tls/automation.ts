/**
 * `apps.tls.automation` (Caddy's JSON): automation policies and which one manages a name.
 *
 * A policy: `subjects` (names it applies to; none = catch-all), `issuers` (tried in order;
 * default: the ACME issuer), `renewal_window_ratio` (share of the lifetime left when a
 * certificate renews; default 1/3), `key_type` (`p256`, the default, `p384`, `ed25519`,
 * `rsa2048`, `rsa4096`: see `pki/key_types.ts`),
 * `storage`, `disable_ocsp_stapling` (nothing is stapled here, so it always holds).
 * `automation.renew_interval` sets how often certificates are checked (default 10m);
 * `automation.storage_clean_interval` how often storage is cleaned (default 24h, see
 * `storage_clean.ts`).
 *
 * The policy of a name is the first whose subjects match it (exact or wildcard), else the
 * first catch-all, else a default: the internal issuer for `localhost`, `*.localhost`,
 * `*.local`, `*.internal`, `*.home.arpa` and private or loopback IPs; the ACME issuer for
 * every other (public) name. A public name whose policy has no usable issuer fails the load
 * with a message saying what to do; it is never served over plain HTTP instead.
 *
 * `on_demand` (policy) and `automation.on_demand`: see `on_demand.ts`.
 *
 * `get_certificate`: certificate managers asked during handshakes for names the cache has no
 * certificate for (`cert_managers.ts`); a policy with managers and no `issuers` obtains
 * nothing itself (automatic HTTPS leaves its names to the managers).
 *
 * Refused with an `unsupported` error: `must_staple`, `ocsp_overrides`,
 * `ocsp_interval`.
 *
 * @module
 */
import { getModule, type ProvisionContext } from "../module/mod.ts";
import type { Logger, ModuleInstance } from "../module/instance.ts";
import type { CertifiedKey } from "../module/listener.ts";
import type { Storage } from "../module/storage.ts";
import { durationMs } from "../config/duration.ts";
import { ConfigError } from "../config/error.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import { isIP } from "../pki/x509.ts";
import type { Issuer } from "./issuer.ts";
import { decodeOnDemand, type OnDemandConfig } from "./on_demand.ts";
import { DEFAULT_STORAGE_CLEAN_INTERVAL_MS } from "./storage_clean.ts";
import { type KeyType, parseKeyType } from "../pki/key_types.ts";
import type { CertificateManagerModule } from "./cert_managers.ts";

/** Default share of a certificate's lifetime left when it renews (certmagic: 1/3). */
export const DEFAULT_RENEWAL_WINDOW_RATIO = 1 / 3;
/** Default interval between renewal checks (certmagic: 10 minutes). */
export const DEFAULT_RENEW_INTERVAL_MS = 10 * 60_000;

/** One decoded automation policy. */
export interface AutomationPolicy {
  /** Names it applies to (lower case); empty = every name. */
  subjects: string[];
  /** Issuers, tried in order. */
  issuers: Issuer[];
  /** Share of the lifetime left when renewing. */
  renewalWindowRatio: number;
  /** Where its certificates live (the config's storage unless set). */
  storage: Storage;
  /** Where it came from, for messages. */
  where: string;
  /** True for the defaults made when no configured policy matches. */
  implicit?: boolean;
  /** `on_demand`: names without a certificate get one at their first handshake. */
  onDemand?: boolean;
  /** `key_type` of the certificates' keys (default `p256`). */
  keyType?: KeyType;
  /** `get_certificate`: managers asked at handshake time (see `cert_managers.ts`). */
  managers?: CertificateManagerModule[];
  /** True when `issuers` was given (a policy with managers and no issuers obtains nothing). */
  explicitIssuers?: boolean;
}

const REFUSED: Record<string, string> = {
  must_staple: "OCSP Must-Staple is not supported",
  ocsp_overrides: "OCSP is not used",
};

/** True for names the internal issuer gets by default (certmagic's `SubjectIsInternal`). */
export function isInternalName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, "").replace(/^\[(.*)\]$/, "$1");
  if (
    n === "localhost" || n.endsWith(".localhost") || n.endsWith(".local") ||
    n.endsWith(".internal") || n.endsWith(".home.arpa")
  ) return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(n);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 127 || a === 10 || (a === 0 && b === 0) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 169 && b === 254);
  }
  if (n.includes(":")) {
    return n === "::1" || /^f[cd]/i.test(n) || /^fe[89ab]/i.test(n) || /^0*:/.test(n);
  }
  return false;
}

/**
 * True when `name` can be the subject of a certificate at all (certmagic's
 * `SubjectQualifiesForCert`): not empty, no leading/trailing dot, a wildcard only as the whole
 * left-most label, none of the usual accidental characters.
 */
export function qualifiesForCertificate(name: string): boolean {
  return name.trim() !== "" && !name.startsWith(".") && !name.endsWith(".") &&
    (!name.includes("*") || name.startsWith("*.") || name === "*") &&
    !/[()[\]{}<> \t\n"\\!@#$%^&|;'+=]/.test(name);
}

/** True when `name` matches `pattern` exactly or as a `*` label (certmagic's MatchWildcard). */
export function matchWildcard(name: string, pattern: string): boolean {
  const n = name.toLowerCase();
  const p = pattern.toLowerCase();
  if (n === p) return true;
  if (!p.includes("*")) return false;
  const labels = n.split(".");
  for (let i = 0; i < labels.length; i++) {
    if (!labels[i]) continue;
    const c = [...labels];
    c[i] = "*";
    if (c.join(".") === p) return true;
  }
  return false;
}

/**
 * True when a wildcard in one of `sets` covers `name` (Caddy's `managingWildcardFor`: labels
 * replaced by `*` from the left, one more each time); never for an IP.
 *
 * @example
 * ```ts
 * import { wildcardCovers } from "./automation.ts";
 * wildcardCovers("a.example.com", [new Set(["*.example.com"])]); // true
 * ```
 */
export function wildcardCovers(name: string, sets: { has(n: string): boolean }[]): boolean {
  if (isIP(name)) return false;
  const labels = name.split(".");
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] === "*") continue;
    labels[i] = "*";
    const candidate = labels.join(".");
    if (sets.some((s) => s.has(candidate))) return true;
  }
  return false;
}

/** The default public issuers: the ACME issuer when this build has it. */
export async function defaultPublicIssuers(ctx: ProvisionContext): Promise<Issuer[]> {
  if (!getModule("tls.issuance.acme")) return [];
  return [await ctx.loadModule<Issuer>("tls.issuance", "module", { module: "acme" })];
}

/** The policy's `issuers`, each loaded (an issuer this build does not have is refused). */
async function loadIssuers(policy: Decoder, ctx: ProvisionContext): Promise<Issuer[]> {
  const raw = policy.value("issuers");
  if (!Array.isArray(raw)) policy.failAt("issuers", "must be an array");
  const out: Issuer[] = [];
  for (let i = 0; i < raw.length; i++) {
    const mod = (raw[i] as Raw | null)?.module;
    if (typeof mod === "string" && !getModule(`tls.issuance.${mod}`)) {
      throw new ConfigError(
        "unsupported",
        `${policy.at("issuers")}[${i}]: issuer module "${mod}" is not available in this build`,
      );
    }
    out.push(await ctx.loadModule<Issuer>("tls.issuance", "module", raw[i]));
  }
  return out;
}

/** The policy's `get_certificate` managers, each loaded. */
async function loadManagers(
  policy: Decoder,
  ctx: ProvisionContext,
): Promise<CertificateManagerModule[]> {
  const raw = policy.value("get_certificate");
  if (!Array.isArray(raw)) policy.failAt("get_certificate", "must be an array");
  const out: CertificateManagerModule[] = [];
  for (const m of raw) {
    out.push(await ctx.loadModule<CertificateManagerModule>("tls.get_certificate", "via", m));
  }
  return out;
}

/** Decodes one policy. */
export async function decodePolicy(
  raw: unknown,
  where: string,
  ctx: ProvisionContext,
): Promise<AutomationPolicy> {
  const d: Decoder = Decoder.of(raw, where);
  for (const [k, why] of Object.entries(REFUSED)) {
    const v = d.value(k);
    if (v !== undefined && v !== false) d.failAt(k, why, "unsupported");
  }
  d.fields([
    "subjects",
    "issuers",
    "renewal_window_ratio",
    "key_type",
    "storage",
    "disable_ocsp_stapling",
    "on_demand",
    "get_certificate",
    ...Object.keys(REFUSED),
  ]);
  const subjects = d.value("subjects") ?? [];
  if (!Array.isArray(subjects) || subjects.some((s) => typeof s !== "string")) {
    d.failAt("subjects", "must be an array of strings");
  }
  const keyType = parseKeyType(d.value("key_type"), d.at("key_type"));
  const onDemand = d.value("on_demand");
  if (onDemand !== undefined && typeof onDemand !== "boolean") {
    d.failAt("on_demand", "must be a boolean");
  }
  const ratio = d.value("renewal_window_ratio") ?? 0;
  if (typeof ratio !== "number" || ratio < 0 || ratio >= 1) {
    d.failAt("renewal_window_ratio", "must be in [0, 1)");
  }
  const storage = d.value("storage") === undefined
    ? ctx.storage
    : await ctx.loadModule<Storage & ModuleInstance>("caddy.storage", "module", d.value("storage"));
  const managers = d.value("get_certificate") === undefined
    ? undefined
    : await loadManagers(d, ctx);
  // A policy of managers only gets its certificates from them (nothing is obtained).
  const issuers = d.value("issuers") === undefined
    ? (managers?.length ? [] : await defaultPublicIssuers(ctx))
    : await loadIssuers(d, ctx);
  return {
    subjects: (subjects as string[]).map((s) => s.toLowerCase()),
    issuers,
    renewalWindowRatio: ratio || DEFAULT_RENEWAL_WINDOW_RATIO,
    storage,
    where,
    onDemand: onDemand === true,
    keyType,
    managers,
    explicitIssuers: d.value("issuers") !== undefined,
  };
}

/** The decoded `automation` section. */
export interface Automation {
  policies: AutomationPolicy[];
  renewIntervalMs: number;
  /** `storage_clean_interval` (default 24h). */
  storageCleanIntervalMs: number;
  /** `on_demand` (permission endpoint, rate limit). */
  onDemand?: OnDemandConfig;
}

/** Decodes `apps.tls.automation`. */
export async function decodeAutomation(raw: unknown, ctx: ProvisionContext): Promise<Automation> {
  if (raw === undefined) {
    return {
      policies: [],
      renewIntervalMs: DEFAULT_RENEW_INTERVAL_MS,
      storageCleanIntervalMs: DEFAULT_STORAGE_CLEAN_INTERVAL_MS,
    };
  }
  const a: Decoder = Decoder.of(raw, "tls.automation").fields([
    "policies",
    "renew_interval",
    "on_demand",
    "storage_clean_interval",
    "ocsp_interval",
  ]);
  const list = a.value("policies") ?? [];
  if (!Array.isArray(list)) a.failAt("policies", "must be an array");
  const policies: AutomationPolicy[] = [];
  for (let i = 0; i < list.length; i++) {
    policies.push(await decodePolicy(list[i], `${a.at("policies")}[${i}]`, ctx));
  }
  // Caddy's Validate: one catch-all at most, one policy per subject.
  const seen = new Map<string, number>();
  let catchAll = -1;
  policies.forEach((p, i) => {
    if (!p.subjects.length) {
      if (catchAll >= 0) {
        throw new ConfigError(
          "invalid_config",
          `tls.automation.policies[${i}]: a second catch-all policy (no subjects) would never be used`,
        );
      }
      catchAll = i;
    }
    for (const s of p.subjects) {
      if (seen.has(s)) {
        throw new ConfigError(
          "invalid_config",
          `tls.automation.policies[${i}]: ${s} already has policy ${seen.get(s)}`,
        );
      }
      seen.set(s, i);
    }
  });
  if (a.value("ocsp_interval") !== undefined) {
    a.failAt(
      "ocsp_interval",
      "OCSP is not used by Gatehouse (responses are neither " +
        "stapled nor fetched), so there is no OCSP check to schedule; remove the field",
      "unsupported",
    );
  }
  const interval = positiveDuration(a, "renew_interval", DEFAULT_RENEW_INTERVAL_MS);
  const cleanInterval = positiveDuration(
    a,
    "storage_clean_interval",
    DEFAULT_STORAGE_CLEAN_INTERVAL_MS,
  );
  const onDemand = a.value("on_demand") === undefined
    ? undefined
    : decodeOnDemand(a.value("on_demand"), a.at("on_demand"));
  return {
    policies,
    renewIntervalMs: interval,
    storageCleanIntervalMs: cleanInterval,
    onDemand,
  };
}

function positiveDuration(a: Decoder, key: string, fallback: number): number {
  if (a.value(key) === undefined) return fallback;
  const ms = durationMs(a.value(key), a.at(key));
  if (!(ms > 0)) a.failAt(key, "must be positive");
  return ms;
}

/**
 * A certificate from the `get_certificate` managers of the first configured policy for `name`
 * (the first manager that has one); null when none has, or on an error (logged, as certmagic
 * does; the handshake then fails).
 *
 * @example
 * ```ts ignore
 * const got = await askManagers(policies, "example.com", "127.0.0.1", logger);
 * ```
 */
export async function askManagers(
  policies: AutomationPolicy[],
  name: string,
  localIp: string,
  log: Logger,
): Promise<CertifiedKey | null> {
  const policy = policies.find((p) =>
    !p.subjects.length || p.subjects.some((s) => matchWildcard(name, s))
  );
  if (!policy?.managers?.length) return null;
  const ip = localIp && localIp !== "0.0.0.0" && localIp !== "::" ? localIp : undefined;
  for (let i = 0; i < policy.managers.length; i++) {
    try {
      const got = await policy.managers[i].getCertificate({ serverName: name, localIp: ip });
      if (got) return got;
    } catch (e) {
      log.error("external certificate manager", {
        sni: name,
        cert_manager_idx: i,
        error: (e as Error).message,
      });
      return null;
    }
  }
  return null;
}
