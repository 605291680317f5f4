/**
 * Compression for `encode`: gzip through the platform's `CompressionStream` (or `node:zlib`
 * for an explicit level and for whole bodies compressed per request), zstd and brotli through
 * `node:zlib`, each exposed as a web `TransformStream` or a whole-buffer call. `node:zlib`
 * (several MiB of runtime) loads only when one of its uses comes up.
 *
 * @module
 */
import type zlibType from "node:zlib";

type Zlib = typeof zlibType;
let zlib: Zlib;

/**
 * Loads `node:zlib` (a few MiB of runtime) the first time an encoder or precompressed-free
 * handler needs it; call and await before using the functions below.
 *
 * @example
 * ```ts
 * import { loadZlib } from "./encode.ts";
 * await loadZlib();
 * ```
 */
export async function loadZlib(): Promise<void> {
  zlib ??= (await import("node:zlib")).default;
}

/** True when `compressor(name, level)` needs `loadZlib()` first. */
export function needsZlib(name: EncodingName, level?: number): boolean {
  return zlib === undefined && (name !== "gzip" || level !== undefined);
}

/**
 * Compresses a whole buffer with the platform's gzip (`CompressionStream`, no `node:zlib`):
 * for bodies compressed once and remembered, where a stream's fixed cost does not matter.
 *
 * @example
 * ```ts
 * import { gzipOnce } from "./encode.ts";
 * const gz = await gzipOnce(new TextEncoder().encode("hello"));
 * ```
 */
export async function gzipOnce(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return await new Response(stream).bytes();
}

/** Encodings this server can produce. */
export type EncodingName = "gzip" | "zstd" | "br";

function fromNode(
  z: zlibType.Gzip | zlibType.BrotliCompress | zlibType.ZstdCompress,
): TransformStream<Uint8Array, Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended: () => void;
  let failed: (e: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    ended = res;
    failed = rej;
  });
  const readable = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  z.on(
    "data",
    (d: Uint8Array) => controller.enqueue(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)),
  );
  z.on("end", () => {
    controller.close();
    ended();
  });
  z.on("error", (e: Error) => {
    controller.error(e);
    failed(e);
  });
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      return new Promise<void>((res) => {
        if (z.write(chunk)) res();
        else z.once("drain", () => res());
      });
    },
    close() {
      z.end();
      return done;
    },
    abort() {
      z.destroy();
    },
  });
  return { readable, writable } as TransformStream<Uint8Array, Uint8Array>;
}

/** zstd's parameters: the level when given, and the frame checksum (on unless `false`). */
function zstdParams(level: number | undefined, checksum: boolean | undefined) {
  const params: Record<number, number> = {
    [zlib.constants.ZSTD_c_checksumFlag]: checksum === false ? 0 : 1,
  };
  if (level !== undefined) params[zlib.constants.ZSTD_c_compressionLevel] = level;
  return { params };
}

/**
 * A compressing TransformStream for an encoding; `level` as Caddy's (gzip 1-9, zstd levels
 * `fastest`/`default`/`better`/`best` or numbers); zstd frames end with their XXH64 checksum
 * unless `checksum` is false (Caddy's zstd library writes it by default).
 *
 * @example
 * ```ts
 * import { compressor } from "./encode.ts";
 * const body = new Response("hello").body!.pipeThrough(compressor("gzip"));
 * ```
 */
export function compressor(
  name: EncodingName,
  level?: number,
  checksum?: boolean,
): TransformStream<Uint8Array, Uint8Array> {
  if (name === "gzip") {
    if (level === undefined) {
      return new CompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>;
    }
    return fromNode(zlib.createGzip({ level }));
  }
  if (name === "zstd") {
    return fromNode(zlib.createZstdCompress(zstdParams(level, checksum)));
  }
  return fromNode(
    zlib.createBrotliCompress(
      level === undefined ? {} : { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level } },
    ),
  );
}

/** Caddy's default gzip level. */
export const DEFAULT_GZIP_LEVEL = 5;

/**
 * Compresses a whole buffer at once (bodies of known, moderate size): one synchronous call
 * costs a third of a stream pipeline for a 2 KiB body. Call `loadZlib()` first.
 *
 * @example
 * ```ts
 * import { compressSync } from "./encode.ts";
 * compressSync("gzip", new TextEncoder().encode("hello"));
 * ```
 */
export function compressSync(
  name: EncodingName,
  data: Uint8Array,
  level?: number,
  checksum?: boolean,
): Uint8Array {
  if (name === "gzip") return zlib.gzipSync(data, { level: level ?? DEFAULT_GZIP_LEVEL });
  if (name === "zstd") {
    return zlib.zstdCompressSync(data, zstdParams(level, checksum));
  }
  return zlib.brotliCompressSync(
    data,
    level === undefined ? {} : { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level } },
  );
}

/**
 * Orders the encodings of `Accept-Encoding` by q-value, ties broken by `prefer` (Caddy's
 * `AcceptedEncodings`); WebSocket handshakes accept only identity.
 *
 * @example
 * ```ts
 * import { acceptedEncodings } from "./encode.ts";
 * acceptedEncodings("gzip, zstd;q=0.9", [], null); // ["gzip", "zstd"]
 * ```
 */
export function acceptedEncodings(
  header: string | null,
  prefer: readonly string[],
  websocketKey: string | null,
): string[] {
  if (!header) return [];
  const prefs: { name: string; q: number; order: number; idx: number }[] = [];
  let idx = 0;
  for (const part of header.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = rawName.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const t = p.trim().toLowerCase();
      if (t.startsWith("q=")) {
        const v = Number(t.slice(2));
        if (!Number.isNaN(v) && v >= 0 && v <= 1) q = v;
      }
    }
    if (q < 0.00001) continue;
    if (websocketKey && name !== "identity") continue;
    const pi = prefer.indexOf(name);
    prefs.push({ name, q, order: pi < 0 ? -1 : prefer.length - pi, idx: idx++ });
  }
  prefs.sort((a, b) =>
    Math.abs(a.q - b.q) < 0.00001 ? (b.order - a.order) || (a.idx - b.idx) : b.q - a.q
  );
  return prefs.map((p) => p.name);
}
