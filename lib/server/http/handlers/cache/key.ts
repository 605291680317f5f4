/**
 * Cache keys, in Souin's form (`context/key.go`): `METHOD-scheme-host-path?query`, then a hash
 * of the body (cached methods that have one), then `-<value>` per request field the key names;
 * each part can be left out, the whole key can be a template of placeholders, and `cache_keys`
 * gives other settings to requests whose URI matches a regular expression. The variant of an
 * answer that has `Vary` is told apart inside the key's entry (store.ts), not in the key.
 *
 * @module
 */
import type { RequestContext } from "../../context.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import type { KeyConfig } from "./config.ts";

/** One set of key settings, settled. */
export interface KeyRule {
  readonly body: boolean;
  readonly host: boolean;
  readonly method: boolean;
  readonly query: boolean;
  readonly scheme: boolean;
  readonly vary: boolean;
  readonly sortQuery: boolean;
  readonly hash: boolean;
  /** Show the key in `Cache-Status`. */
  readonly shown: boolean;
  readonly template: Template | null;
  /** Request fields whose values go in, in order. */
  readonly headers: readonly string[];
}

function rule(k: KeyConfig, extraHeaders: readonly string[]): KeyRule {
  return {
    body: !k.disable_body,
    host: !k.disable_host,
    method: !k.disable_method,
    query: !k.disable_query,
    scheme: !k.disable_scheme,
    vary: !k.disable_vary,
    sortQuery: k.sort_query ?? false,
    hash: k.hash ?? false,
    shown: !k.hide,
    template: k.template ? compileTemplate(k.template) : null,
    headers: [...(k.headers ?? []), ...extraHeaders],
  };
}

/**
 * A 53-bit hash of a string as a decimal number (cyrb53): what `hash` keeps instead of the
 * key, and what a request body adds to it.
 *
 * @example
 * ```ts
 * import { hashText } from "./key.ts";
 * hashText("GET-http-example.com-/") === hashText("GET-http-example.com-/"); // true
 * ```
 */
export function hashText(s: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return String(4294967296 * (2097151 & h2) + (h1 >>> 0));
}

/** The same hash over bytes (a request body). */
export function hashBytes(b: Uint8Array): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < b.length; i++) {
    h1 = Math.imul(h1 ^ b[i], 2654435761);
    h2 = Math.imul(h2 ^ b[i], 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return String(4294967296 * (2097151 & h2) + (h1 >>> 0));
}

function sortedQuery(q: string): string {
  const p = new URLSearchParams(q);
  const byName = new Map<string, string[]>();
  for (const [k, v] of p) (byName.get(k) ?? byName.set(k, []).get(k)!).push(v);
  const out = new URLSearchParams();
  for (const k of [...byName.keys()].sort()) {
    for (const v of byName.get(k)!.sort()) out.append(k, v);
  }
  return out.toString();
}

/** Makes the keys of one handler. */
export class KeyMaker {
  readonly #base: KeyRule;
  readonly #overrides: [RegExp, KeyRule][];

  /** Key settings, request fields every key adds, and the `cache_keys` overrides. */
  constructor(
    base: KeyConfig,
    extraHeaders: readonly string[],
    overrides: Record<string, KeyConfig>,
  ) {
    this.#base = rule(base, extraHeaders);
    this.#overrides = Object.entries(overrides).map(([re, k]) => [new RegExp(re), rule(k, [])]);
  }

  /** The settings for a request: the first `cache_keys` entry its URI matches, or the base. */
  rule(c: RequestContext): KeyRule {
    for (let i = 0; i < this.#overrides.length; i++) {
      if (this.#overrides[i][0].test(c.uri)) return this.#overrides[i][1];
    }
    return this.#base;
  }

  /** The key of a request for `method`, with the hash of its body when it has one. */
  key(c: RequestContext, r: KeyRule, method: string, bodyHash: string): string {
    let key: string;
    if (r.template !== null) key = r.template.render(c);
    else {
      key = "";
      if (r.method) key += method + "-";
      if (r.scheme) key += c.scheme + "-";
      if (r.host) key += c.host + "-";
      key += c.path;
      if (r.query && c.query !== "") key += "?" + (r.sortQuery ? sortedQuery(c.query) : c.query);
      if (r.body) key += bodyHash;
      for (let i = 0; i < r.headers.length; i++) key += "-" + (c.headers.get(r.headers[i]) ?? "");
    }
    return r.hash ? hashText(key) : key;
  }
}
