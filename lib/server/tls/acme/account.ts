/**
 * ACME accounts kept in storage, as certmagic keeps them, so that every instance sharing the
 * storage (and a Caddy moved onto it) uses one account per CA and e-mail:
 *
 * - `acme/<issuer>/users/<email or "default">/<user>.json`: the registration
 *   (`status`, `contact`, `location`, `termsOfServiceAgreed`).
 * - `acme/<issuer>/users/<email or "default">/<user>.key`: the account key (PEM).
 *
 * `<issuer>` is the directory URL's host and path (`acme-v02.api.letsencrypt.org-directory`).
 * An account is registered once, under the storage lock `acme_account_<issuer>_<email>`, with
 * External Account Binding when the issuer has `external_account`.
 *
 * @module
 */
import type { Client } from "acme-client";
import type { Logger } from "../../module/instance.ts";
import { loadText, safeKey, type Storage, withLock } from "../../module/storage.ts";
import { acmeModule } from "./lib.ts";
import { generateKey } from "../../pki/x509.ts";

/** Where and how to find or register an account. */
export interface AccountOptions {
  /** ACME directory URL. */
  directoryUrl: string;
  /** Contact e-mail (optional). */
  email?: string;
  /** A configured account key (PEM); when absent, one is made and kept in storage. */
  accountKeyPem?: string;
  /** External Account Binding credentials (`mac_key` is base64url). */
  eab?: { keyId: string; macKey: string };
  /**
   * Where EAB credentials come from when `eab` is not given (ZeroSSL's API): asked only when a
   * new account is registered.
   */
  eabSource?: () => Promise<{ keyId: string; macKey: string }>;
  /** The storage accounts live in. */
  storage: Storage;
}

/** A registered account and a client signed with its key. */
export interface Account {
  /** The protocol client. */
  client: Client;
  /** The account URL. */
  url: string;
  /** The account key (PEM). */
  keyPem: string;
}

/**
 * The storage key component of a CA (certmagic's `IssuerKey`): host plus the path with `/`
 * turned into `-`.
 *
 * @example
 * ```ts
 * import { issuerKey } from "./account.ts";
 * issuerKey("https://acme-v02.api.letsencrypt.org/directory");
 * // "acme-v02.api.letsencrypt.org-directory"
 * ```
 */
export function issuerKey(directoryUrl: string): string {
  try {
    const u = new URL(directoryUrl);
    const path = u.pathname.replace(/[/\\]/g, "-").replace(/^-+|-+$/g, "");
    return path ? `${u.host}-${path}` : u.host;
  } catch {
    return directoryUrl;
  }
}

/** Storage keys of one account. */
export function accountKeys(directoryUrl: string, email?: string): {
  reg: string;
  key: string;
  lock: string;
} {
  const who = email ? safeKey(email) : "default";
  const user = email ? safeKey(email.split("@")[0] || "default") : "default";
  const base = `acme/${safeKey(issuerKey(directoryUrl))}/users/${who}/${user}`;
  return {
    reg: `${base}.json`,
    key: `${base}.key`,
    lock: `acme_account_${safeKey(issuerKey(directoryUrl))}_${who}`,
  };
}

const cache = new Map<string, Promise<Account>>();

/**
 * Finds the account for a CA and e-mail in storage, or registers one (agreeing to the CA's
 * terms of service, as Caddy does); cached per process.
 *
 * @example
 * ```ts ignore
 * const { client } = await getAccount({ directoryUrl, email, storage }, logger);
 * ```
 */
export function getAccount(options: AccountOptions, logger: Logger): Promise<Account> {
  const id = `${options.storage}|${options.directoryUrl}|${options.email ?? ""}|${
    options.accountKeyPem ?? ""
  }`;
  let p = cache.get(id);
  if (!p) {
    p = loadOrRegister(options, logger).catch((e) => {
      cache.delete(id);
      throw e;
    });
    cache.set(id, p);
  }
  return p;
}

/** Forgets a cached account (e.g. after the CA said it does not exist). */
export async function forgetAccount(options: AccountOptions): Promise<void> {
  for (const k of [...cache.keys()]) {
    if (k.startsWith(`${options.storage}|${options.directoryUrl}|${options.email ?? ""}|`)) {
      cache.delete(k);
    }
  }
  const keys = accountKeys(options.directoryUrl, options.email);
  await options.storage.delete(keys.reg).catch(() => {});
  if (!options.accountKeyPem) await options.storage.delete(keys.key).catch(() => {});
}

async function clientFor(
  options: AccountOptions,
  keyPem: string,
  url?: string,
  eab = options.eab,
): Promise<Client> {
  const acme = await acmeModule();
  return new acme.Client({
    directoryUrl: options.directoryUrl,
    accountKey: keyPem,
    accountUrl: url,
    externalAccountBinding: eab ? { kid: eab.keyId, hmacKey: eab.macKey } : undefined,
    backoffAttempts: 12,
    backoffMin: 250,
    backoffMax: 10_000,
  });
}

async function loadStored(options: AccountOptions): Promise<Account | undefined> {
  const keys = accountKeys(options.directoryUrl, options.email);
  const reg = await loadText(options.storage, keys.reg);
  const keyPem = options.accountKeyPem ?? await loadText(options.storage, keys.key);
  if (!reg || !keyPem) return undefined;
  let location: unknown;
  try {
    location = (JSON.parse(reg) as { location?: unknown }).location;
  } catch {
    return undefined;
  }
  if (typeof location !== "string" || !location) return undefined;
  return { client: await clientFor(options, keyPem, location), url: location, keyPem };
}

async function loadOrRegister(options: AccountOptions, logger: Logger): Promise<Account> {
  const stored = await loadStored(options);
  if (stored) return stored;
  const keys = accountKeys(options.directoryUrl, options.email);
  return await withLock(options.storage, keys.lock, async () => {
    const again = await loadStored(options);
    if (again) return again;
    const keyPem = options.accountKeyPem ?? (await generateKey()).pem;
    const eab = options.eab ?? await options.eabSource?.();
    const client = await clientFor(options, keyPem, undefined, eab);
    const acct = await client.createAccount({
      termsOfServiceAgreed: true,
      contact: options.email ? [`mailto:${options.email}`] : undefined,
    });
    const url = client.getAccountUrl();
    const enc = new TextEncoder();
    if (!options.accountKeyPem) await options.storage.store(keys.key, enc.encode(keyPem));
    await options.storage.store(
      keys.reg,
      enc.encode(JSON.stringify({
        status: acct.status,
        contact: acct.contact ?? [],
        termsOfServiceAgreed: true,
        location: url,
      })),
    );
    logger.info("new ACME account registered", {
      contact: acct.contact ?? [],
      status: acct.status,
      ca: options.directoryUrl,
    });
    return { client, url, keyPem };
  });
}
