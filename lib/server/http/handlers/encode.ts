/**
 * `encode`: compresses responses with the best encoding the client accepts among
 * `encodings` (`gzip` with `level`; `zstd` with `level` and `checksum`, the frame's XXH64
 * trailer, on unless `false`; `prefer` breaks q-value ties) when the response matches
 * `match` (default: text-like content types) and is longer than `minimum_length` (default
 * 512). Engaging sets `Content-Encoding`, adds `Vary: Accept-Encoding`, drops
 * `Content-Length` and `Accept-Ranges`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import {
  asObject,
  checkFields,
  optBool,
  optNumber,
  optObject,
  optStrings,
  type Raw,
} from "../config.ts";
import {
  acceptedEncodings,
  compressor,
  compressSync,
  type EncodingName,
  gzipOnce,
  loadZlib,
  needsZlib,
} from "../encode.ts";
import { ConfigError } from "../../config/error.ts";
import type { HttpHandler } from "../handler.ts";
import { parseResponseMatcher } from "../header_ops.ts";

const DEFAULT_MATCH: Raw = {
  headers: {
    "Content-Type": [
      "text/*",
      "application/json*",
      "application/javascript*",
      "application/xhtml+xml*",
      "application/atom+xml*",
      "application/rss+xml*",
      "image/svg+xml*",
    ],
  },
};

/** Bodies of known length up to this size are compressed in one synchronous call. */
const WHOLE_BODY = 256 * 1024;

/** Budget of the compressed-body cache per encode handler. */
const CACHE_BYTES = 16 * 1024 * 1024;

/** A compressed response remembered for one version of a body (keyed by its strong ETag). */
interface Compressed {
  /** The response, cloned for each request (a clone shares the body bytes). */
  response: Response;
  /** Status and header list of the response it was made from. */
  source: string;
  /** Compressed size. */
  size: number;
}

/** Status and header list of a response, to tell whether a remembered result still fits. */
function signature(res: Response): string {
  let s = `${res.status} ${res.statusText}`;
  for (const [k, v] of res.headers) s += `\n${k}: ${v}`;
  return s;
}

/** A least-recently-used map of compressed responses bounded by their total size. */
class CompressedLRU {
  #map = new Map<string, Compressed>();
  #bytes = 0;
  constructor(readonly budget: number) {}
  get(key: string): Compressed | undefined {
    const v = this.#map.get(key);
    if (v) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: Compressed): void {
    if (value.size > this.budget / 4) return;
    const old = this.#map.get(key);
    if (old) this.#bytes -= old.size;
    this.#map.delete(key);
    this.#map.set(key, value);
    this.#bytes += value.size;
    for (const [k, v] of this.#map) {
      if (this.#bytes <= this.budget) break;
      this.#map.delete(k);
      this.#bytes -= v.size;
    }
  }
}

const ZSTD_LEVELS: Record<string, number> = { fastest: 1, default: 3, better: 7, best: 11 };

/** One encoding's settings: its level, and for zstd whether frames carry their checksum. */
interface EncoderOptions {
  level?: number;
  checksum?: boolean;
}

/** Registry entry. */
export const encodeModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.encode",
  create(config) {
    const where = "http.handlers.encode";
    checkFields(config, ["handler", "encodings", "prefer", "minimum_length", "match"], where);
    const encodings = new Map<string, EncoderOptions>();
    for (const [name, raw] of Object.entries(optObject(config, "encodings", where) ?? {})) {
      const o = raw ? asObject(raw, `${where}.encodings.${name}`) : {};
      if (name === "gzip") {
        checkFields(o, ["level"], `${where}.encodings.gzip`);
        encodings.set("gzip", { level: optNumber(o, "level", where) });
      } else if (name === "zstd") {
        const w = `${where}.encodings.zstd`;
        checkFields(o, ["level", "checksum"], w);
        const l = o.level;
        encodings.set("zstd", {
          level: typeof l === "string" ? ZSTD_LEVELS[l] : typeof l === "number" ? l : undefined,
          checksum: optBool(o, "checksum", w),
        });
      } else if (name === "br") {
        encodings.set("br", {});
      } else {
        throw new ConfigError("invalid_config", `${where}: unknown encoding ${name}`);
      }
    }
    const prefer = optStrings(config, "prefer", where) ?? [];
    const min = optNumber(config, "minimum_length", where) || 512;
    const matcher = parseResponseMatcher(
      optObject(config, "match", where) ?? DEFAULT_MATCH,
      `${where}.match`,
    );

    const cache = new CompressedLRU(CACHE_BYTES);
    return {
      async serveHTTP(c, next) {
        let chosen: string | undefined;
        if (encodings.size) {
          const accepted = acceptedEncodings(
            c.headers.get("accept-encoding"),
            prefer,
            c.headers.get("sec-websocket-key"),
          );
          chosen = accepted.find((e) => encodings.has(e));
        }
        const res = await next(c);
        if (!chosen || res.body === null || c.method === "HEAD") return res;
        if (res.headers.has("content-encoding")) return res;
        if (res.status < 200 || res.status === 204 || res.status === 304) return res;
        const cl = res.headers.get("content-length");
        let body: ReadableStream<Uint8Array> = res.body;
        if (cl !== null) {
          const length = Number(cl);
          if (length <= min) return res;
          if (length <= WHOLE_BODY && matcher.match(res.status, res.headers)) {
            // Known, moderate size: compress in one call. Responses with a strong ETag (a
            // file's version) are compressed once and remembered.
            const etag = res.status === 200 ? res.headers.get("etag") : null;
            const key = etag && !etag.startsWith("W/")
              ? `${chosen}|${c.host}|${c.rawPath}|${etag}|${length}`
              : null;
            const source = key ? signature(res) : "";
            const known = key ? cache.get(key) : undefined;
            if (known && known.source === source) {
              await res.body?.cancel();
              return known.response.clone();
            }
            const data = new Uint8Array(await res.arrayBuffer());
            const { level, checksum } = encodings.get(chosen)!;
            let out: Uint8Array;
            if (key && chosen === "gzip" && level === undefined) {
              // Compressed once per body version: the platform's gzip, no node:zlib.
              out = await gzipOnce(data);
            } else {
              await loadZlib();
              out = compressSync(chosen as EncodingName, data, level, checksum);
            }
            const h = new Headers(res.headers);
            h.set("content-length", String(out.length));
            h.set("content-encoding", chosen);
            h.append("vary", "Accept-Encoding");
            h.delete("accept-ranges");
            const made = new Response(out as BodyInit, {
              status: res.status,
              statusText: res.statusText,
              headers: h,
            });
            if (!key) return made;
            cache.set(key, { response: made, source, size: out.length });
            return made.clone();
          }
        } else {
          // Like Caddy: the first write decides when the length is unknown.
          const reader = body.getReader();
          const first = await reader.read();
          const head = first.value;
          const rest = new ReadableStream<Uint8Array>({
            start(ctl) {
              if (head) ctl.enqueue(head);
              if (first.done) ctl.close();
            },
            async pull(ctl) {
              const r = await reader.read();
              if (r.done) ctl.close();
              else ctl.enqueue(r.value);
            },
            cancel(reason) {
              return reader.cancel(reason);
            },
          });
          body = rest;
          if (!head || head.byteLength <= min) {
            return new Response(rest, {
              status: res.status,
              statusText: res.statusText,
              headers: res.headers,
            });
          }
        }
        if (!matcher.match(res.status, res.headers)) {
          return new Response(body, {
            status: res.status,
            statusText: res.statusText,
            headers: res.headers,
          });
        }
        const { level, checksum } = encodings.get(chosen)!;
        if (needsZlib(chosen as EncodingName, level)) await loadZlib();
        const h = new Headers(res.headers);
        h.delete("content-length");
        h.set("content-encoding", chosen);
        h.append("vary", "Accept-Encoding");
        h.delete("accept-ranges");
        return new Response(
          body.pipeThrough(compressor(chosen as EncodingName, level, checksum)),
          { status: res.status, statusText: res.statusText, headers: h },
        );
      },
    };
  },
};
