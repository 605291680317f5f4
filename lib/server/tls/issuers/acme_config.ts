/**
 * The JSON config of the `acme` issuer (module `tls.issuance.acme`), Caddy's field names and
 * defaults. Every field is decoded here, once; fields Gatehouse cannot honour are refused
 * with the reason.
 *
 * @module
 */
import { durationMs } from "../../config/duration.ts";
import { Decoder, type Raw } from "../../config/decode.ts";
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

function obj(d: Decoder, key: string): Decoder | undefined {
  const v = d.value(key);
  if (v === undefined || v === null) return undefined;
  return Decoder.of(v, d.at(key));
}

function str(d: Decoder, key: string): string | undefined {
  const v = d.value(key);
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") d.failAt(key, "must be a string");
  return v;
}

function port(d: Decoder, key: string): number | undefined {
  const v = d.value(key);
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 65535) {
    d.failAt(key, "must be a port number (1-65535)");
  }
  return v;
}

function checkDirectoryUrl(d: Decoder, key: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    d.failAt(key, `not a URL: ${JSON.stringify(url)}`);
  }
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(u.hostname);
  if (u.protocol !== "https:" && !(u.protocol === "http:" && loopback)) {
    d.failAt(
      key,
      `an ACME directory must use https (http is allowed for loopback only): ${url}`,
    );
  }
  return url;
}

/** The fields of an `acme` issuer's config but `module` (the `zerossl` ACME form's too). */
export const ACME_ISSUER_FIELDS = [
  "ca",
  "test_ca",
  "email",
  "account_key",
  "external_account",
  "acme_timeout",
  "challenges",
  "trusted_roots_pem_files",
  "preferred_chains",
] as const;

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
  const d: Decoder = new Decoder(raw, where).fields(["module", ...ACME_ISSUER_FIELDS]);
  const ca = checkDirectoryUrl(d, "ca", str(d, "ca") ?? LETS_ENCRYPT_PRODUCTION);
  const testCaRaw = str(d, "test_ca");
  const testCa = testCaRaw ? checkDirectoryUrl(d, "test_ca", testCaRaw) : undefined;
  const email = str(d, "email");
  const accountKey = str(d, "account_key");
  if (accountKey && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(accountKey)) {
    d.failAt("account_key", "must be a PEM private key");
  }
  let externalAccount: AcmeIssuerConfig["externalAccount"];
  const eab: Decoder | undefined = obj(d, "external_account");
  if (eab) {
    eab.fields(["key_id", "mac_key"]);
    const keyId = str(eab, "key_id");
    const macKey = str(eab, "mac_key");
    if (!keyId || !macKey) throw eab.error("key_id and mac_key are both required");
    externalAccount = { keyId, macKey };
  }
  let timeoutMs: number | undefined;
  if (d.value("acme_timeout") !== undefined) {
    timeoutMs = durationMs(d.value("acme_timeout"), d.at("acme_timeout"));
  }
  const ch = obj(d, "challenges") ?? new Decoder({}, d.at("challenges"));
  ch.fields(["http", "tls-alpn", "dns", "bind_host"]);
  const dns = ch.has("dns")
    ? decodeDnsChallengeConfig(obj(ch, "dns")!.raw, ch.at("dns"))
    : undefined;
  const http = obj(ch, "http") ?? new Decoder({}, ch.at("http"));
  const alpn = obj(ch, "tls-alpn") ?? new Decoder({}, ch.at("tls-alpn"));
  http.fields(["disabled", "alternate_port"]);
  alpn.fields(["disabled", "alternate_port"]);
  for (const o of [http, alpn]) {
    const disabled = o.value("disabled");
    if (disabled !== undefined && typeof disabled !== "boolean") {
      o.failAt("disabled", "must be a boolean");
    }
  }
  const challengeTypes: ChallengeType[] = [];
  if (dns) challengeTypes.push("dns-01");
  else {
    if (http.value("disabled") !== true) challengeTypes.push("http-01");
    if (alpn.value("disabled") !== true) challengeTypes.push("tls-alpn-01");
  }
  if (!challengeTypes.length) {
    ch.fail("every challenge type is disabled; enable http or tls-alpn, or configure dns");
  }
  const roots: string[] = [];
  const files = d.value("trusted_roots_pem_files");
  if (files !== undefined) {
    if (!Array.isArray(files) || files.some((f) => typeof f !== "string")) {
      d.failAt("trusted_roots_pem_files", "must be an array of file paths");
    }
    for (const f of files as string[]) {
      let text: string;
      try {
        text = readFile(f);
      } catch (e) {
        d.failAt(
          "trusted_roots_pem_files",
          `cannot read ${f}: ${(e as Error).message}`,
          "certificate_load",
        );
      }
      if (!text.includes("-----BEGIN CERTIFICATE-----")) {
        d.failAt("trusted_roots_pem_files", `${f} holds no PEM certificate`, "certificate_load");
      }
      roots.push(text);
    }
  }
  const pref = obj(d, "preferred_chains");
  const preferredChains = pref ? decodePreferredChains(pref) : undefined;
  return {
    ca,
    testCa,
    email,
    accountKey,
    externalAccount,
    timeoutMs,
    challengeTypes,
    httpPort: port(http, "alternate_port"),
    tlsAlpnPort: port(alpn, "alternate_port"),
    bindHost: str(ch, "bind_host") ?? "",
    trustedRoots: roots,
    preferredChains,
    dns,
  };
}

function names(d: Decoder, key: string): string[] {
  const v = d.value(key);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string" || n === "")) {
    d.failAt(key, "must be an array of common names");
  }
  return v as string[];
}

function decodePreferredChains(pref: Decoder): PreferredChains {
  pref.fields(["smallest", "root_common_name", "any_common_name"]);
  const smallest = pref.value("smallest");
  if (smallest !== undefined && typeof smallest !== "boolean") {
    pref.failAt("smallest", "must be a boolean");
  }
  return {
    smallest: smallest as boolean | undefined,
    rootCommonName: names(pref, "root_common_name"),
    anyCommonName: names(pref, "any_common_name"),
  };
}

function optionalDuration(d: Decoder, key: string): number {
  const v = d.value(key);
  if (v === undefined || v === null || v === 0 || v === "") return 0;
  const ms = durationMs(v, d.at(key));
  return ms < 0 ? -1 : ms;
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
  const d = new Decoder(dns, dw).fields([
    "provider",
    "ttl",
    "propagation_delay",
    "propagation_timeout",
    "resolvers",
    "override_domain",
  ]);
  const providerRaw = obj(d, "provider")?.raw;
  const ttlMs = optionalDuration(d, "ttl");
  const propagationDelayMs = optionalDuration(d, "propagation_delay");
  if (ttlMs < 0 || propagationDelayMs < 0) {
    d.fail("ttl and propagation_delay cannot be negative");
  }
  return {
    providerRaw,
    ttlMs,
    propagationDelayMs,
    propagationTimeoutMs: optionalDuration(d, "propagation_timeout"),
    resolvers: parseResolvers(d.value("resolvers"), d.at("resolvers")),
    overrideDomain: str(d, "override_domain"),
  };
}
