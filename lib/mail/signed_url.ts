/**
 * Signed, expiring file links: `<base>/files/<key>?expires=<unix s>&signature=<base64url>`,
 * the signature an HMAC-SHA256 of `<key>\n<expires>`. Expiry is rounded up to a 5-minute step
 * so repeated reads of a list give the same URLs for a while.
 *
 * @module
 */
import { hmac, hmacKey, timingSafeEqual, toBase64Url } from "./crypto.ts";

/**
 * Signs and checks file links.
 *
 * @example
 * ```ts
 * import { FileSigner } from "./signed_url.ts";
 * const signer = new FileSigner("a long random secret", 3600);
 * const url = await signer.url("https://mail.example/api/account-docs/v2", "covers/1-a.png");
 * const u = new URL(url);
 * console.log(await signer.verify("covers/1-a.png", u.searchParams)); // true
 * ```
 */
export class FileSigner {
  /** Link lifetime in seconds. */
  readonly ttlSeconds: number;
  #key: Promise<CryptoKey>;
  #now: () => number;

  /** Uses `secret` (keep it private) and links valid for about `ttlSeconds`. */
  constructor(secret: string, ttlSeconds = 3600, now: () => number = Date.now) {
    this.ttlSeconds = ttlSeconds;
    this.#key = hmacKey(secret);
    this.#now = now;
  }

  async #sign(key: string, expires: number): Promise<string> {
    return toBase64Url(await hmac(await this.#key, `${key}\n${expires}`));
  }

  /** A signed link to `key` under `base` (the API's base URL). */
  async url(base: string, key: string): Promise<string> {
    const step = 300;
    const expires = Math.ceil((this.#now() / 1000 + this.ttlSeconds) / step) * step;
    const sig = await this.#sign(key, expires);
    return `${base}/files/${key}?expires=${expires}&signature=${sig}`;
  }

  /** True when the query carries a valid, unexpired signature for `key`. */
  async verify(key: string, query: URLSearchParams): Promise<boolean> {
    const expires = Number(query.get("expires"));
    const sig = query.get("signature") ?? "";
    if (!Number.isInteger(expires) || expires * 1000 < this.#now()) return false;
    return timingSafeEqual(sig, await this.#sign(key, expires));
  }
}
