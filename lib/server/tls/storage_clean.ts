/**
 * Storage upkeep of the `tls` app (certmagic's `CleanStorage` and `checkStorage`):
 *
 * - **Cleaning**, at start and every `automation.storage_clean_interval` (default 24h; off
 *   with `disable_storage_clean`): certificates under `certificates/` that expired more than
 *   14 days ago are deleted (`.crt`, `.key`, `.json`), in the config's storage and in every
 *   policy's own storage. It runs under the storage lock `storage_clean`, and not more often
 *   than the interval across every instance sharing the storage: `last_clean.json` records
 *   when and by which instance it last ran (certmagic's layout, so Caddy and Gatehouse
 *   instances on one storage take turns).
 * - **Storage check**, before each certificate is obtained (off with
 *   `disable_storage_check`): a random value is written under `rw_test_<n>`, read back,
 *   compared and deleted, so that a storage that cannot keep a certificate fails before the
 *   CA is asked (a CA's rate limits do not forgive certificates lost on the way to disk).
 *
 * @module
 */
import type { Logger } from "../module/instance.ts";
import { loadText, type Storage, withLock } from "../module/storage.ts";
import { certificateFacts } from "../pki/x509.ts";

/** Default time between two cleanings (Caddy: 24h). */
export const DEFAULT_STORAGE_CLEAN_INTERVAL_MS = 24 * 3_600_000;
/** Expired certificates are kept this long before they are deleted (Caddy: 14 days). */
export const EXPIRED_CERT_GRACE_MS = 14 * 24 * 3_600_000;

/** This process's instance id (recorded in `last_clean.json`). */
export const INSTANCE_ID: string = crypto.randomUUID();

const LAST_CLEAN_KEY = "last_clean.json";
const CLEAN_LOCK = "storage_clean";

/** Options of one cleaning. */
export interface CleanOptions {
  /** The interval: a cleaning within it (by any instance) is skipped. */
  intervalMs: number;
  /** Expired certificates are deleted this long after they expired. */
  gracePeriodMs?: number;
  /** Where messages go. */
  logger: Logger;
  /** Aborted when the config stops. */
  signal?: AbortSignal;
  /** The time now (tests). */
  now?: number;
}

async function deleteExpiredCertificates(
  storage: Storage,
  graceMs: number,
  now: number,
  logger: Logger,
): Promise<number> {
  let deleted = 0;
  let issuers: string[];
  try {
    issuers = await storage.list("certificates", false);
  } catch {
    return 0; // nothing stored yet
  }
  for (const issuer of issuers) {
    let sites: string[];
    try {
      sites = await storage.list(issuer, false);
    } catch {
      continue;
    }
    for (const site of sites) {
      const name = site.slice(site.lastIndexOf("/") + 1);
      const certKey = `${site}/${name}.crt`;
      const pem = await loadText(storage, certKey).catch(() => undefined);
      if (!pem) continue;
      let notAfter: number;
      try {
        notAfter = (await certificateFacts(pem)).notAfter.getTime();
      } catch (e) {
        logger.warn("unreadable certificate in storage; left in place", {
          key: certKey,
          error: (e as Error).message,
        });
        continue;
      }
      if (now < notAfter + graceMs) continue;
      for (const ext of ["crt", "key", "json"]) {
        await storage.delete(`${site}/${name}.${ext}`).catch(() => {});
      }
      await storage.delete(site).catch(() => {});
      deleted++;
      logger.info("deleted expired certificate", {
        key: certKey,
        expired: new Date(notAfter).toISOString(),
      });
    }
  }
  return deleted;
}

/**
 * Cleans one storage (see the module doc); resolves with the number of certificates
 * deleted, or -1 when it was skipped (cleaned within the interval).
 *
 * @example
 * ```ts ignore
 * await cleanStorage(storage, { intervalMs: 24 * 3_600_000, logger });
 * ```
 */
export function cleanStorage(storage: Storage, options: CleanOptions): Promise<number> {
  const now = options.now ?? Date.now();
  return withLock(storage, CLEAN_LOCK, async () => {
    const last = await loadText(storage, LAST_CLEAN_KEY).catch(() => undefined);
    if (last) {
      try {
        const stamp = (JSON.parse(last) as { tls?: { timestamp?: string; instance_id?: string } })
          .tls;
        const at = stamp?.timestamp ? Date.parse(stamp.timestamp) : NaN;
        if (now - at < options.intervalMs) {
          options.logger.info("storage cleaning happened too recently; skipping for now", {
            storage: String(storage),
            instance: stamp?.instance_id,
            try_again: new Date(at + options.intervalMs).toISOString(),
          });
          return -1;
        }
      } catch { /* unreadable stamp: clean now and rewrite it */ }
    }
    options.logger.info("cleaning storage unit", { storage: String(storage) });
    const deleted = await deleteExpiredCertificates(
      storage,
      options.gracePeriodMs ?? EXPIRED_CERT_GRACE_MS,
      now,
      options.logger,
    );
    const stamp = { tls: { timestamp: new Date(now).toISOString(), instance_id: INSTANCE_ID } };
    await storage.store(LAST_CLEAN_KEY, new TextEncoder().encode(JSON.stringify(stamp)));
    options.logger.info("finished cleaning storage units", {
      storage: String(storage),
      deleted,
    });
    return deleted;
  }, options.signal);
}

/**
 * Checks that `storage` keeps what is written to it (certmagic's `checkStorage`); throws a
 * message that says so otherwise.
 *
 * @example
 * ```ts ignore
 * await checkStorage(storage); // throws "failed storage check: ..." on a broken storage
 * ```
 */
export async function checkStorage(storage: Storage): Promise<void> {
  const key = `rw_test_${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const value = crypto.getRandomValues(new Uint8Array(32));
  try {
    await storage.store(key, value);
    const back = await storage.load(key);
    if (back.length !== value.length || back.some((b, i) => b !== value[i])) {
      throw new Error("the value read back differs from the one written");
    }
  } catch (e) {
    throw new Error(
      `failed storage check: ${(e as Error).message} - storage is probably misconfigured ` +
        `(${storage}); set disable_storage_check only if the storage is known to keep writes`,
    );
  } finally {
    await storage.delete(key).catch(() => {});
  }
}

/**
 * Cleans each storage once (duplicates skipped); errors are logged, never thrown.
 *
 * @example
 * ```ts ignore
 * await cleanStorages([ctx.storage], 24 * 3_600_000, logger, ctx.signal);
 * ```
 */
export async function cleanStorages(
  storages: Storage[],
  intervalMs: number,
  logger: Logger,
  signal?: AbortSignal,
): Promise<void> {
  for (const storage of new Set(storages)) {
    try {
      await cleanStorage(storage, { intervalMs, logger, signal });
    } catch (e) {
      if (signal?.aborted) return;
      logger.error("could not clean storage", {
        storage: String(storage),
        error: (e as Error).message,
      });
    }
  }
}
