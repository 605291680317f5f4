/**
 * Where envelope images and scans live: a small blob interface, a local-directory store (the
 * default) and an in-memory one.
 *
 * @module
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writePrivateFile } from "../server/storage/private_files.ts";

/** A store of immutable files by key (`covers/1-abc.png`). */
export interface BlobStore {
  /** Stores bytes under a key. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Reads a key's bytes, or null. */
  get(key: string): Promise<Uint8Array | null>;
  /** Deletes a key (no error when missing). */
  delete(key: string): Promise<void>;
}

const KEY = /^[a-z]+\/[A-Za-z0-9_-]+\.[a-z0-9]+$/;

/** Checks a blob key's shape (`dir/name.ext`, no traversal). */
export function isBlobKey(key: string): boolean {
  return KEY.test(key);
}

/**
 * Blobs as files under a directory, readable by the process's user only: files 0600, the
 * directories it makes 0700 (an existing `dir` keeps its mode).
 *
 * @example
 * ```ts
 * import { LocalBlobStore } from "./blobs.ts";
 * const blobs = new LocalBlobStore(await Deno.makeTempDir());
 * await blobs.put("covers/1-a.png", new Uint8Array([1, 2]));
 * console.log(await blobs.get("covers/1-a.png")); // Uint8Array(2) [ 1, 2 ]
 * ```
 */
export class LocalBlobStore implements BlobStore {
  /** Root directory. */
  readonly dir: string;

  /** Stores under `dir` (created on first write). */
  constructor(dir: string) {
    this.dir = dir;
  }

  #path(key: string): string {
    if (!isBlobKey(key)) throw new Error("invalid blob key");
    return join(this.dir, key);
  }

  /** Writes a file, 0600 whatever the umask (the directories it makes 0700). */
  async put(key: string, bytes: Uint8Array): Promise<void> {
    await writePrivateFile(this.#path(key), bytes);
  }

  /** Reads a file, or null when missing. */
  async get(key: string): Promise<Uint8Array | null> {
    try {
      return new Uint8Array(await readFile(this.#path(key)));
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT") return null;
      throw err;
    }
  }

  /** Removes a file. */
  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }
}

/**
 * Blobs in memory (tests, sandboxes).
 *
 * @example
 * ```ts
 * import { MemoryBlobStore } from "./blobs.ts";
 * const blobs = new MemoryBlobStore();
 * await blobs.put("scans/1-a.pdf", new Uint8Array([37]));
 * ```
 */
export class MemoryBlobStore implements BlobStore {
  #files = new Map<string, Uint8Array>();

  /** Keeps a copy. */
  put(key: string, bytes: Uint8Array): Promise<void> {
    if (!isBlobKey(key)) return Promise.reject(new Error("invalid blob key"));
    this.#files.set(key, bytes.slice());
    return Promise.resolve();
  }

  /** Returns the copy, or null. */
  get(key: string): Promise<Uint8Array | null> {
    return Promise.resolve(this.#files.get(key) ?? null);
  }

  /** Forgets the key. */
  delete(key: string): Promise<void> {
    this.#files.delete(key);
    return Promise.resolve();
  }
}

/** Content type by a blob key's extension. */
export function contentTypeOf(key: string): string {
  const ext = key.slice(key.lastIndexOf(".") + 1);
  return {
    png: "image/png",
    jpg: "image/jpeg",
    jpeg: "image/jpeg",
    webp: "image/webp",
    svg: "image/svg+xml",
    pdf: "application/pdf",
  }[ext] ?? "application/octet-stream";
}
