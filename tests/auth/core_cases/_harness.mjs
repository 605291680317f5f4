/**
 * The registry and helpers shared by the core's test cases. Plain JavaScript importing only
 * `node:assert/strict`, so Deno, workerd and Node load it unchanged.
 *
 * @module
 */

/** @type {{ name: string, provider: boolean, fn: (ctx: any) => Promise<void> }[]} */
export const cases = [];

/** Registers a case; `{ provider: true }` marks cases that need the fake OAuth provider. */
export function test(name, fn, options = {}) {
  cases.push({ name, provider: options.provider === true, fn });
}

/** A fixed clock, milliseconds since the epoch. */
export const T0 = Date.UTC(2026, 0, 1);
/** Cheap password hashing for cases that do not test the default cost. */
export const FAST = { iterations: 1000 };

/** The decoded JSON body of a token. */
export function bodyOf(token) {
  const b64 = token.split(".")[0].replaceAll("-", "+").replaceAll("_", "/");
  const s = atob(b64);
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0))));
}

/** `text` with the character at `index` changed. */
export function flip(text, index) {
  const c = text[index];
  return text.slice(0, index) + (c === "A" ? "B" : "A") + text.slice(index + 1);
}

/** The `name=value` part of a Set-Cookie value. */
export function cookiePair(setCookie) {
  return setCookie.split(";")[0];
}

/** Installs a deriveBits wrapper that refuses > 100,000 iterations, like Cloudflare Workers. */
export function emulateWorkersCap() {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "deriveBits");
  const original = subtle.deriveBits;
  const calls = [];
  subtle.deriveBits = function (algorithm, key, length) {
    if (algorithm && algorithm.name === "PBKDF2") {
      calls.push(algorithm.iterations);
      if (algorithm.iterations > 100_000) {
        return Promise.reject(
          new DOMException(
            "Pbkdf2 failed: iteration counts above 100000 are not supported",
            "NotSupportedError",
          ),
        );
      }
    }
    return original.call(this, algorithm, key, length);
  };
  return {
    calls,
    restore() {
      if (hadOwn) subtle.deriveBits = original;
      else delete subtle.deriveBits;
    },
  };
}
