/**
 * The JSON config of the `acme` issuer (module `tls.issuance.acme`), Caddy's field names and
 * defaults. Every field is decoded here, once; fields Gatehouse cannot honour are refused
 * with the reason.
 *
 * @module
 */
import { durationMs } from "../../config/duration.ts";
import { tlsCheckFields } from "../certificates.ts";
import { ConfigError } from "../../config/error.ts";
import { parseResolvers, type Resolver } from "../dns/resolvers.ts";

/** A challenge type the ACME client can answer. */
export type ChallengeType = "http-01" | "tls-alpn-01" | "dns-01";

/** Let's Encrypt's production directory (Caddy's default `ca`). */
export const LETS_ENCRYPT_PRODUCTION = "https://acme-v02.api.letsencrypt.org/directory";
/** Let's Encrypt's staging directory. */
export const LETS_ENCRYPT_STAGING = "https://acme-staging-v02.api.letsencrypt.org/directory";

/** The decoded `acme` issuer config. */
export interface AcmeIssuerConfig {
  /** `ca`: the ACME directory URL. */
  ca: string;
  /** `test_ca`: a directory tried first after a failed attempt (dry run), if set. */
  testCa?: string;
  /** `email`: the account's contact. */
  email?: string;
  /** `account_key`: a PEM private key to use for the account. */
  accountKey?: string;
  /** `external_account`: EAB credentials. */
  externalAccount?: { keyId: string; macKey: string };
  /** `acme_timeout` in ms: time limit of one request to the CA. */
  timeoutMs?: number;
  /** Enabled challenge types, preferred first. */
  challengeTypes: ChallengeType[];
  /** `challenges.http.alternate_port`. */
  httpPort?: number;
  /** `challenges.tls-alpn.alternate_port`. */
  tlsAlpnPort?: number;
  /** `challenges.bind_host`. */
  bindHost: string;
  /** `trusted_roots_pem_files`: PEM contents of the roots trusted for the CA's HTTPS. */
  trustedRoots: string[];
  /** `preferred_chains`: which of the CA's chains to keep. */
  preferredChains?: PreferredChains;
  /** `challenges.dns`: the DNS-01 challenge (then the only one used, as in certmagic). */
  dns?: DnsChallengeConfig;
}

/** `preferred_chains` (Caddy's `ChainPreference`). */
export interface PreferredChains {
  /** `smallest`: true, the chain with the fewest bytes first; false, the largest first. */
  smallest?: boolean;
  /** `root_common_name`: the first chain whose top issuer has one of these common names. */
  rootCommonName: string[];
  /** `any_common_name`: the first chain with a certificate issued by one of these names. */
  anyCommonName: string[];
}

/** A decoded `challenges.dns` (its provider is loaded by the issuer). */
export interface DnsChallengeConfig {
  /** `provider` (`{"name": ...}`); absent: the `tls` app's `dns`. */
  providerRaw?: Raw;
  /** `ttl` in ms. */
  ttlMs: number;
  /** `propagation_delay` in ms. */
  propagationDelayMs: number;
  /** `propagation_timeout` in ms (-1: no check). */
  propagationTimeoutMs: number;
  /** `resolvers` (empty: the `tls` app's, else the system's). */
  resolvers: Resolver[];
  /** `override_domain`. */
  overrideDomain?: string;
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function obj(raw: Raw, key: string, where: string): Raw | undefined {
  const v = raw[key];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    throw new ConfigError("invalid_config", `${where}.${key}: must be an object`);
  }
  return v;
}

function str(raw: Raw, key: string, where: string): string | undefined {
  const v = raw[key];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") {
    throw new ConfigError("invalid_config", `${where}.${key}: must be a string`);
  }
  return v;
}

function port(raw: Raw, key: string, where: string): number | undefined {
  const v = raw[key];
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 65535) {
    throw new ConfigError("invalid_config", `${where}.${key}: must be a port number (1-65535)`);
  }
  return v;
}

function checkDirectoryUrl(url: string, where: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError("invalid_config", `${where}: not a URL: ${JSON.stringify(url)}`);
  }
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(u.hostname);
  if (u.protocol !== "https:" && !(u.protocol === "http:" && loopback)) {
    throw new ConfigError(
      "invalid_config",
      `${where}: an ACME directory must use https (http is allowed for loopback only): ${url}`,
    );
  }
  return url;
}

/**
 * Decodes an `acme` issuer's config; `readFile` reads `trusted_roots_pem_files`.
 *
 * @example
 * ```ts
 * import { parseAcmeIssuerConfig } from "./acme_config.ts";
 * const cfg = parseAcmeIssuerConfig({ module: "acme", email: "me@example.com" }, "issuer");
 * cfg.ca; // Let's Encrypt production
 * ```
 */
export function parseAcmeIssuerConfig(
  raw: Raw,
  where: string,
  readFile: (path: string) => string = Deno.readTextFileSync,
): AcmeIssuerConfig {
  tlsCheckFields(raw, [
    "module",
    "ca",
    "test_ca",
    "email",
    "account_key",
    "external_account",
    "acme_timeout",
    "challenges",
    "trusted_roots_pem_files",
    "preferred_chains",
  ], where);
  const ca = checkDirectoryUrl(str(raw, "ca", where) ?? LETS_ENCRYPT_PRODUCTION, `${where}.ca`);
  const testCaRaw = str(raw, "test_ca", where);
  const testCa = testCaRaw ? checkDirectoryUrl(testCaRaw, `${where}.test_ca`) : undefined;
  const email = str(raw, "email", where);
  const accountKey = str(raw, "account_key", where);
  if (accountKey && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(accountKey)) {
    throw new ConfigError("invalid_config", `${where}.account_key: must be a PEM private key`);
  }
  let externalAccount: AcmeIssuerConfig["externalAccount"];
  const eab = obj(raw, "external_account", where);
  if (eab) {
    tlsCheckFields(eab, ["key_id", "mac_key"], `${where}.external_account`);
    const keyId = str(eab, "key_id", `${where}.external_account`);
    const macKey = str(eab, "mac_key", `${where}.external_account`);
    if (!keyId || !macKey) {
      throw new ConfigError(
        "invalid_config",
        `${where}.external_account: key_id and mac_key are both required`,
      );
    }
    externalAccount = { keyId, macKey };
  }
  let timeoutMs: number | undefined;
  if (raw.acme_timeout !== undefined) {
    timeoutMs = durationMs(raw.acme_timeout, `${where}.acme_timeout`);
  }
  const ch = obj(raw, "challenges", where) ?? {};
  const w = `${where}.challenges`;
  tlsCheckFields(ch, ["http", "tls-alpn", "dns", "bind_host"], w);
  const dns = ch.dns === undefined || ch.dns === null ? undefined : decodeDns(ch, w);
  const http = obj(ch, "http", w) ?? {};
  const alpn = obj(ch, "tls-alpn", w) ?? {};
  tlsCheckFields(http, ["disabled", "alternate_port"], `${w}.http`);
  tlsCheckFields(alpn, ["disabled", "alternate_port"], `${w}.tls-alpn`);
  for (const [o, n] of [[http, "http"], [alpn, "tls-alpn"]] as const) {
    if (o.disabled !== undefined && typeof o.disabled !== "boolean") {
      throw new ConfigError("invalid_config", `${w}.${n}.disabled: must be a boolean`);
    }
  }
  const challengeTypes: ChallengeType[] = [];
  if (dns) challengeTypes.push("dns-01");
  else {
    if (http.disabled !== true) challengeTypes.push("http-01");
    if (alpn.disabled !== true) challengeTypes.push("tls-alpn-01");
  }
  if (!challengeTypes.length) {
    throw new ConfigError(
      "invalid_config",
      `${w}: every challenge type is disabled; enable http or tls-alpn, or configure dns`,
    );
  }
  const roots: string[] = [];
  const files = raw.trusted_roots_pem_files;
  if (files !== undefined) {
    if (!Array.isArray(files) || files.some((f) => typeof f !== "string")) {
      throw new ConfigError(
        "invalid_config",
        `${where}.trusted_roots_pem_files: must be an array of file paths`,
      );
    }
    for (const f of files as string[]) {
      let text: string;
      try {
        text = readFile(f);
      } catch (e) {
        throw new ConfigError(
          "certificate_load",
          `${where}.trusted_roots_pem_files: cannot read ${f}: ${(e as Error).message}`,
        );
      }
      if (!text.includes("-----BEGIN CERTIFICATE-----")) {
        throw new ConfigError(
          "certificate_load",
          `${where}.trusted_roots_pem_files: ${f} holds no PEM certificate`,
        );
      }
      roots.push(text);
    }
  }
  const pref = obj(raw, "preferred_chains", where);
  const preferredChains = pref
    ? decodePreferredChains(pref, `${where}.preferred_chains`)
    : undefined;
  return {
    ca,
    testCa,
    email,
    accountKey,
    externalAccount,
    timeoutMs,
    challengeTypes,
    httpPort: port(http, "alternate_port", `${w}.http`),
    tlsAlpnPort: port(alpn, "alternate_port", `${w}.tls-alpn`),
    bindHost: str(ch, "bind_host", w) ?? "",
    trustedRoots: roots,
    preferredChains,
    dns,
  };
}

function names(raw: Raw, key: string, where: string): string[] {
  const v = raw[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string" || n === "")) {
    throw new ConfigError("invalid_config", `${where}.${key}: must be an array of common names`);
  }
  return v as string[];
}

function decodePreferredChains(pref: Raw, where: string): PreferredChains {
  tlsCheckFields(pref, ["smallest", "root_common_name", "any_common_name"], where);
  if (pref.smallest !== undefined && typeof pref.smallest !== "boolean") {
    throw new ConfigError("invalid_config", `${where}.smallest: must be a boolean`);
  }
  return {
    smallest: pref.smallest as boolean | undefined,
    rootCommonName: names(pref, "root_common_name", where),
    anyCommonName: names(pref, "any_common_name", where),
  };
}

function optionalDuration(raw: Raw, key: string, where: string): number {
  const v = raw[key];
  if (v === undefined || v === null || v === 0 || v === "") return 0;
  const ms = durationMs(v, `${where}.${key}`);
  return ms < 0 ? -1 : ms;
}

function decodeDns(ch: Raw, w: string): DnsChallengeConfig {
  return decodeDnsChallengeConfig(obj(ch, "dns", w) ?? {}, `${w}.dns`);
}

/**
 * Decodes a DNS challenge config (Caddy's `DNSChallengeConfig`: `challenges.dns` of the
 * `acme` issuer, `cname_validation` of the `zerossl` issuer); `dw` names it in errors.
 *
 * @example
 * ```ts
 * import { decodeDnsChallengeConfig } from "./acme_config.ts";
 * decodeDnsChallengeConfig({ ttl: "5m" }, "issuer.cname_validation").ttlMs; // 300000
 * ```
 */
export function decodeDnsChallengeConfig(dns: Raw, dw: string): DnsChallengeConfig {
  tlsCheckFields(dns, [
    "provider",
    "ttl",
    "propagation_delay",
    "propagation_timeout",
    "resolvers",
    "override_domain",
  ], dw);
  const providerRaw = obj(dns, "provider", dw);
  const ttlMs = optionalDuration(dns, "ttl", dw);
  const propagationDelayMs = optionalDuration(dns, "propagation_delay", dw);
  if (ttlMs < 0 || propagationDelayMs < 0) {
    throw new ConfigError(
      "invalid_config",
      `${dw}: ttl and propagation_delay cannot be negative`,
    );
  }
  return {
    providerRaw,
    ttlMs,
    propagationDelayMs,
    propagationTimeoutMs: optionalDuration(dns, "propagation_timeout", dw),
    resolvers: parseResolvers(dns.resolvers, `${dw}.resolvers`),
    overrideDomain: str(dns, "override_domain", dw),
  };
}
