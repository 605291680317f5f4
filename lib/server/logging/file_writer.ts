/**
 * `caddy.logging.writers.file`: appends to a file and rolls it by size and by time, keeping a
 * bounded number of backups for a bounded number of days (lumberjack naming:
 * `name-2006-01-02T15-04-05.000.ext`, compressed with gzip (`.gz`) or zstd (`.zst`)). The
 * file and its directories are created with `mode` (default 0600) and `dir_mode` (default
 * 0700; `from_file`: the file's mode with execute bits where it can be read), less the umask.
 * Rolls by time (`roll_interval`, `roll_at` times of day, `roll_minutes` of each hour) happen
 * at the first write after the time.
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import type { LogWriter } from "./entry.ts";
import { Decoder } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import { durationMs } from "../config/duration.ts";

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
  /** `gzip` (default), `zstd` or `none`; overrides `roll_gzip`. */
  roll_compression?: string;
  /** Roll when the file is this old (Caddy duration). */
  roll_interval?: string | number;
  /** Roll at these times of day (`HH:MM`). */
  roll_at?: string[];
  /** Roll at these minutes of each hour. */
  roll_minutes?: number[];
  /** File mode, octal (default `0600`). */
  mode?: string;
  /** Directory mode, octal or `from_file` (default `0700`). */
  dir_mode?: string;
}

const FILE_FIELDS = [
  "output",
  "filename",
  "roll",
  "roll_disabled",
  "roll_size_mb",
  "roll_gzip",
  "roll_local_time",
  "roll_keep",
  "roll_keep_days",
  "roll_compression",
  "roll_interval",
  "roll_at",
  "roll_minutes",
  "mode",
  "dir_mode",
];

function invalid(detail: string): ConfigError {
  return new ConfigError("invalid_config", `file log writer: ${detail}`);
}

function octal(v: string | undefined, what: string, fallback: number): number {
  if (v === undefined || v === "") return fallback;
  if (!/^0?[0-7]{3,4}$/.test(v)) {
    throw invalid(`${what} ${JSON.stringify(v)} is not an octal mode`);
  }
  return parseInt(v, 8);
}

/** The next time-based roll after `from` (ms), Infinity when none is configured. */
export function nextTimedRoll(
  from: number,
  o: { intervalMs?: number; at?: [number, number][]; minutes?: number[]; local: boolean },
): number {
  let next = o.intervalMs ? from + o.intervalMs : Infinity;
  const d = new Date(from);
  const get = (f: "Hours" | "Minutes") => o.local ? d[`get${f}`]() : d[`getUTC${f}`]();
  const at = (dayOffset: number, h: number, m: number) => {
    const t = new Date(from);
    if (o.local) t.setHours(0, 0, 0, 0);
    else t.setUTCHours(0, 0, 0, 0);
    return t.getTime() + dayOffset * 86_400_000 + (h * 60 + m) * 60_000;
  };
  for (const [h, m] of o.at ?? []) {
    for (const day of [0, 1]) {
      const t = at(day, h, m);
      if (t > from) {
        next = Math.min(next, t);
        break;
      }
    }
  }
  for (const m of o.minutes ?? []) {
    const hourStart = from - (get("Minutes") * 60_000 + (from % 60_000));
    for (const hour of [0, 1]) {
      const t = hourStart + hour * 3_600_000 + m * 60_000;
      if (t > from) {
        next = Math.min(next, t);
        break;
      }
    }
  }
  return next;
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
  if (!o.filename) throw invalid("missing filename");
  const mode = octal(o.mode, "mode", 0o600);
  const dirMode = o.dir_mode === "from_file"
    ? mode | ((mode & 0o444) >> 2)
    : octal(o.dir_mode, "dir_mode", 0o700);
  const compression = o.roll_compression ?? (o.roll_gzip === false ? "none" : "gzip");
  if (!["gzip", "zstd", "none"].includes(compression)) {
    throw invalid(`roll_compression ${JSON.stringify(compression)} (gzip, zstd or none)`);
  }
  const local = o.roll_local_time ?? false;
  const timed = {
    intervalMs: o.roll_interval === undefined
      ? undefined
      : durationMs(o.roll_interval, "file log writer: roll_interval"),
    at: (o.roll_at ?? []).map((t) => {
      const m = /^(\d{1,2}):(\d{2})$/.exec(t);
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) {
        throw invalid(`roll_at ${JSON.stringify(t)} is not a time of day (HH:MM)`);
      }
      return [Number(m[1]), Number(m[2])] as [number, number];
    }),
    minutes: (o.roll_minutes ?? []).map((m) => {
      if (!Number.isInteger(m) || m < 0 || m > 59) {
        throw invalid(`roll_minutes ${m} is not a minute (0-59)`);
      }
      return m;
    }),
    local,
  };
  if (validating) {
    checkWritable(o.filename);
    return { write() {} };
  }
  const roll = o.roll !== false && o.roll_disabled !== true;
  const maxBytes = (o.roll_size_mb ?? 100) * 1024 * 1024;
  const keep = o.roll_keep ?? 10;
  const keepDays = o.roll_keep_days ?? 90;
  const suffix = compression === "gzip" ? ".gz" : compression === "zstd" ? ".zst" : "";
  const { dir, base, ext } = split(o.filename);
  Deno.mkdirSync(dir, { recursive: true, mode: dirMode });
  let file = Deno.openSync(o.filename, { create: true, append: true, mode });
  let nextRoll = nextTimedRoll(Date.now(), timed);
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
        (e.name.endsWith(ext) || e.name.endsWith(ext + ".gz") || e.name.endsWith(ext + ".zst"))
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
    const dst = await Deno.open(path + suffix, { write: true, create: true, truncate: true, mode });
    let stream: TransformStream<Uint8Array, Uint8Array>;
    if (compression === "gzip") {
      stream = new CompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>;
    } else {
      const zlib = (await import("node:zlib")).default;
      const { Duplex } = await import("node:stream");
      stream = Duplex.toWeb(zlib.createZstdCompress()) as unknown as TransformStream<
        Uint8Array,
        Uint8Array
      >;
    }
    await src.readable.pipeThrough(stream).pipeTo(dst.writable);
    await Deno.remove(path);
  };

  const rotate = () => {
    file.close();
    let name = stamp(new Date(), o.roll_local_time ?? false);
    if (name <= lastStamp) name = lastStamp + "1";
    lastStamp = name;
    const backup = `${dir}/${base}-${name}${ext}`;
    Deno.renameSync(o.filename, backup);
    file = Deno.openSync(o.filename, { create: true, append: true, mode });
    size = 0;
    track((suffix ? compress(backup) : Promise.resolve()).then(prune).catch(() => {}));
  };

  return {
    write(bytes) {
      try {
        const now = nextRoll === Infinity ? 0 : Date.now();
        if (roll && size > 0 && (size + bytes.length > maxBytes || now >= nextRoll)) rotate();
        if (now >= nextRoll) nextRoll = nextTimedRoll(now, timed);
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

/** `caddy.logging.writers.file`. */
export const fileWriterModule: ModuleDefinition<LogWriter> = {
  id: "caddy.logging.writers.file",
  create: (c, ctx) => {
    new Decoder(c, "caddy.logging.writers.file").fields(FILE_FIELDS);
    return fileWriter(c as unknown as FileWriterOptions, ctx.validating);
  },
};
