/**
 * `caddy.logging.writers.file`: appends to a file and rolls it by size, keeping a bounded
 * number of backups for a bounded number of days (lumberjack naming:
 * `name-2006-01-02T15-04-05.000.ext`, optionally gzipped).
 *
 * @module
 */
import { registerModule } from "../module.ts";
import type { LogWriter } from "./entry.ts";

/** Options of the file writer (Caddy's field names). */
export interface FileWriterOptions {
  /** Path of the log file. */
  filename: string;
  /** Rolling on (default true); `roll_disabled: true` turns it off too. */
  roll?: boolean;
  /** Caddy 2.6 spelling of `roll: false`. */
  roll_disabled?: boolean;
  /** Roll when the file would exceed this many megabytes (default 100; fractions allowed). */
  roll_size_mb?: number;
  /** Gzip rolled files (default true). */
  roll_gzip?: boolean;
  /** Use local time in backup names (default UTC). */
  roll_local_time?: boolean;
  /** Backups to keep (default 10). */
  roll_keep?: number;
  /** Days to keep backups (default 90). */
  roll_keep_days?: number;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

function stamp(d: Date, local: boolean): string {
  const g = local
    ? [
      d.getFullYear(),
      d.getMonth() + 1,
      d.getDate(),
      d.getHours(),
      d.getMinutes(),
      d.getSeconds(),
      d.getMilliseconds(),
    ]
    : [
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ];
  return `${g[0]}-${pad(g[1])}-${pad(g[2])}T${pad(g[3])}-${pad(g[4])}-${pad(g[5])}.${pad(g[6], 3)}`;
}

function split(filename: string): { dir: string; base: string; ext: string } {
  const slash = filename.lastIndexOf("/");
  const dir = slash >= 0 ? filename.slice(0, slash) || "/" : ".";
  const name = filename.slice(slash + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0
    ? { dir, base: name.slice(0, dot), ext: name.slice(dot) }
    : { dir, base: name, ext: "" };
}

/**
 * Checks that the log file could be opened, creating nothing: an existing file must open for
 * appending; a missing one needs its nearest existing ancestor to be a directory.
 */
function checkWritable(filename: string): void {
  try {
    Deno.openSync(filename, { append: true }).close();
    return;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new Error(`file log writer: cannot open ${filename}: ${(e as Error).message}`);
    }
  }
  let dir = split(filename).dir;
  for (;;) {
    try {
      if (!Deno.statSync(dir).isDirectory) {
        throw new Error(`file log writer: ${dir} is not a directory (log file ${filename})`);
      }
      return;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      const up = split(dir).dir;
      if (up === dir) return;
      dir = up;
    }
  }
}

/** Opens a rolling file writer; with `validating`, only checks it could. */
export function fileWriter(o: FileWriterOptions, validating = false): LogWriter {
  if (!o.filename) throw new Error("file log writer: missing filename");
  if (validating) {
    checkWritable(o.filename);
    return { write() {} };
  }
  const roll = o.roll !== false && o.roll_disabled !== true;
  const maxBytes = (o.roll_size_mb ?? 100) * 1024 * 1024;
  const keep = o.roll_keep ?? 10;
  const keepDays = o.roll_keep_days ?? 90;
  const gzip = o.roll_gzip ?? true;
  const { dir, base, ext } = split(o.filename);
  Deno.mkdirSync(dir, { recursive: true });
  let file = Deno.openSync(o.filename, { create: true, append: true, mode: 0o600 });
  let size = file.statSync().size;
  const pending = new Set<Promise<void>>();
  let lastStamp = "";

  const track = (p: Promise<void>) => {
    pending.add(p);
    p.finally(() => pending.delete(p));
  };

  const prune = async () => {
    const backups: { path: string; mtime: number }[] = [];
    for await (const e of Deno.readDir(dir)) {
      if (
        e.isFile && e.name.startsWith(base + "-") && e.name !== `${base}${ext}` &&
        (e.name.endsWith(ext) || e.name.endsWith(ext + ".gz"))
      ) {
        const path = `${dir}/${e.name}`;
        const st = await Deno.stat(path).catch(() => null);
        if (st) backups.push({ path, mtime: st.mtime?.getTime() ?? 0 });
      }
    }
    backups.sort((a, b) => b.path.localeCompare(a.path));
    const cutoff = Date.now() - keepDays * 86_400_000;
    for (const [i, b] of backups.entries()) {
      if ((keep > 0 && i >= keep) || (keepDays > 0 && b.mtime < cutoff)) {
        await Deno.remove(b.path).catch(() => {});
      }
    }
  };

  const compress = async (path: string) => {
    const src = await Deno.open(path, { read: true });
    const dst = await Deno.open(path + ".gz", {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    });
    await src.readable.pipeThrough(new CompressionStream("gzip")).pipeTo(dst.writable);
    await Deno.remove(path);
  };

  const rotate = () => {
    file.close();
    let name = stamp(new Date(), o.roll_local_time ?? false);
    if (name <= lastStamp) name = lastStamp + "1";
    lastStamp = name;
    const backup = `${dir}/${base}-${name}${ext}`;
    Deno.renameSync(o.filename, backup);
    file = Deno.openSync(o.filename, { create: true, append: true, mode: 0o600 });
    size = 0;
    track((gzip ? compress(backup) : Promise.resolve()).then(prune).catch(() => {}));
  };

  return {
    write(bytes) {
      try {
        if (roll && size > 0 && size + bytes.length > maxBytes) rotate();
        let off = 0;
        while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
        size += bytes.length;
      } catch {
        // logging must never take the server down
      }
    },
    async flush() {
      while (pending.size) await Promise.all(pending);
    },
    async cleanup() {
      while (pending.size) await Promise.all(pending);
      try {
        file.close();
      } catch { /* closed */ }
    },
  };
}

registerModule({
  id: "caddy.logging.writers.file",
  create: (c, ctx) => fileWriter(c as unknown as FileWriterOptions, ctx.validating),
});
