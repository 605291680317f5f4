/**
 * The config of `http.handlers.cache` and of the `cache` app (the handlers' defaults), field
 * by field as the top-level fields of caddyserver/cache-handler's `SouinCaddyMiddleware`
 * (`httcache.go`) and Souin's `DefaultCache` (`configurationtypes/types.go`), and their
 * decoder. The JSON decoder, the `cache` directive and global option (`caddyfile.ts`) and the
 * writer (`writer.ts`) make or read these types.
 *
 * Two storages are built in: `otter` (memory, bounded in entries and bytes) and `simplefs`
 * (a directory, bounded in entries and bytes). The plugin's other storages (badger, etcd,
 * nats, nuts, olric, redis), its CDN and API settings, `timeout` and `log_level` are refused by
 * name, as is the `Configuration` tree its Caddyfile adapter writes.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { durationMs } from "../../../config/duration.ts";

/** A JSON duration: a Go duration string (`"120s"`) or an integer of nanoseconds. */
export type JsonDuration = string | number;

/** How the key of a request is made (Souin's `Key`); the default is `METHOD-scheme-host-path?query`. */
export interface KeyConfig {
  /** Leave the request body out (it is hashed in for cached methods that have one). */
  disable_body?: boolean;
  /** Leave the host out. */
  disable_host?: boolean;
  /** Leave the method out. */
  disable_method?: boolean;
  /** Leave the query out. */
  disable_query?: boolean;
  /** Leave the scheme out. */
  disable_scheme?: boolean;
  /** Ignore the answer's `Vary`: one answer per key whatever the request's fields. */
  disable_vary?: boolean;
  /** Sort the query's parameters (and each one's values) before they go in. */
  sort_query?: boolean;
  /** Keep a hash of the key instead of the key (shorter keys; `Cache-Status` shows the hash). */
  hash?: boolean;
  /** Leave the key out of `Cache-Status`. */
  hide?: boolean;
  /** The key as a template of placeholders (the other parts are then ignored). */
  template?: string;
  /** Request fields whose values go in the key. */
  headers?: string[];
}

/** A storage's settings (Souin's `CacheProvider`). */
export interface ProviderConfig {
  /** The directory of a `simplefs` storage. */
  path?: string;
  /** A network storage's address: refused (no network storage is built in). */
  url?: string;
  /**
   * `otter`: `size` (most entries, default 10,000) and, ours, `max_bytes` (most bytes,
   * default 64 MiB). `simplefs`: `size` (most entries, default 100,000), `directory_size`
   * (most bytes, default 1 GiB; `10MB`, `1GiB` or a number), and `path`.
   */
  configuration?: Record<string, unknown>;
}

/** The cache modes of Souin (`context/mode.go`). */
export type CacheMode = "strict" | "bypass" | "bypass_request" | "bypass_response";

/** The settings a `cache` handler has, and the `cache` app gives every handler as defaults. */
export type CacheOptions = {
  /** Methods whose answers are stored (default `GET`, `HEAD`); the app's are added to a handler's. */
  allowed_http_verbs?: string[];
  /** Statuses stored with the default `ttl` besides the heuristically cacheable ones. */
  allowed_additional_status_codes?: number[];
  /** The name in `Cache-Status` (default `Gatehouse`). */
  cache_name?: string;
  /** The `Cache-Control` of answers that have none. */
  default_cache_control?: string;
  /** Request fields whose values go in every key (as `key.headers`). */
  headers?: string[];
  /** How keys are made. */
  key?: KeyConfig;
  /** Key settings for requests whose URI matches a regular expression (first match wins). */
  cache_keys?: Record<string, KeyConfig>;
  /** Answers with a larger body pass through unstored (default 1 MiB in memory, 64 MiB on disk). */
  max_cacheable_body_bytes?: number;
  /** `strict` (RFC 9111, the default), or ignore the request's (`bypass_request`), the answer's (`bypass_response`) or both directives (`bypass`). */
  mode?: CacheMode;
  /** Requests whose URI matches `exclude` go through uncached. */
  regex?: { exclude?: string };
  /** How long after it went stale an answer is kept and served when the upstream fails (default 0). */
  stale?: JsonDuration;
  /** How long an answer without explicit freshness is fresh (default 120s). */
  ttl?: JsonDuration;
  /** The memory storage. */
  otter?: ProviderConfig;
  /** The disk storage. */
  simplefs?: ProviderConfig;
  /** The storages in the order tried: only the one configured is accepted. */
  storers?: string[];
  /** Every request that misses goes upstream, even when another for the same key is on its way. */
  disable_coalescing?: boolean;
};

/** `http.handlers.cache`. */
export type CacheConfig = { handler: "cache" } & CacheOptions;

/** The `cache` app: defaults of every `cache` handler. */
export type CacheAppConfig = CacheOptions;

/** The fields of {@linkcode CacheOptions}. */
export const CACHE_OPTION_FIELDS: readonly (keyof CacheOptions)[] = [
  "allowed_http_verbs",
  "allowed_additional_status_codes",
  "cache_name",
  "default_cache_control",
  "headers",
  "key",
  "cache_keys",
  "max_cacheable_body_bytes",
  "mode",
  "regex",
  "stale",
  "ttl",
  "otter",
  "simplefs",
  "storers",
  "disable_coalescing",
];

/** The plugin's fields that are refused, and why. */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  badger: "the badger storage is not available: use otter (memory) or simplefs (disk)",
  etcd: "the etcd storage is not available: use otter (memory) or simplefs (disk)",
  nats: "the nats storage is not available: use otter (memory) or simplefs (disk)",
  nuts: "the nuts storage is not available: use otter (memory) or simplefs (disk)",
  olric: "the olric storage is not available: use otter (memory) or simplefs (disk)",
  redis: "the redis storage is not available: use otter (memory) or simplefs (disk)",
  cdn: "CDN purging is not available",
  api: "the cache API is the admin API here (/cache/...); there is no api block",
  timeout: "timeouts are the upstream's here (reverse_proxy transport timeouts)",
  log_level: "log levels are set in the logging config",
  distributed: "no distributed storage is available",
  Configuration:
    "the plugin's internal Configuration tree is not read: set the fields at the top level",
};

const KEY_FIELDS: readonly (keyof KeyConfig)[] = [
  "disable_body",
  "disable_host",
  "disable_method",
  "disable_query",
  "disable_scheme",
  "disable_vary",
  "sort_query",
  "hash",
  "hide",
  "template",
  "headers",
];

const MODES: readonly CacheMode[] = ["strict", "bypass", "bypass_request", "bypass_response"];
const STORERS = ["otter", "simplefs"];
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Bytes of `10MB`, `1GiB`, `512kB`, `1048576` (go-humanize's `ParseBytes`); NaN otherwise. */
export function parseBytes(v: unknown): number {
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 ? v : NaN;
  if (typeof v !== "string") return NaN;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$/i.exec(v);
  if (!m) return NaN;
  const exp = "kmgtp".indexOf(m[2].toLowerCase()) + 1;
  const base = m[3] ? 1024 : 1000;
  return Math.floor(Number(m[1]) * base ** exp);
}

function decodeKey(k: Decoder): KeyConfig {
  k.fields(KEY_FIELDS);
  const out: KeyConfig = {};
  for (const f of KEY_FIELDS) {
    if (f === "template" || f === "headers") continue;
    const b = k.bool(f);
    if (b !== undefined) (out as Record<string, unknown>)[f] = b;
  }
  const t = k.string("template");
  if (t !== undefined && t !== "") out.template = t;
  const h = k.strings("headers");
  if (h) out.headers = h;
  return out;
}

function count(c: Decoder, key: string): number | undefined {
  const v = c.value(key);
  if (v === undefined || v === null) return undefined;
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
    c.failAt(key, "must be a whole number of at least 1");
  }
  return n;
}

function bytes(c: Decoder, key: string): number | undefined {
  const v = c.value(key);
  if (v === undefined || v === null) return undefined;
  const n = parseBytes(v);
  if (!(n >= 1)) c.failAt(key, `must be a size in bytes such as 64MB (got ${JSON.stringify(v)})`);
  return n;
}

function decodeProvider(p: Decoder, kind: "otter" | "simplefs"): ProviderConfig {
  p.fields(["path", "url", "configuration"]);
  const out: ProviderConfig = {};
  const url = p.string("url");
  if (url) p.failAt("url", `the ${kind} storage has no url`);
  const path = p.string("path");
  if (path) {
    if (kind === "otter") p.failAt("path", "the otter storage is in memory and has no path");
    out.path = path;
  }
  const c = p.object("configuration");
  if (c) {
    const fields = kind === "otter" ? ["size", "max_bytes"] : ["size", "directory_size", "path"];
    c.fields(fields);
    count(c, "size");
    bytes(c, kind === "otter" ? "max_bytes" : "directory_size");
    const cp = c.string("path");
    if (cp !== undefined && kind === "simplefs" && out.path === undefined) out.path = cp;
    out.configuration = c.raw;
  }
  return out;
}

/** Decodes the fields shared by the handler and the app into `out`. */
function decodeOptions(d: Decoder, out: CacheOptions): void {
  for (const [f, why] of Object.entries(REFUSED_FIELDS)) {
    const v = d.value(f);
    // the plugin writes every provider, empty ones too
    const empty = v === undefined || v === null || v === false ||
      (typeof v === "object" && Object.values(v as Raw).every((x) => !x));
    if (!empty) d.failAt(f, why, "unsupported");
  }
  const verbs = d.strings("allowed_http_verbs");
  if (verbs) {
    for (const m of verbs) {
      if (!METHOD.test(m)) d.failAt("allowed_http_verbs", `${JSON.stringify(m)} is no method`);
    }
    out.allowed_http_verbs = verbs.map((m) => m.toUpperCase());
  }
  const extra = d.array("allowed_additional_status_codes");
  if (extra) {
    for (const s of extra) {
      if (typeof s !== "number" || !Number.isInteger(s) || s < 200 || s > 599) {
        d.failAt("allowed_additional_status_codes", `${JSON.stringify(s)} is no final status`);
      }
      if (s === 206 || s === 304) {
        d.failAt("allowed_additional_status_codes", `${s} answers are never stored`);
      }
    }
    out.allowed_additional_status_codes = extra as number[];
  }
  const name = d.string("cache_name");
  if (name) {
    // deno-lint-ignore no-control-regex
    if (/[\x00-\x1f\x7f"\\]/.test(name)) {
      d.failAt("cache_name", "must be printable, without quotes");
    }
    out.cache_name = name;
  }
  const dcc = d.string("default_cache_control");
  if (dcc) out.default_cache_control = dcc;
  const headers = d.strings("headers");
  if (headers?.length) out.headers = headers;
  const key = d.object("key");
  if (key) out.key = decodeKey(key);
  const keys = d.object("cache_keys");
  if (keys) {
    out.cache_keys = {};
    for (const re of Object.keys(keys.raw)) {
      try {
        new RegExp(re);
      } catch (e) {
        keys.failAt(re, `invalid regular expression: ${(e as Error).message}`, "invalid_regexp");
      }
      out.cache_keys[re] = decodeKey(Decoder.of(keys.raw[re], keys.at(re)));
    }
  }
  const max = d.value("max_cacheable_body_bytes");
  if (max !== undefined && max !== null && max !== 0) {
    if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 1) {
      d.failAt("max_cacheable_body_bytes", "must be a whole number of bytes of at least 1");
    }
    out.max_cacheable_body_bytes = max;
  }
  const mode = d.string("mode");
  if (mode) {
    if (!MODES.includes(mode as CacheMode)) {
      d.failAt("mode", `must be one of ${MODES.join(", ")} (got ${JSON.stringify(mode)})`);
    }
    out.mode = mode as CacheMode;
  }
  const regex = d.object("regex");
  if (regex) {
    regex.fields(["exclude"]);
    const ex = regex.string("exclude");
    if (ex) {
      try {
        new RegExp(ex);
      } catch (e) {
        regex.failAt(
          "exclude",
          `invalid regular expression: ${(e as Error).message}`,
          "invalid_regexp",
        );
      }
      out.regex = { exclude: ex };
    }
  }
  for (const k of ["stale", "ttl"] as const) {
    const v = d.value(k);
    if (v === undefined || v === null || v === "" || v === 0) continue;
    const ms = durationMs(v, d.at(k));
    if (!(ms > 0)) d.failAt(k, "must be greater than zero");
    out[k] = v as JsonDuration;
  }
  for (const kind of ["otter", "simplefs"] as const) {
    const p = d.object(kind);
    if (p && Object.values(p.raw).some((x) => x)) out[kind] = decodeProvider(p, kind);
  }
  if (out.otter && out.simplefs) {
    d.fail("one storage per cache: otter (memory) or simplefs (disk), not both");
  }
  const storers = d.strings("storers");
  if (storers?.length) {
    const configured = out.simplefs ? "simplefs" : "otter";
    for (const s of storers) {
      if (!STORERS.includes(s.toLowerCase())) {
        d.failAt(
          "storers",
          `the ${s} storage is not available: use otter (memory) or simplefs (disk)`,
        );
      }
      if (s.toLowerCase() !== configured) {
        d.failAt("storers", `${s} is not the storage configured here (${configured})`);
      }
    }
    out.storers = storers;
  }
  const nc = d.bool("disable_coalescing");
  if (nc !== undefined) out.disable_coalescing = nc;
}

/**
 * Decodes and checks a `cache` handler config (types, known fields, regular expressions,
 * durations, storages); nothing is opened here.
 *
 * @example
 * ```ts
 * import { decodeCache } from "./config.ts";
 * decodeCache({ handler: "cache", ttl: "30s" }).ttl; // "30s"
 * ```
 */
export function decodeCache(raw: Raw): CacheConfig {
  const d = new Decoder(raw, "http.handlers.cache").fields([
    "handler",
    ...CACHE_OPTION_FIELDS,
    ...Object.keys(REFUSED_FIELDS),
  ]);
  const out: CacheConfig = { handler: "cache" };
  decodeOptions(d, out);
  return out;
}

/**
 * Decodes the `cache` app's config (the handlers' defaults).
 *
 * @example
 * ```ts
 * import { decodeCacheApp } from "./config.ts";
 * decodeCacheApp({ ttl: "100s" }).ttl; // "100s"
 * ```
 */
export function decodeCacheApp(raw: Raw): CacheAppConfig {
  const d = new Decoder(raw, "cache").fields([
    ...CACHE_OPTION_FIELDS,
    ...Object.keys(REFUSED_FIELDS),
  ]);
  const out: CacheAppConfig = {};
  decodeOptions(d, out);
  return out;
}
