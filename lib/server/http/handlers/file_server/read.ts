/**
 * Reading files for `file_server`: whole small files in one synchronous call, ranges as
 * streams, whole in-memory files as response bodies.
 *
 * @module
 */
import type { CachedFile } from "./file_cache.ts";
import { HandlerError, withoutStacks } from "../../errors.ts";

/** Files up to this size are read in one synchronous call (a thread-pool hop costs more). */
export const SMALL_FILE = 128 * 1024;
const CHUNK = 256 * 1024;

/** A stream of `length` bytes from `start`, read synchronously chunk by chunk. */
export function fileStream(
  path: string,
  start: number,
  length: number,
): ReadableStream<Uint8Array> {
  // Local file reads are short; synchronous reads avoid a thread-pool round trip per chunk.
  let file: Deno.FsFile | null = null;
  let left = length;
  const close = () => {
    try {
      file?.close();
    } catch { /* closed */ }
    file = null;
  };
  return new ReadableStream<Uint8Array>({
    pull(ctl) {
      try {
        if (!file) {
          file = Deno.openSync(path, { read: true });
          if (start) file.seekSync(start, Deno.SeekMode.Start);
        }
        if (left <= 0) {
          close();
          ctl.close();
          return;
        }
        const buf = new Uint8Array(Math.min(left, CHUNK));
        const n = file.readSync(buf);
        if (n === null) {
          close();
          ctl.close();
          return;
        }
        left -= n;
        ctl.enqueue(n === buf.length ? buf : buf.subarray(0, n));
      } catch (e) {
        close();
        ctl.error(e);
      }
    },
    cancel: close,
  });
}

/**
 * The file from `start` to its end as the file's own readable stream: Deno's server reads the
 * file and writes the socket in native code, with no JavaScript per chunk (cheaper than
 * {@linkcode fileStream} for large files). It stops at the end of the file, not at a length.
 */
export function fileTail(path: string, start: number): ReadableStream<Uint8Array> {
  const file = Deno.openSync(path, { read: true });
  try {
    if (start) file.seekSync(start, Deno.SeekMode.Start);
  } catch (e) {
    file.close();
    throw e;
  }
  return file.readable;
}

/**
 * Reads a file whose size is known (open, read, close) and stats the open file afterwards,
 * so a caller can tell whether it changed during the read.
 */
export function readExact(
  path: string,
  size: number,
): { data: Uint8Array; after: Deno.FileInfo | null } {
  const f = Deno.openSync(path, { read: true });
  try {
    const buf = new Uint8Array(size);
    let off = 0;
    while (off < size) {
      const n = f.readSync(buf.subarray(off));
      if (n === null || n === 0) break;
      off += n;
    }
    let after: Deno.FileInfo | null = null;
    try {
      after = f.statSync();
    } catch { /* unknown: not cached */ }
    return { data: off === size ? buf : buf.subarray(0, off), after };
  } finally {
    f.close();
  }
}

/**
 * The body for a whole in-memory file. Large ones go out as a one-chunk stream: Deno's server
 * writes the chunk as is, where a `Uint8Array` body is first copied (a zero-filled allocation
 * plus a copy, ~30% of the CPU of a 1 MiB response). The chunk is not detached by the server.
 */
export function bodyOf(data: Uint8Array): Uint8Array | ReadableStream<Uint8Array> {
  if (data.length <= SMALL_FILE) return data;
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      ctl.enqueue(data);
      ctl.close();
    },
  });
}

/** The headers of a whole cached file, as serveContent would set them. */
export function fastHeaders(f: CachedFile): [string, string][] {
  const hs: [string, string][] = [["etag", f.etag]];
  if (f.type) hs.push(["content-type", f.type]);
  if (f.lastModified) hs.push(["last-modified", f.lastModified]);
  hs.push(["accept-ranges", "bytes"], ["content-length", f.length]);
  return hs;
}

/** True when a request has no conditional or range header. */
export function plainRequest(h: Headers): boolean {
  return !h.has("range") && !h.has("if-none-match") && !h.has("if-modified-since") &&
    !h.has("if-match") && !h.has("if-unmodified-since");
}

/**
 * The ETag a sidecar file `<path><ext>` holds (the first of `exts` that exists), newlines
 * removed; null when there is none (`etag_file_extensions`).
 */
export function etagFromSidecar(path: string, exts: readonly string[]): string | null {
  for (const ext of exts) {
    try {
      return withoutStacks(() => Deno.readTextFileSync(path + ext)).replaceAll("\n", "");
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw new HandlerError(500, `cannot read etag from file ${path + ext}`, "file_server", e);
    }
  }
  return null;
}
