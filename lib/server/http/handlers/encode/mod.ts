/**
 * `http.handlers.encode`: compresses responses with the best encoding the client accepts
 * among `encodings` (`gzip` with `level`; `zstd` with `level` and `checksum`, the frame's
 * XXH64 trailer, on unless `false`; `prefer` breaks q-value ties) when the response matches
 * `match` (default: text-like content types) and is longer than `minimum_length` (default
 * 512). Engaging sets `Content-Encoding`, adds `Vary: Accept-Encoding`, drops
 * `Content-Length` and `Accept-Ranges`. The config is {@linkcode EncodeConfig} (`config.ts`);
 * the Gatehousefile syntax (`encode`, the `gzip` and `zstd` encoders) is `caddyfile.ts` and the
 * writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { RequestContext } from "../../context.ts";
import {
  acceptedEncodings,
  compressor,
  compressSync,
  type EncodingName,
  gzipOnce,
  loadZlib,
  needsZlib,
} from "../../encode.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileResponseMatcher, type ResponseMatcher } from "../../response_matcher.ts";
import { decodeEncode, DEFAULT_MATCH, type EncodeConfig, type EncodingsConfig } from "./config.ts";

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

/** An encode handler. */
export class Encode implements HttpHandler {
  #encodings = new Map<string, EncoderOptions>();
  #prefer: string[];
  #min: number;
  #matcher: ResponseMatcher;
  #cache = new CompressedLRU(CACHE_BYTES);

  /** Compiles a decoded config. */
  constructor(config: EncodeConfig) {
    const encodings = config.encodings ?? {};
    for (const name of Object.keys(encodings) as (keyof EncodingsConfig)[]) {
      if (name === "zstd") {
        const { level, checksum } = encodings.zstd!;
        const l = typeof level === "string" ? ZSTD_LEVELS[level] : level;
        this.#encodings.set("zstd", { level: l, checksum });
      } else if (name === "gzip") this.#encodings.set("gzip", { level: encodings.gzip!.level });
      else this.#encodings.set(name, {});
    }
    this.#prefer = config.prefer ?? [];
    this.#min = config.minimum_length || 512;
    this.#matcher = compileResponseMatcher(config.match ?? DEFAULT_MATCH);
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    let chosen: string | undefined;
    if (this.#encodings.size) {
      const accepted = acceptedEncodings(
        c.headers.get("accept-encoding"),
        this.#prefer,
        c.headers.get("sec-websocket-key"),
      );
      chosen = accepted.find((e) => this.#encodings.has(e));
    }
    const res = await next(c);
    if (!chosen || res.body === null || c.method === "HEAD") return res;
    if (res.headers.has("content-encoding")) return res;
    if (res.status < 200 || res.status === 204 || res.status === 304) return res;
    const cl = res.headers.get("content-length");
    let body: ReadableStream<Uint8Array> = res.body;
    if (cl !== null) {
      const length = Number(cl);
      if (length <= this.#min) return res;
      if (length <= WHOLE_BODY && this.#matcher.match(res.status, res.headers)) {
        return this.#compressWhole(c, res, chosen, length);
      }
    } else {
      // Like Caddy: the first write decides when the length is unknown.
      const reader = body.getReader();
      const first = await reader.read();
      body = prepend(first, reader);
      if (!first.value || first.value.byteLength <= this.#min) return withBody(res, body);
    }
    if (!this.#matcher.match(res.status, res.headers)) return withBody(res, body);
    return this.#compressStream(res, body, chosen);
  }

  /**
   * A body of known, moderate size: compressed in one call. Responses with a strong ETag (a
   * file's version) are compressed once and remembered.
   */
  async #compressWhole(
    c: RequestContext,
    res: Response,
    chosen: string,
    length: number,
  ): Promise<Response> {
    const etag = res.status === 200 ? res.headers.get("etag") : null;
    const key = etag && !etag.startsWith("W/")
      ? `${chosen}|${c.host}|${c.rawPath}|${etag}|${length}`
      : null;
    const source = key ? signature(res) : "";
    const known = key ? this.#cache.get(key) : undefined;
    if (known && known.source === source) {
      await res.body?.cancel();
      return known.response.clone();
    }
    const data = new Uint8Array(await res.arrayBuffer());
    const { level, checksum } = this.#encodings.get(chosen)!;
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
    this.#cache.set(key, { response: made, source, size: out.length });
    return made.clone();
  }

  /** A body of unknown or large size: compressed as it streams. */
  async #compressStream(
    res: Response,
    body: ReadableStream<Uint8Array>,
    chosen: string,
  ): Promise<Response> {
    const { level, checksum } = this.#encodings.get(chosen)!;
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
  }
}

/** The stream of a body whose first read is done: that chunk, then the rest. */
function prepend(
  first: ReadableStreamReadResult<Uint8Array>,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  const head = first.value;
  return new ReadableStream<Uint8Array>({
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
}

/** `res` with another body (the same status and header fields). */
function withBody(res: Response, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** Registry entry. */
export const encodeModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.encode",
  create: (config) => new Encode(decodeEncode(config)),
};
