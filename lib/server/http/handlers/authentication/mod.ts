/**
 * `authentication` with the `http_basic` provider: `accounts` (`username`, `password`, `salt`),
 * `hash` (`{"algorithm": "bcrypt"}`, the default, or `{"algorithm": "scrypt", "N", "r", "p",
 * "key_length"}` as Caddy's deprecated scrypt), `realm` (default `restricted`) and `hash_cache`
 * (remembers verified credentials). A bcrypt `password` is the raw `$2a$`/`$2b$` hash that
 * `hash-password` prints, or base64 of it; a scrypt `password` is the base64 key that
 * `hash-password -a scrypt --salt <salt>` prints, with `salt` the base64 of that salt. A failed
 * check answers 401 with `WWW-Authenticate`. Unknown users are compared against a fake hash so
 * timing does not tell which usernames exist. The config is {@linkcode AuthenticationConfig}
 * (`config.ts`); the Gatehousefile syntax (`basic_auth`) is `caddyfile.ts` and the writer
 * `writer.ts`.
 *
 * @module
 */
import type bcryptType from "bcryptjs";
import type { ModuleDefinition, ProvisionContext } from "../../../module/mod.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import {
  type AuthenticationConfig,
  bcryptHashOf,
  decodeAuthentication,
  scryptKeyOf,
  scryptParams,
} from "./config.ts";
import { constantTimeEqual, scryptKey, type ScryptParams } from "./hashes.ts";

interface Account {
  /** bcrypt: the hash text. */
  hash: string;
  /** scrypt: the key and its salt. */
  key?: Uint8Array;
  salt?: Uint8Array;
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

/** Provisions an authentication handler from its decoded config. */
export async function authentication(
  config: AuthenticationConfig,
  ctx: ProvisionContext,
): Promise<HttpHandler> {
  // bcryptjs loads on first use: servers without basic auth do not carry it.
  const bcrypt: typeof bcryptType = (await import("bcryptjs")).default;
  const w = "http.handlers.authentication.providers.http_basic";
  const basic = config.providers!.http_basic!; // decoded: the provider is there
  let scrypt: ScryptParams | null = null;
  if (basic.hash?.algorithm === "scrypt") {
    scrypt = scryptParams(basic.hash);
    ctx.logger("http.authentication.hashes.scrypt").warn(
      "use of 'scrypt' is deprecated, please use 'bcrypt' instead",
    );
  }
  const accounts = new Map<string, Account>();
  for (const { username, password, salt } of basic.accounts ?? []) {
    accounts.set(
      username!,
      scrypt
        ? { hash: "", ...scryptKeyOf(password!, salt, `${w}.accounts`) }
        : { hash: bcryptHashOf(password!, w) },
    );
  }
  const fakeKey = crypto.getRandomValues(new Uint8Array(scrypt?.key_length ?? 32));
  const realm = basic.realm || "restricted";
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
}

/** Registry entry. */
export const authenticationModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.authentication",
  create: (config, ctx) => authentication(decodeAuthentication(config), ctx),
};
