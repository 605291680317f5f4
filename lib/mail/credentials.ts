/**
 * The credential checks every request goes through — the customer's `x-api-key` and the
 * mailroom's operator token — with the wrong-credential throttle of `auth_throttle.ts` in
 * front. A throttled client gets HTTP 429, code 434, with `Retry-After` in seconds; while it
 * waits, its credentials are not checked at all, so the answer tells a guesser nothing.
 *
 * @module
 */
import { findApiKey, type KeyContext, keyPrefixExists } from "./accounts.ts";
import type { AuthThrottle } from "./auth_throttle.ts";
import { timingSafeEqual } from "./crypto.ts";
import type { MailDb } from "./db.ts";
import { MailServerError } from "./errors.ts";

const KEY_PREFIX = /^gh_(?:live|test)_[A-Za-z0-9_-]{4}/;

function tooMany(seconds: number, what: string): MailServerError {
  return new MailServerError(
    434,
    `Too many wrong ${what}; retry after ${seconds} seconds.`,
    { "Retry-After": String(seconds) },
  );
}

/**
 * Checks an `x-api-key` value from `client` (see `clientKey`): 429 missing or wrong, 431
 * revoked, 430 account closed, 433 no API access, 434 throttled. `throttle` null: no throttle.
 */
export async function checkApiKey(
  db: MailDb,
  throttle: AuthThrottle | null,
  apiKey: string | undefined,
  client: string,
): Promise<KeyContext> {
  if (!apiKey) throw new MailServerError(429); // no key at all is not a guess
  if (!throttle) {
    const found = await findApiKey(db, apiKey);
    if (!found) throw new MailServerError(429);
    if (found.refusal !== null) throw new MailServerError(found.refusal);
    return { keyId: found.keyId, accountId: found.accountId, sandbox: found.sandbox };
  }
  const prefix = KEY_PREFIX.exec(apiKey)?.[0] ?? null;
  const subject = prefix === null ? null : `key-prefix:${prefix}`;
  const wait = await throttle.waits("key", client, subject);
  if (wait.client > 0) throw tooMany(wait.client, "API keys from this client");
  const found = await findApiKey(db, apiKey);
  if (found) {
    const credential = `key:${found.keyId}`;
    // The prefix is under attack: only clients that used this key before get through.
    if (wait.credential > 0 && !(await throttle.known(credential, client))) {
      throw tooMany(wait.credential, "API keys with this prefix");
    }
    await throttle.succeeded(credential, client);
    if (found.refusal !== null) throw new MailServerError(found.refusal);
    return { keyId: found.keyId, accountId: found.accountId, sandbox: found.sandbox };
  }
  const counted = subject !== null && await keyPrefixExists(db, prefix!) ? subject : null;
  const after = await throttle.failed("key", client, counted);
  if (wait.credential > 0 || after > 0) {
    throw tooMany(Math.max(wait.credential, after), "API keys");
  }
  throw new MailServerError(429);
}

/**
 * Checks a mailroom `Authorization: Bearer` value from `client` against `expected`: 429 wrong
 * (or no operator token configured), 434 throttled.
 */
export async function checkOperatorToken(
  throttle: AuthThrottle | null,
  authorization: string | undefined,
  expected: string | undefined,
  client: string,
): Promise<void> {
  const given = (authorization ?? "").replace(/^Bearer\s+/i, "");
  const wrong = new MailServerError(429, "Operator token is not correct.");
  if (!expected || !given) throw wrong; // nothing to guess, or no guess
  if (!throttle) {
    if (!timingSafeEqual(given, expected)) throw wrong;
    return;
  }
  const wait = await throttle.waits("operator", client, "operator");
  if (wait.client > 0) throw tooMany(wait.client, "operator tokens from this client");
  if (timingSafeEqual(given, expected)) {
    if (wait.credential > 0 && !(await throttle.known("operator", client))) {
      throw tooMany(wait.credential, "operator tokens");
    }
    await throttle.succeeded("operator", client);
    return;
  }
  const after = await throttle.failed("operator", client, "operator");
  if (wait.credential > 0 || after > 0) {
    throw tooMany(Math.max(wait.credential, after), "operator tokens");
  }
  throw wrong;
}
