/**
 * `cache` → `cache { ... }` (the inverse of `caddyfile.ts`).
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, rawWord } from "../../../caddyfile/writer/tokens.ts";
import { durationText } from "../../../config/duration.ts";
import type { CacheConfig, KeyConfig, ProviderConfig } from "./config.ts";

const FLAGS = [
  "disable_body",
  "disable_host",
  "disable_method",
  "disable_query",
  "disable_scheme",
  "disable_vary",
  "sort_query",
  "hash",
  "hide",
] as const;

function keyLines(k: Fields<KeyConfig>): Line[] {
  const out: Line[] = [];
  for (const f of FLAGS) if (k.bool(f) === true) out.push(line([f]));
  const t = k.str("template");
  if (t) out.push(line(["template", rawWord(t)]));
  const h = k.strs("headers");
  if (h?.length) out.push(line(["headers", ...h]));
  k.done("a cache key");
  return out;
}

function configLines(v: unknown, path: string, f: Fields): Line[] | null {
  if (!isObject(v)) {
    f.problems.add(path, "a storage configuration must be an object");
    return null;
  }
  const out: Line[] = [];
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string" && typeof val !== "number") {
      f.problems.add(childPath(path, k), "has no Gatehousefile form");
      return null;
    }
    out.push(line([bare(k), String(val)]));
  }
  return out;
}

function providerLines(p: Fields<ProviderConfig>): Line[] | null {
  const out: Line[] = [];
  const path = p.str("path");
  if (path) out.push(line(["path", path]));
  if (p.has("configuration")) {
    const c = configLines(p.take("configuration"), p.at("configuration"), p as unknown as Fields);
    if (!c) return null;
    out.push(line(["configuration"], c));
  }
  p.done("a cache storage");
  return out;
}

/** `cache` → `cache { ... }`. */
export const writer: HandlerReverser<CacheConfig> = (f) => {
  const block: Line[] = [];
  const verbs = f.strs("allowed_http_verbs");
  if (verbs?.length) block.push(line(["allowed_http_verbs", ...verbs]));
  const codes = f.arr("allowed_additional_status_codes");
  if (codes?.length) block.push(line(["allowed_additional_status_codes", ...codes.map(String)]));
  const keys = f.obj("cache_keys");
  if (keys) {
    const lines: Line[] = [];
    for (const [re, k] of Object.entries(keys)) {
      const at = childPath(f.at("cache_keys"), re);
      if (!isObject(k)) {
        f.problems.add(at, "must be an object");
        return null;
      }
      lines.push(line([rawWord(re)], keyLines(new Fields<KeyConfig>(k, at, f.problems))));
    }
    block.push(line(["cache_keys"], lines));
  }
  const name = f.str("cache_name");
  if (name) block.push(line(["cache_name", name]));
  const dcc = f.str("default_cache_control");
  if (dcc) block.push(line(["default_cache_control", dcc]));
  if (f.bool("disable_coalescing") === true) block.push(line(["disable_coalescing"]));
  const headers = f.strs("headers");
  if (headers?.length) block.push(line(["headers", ...headers]));
  const key = f.fields("key");
  if (key) block.push(line(["key"], keyLines(key as unknown as Fields<KeyConfig>)));
  const max = f.num("max_cacheable_body_bytes");
  if (max) block.push(line(["max_cacheable_body_bytes", String(max)]));
  const mode = f.str("mode");
  if (mode) block.push(line(["mode", mode]));
  for (const kind of ["otter", "simplefs"] as const) {
    const p = f.fields(kind);
    if (!p) continue;
    const lines = providerLines(p as unknown as Fields<ProviderConfig>);
    if (!lines) return null;
    block.push(line([kind], lines.length ? lines : undefined));
  }
  const regex = f.fields("regex");
  if (regex) {
    const ex = regex.str("exclude");
    regex.done("regex");
    if (ex) block.push(line(["regex"], [line(["exclude", rawWord(ex)])]));
  }
  for (const k of ["stale", "ttl"] as const) {
    if (!f.has(k)) continue;
    const t = durationText(f.take(k));
    if (t === undefined) {
      f.problems.add(f.at(k), "must be a duration");
      return null;
    }
    block.push(line([k, t]));
  }
  const storers = f.strs("storers");
  if (storers?.length) block.push(line(["storers", ...storers]));
  return { name: "cache", args: [], block: block.length ? block : undefined };
};
