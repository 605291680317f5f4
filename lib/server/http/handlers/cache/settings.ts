/**
 * A `cache` handler's settings, settled from its config and the `cache` app's (the handler's
 * value wins, the app's is the default, as the plugin's `FromApp`; the allowed methods of both
 * are added up), with the defaults and limits documented in docs/http.md.
 *
 * @module
 */
import { durationMs } from "../../../config/duration.ts";
import { dataDir } from "../../../storage/dirs.ts";
import {
  type CacheAppConfig,
  type CacheConfig,
  type CacheMode,
  parseBytes,
  type ProviderConfig,
} from "./config.ts";
import { KeyMaker } from "./key.ts";
import type { StoreSpec } from "./stores.ts";
import { statusName } from "./status.ts";

/** Freshness of answers without explicit freshness, by default (the plugin's 120s). */
export const DEFAULT_TTL_MS = 120_000;
/** The memory storage's default bounds. */
export const MEMORY_DEFAULT_ENTRIES = 10_000;
export const MEMORY_DEFAULT_BYTES = 64 * 1024 * 1024;
/** The disk storage's default bounds. */
export const DISK_DEFAULT_ENTRIES = 100_000;
export const DISK_DEFAULT_BYTES = 1024 * 1024 * 1024;
/** The largest body stored by default, in memory and on disk. */
export const MEMORY_DEFAULT_BODY = 1024 * 1024;
export const DISK_DEFAULT_BODY = 64 * 1024 * 1024;
/** The largest request body read to put its hash in a key (larger: the request goes uncached). */
export const MAX_KEY_BODY = 64 * 1024;

/** A handler's settings. */
export interface Settings {
  /** Methods whose answers are stored. */
  verbs: ReadonlySet<string>;
  /** Statuses given the default lifetime beside the heuristically cacheable ones. */
  extraStatuses: ReadonlySet<number>;
  /** The name in `Cache-Status`, as written there. */
  name: string;
  /** The `Cache-Control` of answers that have none. */
  defaultCacheControl: string | null;
  /** How keys are made. */
  keys: KeyMaker;
  /** Request fields that let an `Authorization` request be stored (its key has them). */
  keyedFields: ReadonlySet<string>;
  /** The largest body stored. */
  maxBody: number;
  /** Ignore the request's directives / the answer's. */
  ignoreRequest: boolean;
  ignoreResponse: boolean;
  /** URIs that go through uncached. */
  exclude: RegExp | null;
  /** `stale` and `ttl`, in ms. */
  staleMs: number;
  ttlMs: number;
  /** Requests that miss wait for one on its way for the same key. */
  coalesce: boolean;
  /** The storage. */
  store: StoreSpec;
}

function storeSpec(otter?: ProviderConfig, simplefs?: ProviderConfig): StoreSpec {
  if (simplefs) {
    const c = simplefs.configuration ?? {};
    const size = c.size === undefined ? DISK_DEFAULT_ENTRIES : Number(c.size);
    const bytes = c.directory_size === undefined
      ? DISK_DEFAULT_BYTES
      : parseBytes(c.directory_size);
    return {
      kind: "disk",
      path: simplefs.path ?? `${dataDir()}/cache`,
      maxEntries: size,
      maxBytes: bytes,
    };
  }
  const c = otter?.configuration ?? {};
  return {
    kind: "memory",
    maxEntries: c.size === undefined ? MEMORY_DEFAULT_ENTRIES : Number(c.size),
    maxBytes: c.max_bytes === undefined ? MEMORY_DEFAULT_BYTES : parseBytes(c.max_bytes),
  };
}

/** The settings of handler config `h` under app config `app`. */
export function settle(h: CacheConfig, app: CacheAppConfig): Settings {
  const verbs = new Set([...(h.allowed_http_verbs ?? []), ...(app.allowed_http_verbs ?? [])]);
  if (verbs.size === 0) verbs.add("GET").add("HEAD");
  const mode: CacheMode = h.mode ?? app.mode ?? "strict";
  const key = h.key && Object.keys(h.key).length ? h.key : app.key ?? {};
  const extraHeaders = h.headers ?? app.headers ?? [];
  const store = h.otter || h.simplefs
    ? storeSpec(h.otter, h.simplefs)
    : storeSpec(app.otter, app.simplefs);
  const defaultBody = store.kind === "disk" ? DISK_DEFAULT_BODY : MEMORY_DEFAULT_BODY;
  const maxBody = Math.min(
    h.max_cacheable_body_bytes ?? app.max_cacheable_body_bytes ?? defaultBody,
    store.maxBytes,
  );
  const exclude = h.regex?.exclude ?? app.regex?.exclude;
  const keyed = new Set([...(key.headers ?? []), ...extraHeaders].map((f) => f.toLowerCase()));
  const cacheKeys = h.cache_keys ?? app.cache_keys ?? {};
  for (const k of Object.values(cacheKeys)) {
    for (const f of k.headers ?? []) keyed.add(f.toLowerCase());
  }
  const stale = h.stale ?? app.stale;
  const ttl = h.ttl ?? app.ttl;
  return {
    verbs,
    extraStatuses: new Set(
      h.allowed_additional_status_codes ?? app.allowed_additional_status_codes,
    ),
    name: statusName(h.cache_name ?? app.cache_name ?? "Gatehouse"),
    defaultCacheControl: h.default_cache_control ?? app.default_cache_control ?? null,
    keys: new KeyMaker(key, extraHeaders, cacheKeys),
    keyedFields: keyed,
    maxBody,
    ignoreRequest: mode === "bypass" || mode === "bypass_request",
    ignoreResponse: mode === "bypass" || mode === "bypass_response",
    exclude: exclude ? new RegExp(exclude) : null,
    staleMs: stale === undefined ? 0 : durationMs(stale),
    ttlMs: ttl === undefined ? DEFAULT_TTL_MS : durationMs(ttl),
    coalesce: !(h.disable_coalescing ?? app.disable_coalescing ?? false),
    store,
  };
}
