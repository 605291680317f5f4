/**
 * A bounded in-memory cache of file contents and response header values for `file_server`.
 *
 * Every request still stats the file (one `statx`, which also follows symlinks); a cached
 * entry is used only when the file's identity is unchanged: device, inode, size, mtime and
 * ctime. Any write, truncate, replace (rename over), `touch` or swapped symlink changes one of
 * them, so the next request reads the file again. Files modified less than `RACY_MS` ago are
 * never cached (their timestamps could still hide a second write within the same
 * millisecond), and a read is kept only if the open file's own stat after the read matches
 * the stat before it. Bounds: at most `maxBytes` of contents (least recently used first
 * out), files larger than `maxFileBytes` are never held, at most `maxEntries` entries.
 *
 * @module
 */

/** Files changed this recently (mtime or ctime) are read from disk every time. */
export const RACY_MS = 2000;

/** What identifies one version of a file. */
export interface FileIdentity {
  /** Device. */
  dev: number;
  /** Inode (0 when unknown). */
  ino: number;
  /** Size in bytes. */
  size: number;
  /** Modification time in ms (0 when unknown). */
  mtime: number;
  /** Status change time in ms (0 when unknown). */
  ctime: number;
}

/** A cached file: its identity, contents and precomputed header values. */
export interface CachedFile extends FileIdentity {
  /** The whole file. Never handed out in a way that can detach it. */
  data: Uint8Array;
  /** `ETag` value. */
  etag: string;
  /** `Last-Modified` value, or null when the mtime is unknown. */
  lastModified: string | null;
  /** `Content-Length` value. */
  length: string;
  /** Content type by the path's extension ("" for none; undefined when not computed). */
  type?: string;
  /** A prepared 200 response (with `Server`) for small files, cloned for each request. */
  response?: Response;
}

/** The identity of a stat result. */
export function identityOf(info: Deno.FileInfo): FileIdentity {
  return {
    dev: info.dev ?? 0,
    ino: info.ino ?? 0,
    size: info.size,
    mtime: info.mtime?.getTime() ?? 0,
    ctime: info.ctime?.getTime() ?? 0,
  };
}

/** True when the stat result describes the same version of the file as `id`. */
export function sameFile(id: FileIdentity, info: Deno.FileInfo): boolean {
  return id.size === info.size && id.ino === (info.ino ?? 0) && id.dev === (info.dev ?? 0) &&
    id.mtime === (info.mtime?.getTime() ?? 0) && id.ctime === (info.ctime?.getTime() ?? 0);
}

/** A least-recently-used map from file path to cached contents, bounded in bytes. */
export class FileCache {
  #map = new Map<string, CachedFile>();
  #bytes = 0;

  constructor(
    readonly maxBytes: number,
    readonly maxFileBytes: number,
    readonly maxEntries = 4096,
  ) {}

  /** True when a path has an entry (valid or not). */
  has(path: string): boolean {
    return this.#map.has(path);
  }

  /** The entry for `path` if `info` (a fresh stat of it) shows the same file; else drops it. */
  get(path: string, info: Deno.FileInfo): CachedFile | undefined {
    const e = this.#map.get(path);
    if (e === undefined) return undefined;
    if (!sameFile(e, info)) {
      this.delete(path);
      return undefined;
    }
    this.#map.delete(path);
    this.#map.set(path, e);
    return e;
  }

  /** True when a file of this size and age may be cached. */
  admits(info: Deno.FileInfo, now: number): boolean {
    if (info.size > this.maxFileBytes || info.size > this.maxBytes) return false;
    const m = info.mtime?.getTime();
    const c = info.ctime?.getTime();
    if (m === undefined || c === undefined) return false;
    return now - Math.max(m, c) >= RACY_MS;
  }

  /** Stores an entry, evicting the least recently used ones beyond the bounds. */
  set(path: string, entry: CachedFile): void {
    this.delete(path);
    this.#map.set(path, entry);
    this.#bytes += entry.data.length;
    for (const [k, v] of this.#map) {
      if (this.#bytes <= this.maxBytes && this.#map.size <= this.maxEntries) break;
      this.#map.delete(k);
      this.#bytes -= v.data.length;
    }
  }

  /** Drops the entry for `path`. */
  delete(path: string): void {
    const e = this.#map.get(path);
    if (e === undefined) return;
    this.#map.delete(path);
    this.#bytes -= e.data.length;
  }

  /** Bytes of contents held. */
  get bytes(): number {
    return this.#bytes;
  }
}
