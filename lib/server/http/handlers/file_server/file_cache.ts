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
  /** A prepared 200 response (with `Server`), cloned for each request; see `FileCache.prepare`. */
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

/** Bytes an entry holds: its contents, twice once a prepared response has its own copy. */
function held(e: CachedFile): number {
  return e.response ? e.data.length * 2 : e.data.length;
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
    this.#bytes += held(entry);
    this.#evict();
  }

  /**
   * The entry's prepared response, made on first use. `Response` copies a byte body when it
   * is made, so the copy counts against the budget; a clone shares it (no copy, no stream),
   * which is the cheapest way Deno sends bytes it already holds.
   */
  prepare(path: string, entry: CachedFile, make: () => Response): Response {
    if (entry.response) return entry.response;
    const res = entry.response = make();
    if (this.#map.get(path) === entry) {
      this.#bytes += entry.data.length;
      this.#evict();
    }
    return res;
  }

  #evict(): void {
    for (const [k, v] of this.#map) {
      if (this.#bytes <= this.maxBytes && this.#map.size <= this.maxEntries) break;
      this.#map.delete(k);
      this.#bytes -= held(v);
    }
  }

  /** Drops the entry for `path`. */
  delete(path: string): void {
    const e = this.#map.get(path);
    if (e === undefined) return;
    this.#map.delete(path);
    this.#bytes -= held(e);
  }

  /** Bytes of contents held. */
  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * Paths known to be missing, each remembered with the identity of its directory: adding,
 * removing or renaming an entry changes the directory's mtime and ctime, so while one stat of
 * the directory shows it unchanged the path is still missing. This answers a repeated 404
 * with one successful stat instead of a failed one (Deno turns a failed stat into a thrown
 * error, which costs several times more). Directories changed less than `RACY_MS` ago are not
 * trusted; at most `maxEntries` paths are held (oldest out first).
 */
export class AbsentPaths {
  #map = new Map<string, { dir: string; id: FileIdentity }>();

  constructor(readonly maxEntries = 4096) {}

  /** True when `path` was recorded missing and its directory is unchanged since. */
  check(path: string): boolean {
    const e = this.#map.get(path);
    if (e === undefined) return false;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(e.dir);
    } catch {
      this.#map.delete(path);
      return false;
    }
    if (!info.isDirectory || !sameFile(e.id, info)) {
      this.#map.delete(path);
      return false;
    }
    return true;
  }

  /** Records that `path` is missing (a stat just said so), when its directory allows. */
  remember(path: string, now: number): void {
    const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
    if (cut < 0) return;
    const dir = path.slice(0, cut) || "/";
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(dir);
    } catch {
      return;
    }
    if (!info.isDirectory) return;
    const m = info.mtime?.getTime();
    const c = info.ctime?.getTime();
    if (m === undefined || c === undefined || now - Math.max(m, c) < RACY_MS) return;
    this.#map.delete(path);
    this.#map.set(path, { dir, id: identityOf(info) });
    if (this.#map.size > this.maxEntries) {
      this.#map.delete(this.#map.keys().next().value!);
    }
  }

  /** Forgets `path`. */
  delete(path: string): void {
    this.#map.delete(path);
  }

  /** Number of paths held. */
  get size(): number {
    return this.#map.size;
  }
}
