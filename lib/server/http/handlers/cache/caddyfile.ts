/**
 * Gatehousefile syntax of the cache, as caddyserver/cache-handler's `parseConfiguration`
 * (`configuration.go`): the `cache` directive (a handler; placed before `rewrite` in the
 * default order, as the plugin registers it) and the `cache` global option (the `cache` app:
 * defaults for every handler). Durations stay as written; a value the plugin would silently
 * drop (a bad duration, a status that is no number) is refused here, and so are the parts
 * that are not built in (other storages, `api`, `cdn`, `timeout`, `log_level`), by name.
 *
 * ```
 * cache [<matcher>] {
 *     allowed_http_verbs <methods...>
 *     allowed_additional_status_codes <codes...>
 *     cache_keys { <regexp> { <key subdirectives> } }
 *     cache_name <name>
 *     default_cache_control <value...>
 *     disable_coalescing
 *     headers <fields...>
 *     key {
 *         disable_body; disable_host; disable_method; disable_query; disable_scheme
 *         disable_vary; sort_query; hash; hide; template <template>; headers <fields...>
 *     }
 *     max_cacheable_body_bytes <bytes>
 *     mode strict|bypass|bypass_request|bypass_response
 *     otter { configuration { size <entries>; max_bytes <size> } }
 *     regex { exclude <regexp> }
 *     simplefs { path <dir>; configuration { size <entries>; directory_size <size> } }
 *     stale <duration>
 *     storers <names...>
 *     ttl <duration>
 * }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseDuration } from "../../../config/duration.ts";
import {
  CACHE_OPTION_FIELDS,
  type CacheConfig,
  type CacheOptions,
  type KeyConfig,
  type ProviderConfig,
} from "./config.ts";

const STORAGES_NOT_BUILT_IN = ["badger", "etcd", "nats", "nuts", "olric", "redis"];
const KEY_FLAGS: Record<string, keyof KeyConfig> = {
  disable_body: "disable_body",
  disable_host: "disable_host",
  disable_method: "disable_method",
  disable_query: "disable_query",
  disable_scheme: "disable_scheme",
  disable_vary: "disable_vary",
  sort_query: "sort_query",
  hash: "hash",
  hide: "hide",
};

function oneArg(d: Dispenser): string {
  const args = d.remainingArgs();
  if (args.length !== 1) throw d.argErr();
  return args[0];
}

function key(d: Dispenser, what: string): KeyConfig {
  const k: KeyConfig = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const name = d.val();
    const flag = KEY_FLAGS[name];
    if (flag) {
      if (d.nextArg()) throw d.argErr();
      (k as Record<string, unknown>)[flag] = true;
    } else if (name === "template") k.template = oneArg(d);
    else if (name === "headers") {
      const h = d.remainingArgs();
      if (h.length === 0) throw d.argErr();
      k.headers = h;
    } else throw d.err(`unsupported ${what} directive: ${name}`);
  }
  return k;
}

/** The plugin's `parseCaddyfileRecursively`: a block of `name value...` lines as a map. */
function recursive(d: Dispenser): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const name = d.val();
    const args = d.remainingArgs();
    out[name] = args.length === 1 ? args[0] : args.length > 1 ? args : recursive(d);
  }
  return out;
}

function provider(d: Dispenser, kind: "otter" | "simplefs"): ProviderConfig {
  const p: ProviderConfig = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const name = d.val();
    if (name === "path" && kind === "simplefs") p.path = oneArg(d);
    else if (name === "configuration") p.configuration = recursive(d);
    else throw d.err(`unsupported ${kind} directive: ${name}`);
  }
  return p;
}

function duration(d: Dispenser): string {
  const v = oneArg(d);
  try {
    parseDuration(v);
  } catch (e) {
    throw d.err(`invalid duration '${v}': ${(e as Error).message}`);
  }
  return v;
}

/** Reads a `cache` block (directive or global option) into `out`. */
function options(d: Dispenser, out: CacheOptions, global: boolean): void {
  while (d.next()) {
    if (d.nextArg()) throw d.argErr();
    for (const n = d.nesting(); d.nextBlock(n);) {
      const opt = d.val();
      switch (opt) {
        case "allowed_http_verbs":
          out.allowed_http_verbs = [...(out.allowed_http_verbs ?? []), ...d.remainingArgs()];
          break;
        case "allowed_additional_status_codes":
          for (const c of d.remainingArgs()) {
            if (!/^\d{3}$/.test(c)) throw d.err(`not a status code: ${c}`);
            (out.allowed_additional_status_codes ??= []).push(Number(c));
          }
          break;
        case "api":
          throw d.err(
            global
              ? "the cache API is the admin API here (GET /cache/, POST /cache/purge); remove the api block"
              : "'api' block must be global",
          );
        case "cache_keys":
          out.cache_keys ??= {};
          for (const n2 = d.nesting(); d.nextBlock(n2);) {
            const re = d.val();
            try {
              new RegExp(re);
            } catch (e) {
              throw d.err(`invalid regular expression ${re}: ${(e as Error).message}`);
            }
            out.cache_keys[re] = key(d, `cache_keys (${re})`);
          }
          break;
        case "cache_name":
          out.cache_name = oneArg(d);
          break;
        case "default_cache_control": {
          const a = d.remainingArgs();
          if (a.length === 0) throw d.argErr();
          out.default_cache_control = a.join(" ");
          break;
        }
        case "disable_coalescing":
          if (d.nextArg()) throw d.argErr();
          out.disable_coalescing = true;
          break;
        case "disable_surrogate_key":
          // surrogate keys (tag purges) are not built in: nothing to turn off
          if (d.nextArg()) throw d.argErr();
          break;
        case "headers":
          out.headers = [...(out.headers ?? []), ...d.remainingArgs()];
          break;
        case "key":
          out.key = key(d, "key");
          break;
        case "max_cacheable_body_bytes": {
          const v = oneArg(d);
          if (!/^\d+$/.test(v) || Number(v) < 1) {
            throw d.err(`unsupported max_cacheable_body_bytes: [${v}]`);
          }
          out.max_cacheable_body_bytes = Number(v);
          break;
        }
        case "mode": {
          const a = d.remainingArgs();
          if (a.length !== 1) {
            throw d.err(`mode must contains only one arg: [${a.join(" ")}] given`);
          }
          out.mode = a[0] as CacheOptions["mode"];
          break;
        }
        case "otter":
        case "simplefs":
          out[opt] = provider(d, opt);
          break;
        case "regex":
          for (const n2 = d.nesting(); d.nextBlock(n2);) {
            if (d.val() !== "exclude") throw d.err(`unsupported regex directive: ${d.val()}`);
            out.regex = { exclude: oneArg(d) };
          }
          break;
        case "stale":
          out.stale = duration(d);
          break;
        case "storers":
          out.storers = d.remainingArgs();
          break;
        case "ttl":
          out.ttl = duration(d);
          break;
        case "cdn":
          throw d.err("CDN purging is not available");
        case "timeout":
          throw d.err("timeouts are the upstream's here (reverse_proxy transport timeouts)");
        case "log_level":
          throw d.err("log levels are set in the logging config");
        default:
          if (STORAGES_NOT_BUILT_IN.includes(opt)) {
            throw d.err(
              `the ${opt} storage is not available: use otter (memory) or simplefs (disk)`,
            );
          }
          throw d.err(`unsupported root directive: ${opt}`);
      }
    }
  }
}

function ordered<T extends CacheOptions>(o: T, head: Partial<T>): T {
  const out = { ...head } as Record<string, unknown>;
  for (const k of CACHE_OPTION_FIELDS) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

/** `cache`: see the module documentation. */
export function parseCache(h: Helper): CacheConfig {
  const o: CacheOptions = {};
  options(h, o, false);
  return ordered({ handler: "cache", ...o }, { handler: "cache" });
}

/** The `cache` global option: the `cache` app. */
export function parseCacheOption(d: Dispenser): { appName: string; appValue: CacheOptions } {
  const o: CacheOptions = {};
  options(d, o, true);
  return { appName: "cache", appValue: ordered(o, {}) };
}

/** The Gatehousefile syntax of the cache. */
export const syntax: SyntaxSet = {
  handlerDirectives: { cache: parseCache },
  globalOptions: { cache: parseCacheOption },
};
