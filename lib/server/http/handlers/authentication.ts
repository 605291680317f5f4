/**
 * `authentication` with the `http_basic` provider: `accounts` (`username`, `password`, `salt`),
 * `hash` (`{"algorithm": "bcrypt"}`, the default, or `{"algorithm": "scrypt", "N", "r", "p",
 * "key_length"}` as Caddy's deprecated scrypt), `realm` (default `restricted`) and `hash_cache`
 * (remembers verified credentials). A bcrypt `password` is the raw `$2a$`/`$2b$` hash that
 * `hash-password` prints, or base64 of it; a scrypt `password` is the base64 key that
 * `hash-password -a scrypt --salt <salt>` prints, with `salt` the base64 of that salt. A failed
 * check answers 401 with `WWW-Authenticate`. Unknown users are compared against a fake hash so
 * timing does not tell which usernames exist.
 *
 * @module
 */
import type bcryptType from "bcryptjs";
import type { ModuleDefinition } from "../../module/mod.ts";
import { asObject, checkFields, optArray, optNumber, optObject, optString } from "../config.ts";
import { HandlerError } from "../errors.ts";
import { ConfigError } from "../../config/error.ts";
import type { HttpHandler } from "../handler.ts";
import {
  constantTimeEqual,
  fromBase64,
  SCRYPT_DEFAULTS,
  scryptKey,
  type ScryptParams,
} from "./hashes.ts";

interface Account {
  /** bcrypt: the hash text. */
  hash: string;
  /** scrypt: the key and its salt. */
  key?: Uint8Array;
  salt?: Uint8Array;
}

function decodeHash(password: string, where: string): string {
  if (password.startsWith("$2")) return password;
  try {
    const s = atob(password);
    if (s.startsWith("$2")) return s;
  } catch {
    // fall through
  }
  throw new ConfigError("invalid_config", `${where}: password is not a bcrypt hash`);
}

async function sha256(s: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s));
  return btoa(String.fromCharCode(...new Uint8Array(d)));
}

/** Parses `Authorization: Basic ...`; null when absent or malformed. */
export function parseBasicAuth(header: string | null): [string, string] | null {
  if (!header || header.slice(0, 6).toLowerCase() !== "basic ") return null;
  let decoded: string;
  try {
    decoded = new TextDecoder().decode(
      Uint8Array.from(atob(header.slice(6).trim()), (ch) => ch.charCodeAt(0)),
    );
  } catch {
    return null;
  }
  const i = decoded.indexOf(":");
  if (i < 0) return null;
  return [decoded.slice(0, i), decoded.slice(i + 1)];
}

let fakeHash: Promise<string> | null = null; // compared against for unknown users

function scryptParams(hash: Record<string, unknown>, where: string): ScryptParams {
  const out = { ...SCRYPT_DEFAULTS };
  for (const k of ["N", "r", "p", "key_length"] as const) {
    const v = optNumber(hash, k, where);
    if (v === undefined || v === 0) continue;
    if (!Number.isInteger(v) || v < 1) {
      throw new ConfigError("invalid_config", `${where}: ${k} must be a positive integer`);
    }
    out[k] = v;
  }
  if (out.N < 2 || (out.N & (out.N - 1)) !== 0) {
    throw new ConfigError("invalid_config", `${where}: N must be a power of two over 1`);
  }
  return out;
}

function scryptAccount(password: string, salt: string | undefined, where: string): Account {
  const key = password.startsWith("$") ? new TextEncoder().encode(password) : fromBase64(password);
  if (!key) throw new ConfigError("invalid_config", `${where}: base64-decoding password`);
  const saltBytes = salt ? fromBase64(salt) : new Uint8Array(0);
  if (!saltBytes) throw new ConfigError("invalid_config", `${where}: base64-decoding salt`);
  return { hash: "", key, salt: saltBytes };
}

/** Registry entry. */
export const authenticationModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.authentication",
  async create(config, ctx) {
    // bcryptjs loads on first use: servers without basic auth do not carry it.
    const bcrypt: typeof bcryptType = (await import("bcryptjs")).default;
    const where = "http.handlers.authentication";
    checkFields(config, ["handler", "providers"], where);
    const providers = optObject(config, "providers", where) ?? {};
    for (const name of Object.keys(providers)) {
      if (name !== "http_basic") {
        throw new ConfigError("invalid_config", `${where}: unknown provider ${name}`);
      }
    }
    const basic = providers.http_basic
      ? asObject(providers.http_basic, `${where}.http_basic`)
      : null;
    if (!basic) throw new ConfigError("invalid_config", `${where}: no providers`);
    const w = `${where}.providers.http_basic`;
    checkFields(basic, ["accounts", "hash", "realm", "hash_cache"], w);
    const hashCfg = basic.hash ? asObject(basic.hash, `${w}.hash`) : {};
    const algo = optString(hashCfg, "algorithm", `${w}.hash`) || "bcrypt";
    let scrypt: ScryptParams | null = null;
    if (algo === "scrypt") {
      checkFields(hashCfg, ["algorithm", "N", "r", "p", "key_length"], `${w}.hash`);
      scrypt = scryptParams(hashCfg, `${w}.hash`);
      ctx.logger("http.authentication.hashes.scrypt").warn(
        "use of 'scrypt' is deprecated, please use 'bcrypt' instead",
      );
    } else if (algo === "bcrypt") {
      checkFields(hashCfg, ["algorithm"], `${w}.hash`);
    } else {
      throw new ConfigError("invalid_config", `${w}: unsupported hash algorithm ${algo}`);
    }
    const accounts = new Map<string, Account>();
    for (const a of optArray(basic, "accounts", w) ?? []) {
      const o = asObject(a, `${w}.accounts`);
      checkFields(o, ["username", "password", "salt"], `${w}.accounts`);
      const user = optString(o, "username", w);
      const pass = optString(o, "password", w);
      const salt = optString(o, "salt", w);
      if (!user || !pass) {
        throw new ConfigError("invalid_config", `${w}: account needs username and password`);
      }
      if (accounts.has(user)) {
        throw new ConfigError("invalid_config", `${w}: duplicate user ${user}`);
      }
      accounts.set(
        user,
        scrypt ? scryptAccount(pass, salt, `${w}.accounts`) : { hash: decodeHash(pass, w) },
      );
    }
    const fakeKey = crypto.getRandomValues(new Uint8Array(scrypt?.key_length ?? 32));
    const realm = optString(basic, "realm", w) || "restricted";
    const cache = basic.hash_cache ? new Map<string, boolean>() : null;
    const challenge = `Basic realm="${realm.replace(/"/g, '\\"')}"`;

    async function compare(pass: string, account: Account | undefined): Promise<boolean> {
      if (scrypt) {
        const key = await scryptKey(pass, account?.salt ?? new Uint8Array(0), scrypt);
        return constantTimeEqual(key, account?.key ?? fakeKey);
      }
      const hash = account?.hash ?? await (fakeHash ??= bcrypt.hash(crypto.randomUUID(), 10));
      return await bcrypt.compare(pass, hash);
    }

    async function verify(user: string, pass: string): Promise<boolean> {
      const account = accounts.get(user);
      let key = "";
      if (cache && account) {
        const stored = account.key ? `${account.key.join(",")}/${account.salt?.join(",")}` : "";
        key = await sha256(`${user}\0${pass}\0${account.hash}${stored}`);
        const hit = cache.get(key);
        if (hit !== undefined) return hit;
      }
      const ok = await compare(pass, account);
      if (cache && account) {
        if (cache.size > 1000) cache.clear();
        cache.set(key, ok);
      }
      return ok && account !== undefined;
    }

    return {
      async serveHTTP(c, next) {
        const creds = parseBasicAuth(c.headers.get("authorization"));
        if (creds && await verify(creds[0], creds[1])) {
          c.userId = creds[0];
          c.setPlaceholder("http.auth.user.id", creds[0]);
          return next(c);
        }
        c.responseHeaders().set("www-authenticate", challenge);
        throw new HandlerError(401, "not authenticated", "authentication");
      },
    };
  },
};
