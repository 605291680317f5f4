/**
 * The disk storage (`simplefs`): each entry is two files in the storage's directory,
 * `<id>.body` (the body as received, written while it streams to the client, so a large
 * answer never sits in memory) and `<id>.meta` (the entry's fields and times, JSON). The index
 * (keys, variants, fields, times) is in memory; bodies are read from their file for each
 * answer. An entry's files are written under temporary names and renamed when complete, so a
 * crash leaves no half entry; at start the directory's entries are read back (those past
 * `keepUntil` deleted), so the cache outlives restarts. Only files named by this storage
 * (`*.meta`, `*.body`, `*.tmp` with a 32-hex-digit id) are ever deleted.
 *
 * @module
 */
import type { BodyRef, Entry } from "./entry.ts";
import { type BodySink, CacheStore, type StoreStats } from "./store.ts";

/** `<id>.meta`, `<id>.body`, and their temporary names (`<id>.body.tmp`, `<id>.meta.<n>.tmp`). */
const ID = /^([0-9a-f]{32})\.(meta|body)(\.(?:[0-9a-f]{8}\.)?tmp)?$/;

/** Bodies up to this size are read whole for an answer; larger ones are streamed. */
const SMALL_BODY = 256 * 1024;

function newId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

class FileSink implements BodySink {
  readonly #dir: string;
  readonly #id = newId();
  #file: Promise<Deno.FsFile> | null = null;
  #failed = false;
  size = 0;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get #tmp(): string {
    return `${this.#dir}/${this.#id}.body.tmp`;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.size += chunk.length;
    if (this.#failed) return;
    try {
      const f = await (this.#file ??= Deno.open(this.#tmp, {
        write: true,
        create: true,
        truncate: true,
        mode: 0o600,
      }));
      let off = 0;
      while (off < chunk.length) off += await f.write(chunk.subarray(off));
    } catch {
      this.#failed = true;
    }
  }

  async finish(): Promise<BodyRef> {
    const f = await (this.#file ??= Deno.open(this.#tmp, {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    }));
    f.close();
    if (this.#failed) {
      await Deno.remove(this.#tmp).catch(() => {});
      throw new Error("writing the cached body failed");
    }
    const path = `${this.#dir}/${this.#id}.body`;
    await Deno.rename(this.#tmp, path);
    return { kind: "file", path, size: this.size };
  }

  abort(): void {
    this.#failed = true;
    const f = this.#file;
    this.#file = null;
    f?.then((file) => file.close()).catch(() => {}).finally(() =>
      Deno.remove(this.#tmp).catch(() => {})
    );
  }
}

/** The entry as a `.meta` file holds it. */
type Meta = Omit<Entry, "body"> & { v: 1; id: string; bodySize: number };

/** The disk storage (see the module documentation). */
export class DiskStore extends CacheStore {
  readonly kind = "disk";
  /** Its directory. */
  readonly dir: string;
  #loading = false;

  private constructor(dir: string, maxEntries: number, maxBytes: number) {
    super(maxEntries, maxBytes);
    this.dir = dir;
  }

  /** Opens the storage in `dir` (made if missing) and reads back the entries it holds. */
  static async open(dir: string, maxEntries: number, maxBytes: number): Promise<DiskStore> {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const real = await Deno.realPath(dir);
    const s = new DiskStore(real, maxEntries, maxBytes);
    s.#loading = true;
    try {
      await s.#load();
    } finally {
      s.#loading = false;
    }
    return s;
  }

  async #load(): Promise<void> {
    const metas: Meta[] = [];
    const bodies = new Set<string>();
    const stray: string[] = [];
    for await (const f of Deno.readDir(this.dir)) {
      const m = ID.exec(f.name);
      if (!m || !f.isFile) continue;
      if (m[3]) stray.push(f.name);
      else if (m[2] === "body") bodies.add(m[1]);
      else if (m[2] === "meta") {
        try {
          const meta = JSON.parse(await Deno.readTextFile(`${this.dir}/${f.name}`)) as Meta;
          if (meta.v === 1) metas.push(meta);
          else stray.push(f.name);
        } catch {
          stray.push(f.name);
        }
      }
    }
    const now = Date.now();
    metas.sort((a, b) => a.responseTime - b.responseTime);
    const kept = new Set<string>();
    for (const meta of metas) {
      const id = meta.id;
      if (!bodies.has(id) || meta.keepUntil < now) {
        stray.push(`${id}.meta`);
        continue;
      }
      const { v: _v, id: _id, bodySize, ...rest } = meta;
      const e: Entry = {
        ...rest,
        body: { kind: "file", path: `${this.dir}/${id}.body`, size: bodySize },
      };
      if (this.put(e)) kept.add(id);
    }
    for (const id of bodies) if (!kept.has(id)) stray.push(`${id}.body`);
    await Promise.all(stray.map((n) => Deno.remove(`${this.dir}/${n}`).catch(() => {})));
  }

  sink(): BodySink {
    return new FileSink(this.dir);
  }

  async body(e: Entry): Promise<Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null> {
    if (e.body.kind !== "file") return null;
    try {
      // a small body in one read; a large one streamed from the file
      if (e.body.size <= SMALL_BODY) return await Deno.readFile(e.body.path);
      return (await Deno.open(e.body.path, { read: true })).readable;
    } catch {
      this.remove(e);
      return null;
    }
  }

  protected release(e: Entry): void {
    if (e.body.kind !== "file") return;
    const base = e.body.path.slice(0, -".body".length);
    Deno.remove(e.body.path).catch(() => {});
    Deno.remove(`${base}.meta`).catch(() => {});
  }

  discard(body: BodyRef): void {
    if (body.kind === "file") Deno.remove(body.path).catch(() => {});
  }

  protected persist(e: Entry): void {
    // entries read back at start are already on disk
    if (e.body.kind !== "file" || this.#loading) return;
    const base = e.body.path.slice(0, -".body".length);
    const { body, ...rest } = e;
    const id = base.slice(base.lastIndexOf("/") + 1);
    const meta: Meta = { ...rest, v: 1, id, bodySize: body.kind === "file" ? body.size : 0 };
    const tmp = `${base}.meta.${newId().slice(0, 8)}.tmp`;
    Deno.writeTextFile(tmp, JSON.stringify(meta), { mode: 0o600 })
      .then(() => Deno.rename(tmp, `${base}.meta`))
      .catch(() => Deno.remove(tmp).catch(() => {}));
  }

  override stats(): StoreStats {
    return { ...super.stats(), path: this.dir };
  }
}
