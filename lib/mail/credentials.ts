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

/** The answer for a key that is not accepted, with the next step in its message. */
function keyRefused(code: 429 | 431 | 430 | 433, missing = false): MailServerError {
  const text: Record<typeof code, string> = {
    429: missing
      ? "No API key: send your key in the x-api-key header. `deno task mail` prints a sandbox " +
        "key; an operator creates keys with POST /mailroom/accounts/{account_id}/api-keys."
      : "Key is not correct, please use the right key and try again. Keys start gh_live_ or " +
        "gh_test_ and are shown once, when created (POST /mailroom/accounts/{account_id}/api-keys).",
    431: "Key is revoked, please use the right key and try again. An operator creates a new one " +
      "with POST /mailroom/accounts/{account_id}/api-keys.",
    430: "Account is closed, please contact support for further help. An operator reopens it " +
      'with PATCH /mailroom/accounts/{account_id} {"status": "open"}.',
    433: "You don't have access to the API specified. This account has no API access: an " +
      'operator turns it on with PATCH /mailroom/accounts/{account_id} {"api_access": true}.',
  };
  return new MailServerError(code, text[code]);
}

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
  if (!apiKey) throw keyRefused(429, true); // no key at all is not a guess
  if (!throttle) {
    const found = await findApiKey(db, apiKey);
    if (!found) throw keyRefused(429);
    if (found.refusal !== null) throw keyRefused(found.refusal);
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
    if (found.refusal !== null) throw keyRefused(found.refusal);
    return { keyId: found.keyId, accountId: found.accountId, sandbox: found.sandbox };
  }
  const counted = subject !== null && await keyPrefixExists(db, prefix!) ? subject : null;
  const after = await throttle.failed("key", client, counted);
  if (wait.credential > 0 || after > 0) {
    throw tooMany(Math.max(wait.credential, after), "API keys");
  }
  throw keyRefused(429);
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
  const wrong = new MailServerError(
    429,
    "Operator token is not correct: send Authorization: Bearer <operator token> (the token " +
      "the server was started with, MAIL_OPERATOR_TOKEN; `deno task mail` prints it).",
  );
  if (!expected) {
    throw new MailServerError(
      429,
      "The mailroom API is off on this server: start it with an operator token " +
        "(MAIL_OPERATOR_TOKEN, or createMailServer's operatorToken).",
    );
  }
  if (!given) throw wrong; // no guess
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
