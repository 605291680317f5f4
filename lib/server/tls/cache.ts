/**
 * The certificate cache of a `tls` app: every certificate the app serves (loaded from files
 * and PEM, or managed: obtained from an issuer and renewed), looked up by server name at
 * handshake time. Listeners never hold certificates themselves: they ask a
 * {@link CertificateGetter} (certmagic's `GetCertificate`), so renewed and newly obtained
 * certificates are served without a restart. Changes are announced to subscribers (the Deno
 * listener engine needs them, see `listeners.ts`).
 *
 * Name lookup (certmagic's order): the exact name, then the name with its left-most label
 * replaced by `*`; among several, a managed certificate before a loaded one, then the one
 * valid longest. An empty server name (no SNI: a client connecting to an IP address) uses the
 * listener's IP when it has one, then the policies' `default_sni`, then the only certificate
 * when the cache holds exactly one.
 *
 * @module
 */
import type { CertifiedKey } from "../module/listener.ts";
import { normalizeName } from "../net/host.ts";

/** One certificate of the cache. */
export interface CachedCertificate extends CertifiedKey {
  /** DNS names and IPs of the leaf (lower case). */
  names: string[];
  /** Tags from the config (loaded certificates). */
  tags: string[];
  /** Validity end (ms since epoch). */
  notAfter: number;
  /** Validity start (ms since epoch). */
  notBefore: number;
  /** True when obtained and renewed by the app. */
  managed: boolean;
  /** Where it came from, for messages (`load_files[0]`, `issuer local`). */
  source: string;
}

/** Selects among the certificates of a name (a connection policy's tag rules). */
export type CertificateFilter = (c: CachedCertificate) => boolean;

/** The cache. */
export class CertificateCache {
  #byName = new Map<string, CachedCertificate[]>();
  #all = new Set<CachedCertificate>();
  #subscribers = new Set<() => void>();
  /** Resolvers waiting for a name being obtained right now. */
  readonly #pending = new Map<string, Promise<unknown>>();

  /** Number of certificates. */
  get size(): number {
    return this.#all.size;
  }

  /** Every certificate (for `automatic_https` "already loaded" checks and tests). */
  all(): CachedCertificate[] {
    return [...this.#all];
  }

  /** Adds a certificate (replacing `replaces` when given) and tells subscribers. */
  add(cert: CachedCertificate, replaces?: CachedCertificate): void {
    if (replaces) this.#remove(replaces);
    this.#all.add(cert);
    for (const n of cert.names) {
      const list = this.#byName.get(n) ?? [];
      list.push(cert);
      this.#byName.set(n, list);
    }
    this.#changed();
  }

  /** Removes a certificate and tells subscribers. */
  remove(cert: CachedCertificate): void {
    if (this.#remove(cert)) this.#changed();
  }

  #remove(cert: CachedCertificate): boolean {
    if (!this.#all.delete(cert)) return false;
    for (const n of cert.names) {
      const list = (this.#byName.get(n) ?? []).filter((c) => c !== cert);
      if (list.length) this.#byName.set(n, list);
      else this.#byName.delete(n);
    }
    return true;
  }

  /** Marks `name` as being obtained; lookups of it wait for `done` (at most 30 s). */
  pending(name: string, done: Promise<unknown>): void {
    const p = done.catch(() => {}).finally(() => {
      if (this.#pending.get(name) === p) this.#pending.delete(name);
    });
    this.#pending.set(name, p);
  }

  #changed(): void {
    for (const fn of [...this.#subscribers]) {
      try {
        fn();
      } catch { /* a subscriber's failure is its own */ }
    }
  }

  /** Subscribes to changes. */
  subscribe(fn: () => void): () => void {
    this.#subscribers.add(fn);
    return () => void this.#subscribers.delete(fn);
  }

  /** Certificates covering `name` exactly or by wildcard, best first. */
  matching(name: string, filter?: CertificateFilter): CachedCertificate[] {
    const n = normalizeName(name);
    const found = [...(this.#byName.get(n) ?? [])];
    const dot = n.indexOf(".");
    if (dot > 0) found.push(...(this.#byName.get(`*${n.slice(dot)}`) ?? []));
    const now = Date.now();
    return found
      .filter((c) => !filter || filter(c))
      .sort((a, b) =>
        Number(b.notAfter > now) - Number(a.notAfter > now) ||
        Number(b.managed) - Number(a.managed) ||
        b.notAfter - a.notAfter
      );
  }

  /** Waits for a name being obtained, bounded. */
  async settle(name: string): Promise<void> {
    const p = this.#pending.get(normalizeName(name));
    if (!p) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([p, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
    clearTimeout(timer);
  }
}
