/**
 * The storage contract (certmagic's `Storage`): a key/value store with folder-path semantics
 * for certificates, keys, the CA, ACME accounts and locks, shared by every Gatehouse instance
 * that points at the same storage.
 *
 * - Keys use `/` between components and have no leading or trailing slash. `a` is a prefix of
 *   `a/b` but not of `ab/c`. A key with a value is a "file"; a "directory" is only implied by
 *   the files under it.
 * - `load`, `stat`, `list` and `delete` throw a {@link StorageNotFoundError} for a key that
 *   does not exist; `exists` answers a boolean.
 * - Every method is safe to call concurrently; `store` replaces a value as a whole (a reader
 *   sees the old value or the new one, never a mix).
 * - `lock`/`unlock` are a distributed mutex over everything sharing the storage, for jobs
 *   such as obtaining one certificate once; a lock whose holder died (no refresh) becomes
 *   stale after {@link STALE_LOCK_MS} and is taken over. `tryLock` never waits.
 *
 * The names of keys are built by {@link storageKeys}, in one place.
 *
 * @module
 */

/** What `stat` says about a key. */
export interface KeyInfo {
  /** The key itself. */
  key: string;
  /** Last modification time. */
  modified: Date;
  /** Size of the value in bytes (0 for directories). */
  size: number;
  /** False for a directory (a key that is only a prefix of other keys). */
  isTerminal: boolean;
}

/** A distributed mutex over a storage. */
export interface Locker {
  /** Waits until the lock `name` is held by this process (or `signal` aborts). */
  lock(name: string, signal?: AbortSignal): Promise<void>;
  /** Takes the lock if it is free (or stale); resolves false at once otherwise. */
  tryLock(name: string): Promise<boolean>;
  /** Releases a lock taken by this process. */
  unlock(name: string): Promise<void>;
}

/** Key/value storage for certificates, keys, the CA, locks and app state (`storage` config). */
export interface Storage extends Locker {
  /** Reads a value; throws StorageNotFoundError when the key is absent. */
  load(key: string): Promise<Uint8Array>;
  /** Writes a value (creating or replacing it) as a whole. */
  store(key: string, value: Uint8Array): Promise<void>;
  /** Deletes a key and everything under it; throws StorageNotFoundError when absent. */
  delete(key: string): Promise<void>;
  /** True when the key exists (as a file or a directory). */
  exists(key: string): Promise<boolean>;
  /**
   * Keys under `prefix` (`""` for all), sorted: direct children only, or every descendant
   * file and directory when `recursive`. Throws StorageNotFoundError when `prefix` is absent.
   */
  list(prefix: string, recursive: boolean): Promise<string[]>;
  /** Facts about a key; throws StorageNotFoundError when absent. */
  stat(key: string): Promise<KeyInfo>;
  /** Describes the storage for logs (never with secrets), e.g. `FileStorage:/var/lib/x`. */
  toString(): string;
}

/** Thrown by `load`, `stat`, `list` and `delete` for a key that does not exist. */
export class StorageNotFoundError extends Error {
  /** Stable code. */
  readonly code = "not_found";
  /** The key that was asked for. */
  readonly key: string;
  /** Creates the error for `key`. */
  constructor(key: string) {
    super(`storage key not found: ${key}`);
    this.name = "StorageNotFoundError";
    this.key = key;
  }
}

/**
 * True when `e` reports a missing key: a {@linkcode StorageNotFoundError}, or any `Error` whose
 * `code` is `"not_found"` (what a storage plugin throws when it cannot import Gatehouse's class).
 *
 * @example
 * ```ts
 * import { isNotFound, StorageNotFoundError } from "./storage.ts";
 * isNotFound(new StorageNotFoundError("a/b")); // true
 * isNotFound(Object.assign(new Error("no such key"), { code: "not_found" })); // true
 * ```
 */
export function isNotFound(e: unknown): boolean {
  return e instanceof StorageNotFoundError ||
    (e instanceof Error && (e as { code?: unknown }).code === "not_found");
}

/** Thrown for a key that cannot name anything (empty component, `..`, control characters). */
export class StorageKeyError extends Error {
  /** Stable code. */
  readonly code = "invalid_key";
  /** Creates the error for `key`. */
  constructor(key: string) {
    super(`invalid storage key: ${JSON.stringify(key)}`);
    this.name = "StorageKeyError";
  }
}

/** A lock not refreshed for this long (ms) belongs to a dead holder and may be taken over. */
export const STALE_LOCK_MS = 10_000;
/** How often a holder refreshes its locks (ms). */
export const LOCK_REFRESH_MS = 5_000;
/** How often a waiter polls a taken lock (ms). */
export const LOCK_POLL_MS = 250;

/**
 * Normalises a key: components joined by one `/`, no leading/trailing slash. Throws a
 * StorageKeyError for `..`, `.`, NUL/control characters or a backslash.
 *
 * @example
 * ```ts
 * import { normalizeKey } from "./storage.ts";
 * normalizeKey("/certificates//local/"); // "certificates/local"
 * ```
 */
export function normalizeKey(key: string): string {
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\\]/.test(key)) throw new StorageKeyError(key);
  const parts = key.split("/").filter((p) => p !== "");
  if (parts.some((p) => p === ".." || p === ".")) throw new StorageKeyError(key);
  return parts.join("/");
}

/**
 * Makes any text safe as one key component (certmagic's `StorageKeys.Safe`): lower case,
 * `*` → `wildcard_`, `:` → `-`, `+` → `_plus_`, spaces → `_`, `..` removed, anything other
 * than letters, digits, `_`, `@`, `.` and `-` dropped.
 *
 * @example
 * ```ts
 * import { safeKey } from "./storage.ts";
 * safeKey("*.Example.com"); // "wildcard_.example.com"
 * ```
 */
export function safeKey(text: string): string {
  const s = text.toLowerCase().trim()
    .replaceAll(" ", "_")
    .replaceAll("+", "_plus_")
    .replaceAll("*", "wildcard_")
    .replaceAll(":", "-")
    .replaceAll("..", "");
  return s.replace(/[^\w@.-]/g, "");
}

/**
 * The names of everything Gatehouse keeps in storage, in one place (Caddy's layout, so a
 * storage can be shared with or migrated from Caddy).
 *
 * @example
 * ```ts
 * import { storageKeys } from "./storage.ts";
 * storageKeys.siteCert("local", "localhost"); // "certificates/local/localhost/localhost.crt"
 * storageKeys.caRootCert("local"); // "pki/authorities/local/root.crt"
 * ```
 */
export const storageKeys = {
  /** `certificates/<issuer>`. */
  certsPrefix: (issuerKey: string): string => `certificates/${safeKey(issuerKey)}`,
  /** `certificates/<issuer>/<name>`. */
  certsSitePrefix: (issuerKey: string, name: string): string =>
    `certificates/${safeKey(issuerKey)}/${safeKey(name)}`,
  /** `certificates/<issuer>/<name>/<name>.crt`: the PEM chain, leaf first. */
  siteCert: (issuerKey: string, name: string): string =>
    `${storageKeys.certsSitePrefix(issuerKey, name)}/${safeKey(name)}.crt`,
  /** `certificates/<issuer>/<name>/<name>.key`: the PEM private key. */
  sitePrivateKey: (issuerKey: string, name: string): string =>
    `${storageKeys.certsSitePrefix(issuerKey, name)}/${safeKey(name)}.key`,
  /** `certificates/<issuer>/<name>/<name>.json`: metadata (`{"sans": [...]}`). */
  siteMeta: (issuerKey: string, name: string): string =>
    `${storageKeys.certsSitePrefix(issuerKey, name)}/${safeKey(name)}.json`,
  /** `pki/authorities/<id>`. */
  caPrefix: (id: string): string => `pki/authorities/${safeKey(id)}`,
  /** `pki/authorities/<id>/root.crt`. */
  caRootCert: (id: string): string => `${storageKeys.caPrefix(id)}/root.crt`,
  /** `pki/authorities/<id>/root.key`. */
  caRootKey: (id: string): string => `${storageKeys.caPrefix(id)}/root.key`,
  /** `pki/authorities/<id>/intermediate.crt`. */
  caIntermediateCert: (id: string): string => `${storageKeys.caPrefix(id)}/intermediate.crt`,
  /** `pki/authorities/<id>/intermediate.key`. */
  caIntermediateKey: (id: string): string => `${storageKeys.caPrefix(id)}/intermediate.key`,
  /** Lock name for obtaining or renewing the certificate of `name` (`issue_cert_<name>`). */
  issueLock: (name: string): string => `issue_cert_${name}`,
  /** Lock name for creating or renewing the CA `id` (`pki_ca_<id>`). */
  caLock: (id: string): string => `pki_ca_${id}`,
};

/** Locks this process holds, by storage, so exit paths can release them all. */
const held = new Map<string, { storage: Locker; release: () => Promise<void> }>();

/**
 * Records a lock this process took (storage implementations call this), so that
 * {@link cleanUpOwnLocks} releases it on exit.
 *
 * @example
 * ```ts ignore
 * trackLock(storage, "issue_cert_localhost", () => storage.unlock("issue_cert_localhost"));
 * ```
 */
export function trackLock(storage: Locker, id: string, release: () => Promise<void>): void {
  held.set(id, { storage, release });
}

/** Forgets a lock released normally. */
export function untrackLock(id: string): void {
  held.delete(id);
}

/**
 * Releases every lock this process holds, in every storage (graceful exit and SIGQUIT).
 * Never throws; resolves once each release finished or failed.
 *
 * @example
 * ```ts
 * import { cleanUpOwnLocks } from "./storage.ts";
 * await cleanUpOwnLocks();
 * ```
 */
export async function cleanUpOwnLocks(): Promise<void> {
  const all = [...held.values()];
  held.clear();
  await Promise.all(all.map((h) => h.release().catch(() => {})));
}

/** Number of locks this process holds (for tests and logs). */
export function ownLockCount(): number {
  return held.size;
}

/**
 * Runs `fn` while holding lock `name` of `storage`; the lock is released however `fn` ends.
 *
 * @example
 * ```ts ignore
 * await withLock(storage, "issue_cert_localhost", async () => { ... });
 * ```
 */
export async function withLock<T>(
  storage: Locker,
  name: string,
  fn: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  await storage.lock(name, signal);
  try {
    return await fn();
  } finally {
    await storage.unlock(name).catch(() => {});
  }
}

/** Reads a value as text, or undefined when the key is absent. */
export async function loadText(storage: Storage, key: string): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await storage.load(key));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Sleeps `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
