/**
 * Managed certificates (certmagic's manage/obtain/renew): for each managed name, the
 * certificate in storage is used while it is outside its renewal window; otherwise one is
 * obtained from the policy's issuers under the storage lock `issue_cert_<name>`, so that
 * instances sharing a storage obtain it once (the others wait, then load it). Certificates are
 * stored under `certificates/<issuer>/<name>/<name>.crt|.key|.json` and put in the cache.
 *
 * A check every `renew_interval` renews what entered its renewal window; the new certificate
 * replaces the old one in the cache, so listeners serve it from the next handshake without a
 * restart. A failure is logged and retried with a growing delay (1 s, doubling, at most 10
 * minutes); it never stops the server.
 *
 * @module
 */
import type { Logger } from "../module/instance.ts";
import { loadText, type Storage, storageKeys, withLock } from "../module/storage.ts";
import { certificateFacts, inRenewalWindow } from "../pki/x509.ts";
import { generateKeyOfType } from "../pki/key_types.ts";
import { checkStorage } from "./storage_clean.ts";
import type { AutomationPolicy } from "./automation.ts";
import type { CachedCertificate, CertificateCache } from "./cache.ts";
import { normalizeName } from "../net/host.ts";

const MAX_RETRY_MS = 10 * 60_000;

/** The `issuer_data` stored beside a certificate (undefined when none or unreadable). */
async function issuerData(storage: Storage, issuerKey: string, name: string): Promise<unknown> {
  try {
    const meta = await loadText(storage, storageKeys.siteMeta(issuerKey, name));
    return meta ? (JSON.parse(meta) as { issuer_data?: unknown }).issuer_data : undefined;
  } catch {
    return undefined;
  }
}

interface Managed {
  name: string;
  policy: AutomationPolicy;
  cert?: CachedCertificate;
  retryTimer?: ReturnType<typeof setTimeout>;
  failures: number;
  busy?: Promise<void>;
}

/** Keeps the managed certificates of one `tls` app obtained and renewed. */
export class CertificateManager {
  /** Check each storage keeps writes before obtaining (off: `disable_storage_check`). */
  storageCheck = true;
  readonly #managed = new Map<string, Managed>();
  #timer?: ReturnType<typeof setInterval>;
  #stopped = false;

  constructor(
    readonly cache: CertificateCache,
    readonly log: Logger,
    readonly renewIntervalMs: number,
    readonly signal: AbortSignal,
  ) {}

  /** Names managed so far. */
  get names(): string[] {
    return [...this.#managed.keys()];
  }

  /**
   * Starts managing `name` with `policy`: loads or obtains its certificate in the background
   * (handshakes for the name wait for it).
   */
  manage(name: string, policy: AutomationPolicy): void {
    const n = normalizeName(name);
    if (this.#managed.has(n)) return;
    const m: Managed = { name: n, policy, failures: 0 };
    this.#managed.set(n, m);
    this.#run(m, false);
  }

  /** Starts the periodic renewal check. */
  start(): void {
    this.#timer = setInterval(() => this.checkRenewals(), this.renewIntervalMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Stops checks and retries (the running config was replaced or stopped). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    for (const m of this.#managed.values()) clearTimeout(m.retryTimer);
  }

  /** Resolves when every name being loaded or obtained right now is done. */
  async settled(): Promise<void> {
    while ([...this.#managed.values()].some((m) => m.busy)) {
      await Promise.all([...this.#managed.values()].map((m) => m.busy));
    }
  }

  /** Renews every certificate that entered its renewal window. */
  checkRenewals(): void {
    for (const m of this.#managed.values()) {
      if (m.busy || m.retryTimer !== undefined || !m.cert) continue;
      if (
        inRenewalWindow(
          new Date(m.cert.notBefore),
          new Date(m.cert.notAfter),
          m.policy.renewalWindowRatio,
        )
      ) {
        this.#run(m, true);
      }
    }
  }

  /**
   * Revokes the certificate served for `name` with the issuer that obtained it, removes it
   * from storage, and obtains a replacement (served as soon as it arrives; the revoked one is
   * served until then). Resolves with the serials of both.
   */
  async revoke(name: string, reason: number): Promise<{ revoked: string; replacement: string }> {
    const m = this.#managed.get(normalizeName(name));
    if (!m?.cert) throw new Error(`no managed certificate for ${name}`);
    await m.busy;
    const old = m.cert;
    const storage = m.policy.storage;
    let revoked = "";
    await withLock(storage, storageKeys.issueLock(m.name), async () => {
      for (const issuer of m.policy.issuers) {
        const k = issuer.issuerKey;
        if ((await loadText(storage, storageKeys.siteCert(k, m.name))) !== old.cert) continue;
        if (!issuer.revoke) throw new Error(`issuer ${k} cannot revoke certificates`);
        await issuer.revoke(old.cert, reason, await issuerData(storage, k, m.name));
        revoked = (await certificateFacts(old.cert)).serial;
        for (
          const key of [storageKeys.siteCert, storageKeys.sitePrivateKey, storageKeys.siteMeta]
        ) {
          await storage.delete(key(k, m.name)).catch(() => {});
        }
        return;
      }
      throw new Error(`the certificate served for ${name} is not in storage any more`);
    }, this.signal);
    this.log.info("certificate revoked; obtaining a replacement", {
      identifier: m.name,
      serial: revoked,
      reason,
    });
    clearTimeout(m.retryTimer);
    m.retryTimer = undefined;
    this.#run(m, true);
    await m.busy;
    if (!m.cert || m.cert === old) throw new Error(`no replacement obtained for ${name}`);
    return { revoked, replacement: (await certificateFacts(m.cert.cert)).serial };
  }

  #run(m: Managed, renewing: boolean): void {
    if (this.#stopped) return;
    const job = (async () => {
      try {
        await this.#ensure(m, renewing);
        m.failures = 0;
      } catch (e) {
        if (this.#stopped) return;
        m.failures++;
        const delay = Math.min(1000 * 2 ** (m.failures - 1), MAX_RETRY_MS);
        this.log.error(renewing ? "could not renew certificate" : "could not get certificate", {
          identifier: m.name,
          error: (e as Error).message,
          attempt: m.failures,
          retrying_in_ms: delay,
        });
        m.retryTimer = setTimeout(() => {
          m.retryTimer = undefined;
          this.#run(m, renewing);
        }, delay);
        Deno.unrefTimer(m.retryTimer as unknown as number);
      }
    })().finally(() => {
      m.busy = undefined;
    });
    m.busy = job;
    this.cache.pending(m.name, job);
  }

  async #stored(m: Managed, storage: Storage): Promise<CachedCertificate | undefined> {
    for (const issuer of m.policy.issuers) {
      const k = issuer.issuerKey;
      const cert = await loadText(storage, storageKeys.siteCert(k, m.name));
      const key = await loadText(storage, storageKeys.sitePrivateKey(k, m.name));
      if (!cert || !key) continue;
      try {
        const facts = await certificateFacts(cert);
        return {
          cert,
          key,
          names: facts.names,
          tags: [],
          notBefore: facts.notBefore.getTime(),
          notAfter: facts.notAfter.getTime(),
          managed: true,
          source: `storage ${storageKeys.siteCert(k, m.name)}`,
        };
      } catch (e) {
        this.log.warn("stored certificate is unreadable; obtaining a new one", {
          identifier: m.name,
          error: (e as Error).message,
        });
      }
    }
    return undefined;
  }

  #usable(c: CachedCertificate | undefined, m: Managed): boolean {
    return !!c && Date.now() < c.notAfter &&
      !inRenewalWindow(new Date(c.notBefore), new Date(c.notAfter), m.policy.renewalWindowRatio);
  }

  #install(m: Managed, c: CachedCertificate): void {
    if (m.cert?.cert === c.cert) return;
    this.cache.add(c, m.cert);
    m.cert = c;
  }

  async #ensure(m: Managed, renewing: boolean): Promise<void> {
    const storage = m.policy.storage;
    if (!m.policy.issuers.length) {
      throw new Error(`no issuer can obtain a certificate for ${m.name} (${m.policy.where})`);
    }
    let c = await this.#stored(m, storage);
    if (c && this.#usable(c, m)) {
      this.#install(m, c);
      return;
    }
    // Still valid but due: keep serving it while a new one is obtained.
    if (c && Date.now() < c.notAfter && !m.cert) this.#install(m, c);
    // As certmagic: a storage that cannot keep a certificate fails before the lock and the CA.
    if (this.storageCheck) await checkStorage(storage);
    const lock = storageKeys.issueLock(m.name);
    this.log.info("acquiring lock", { identifier: m.name });
    await withLock(storage, lock, async () => {
      this.log.info("lock acquired", { identifier: m.name });
      // Another instance may have obtained it while this one waited.
      c = await this.#stored(m, storage);
      if (c && this.#usable(c, m)) {
        this.#install(m, c);
        return;
      }
      this.log.info(renewing ? "renewing certificate" : "obtaining certificate", {
        identifier: m.name,
      });
      const errors: string[] = [];
      for (const issuer of m.policy.issuers) {
        if (issuer.accepts && !issuer.accepts(m.name)) continue;
        try {
          const key = await generateKeyOfType(m.policy.keyType ?? "p256");
          const issued = await issuer.issue({ names: [m.name], key, signal: this.signal });
          const facts = await certificateFacts(issued.certificatePem);
          const enc = new TextEncoder();
          const k = issuer.issuerKey;
          await storage.store(storageKeys.sitePrivateKey(k, m.name), enc.encode(key.pem));
          await storage.store(storageKeys.siteCert(k, m.name), enc.encode(issued.certificatePem));
          await storage.store(
            storageKeys.siteMeta(k, m.name),
            enc.encode(
              JSON.stringify({ sans: [m.name], issuer_data: issued.issuerData }, null, "\t"),
            ),
          );
          this.#install(m, {
            cert: issued.certificatePem,
            key: key.pem,
            names: facts.names,
            tags: [],
            notBefore: facts.notBefore.getTime(),
            notAfter: facts.notAfter.getTime(),
            managed: true,
            source: `issuer ${k}`,
          });
          this.log.info(
            renewing ? "certificate renewed successfully" : "certificate obtained successfully",
            { identifier: m.name, issuer: k, not_after: facts.notAfter.toISOString() },
          );
          return;
        } catch (e) {
          errors.push(`${issuer.issuerKey}: ${(e as Error).message}`);
        }
      }
      throw new Error(`every issuer failed for ${m.name}: ${errors.join("; ")}`);
    }, this.signal);
    this.log.info("releasing lock", { identifier: m.name });
  }
}
