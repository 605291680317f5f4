/**
 * Gatehousefile syntax of log writers (`output file|net ...`) and encoders
 * (`format console|json ...`), as used by `log` blocks.
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../caddyfile/registry.ts";
import { goAtoiStrict, parseSize } from "../caddyfile/values.ts";
import { parseDuration } from "../config/duration.ts";
import { ENCODER_KEYS } from "./encoders.ts";

type Obj = Record<string, unknown>;

function fileMode(s: string): string {
  const padded = s.padStart(4, "0");
  if (!/^[0-7]+$/.test(padded)) {
    throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(padded)}: invalid syntax`);
  }
  const n = parseInt(padded, 8);
  return n.toString(8).padStart(4, "0");
}

function oneArg(d: Dispenser): string {
  const a = d.allArgs(1);
  if (!a) throw d.argErr();
  return a[0];
}

/** Subdirectives of the file writer. */
const FILE_WRITER_OPTIONS = [
  "mode",
  "dir_mode",
  "roll_disabled",
  "roll_uncompressed",
  "roll_size",
  "roll_compression",
  "roll_local_time",
  "roll_keep",
  "roll_keep_for",
  "roll_interval",
  "roll_minutes",
  "roll_at",
  "backup_time_format",
];

/** `output file <path> { mode, dir_mode, roll_* ... }`. */
export function fileWriter(d: Dispenser): Obj {
  d.next();
  if (!d.nextArg()) throw d.argErr();
  const w: Obj = { filename: d.val() };
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    switch (k) {
      case "mode":
        try {
          w.mode = fileMode(oneArg(d));
        } catch (e) {
          throw d.err(`parsing mode: ${(e as Error).message}`);
        }
        break;
      case "dir_mode": {
        const v = oneArg(d).trim();
        if (!["inherit", "from_file"].includes(v.toLowerCase())) {
          try {
            fileMode(v);
          } catch (e) {
            throw d.err(`parsing dir_mode: ${(e as Error).message}`);
          }
        }
        w.dir_mode = v;
        break;
      }
      case "roll_disabled":
      case "roll_uncompressed":
        w[k === "roll_disabled" ? "roll" : "roll_gzip"] = false;
        if (d.nextArg()) throw d.argErr();
        break;
      case "roll_size": {
        const s = oneArg(d);
        let size: number;
        try {
          size = parseSize(s);
        } catch (e) {
          throw d.err(`parsing size: ${(e as Error).message}`);
        }
        w.roll_size_mb = Math.ceil(size / (1024 * 1024));
        break;
      }
      case "roll_compression": {
        const c = oneArg(d).trim().toLowerCase();
        if (!["none", "gzip", "zstd"].includes(c)) {
          throw d.err("parsing roll_compression: must be 'none', 'gzip' or 'zstd'");
        }
        w.roll_compression = c;
        break;
      }
      case "roll_local_time":
        w.roll_local_time = true;
        if (d.nextArg()) throw d.argErr();
        break;
      case "roll_keep":
        try {
          w.roll_keep = goAtoiStrict(oneArg(d));
        } catch (e) {
          throw d.err(`parsing roll_keep number: ${(e as Error).message}`);
        }
        break;
      case "roll_keep_for": {
        let v: number;
        try {
          v = parseDuration(oneArg(d));
        } catch (e) {
          throw d.err(`parsing roll_keep_for duration: ${(e as Error).message}`);
        }
        if (v < 0) throw d.err(`negative roll_keep_for duration: ${v}`);
        w.roll_keep_days = Math.ceil(v / 3.6e12 / 24);
        break;
      }
      case "roll_interval":
        try {
          w.roll_interval = parseDuration(oneArg(d));
        } catch (e) {
          throw d.err(`parsing roll_interval duration: ${(e as Error).message}`);
        }
        break;
      case "roll_minutes":
      case "roll_at": {
        const args = d.remainingArgs();
        if (args.length === 0) throw d.argErr();
        const out: (string | number)[] = [];
        for (const a of args) {
          for (const p of a.split(",")) {
            const t = p.trim();
            if (t === "") throw d.err(`parsing ${k}: empty value`);
            if (k === "roll_at") out.push(t);
            else {
              try {
                out.push(goAtoiStrict(t));
              } catch (e) {
                throw d.err(`parsing roll_minutes number: ${(e as Error).message}`);
              }
            }
          }
        }
        w[k] = out;
        break;
      }
      case "backup_time_format":
        w.backup_time_format = oneArg(d);
        break;
      default:
        throw d.unknownSubdirective(FILE_WRITER_OPTIONS, "unrecognized subdirective '%s'");
    }
  }
  return w;
}

/** `output net <address> { dial_timeout <d>; soft_start }`. */
export function netWriter(d: Dispenser): Obj {
  d.next();
  if (!d.nextArg()) throw d.argErr();
  const w: Obj = { address: d.val() };
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "dial_timeout":
        if (!d.nextArg()) throw d.argErr();
        try {
          w.dial_timeout = parseDuration(d.val());
        } catch {
          throw d.err(`invalid duration: ${d.val()}`);
        }
        if (d.nextArg()) throw d.argErr();
        break;
      case "soft_start":
        if (d.nextArg()) throw d.argErr();
        w.soft_start = true;
        break;
      default:
        throw d.unknownSubdirective(
          ["dial_timeout", "soft_start"],
          "unrecognized subdirective '%s'",
        );
    }
  }
  return w;
}

const KEYS = ENCODER_KEYS;

/** The subdirectives every structured encoder shares (`time_format`, `message_key`, ...). */
export function encoderConfig(d: Dispenser, into: Obj = {}): Obj {
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k === "time_local") {
      into.time_local = true;
      if (d.nextArg()) throw d.argErr();
      continue;
    }
    const a = d.allArgs(1);
    if (!a) throw d.argErr();
    if (KEYS.includes(k)) into[k] = a[0];
    else if (["time_format", "duration_format", "level_format"].includes(k)) {
      if (a[0] !== "") into[k] = a[0];
      else delete into[k];
    } else {
      throw d.err(
        `unrecognized subdirective ${k}${
          didYouMean(k, ["time_local", ...KEYS, "time_format", "duration_format", "level_format"])
        }`,
      );
    }
  }
  return into;
}

/** `format console|json { ... }`. */
export function plainEncoder(d: Dispenser): Obj {
  d.next();
  if (d.nextArg()) throw d.argErr();
  return encoderConfig(d);
}

/** The Gatehousefile syntax of the file and net writers and the console and json encoders. */
export const syntax: SyntaxSet = {
  modules: {
    "caddy.logging.writers.file": fileWriter,
    "caddy.logging.writers.net": netWriter,
    "caddy.logging.encoders.console": plainEncoder,
    "caddy.logging.encoders.json": plainEncoder,
  },
};
