/**
 * The JSON config of the `zerossl` issuer (module `tls.issuance.zerossl`). Caddy has had two
 * issuers under that id, and both of their configs work here:
 *
 * - **ZeroSSL's REST API** (Caddy 2.8+): `api_key` (required), `validity_days`, `listen_host`,
 *   `alternate_http_port`, `cname_validation` (Caddy's `DNSChallengeConfig`; its `provider`, else
 *   the `tls` app's `dns`, makes the CNAME records). Names are validated by HTTP file, or by CNAME
 *   with `cname_validation`.
 * - **ZeroSSL's ACME endpoint with generated EAB** (Caddy 2.6): every field of the `acme`
 *   issuer (`ca` defaults to ZeroSSL's directory), plus `api_key` or `email`: External Account
 *   Binding credentials are fetched from ZeroSSL's API with the key, or for the e-mail address,
 *   when a new ACME account is registered (never when `external_account` is given).
 *
 * Which one: the API when one of its own fields is set, or when `api_key` is the only setting
 * (as Caddy 2.8+ reads `{"module": "zerossl", "api_key": "…"}`); ACME when any `acme` field is
 * set or there is no `api_key`. Mixing fields of both is refused, naming them. `api_key` may
 * hold `{env.NAME}` placeholders (replaced at load; an empty result is refused). `api_url` (not
 * in Caddy) moves the API (a ZeroSSL-compatible endpoint, a proxy, a test double): https, or
 * http on loopback only.
 *
 * @module
 */
import { Decoder, type Raw } from "../../config/decode.ts";
import {
  ACME_ISSUER_FIELDS,
  type AcmeIssuerConfig,
  decodeDnsChallengeConfig,
  type DnsChallengeConfig,
  parseAcmeIssuerConfig,
} from "../issuers/acme_config.ts";
import { ZEROSSL_ACME_DIRECTORY, ZEROSSL_API } from "./api.ts";

/** Fields only the REST API form has. */
export const API_FIELDS = [
  "validity_days",
  "listen_host",
  "alternate_http_port",
  "cname_validation",
] as const;
/** Fields only the ACME form has (the `acme` issuer's). */
export const ACME_FIELDS = ACME_ISSUER_FIELDS;

/** The REST API form. */
export interface ZeroSslApiConfig {
  /** Which form. */
  form: "api";
  /** `api_key` (placeholders replaced). */
  apiKey: string;
  /** `api_url` (default ZeroSSL's). */
  apiUrl: string;
  /** `validity_days` (0: the API's default, 90). */
  validityDays: number;
  /** `listen_host`: where the standalone validation listener binds (default all). */
  listenHost: string;
  /** `alternate_http_port`: the validation listener's port (default the `http_port`). */
  alternateHttpPort?: number;
  /** `cname_validation`: validate by CNAME records instead of HTTP. */
  cname?: DnsChallengeConfig;
}

/** The ACME form. */
export interface ZeroSslAcmeConfig {
  /** Which form. */
  form: "acme";
  /** `api_key`: EAB credentials come from the API with it. */
  apiKey?: string;
  /** `api_url` (default ZeroSSL's). */
  apiUrl: string;
  /** The `acme` issuer config (with `ca` defaulting to ZeroSSL's directory). */
  acme: AcmeIssuerConfig;
}

/** A decoded `zerossl` issuer config. */
export type ZeroSslIssuerConfig = ZeroSslApiConfig | ZeroSslAcmeConfig;

/** Replaces `{env.NAME}` placeholders (an unset variable is empty). */
function replaceEnv(text: string, env: (name: string) => string | undefined): string {
  return text.replace(/\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, n: string) => env(n) ?? "");
}

function checkApiUrl(d: Decoder, key: string): string {
  const raw = d.value(key);
  if (raw === undefined || raw === null || raw === "") return ZEROSSL_API;
  let u: URL;
  try {
    u = new URL(String(raw));
  } catch {
    d.failAt(key, `not a URL: ${JSON.stringify(raw)}`);
  }
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(u.hostname);
  if (
    typeof raw !== "string" || !(u.protocol === "https:" || (u.protocol === "http:" && loopback))
  ) {
    d.failAt(key, `the ZeroSSL API must use https (http on loopback only): ${raw}`);
  }
  return raw.replace(/\/+$/, "");
}

function apiKeyOf(d: Decoder, env: (n: string) => string | undefined) {
  const v = d.value("api_key");
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") d.failAt("api_key", "must be a string");
  const key = replaceEnv(v, env).trim();
  if (!key) {
    d.failAt(
      "api_key",
      `${JSON.stringify(v)} is empty once placeholders are replaced ` +
        `(is the environment variable set?)`,
    );
  }
  return key;
}

/**
 * Decodes a `zerossl` issuer's config; `readFile` reads the ACME form's
 * `trusted_roots_pem_files`, `env` the `{env.NAME}` placeholders of `api_key`.
 *
 * @example
 * ```ts
 * import { parseZeroSslIssuerConfig } from "./config.ts";
 * parseZeroSslIssuerConfig({ module: "zerossl", api_key: "k" }, "issuer").form; // "api"
 * parseZeroSslIssuerConfig({ module: "zerossl", email: "me@example.com" }, "issuer").form; // "acme"
 * ```
 */
export function parseZeroSslIssuerConfig(
  raw: Raw,
  where: string,
  readFile: (path: string) => string = Deno.readTextFileSync,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): ZeroSslIssuerConfig {
  const d: Decoder = new Decoder(raw, where).fields([
    "module",
    "api_key",
    "api_url",
    ...API_FIELDS,
    ...ACME_FIELDS,
  ]);
  const set = (k: string) => d.has(k);
  const apiOnly = API_FIELDS.filter(set);
  const acmeOnly = ACME_FIELDS.filter(set);
  if (apiOnly.length && acmeOnly.length) {
    d.fail(
      `${apiOnly.join(", ")} (ZeroSSL's REST API) and ${acmeOnly.join(", ")} ` +
        `(ZeroSSL's ACME endpoint) cannot be mixed; keep the fields of one of them`,
    );
  }
  const apiKey = apiKeyOf(d, env);
  const apiUrl = checkApiUrl(d, "api_url");
  if (apiOnly.length || (apiKey && !acmeOnly.length)) {
    if (!apiKey) {
      d.failAt("api_key", `required for ZeroSSL's REST API (${apiOnly.join(", ")})`);
    }
    return { form: "api", apiKey, apiUrl, ...apiFields(d) };
  }
  const acmeRaw: Raw = { module: "acme" };
  for (const k of ACME_FIELDS) if (set(k)) acmeRaw[k] = raw[k];
  acmeRaw.ca ??= ZEROSSL_ACME_DIRECTORY;
  const acme = parseAcmeIssuerConfig(acmeRaw, where, readFile);
  if (!apiKey && !acme.email && !acme.externalAccount) {
    d.fail(
      `set api_key (ZeroSSL's REST API, or EAB credentials for its ACME endpoint), ` +
        `email (EAB credentials for that address) or external_account`,
    );
  }
  return { form: "acme", apiKey, apiUrl, acme };
}

function apiFields(d: Decoder): Omit<ZeroSslApiConfig, "form" | "apiKey" | "apiUrl"> {
  const days = d.value("validity_days") ?? 0;
  if (typeof days !== "number" || !Number.isInteger(days) || days < 0 || days > 3650) {
    d.failAt("validity_days", "must be a whole number of days (ZeroSSL: 90 or 365)");
  }
  const host = d.value("listen_host") ?? "";
  if (typeof host !== "string") d.failAt("listen_host", "must be a string");
  const port = d.value("alternate_http_port") ?? 0;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
    d.failAt("alternate_http_port", "must be a port number (1-65535)");
  }
  let cname: DnsChallengeConfig | undefined;
  if (d.has("cname_validation")) {
    const c = Decoder.of(d.value("cname_validation"), d.at("cname_validation"));
    cname = decodeDnsChallengeConfig(c.raw, c.path);
    if (cname.overrideDomain) {
      c.failAt(
        "override_domain",
        "ZeroSSL names the CNAME record (_<hash>.<name>), so it cannot be put elsewhere; " +
          "remove the field",
      );
    }
  }
  return {
    validityDays: days,
    listenHost: host,
    alternateHttpPort: port || undefined,
    cname,
  };
}
