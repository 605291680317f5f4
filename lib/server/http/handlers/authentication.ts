/**
 * `authentication` with the `http_basic` provider: `accounts` (`username`, `password` as a
 * bcrypt hash, raw `$2a$...` or base64 of it as `hash-password` prints), `hash.algorithm`
 * (`bcrypt`), `realm` (default `restricted`) and `hash_cache` (remembers verified
 * credentials). A failed check answers 401 with `WWW-Authenticate`. Unknown users are
 * compared against a fake hash so timing does not tell which usernames exist.
 *
 * @module
 */
import type bcryptType from "bcryptjs";
import type { ModuleDefinition } from "../../module.ts";
import { asObject, checkFields, optArray, optObject, optString } from "../config.ts";
import { HandlerError, HttpConfigError } from "../errors.ts";
import type { HttpHandler } from "../handler.ts";

interface Account {
  hash: string;
}

function decodeHash(password: string, where: string): string {
  if (password.startsWith("$2")) return password;
  try {
    const s = atob(password);
    if (s.startsWith("$2")) return s;
  } catch {
    // fall through
  }
  throw new HttpConfigError("invalid_config", `${where}: password is not a bcrypt hash`);
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

/** Registry entry. */
export const authenticationModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.authentication",
  async create(config) {
    // bcryptjs loads on first use: servers without basic auth do not carry it.
    const bcrypt: typeof bcryptType = (await import("bcryptjs")).default;
    const where = "http.handlers.authentication";
    checkFields(config, ["handler", "providers"], where);
    const providers = optObject(config, "providers", where) ?? {};
    for (const name of Object.keys(providers)) {
      if (name !== "http_basic") {
        throw new HttpConfigError("invalid_config", `${where}: unknown provider ${name}`);
      }
    }
    const basic = providers.http_basic
      ? asObject(providers.http_basic, `${where}.http_basic`)
      : null;
    if (!basic) throw new HttpConfigError("invalid_config", `${where}: no providers`);
    const w = `${where}.providers.http_basic`;
    checkFields(basic, ["accounts", "hash", "realm", "hash_cache"], w);
    const algo = basic.hash ? optString(asObject(basic.hash, w), "algorithm", w) : "bcrypt";
    if (algo && algo !== "bcrypt") {
      throw new HttpConfigError("invalid_config", `${w}: unsupported hash algorithm ${algo}`);
    }
    const accounts = new Map<string, Account>();
    for (const a of optArray(basic, "accounts", w) ?? []) {
      const o = asObject(a, `${w}.accounts`);
      const user = optString(o, "username", w);
      const pass = optString(o, "password", w);
      if (!user || !pass) {
        throw new HttpConfigError("invalid_config", `${w}: account needs username and password`);
      }
      if (accounts.has(user)) {
        throw new HttpConfigError("invalid_config", `${w}: duplicate user ${user}`);
      }
      accounts.set(user, { hash: decodeHash(pass, w) });
    }
    const realm = optString(basic, "realm", w) || "restricted";
    const cache = basic.hash_cache ? new Map<string, boolean>() : null;
    const challenge = `Basic realm="${realm.replace(/"/g, '\\"')}"`;

    async function verify(user: string, pass: string): Promise<boolean> {
      const account = accounts.get(user);
      const hash = account?.hash ??
        await (fakeHash ??= bcrypt.hash(crypto.randomUUID(), 10));
      let key = "";
      if (cache && account) {
        key = await sha256(`${user}\0${pass}\0${hash}`);
        const hit = cache.get(key);
        if (hit !== undefined) return hit;
      }
      const ok = await bcrypt.compare(pass, hash);
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
