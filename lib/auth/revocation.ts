/**
 * Ending one session everywhere: a sign-out that also stops every copy of the cookie (another
 * tab's, a stolen one), without touching the user's other sessions. Every session cookie
 * carries a random session id (`Session.id`); a sign-out puts that id in the site's
 * {@linkcode RevocationStore} until the session would have expired, and `readSession` given the
 * store (`revoked` option) refuses it from then on, on every server that shares the store.
 *
 * The store is the site's: a table of its database (the `/d1` entry point has one,
 * `revocationStore(db)`), a key-value store with expiry (Deno KV, Cloudflare KV, Redis), or,
 * for a single process, {@linkcode memoryRevocationStore}.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { readSession, type Session, type SessionConfig } from "./session.ts";

/**
 * Where a site keeps the ids of ended sessions. Both methods may be synchronous or return a
 * promise.
 *
 * @example
 * ```ts
 * import type { RevocationStore } from "@gatehouse/gatehouse";
 * // Deno KV: entries vanish by themselves when the session would have expired.
 * const kv = await Deno.openKv(":memory:");
 * const store: RevocationStore = {
 *   async revoke(id, expiresAt) {
 *     const expireIn = Math.max(1, expiresAt * 1000 - Date.now());
 *     await kv.set(["revoked-session", id], true, { expireIn });
 *   },
 *   async isRevoked(id) {
 *     return (await kv.get(["revoked-session", id])).value !== null;
 *   },
 * };
 * kv.close();
 * ```
 */
export interface RevocationStore {
  /**
   * Records that session `id` has ended. Keep it at least until `expiresAt` (seconds since
   * the epoch: the session's own expiry, after which `readSession` refuses the cookie anyway),
   * then drop it. Recording an id twice must be harmless. A failure should throw or reject:
   * {@linkcode revokeSession} passes it on, so the site knows the session is not ended.
   */
  revoke(id: string, expiresAt: number): void | Promise<void>;
  /**
   * Whether session `id` has ended: `true` or `false`. Anything else, a throw or a rejection
   * makes `readSession` refuse the cookie. `session` is the verified session being read.
   */
  isRevoked(id: string, session: Session): boolean | Promise<boolean>;
}

/** Options of {@linkcode revokeSession}. */
export interface RevokeSessionOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

/**
 * Ends the session of a request's cookie everywhere: reads it (signature and expiry checked,
 * so only a holder of a valid cookie can add to the store) and records its id in `store` until
 * its expiry. Resolves to the ended session, or `null` when the request has no valid session
 * cookie (nothing is recorded). Rejects with the store's error when it cannot record the id:
 * the session then still works elsewhere. Send `clearSessionCookie` in the answer as
 * well, so this browser forgets the cookie.
 *
 * @example
 * ```ts
 * import {
 *   clearSessionCookie,
 *   memoryRevocationStore,
 *   revokeSession,
 * } from "@gatehouse/gatehouse";
 * const config = { secret: "a long random SESSION_SECRET", cookieName: "__Host-session" };
 * const store = memoryRevocationStore(); // one process; use a shared store on several
 * async function signOut(request: Request): Promise<Response> {
 *   await revokeSession(config, request, store);
 *   return new Response(null, {
 *     status: 303,
 *     headers: { location: "/", "set-cookie": clearSessionCookie(config) },
 *   });
 * }
 * console.log((await signOut(new Request("https://example.com/logout"))).status); // 303
 * ```
 */
export async function revokeSession(
  config: SessionConfig,
  request: { readonly headers: Headers },
  store: RevocationStore,
  options?: RevokeSessionOptions,
): Promise<Session | null> {
  if (typeof store?.revoke !== "function" || typeof store?.isRevoked !== "function") {
    throw new AuthError("invalid_options", "store must have revoke and isRevoked functions");
  }
  const session = await readSession(config, request, { now: options?.now });
  if (!session) return null;
  await store.revoke(session.id, session.expiresAt);
  return session;
}

/** Options of {@linkcode memoryRevocationStore}. */
export interface MemoryRevocationStoreOptions {
  /** Most ids held at once (default 100,000); expired ones are dropped first. */
  maxEntries?: number;
  /** The clock in milliseconds since the epoch (default `Date.now`), for tests. */
  now?: () => number;
}

/** A {@linkcode RevocationStore} in this process's memory (see {@linkcode memoryRevocationStore}). */
export interface MemoryRevocationStore extends RevocationStore {
  /** How many ids it holds now (expired ones included until they are dropped). */
  readonly size: number;
}

/** Default most entries of {@linkcode memoryRevocationStore}. */
export const DEFAULT_MAX_REVOKED = 100_000;

/** Longest session id a store accepts, in characters. */
const MAX_ID = 256;

/**
 * A revocation store in memory: for a site that runs as one process (and for tests). Several
 * processes or isolates (Deno Deploy, Workers) each have their own memory, so a session ended
 * in one stays valid in the others: use a shared store there. Restarting the process forgets
 * every ended session still within its lifetime.
 *
 * Each id is kept until its session's expiry; expired ids are dropped when the store is full
 * or when one is looked up. When `maxEntries` ids are held and none has expired, `revoke`
 * throws {@linkcode AuthError} `store_full` rather than forget a live one (the sign-out then
 * fails visibly; about 100 bytes an entry).
 *
 * @example
 * ```ts
 * import { memoryRevocationStore } from "@gatehouse/gatehouse";
 * const store = memoryRevocationStore();
 * const inAWeek = Math.floor(Date.now() / 1000) + 604_800;
 * await store.revoke("Vq3w2mFJ0o9s8xQe1yBZkA", inAWeek);
 * console.log(store.size); // 1
 * ```
 */
export function memoryRevocationStore(
  options: MemoryRevocationStoreOptions = {},
): MemoryRevocationStore {
  const max = options.maxEntries ?? DEFAULT_MAX_REVOKED;
  if (!Number.isSafeInteger(max) || max <= 0) {
    throw new AuthError("invalid_options", "maxEntries must be a positive integer");
  }
  const clock = options.now ?? Date.now;
  // id -> expiry in milliseconds since the epoch.
  const ended = new Map<string, number>();
  const prune = (now: number) => {
    for (const [id, until] of ended) if (until <= now) ended.delete(id);
  };
  return {
    get size() {
      return ended.size;
    },
    revoke(id: string, expiresAt: number): void {
      if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID) {
        throw new AuthError("invalid_options", "id must be a string of 1 to 256 characters");
      }
      if (typeof expiresAt !== "number" || !Number.isFinite(expiresAt)) {
        throw new AuthError("invalid_options", "expiresAt must be seconds since the epoch");
      }
      const until = expiresAt * 1000;
      const now = clock();
      if (until <= now) return; // expired: readSession refuses it by itself
      if (!ended.has(id) && ended.size >= max) {
        prune(now);
        if (ended.size >= max) {
          throw new AuthError("store_full", `the revocation store holds ${max} live sessions`);
        }
      }
      ended.set(id, Math.max(until, ended.get(id) ?? 0));
    },
    isRevoked(id: string): boolean {
      const until = ended.get(id);
      if (until === undefined) return false;
      if (until > clock()) return true;
      ended.delete(id);
      return false;
    },
  };
}
