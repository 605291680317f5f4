/**
 * The config of `http.handlers.authentication`, field by field as Caddy's `Authentication`,
 * `HTTPBasicAuth`, `Account` and `ScryptHash` (`modules/caddyhttp/caddyauth/`), and its
 * decoder. The JSON decoder, the `basic_auth` directive (`caddyfile.ts`) and the writer
 * (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { ConfigError } from "../../../config/error.ts";
import { fromBase64, SCRYPT_DEFAULTS, type ScryptParams } from "./hashes.ts";

/** How the passwords are hashed: `bcrypt` (the default) or the deprecated `scrypt`. */
export type HashConfig = {
  /** `bcrypt` or `scrypt`. */
  algorithm?: string;
  /** scrypt: the CPU/memory cost, a power of two over 1 (32768 by default). */
  N?: number;
  /** scrypt: the block size (8 by default). */
  r?: number;
  /** scrypt: the parallelization (1 by default). */
  p?: number;
  /** scrypt: the length of the key in bytes (32 by default). */
  key_length?: number;
};

/** An account. */
export type AccountConfig = {
  /** The user's name. */
  username?: string;
  /**
   * The hashed password: for bcrypt the `$2a$`/`$2b$` hash (Modular Crypt Format) or its
   * base64; for scrypt the base64 key.
   */
  password?: string;
  /** scrypt (deprecated): the base64 salt the key was made with. */
  salt?: string;
};

/** HTTP basic authentication (`http.authentication.providers.http_basic`). */
export type HTTPBasicConfig = {
  /** The algorithm the passwords are hashed with (bcrypt by default). */
  hash?: HashConfig;
  /** The accounts. */
  accounts?: AccountConfig[];
  /** The realm of the challenge (`restricted` by default). */
  realm?: string;
  /**
   * If set, verified credentials are remembered in memory (bounded), which spares the slow
   * hash for repeated requests (a hit does not mean a valid password).
   */
  hash_cache?: Record<string, never>;
};

/** `http.handlers.authentication`: refuses requests that do not authenticate with 401. */
export type AuthenticationConfig = {
  /** The module name. */
  handler: "authentication";
  /** The authentication providers; only `http_basic` is available, and it is required. */
  providers?: { http_basic?: HTTPBasicConfig };
};

/** The fields of {@linkcode AuthenticationConfig}. */
export const AUTHENTICATION_FIELDS: readonly (keyof AuthenticationConfig)[] = [
  "handler",
  "providers",
];

const BASIC_FIELDS: readonly (keyof HTTPBasicConfig)[] = [
  "accounts",
  "hash",
  "realm",
  "hash_cache",
];

const ACCOUNT_FIELDS: readonly (keyof AccountConfig)[] = ["username", "password", "salt"];

function invalid(where: string, detail: string): ConfigError {
  return new ConfigError("invalid_config", `${where}: ${detail}`);
}

/** The bcrypt hash text of a `password` (raw or base64); refused when it is none. */
export function bcryptHashOf(password: string, where: string): string {
  if (password.startsWith("$2")) return password;
  try {
    const s = atob(password);
    if (s.startsWith("$2")) return s;
  } catch {
    // fall through
  }
  throw invalid(where, "password is not a bcrypt hash");
}

/** The scrypt key and salt of an account's base64 `password` and `salt`. */
export function scryptKeyOf(
  password: string,
  salt: string | undefined,
  where: string,
): { key: Uint8Array; salt: Uint8Array } {
  const key = password.startsWith("$") ? new TextEncoder().encode(password) : fromBase64(password);
  if (!key) throw invalid(where, "base64-decoding password");
  const saltBytes = salt ? fromBase64(salt) : new Uint8Array(0);
  if (!saltBytes) throw invalid(where, "base64-decoding salt");
  return { key, salt: saltBytes };
}

/** The scrypt parameters of a decoded hash config (defaults for those not set or 0). */
export function scryptParams(hash: HashConfig): ScryptParams {
  const out = { ...SCRYPT_DEFAULTS };
  for (const k of ["N", "r", "p", "key_length"] as const) {
    const v = hash[k];
    if (v !== undefined && v !== 0) out[k] = v;
  }
  return out;
}

function decodeHash(d: Decoder): HashConfig {
  const algorithm = d.string("algorithm");
  const out: HashConfig = {};
  if (algorithm !== undefined) out.algorithm = algorithm;
  const algo = algorithm || "bcrypt";
  if (algo === "scrypt") {
    d.fields(["algorithm", "N", "r", "p", "key_length"]);
    for (const k of ["N", "r", "p", "key_length"] as const) {
      const v = d.number(k);
      if (v === undefined) continue;
      if (v !== 0 && (!Number.isInteger(v) || v < 1)) d.fail(`${k} must be a positive integer`);
      out[k] = v;
    }
    const { N } = scryptParams(out);
    if (N < 2 || (N & (N - 1)) !== 0) d.fail("N must be a power of two over 1");
  } else if (algo === "bcrypt") {
    d.fields(["algorithm"]);
  }
  return out;
}

/**
 * Decodes and checks an `authentication` config: the `http_basic` provider, its hash, its
 * accounts (names unique; passwords that decode as the algorithm's).
 *
 * @example
 * ```ts
 * import { decodeAuthentication } from "./config.ts";
 * const hash = "$2a$14$X0ZzLmHMmGvZkS3ZK4/7e.YdeqvV7qFKfGQ8vnrbb8/hJXo6bS2fO";
 * decodeAuthentication({
 *   handler: "authentication",
 *   providers: { http_basic: { accounts: [{ username: "ann", password: hash }] } },
 * }).providers?.http_basic?.accounts?.length; // 1
 * ```
 */
export function decodeAuthentication(raw: Raw): AuthenticationConfig {
  const where = "http.handlers.authentication";
  const d = new Decoder(raw, where).fields(AUTHENTICATION_FIELDS);
  const providers = d.rawObject("providers") ?? {};
  for (const name of Object.keys(providers)) {
    if (name !== "http_basic") d.fail(`unknown provider ${name}`);
  }
  if (!providers.http_basic) d.fail("no providers");
  const b = Decoder.of(providers.http_basic, `${where}.http_basic`);
  const w = `${where}.providers.http_basic`;
  const basic = new Decoder(b.raw, w).fields(BASIC_FIELDS);
  const out: HTTPBasicConfig = {};
  const hashRaw = basic.raw.hash;
  const hash = decodeHash(
    hashRaw ? Decoder.of(hashRaw, `${w}.hash`) : new Decoder({}, `${w}.hash`),
  );
  if (hashRaw) out.hash = hash;
  const algo = hash.algorithm || "bcrypt";
  if (algo !== "scrypt" && algo !== "bcrypt") basic.fail(`unsupported hash algorithm ${algo}`);
  const accounts = basic.array("accounts");
  if (accounts) {
    const names = new Set<string>();
    out.accounts = accounts.map((a) => {
      const o = Decoder.of(a, `${w}.accounts`).fields(ACCOUNT_FIELDS);
      // the account's fields are named at the provider
      const at = new Decoder(o.raw, w);
      const username = at.string("username");
      const password = at.string("password");
      const salt = at.string("salt");
      if (!username || !password) throw basic.error("account needs username and password");
      if (names.has(username)) basic.fail(`duplicate user ${username}`);
      names.add(username);
      if (algo === "scrypt") scryptKeyOf(password, salt, `${w}.accounts`);
      else bcryptHashOf(password, w);
      const account: AccountConfig = { username, password };
      if (salt !== undefined) account.salt = salt;
      return account;
    });
  }
  const realm = basic.string("realm");
  if (realm !== undefined) out.realm = realm;
  if (basic.raw.hash_cache) out.hash_cache = {};
  return { handler: "authentication", providers: { http_basic: out } };
}
