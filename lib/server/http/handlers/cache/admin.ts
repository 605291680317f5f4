/**
 * `admin.api.cache`: the cache's admin endpoints, part of every config (they answer for the
 * storages the loaded configs use; none when no `cache` handler is loaded).
 *
 * - `GET /cache/`: each storage's figures (`kind`, `entries`, `keys`, `bytes`, `max_entries`,
 *   `max_bytes`, and `path` for a disk storage).
 * - `GET /cache/entries?limit=<n>`: the stored entries, least recently used first (`key`,
 *   `url`, `method`, `status`, `size`, `age` and `ttl` in seconds, `vary`); at most `limit`
 *   (default 1,000, at most 100,000).
 * - `POST /cache/purge` with a JSON object: `{"all": true}`, `{"keys": [...]}` (exact keys,
 *   every variant), `{"urls": [...]}` (`https://host/path?query` as requested, every method
 *   and variant) and/or `{"regex": "..."}` (keys matching it, Souin's purge); answers
 *   `{"purged": <entries dropped>}`. A purge also keeps answers on their way from being stored.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { ModuleInstance } from "../../../module/instance.ts";
import { AdminError } from "../../../errors.ts";

/** Largest purge request body. */
const MAX_PURGE_BODY = 1024 * 1024;
const JSON_HEADERS = { "content-type": "application/json" };

async function readLimited(req: Request): Promise<string> {
  const tooLarge = () =>
    new AdminError("too_large", `request body too large: limit is ${MAX_PURGE_BODY} bytes`);
  if (Number(req.headers.get("content-length") ?? 0) > MAX_PURGE_BODY) throw tooLarge();
  if (req.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (e) {
      throw new AdminError("bad_request", `reading request body: ${(e as Error).message}`);
    }
    if (r.done) break;
    size += r.value.length;
    if (size > MAX_PURGE_BODY) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(r.value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

async function purgeRequest(req: Request): Promise<Record<string, unknown>> {
  const text = await readLimited(req);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new AdminError("bad_request", `decoding request body: ${(e as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AdminError("bad_request", "a purge is a JSON object");
  }
  const o = body as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!["all", "keys", "urls", "regex"].includes(k)) {
      throw new AdminError("bad_request", `unknown purge field "${k}" (all, keys, urls, regex)`);
    }
  }
  for (const k of ["keys", "urls"]) {
    const v = o[k];
    if (v !== undefined && (!Array.isArray(v) || v.some((s) => typeof s !== "string"))) {
      throw new AdminError("bad_request", `"${k}" must be an array of strings`);
    }
  }
  if (o.all !== undefined && typeof o.all !== "boolean") {
    throw new AdminError("bad_request", `"all" must be a boolean`);
  }
  if (o.regex !== undefined && typeof o.regex !== "string") {
    throw new AdminError("bad_request", `"regex" must be a string`);
  }
  if (!o.all && o.keys === undefined && o.urls === undefined && o.regex === undefined) {
    throw new AdminError("bad_request", "say what to purge: all, keys, urls or regex");
  }
  return o;
}

/** Registry entry. */
export const cacheAdminModule: ModuleDefinition<ModuleInstance> = {
  id: "admin.api.cache",
  create(_config, ctx) {
    ctx.registerAdminRoute({
      pattern: "/cache/",
      async handle(req) {
        const { liveStores } = await import("./stores.ts");
        const url = new URL(req.url, "http://admin");
        const path = url.pathname;
        if (path === "/cache/" || path === "/cache") {
          if (req.method !== "GET") {
            throw new AdminError("method_not_allowed", `method not allowed: ${req.method}`);
          }
          return Response.json(liveStores().map((s) => s.stats()));
        }
        if (path === "/cache/entries") {
          if (req.method !== "GET") {
            throw new AdminError("method_not_allowed", `method not allowed: ${req.method}`);
          }
          const raw = url.searchParams.get("limit");
          const limit = raw === null ? 1000 : Number(raw);
          if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) {
            throw new AdminError("bad_request", "limit must be a whole number from 1 to 100000");
          }
          const { currentAge, freshnessLeft } = await import("./entry.ts");
          const now = Date.now();
          const out: unknown[] = [];
          for (const store of liveStores()) {
            for (const [, list] of store.all()) {
              for (const e of list) {
                if (out.length >= limit) break;
                out.push({
                  key: e.key,
                  url: e.url,
                  method: e.method,
                  status: e.status,
                  size: e.size,
                  age: Math.floor(currentAge(e, now) / 1000),
                  ttl: Math.floor(freshnessLeft(e, now) / 1000),
                  vary: Object.fromEntries(e.vary.map((n, i) => [n, e.varyValues[i]])),
                });
              }
            }
          }
          return new Response(JSON.stringify(out), { headers: JSON_HEADERS });
        }
        if (path === "/cache/purge") {
          if (req.method !== "POST") {
            throw new AdminError("method_not_allowed", `method not allowed: ${req.method}`);
          }
          const o = await purgeRequest(req);
          let re: RegExp | null = null;
          if (typeof o.regex === "string") {
            try {
              re = new RegExp(o.regex);
            } catch (e) {
              throw new AdminError("bad_request", `invalid regex: ${(e as Error).message}`);
            }
          }
          const keys = new Set((o.keys as string[] | undefined) ?? []);
          const urls = new Set((o.urls as string[] | undefined) ?? []);
          let purged = 0;
          for (const store of liveStores()) {
            purged += store.purge((e) =>
              o.all === true || keys.has(e.key) || urls.has(e.url) ||
              (re !== null && re.test(e.key))
            );
          }
          return new Response(JSON.stringify({ purged }), { headers: JSON_HEADERS });
        }
        throw new AdminError("not_found", `resource not found: ${path}`);
      },
    });
    return {};
  },
};
