/**
 * Log encoders: `caddy.logging.encoders.json` and `caddy.logging.encoders.console`.
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import { fieldValue, type LogEncoder, type LogEntry } from "./entry.ts";
import { Decoder } from "../config/decode.ts";

const enc = new TextEncoder();

/** The encoders' options that name a key or set a text as is (Caddy's field names). */
export const ENCODER_KEYS: readonly string[] = [
  "message_key",
  "level_key",
  "time_key",
  "name_key",
  "caller_key",
  "stacktrace_key",
  "line_ending",
];

/** Options shared by both encoders (Caddy's field names). */
interface EncoderOptions {
  message_key?: string;
  level_key?: string;
  time_key?: string;
  name_key?: string;
  time_format?: string;
  level_format?: string;
  /** Ends each record (default a newline). */
  line_ending?: string;
  /** Wall-clock formats in local time instead of UTC (Caddy's default). */
  time_local?: boolean;
}

/**
 * Decodes an encoder's JSON: Caddy's `LogEncoderConfig` fields, each honoured, or refused when
 * the records here cannot carry what it names (`caller_key`, `stacktrace_key`, a
 * `duration_format` other than Caddy's default `seconds`).
 */
export function parseEncoderOptions(raw: Record<string, unknown>, id: string): EncoderOptions {
  const d = new Decoder(raw, id).fields([
    "format",
    ...ENCODER_KEYS,
    "time_format",
    "time_local",
    "duration_format",
    "level_format",
  ]);
  for (
    const [k, why] of [
      ["caller_key", "log records here carry no caller (file:line)"],
      ["stacktrace_key", "log records here carry no stack trace"],
    ]
  ) {
    if (d.string(k)) d.failAt(k, why);
  }
  const dur = d.string("duration_format");
  if (dur && dur !== "seconds" && dur !== "s") {
    d.failAt(
      "duration_format",
      `${JSON.stringify(dur)} is not available: durations are logged in seconds (Caddy's default)`,
    );
  }
  const o: EncoderOptions = {};
  for (
    const k of [
      "message_key",
      "level_key",
      "time_key",
      "name_key",
      "time_format",
      "level_format",
      "line_ending",
    ] as const
  ) {
    const v = d.string(k);
    if (v !== undefined) o[k] = v;
  }
  o.time_local = d.bool("time_local") ?? false;
  return o;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** Formats a time in ms per Caddy's `time_format` names (wall clock: UTC unless `local`). */
export function formatTime(ms: number, format: string, local = false): string | number {
  const d = new Date(ms);
  const wall = () =>
    local
      ? `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ` +
        `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
      : `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())} ` +
        `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  switch (format) {
    case "unix_seconds_float":
      return ms / 1000;
    case "unix_milli_float":
      return ms;
    case "unix_nano":
      return ms * 1e6;
    case "iso8601":
    case "rfc3339":
    case "rfc3339_nano":
      return d.toISOString();
    case "wall":
      return wall();
    case "wall_milli":
      return `${wall()}.${pad(d.getMilliseconds(), 3)}`;
    case "wall_nano":
      return `${wall()}.${pad(d.getMilliseconds(), 3)}000000`;
    default:
      throw new Error(`unrecognized time format: ${format}`);
  }
}

function levelText(level: string, format: string | undefined, fallback: "lower" | "upper"): string {
  const f = format ?? fallback;
  if (f === "lower") return level.toLowerCase();
  if (f === "upper" || f === "color") return level;
  throw new Error(`unrecognized level format: ${format}`);
}

function fieldsObject(entry: LogEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry.fields)) out[k] = fieldValue(v);
  return out;
}

/** A JSON-lines encoder: `{"level","ts","logger","msg",...fields}`. */
export function jsonEncoder(o: EncoderOptions = {}): LogEncoder {
  const timeFormat = o.time_format ?? "unix_seconds_float";
  formatTime(0, timeFormat);
  levelText("INFO", o.level_format, "lower");
  return {
    encode(entry) {
      const rec: Record<string, unknown> = {};
      rec[o.level_key ?? "level"] = levelText(entry.level, o.level_format, "lower");
      if (o.time_key !== "") {
        rec[o.time_key ?? "ts"] = formatTime(entry.time, timeFormat, o.time_local);
      }
      if (entry.logger) rec[o.name_key ?? "logger"] = entry.logger;
      rec[o.message_key ?? "msg"] = entry.msg;
      Object.assign(rec, fieldsObject(entry));
      return enc.encode(JSON.stringify(rec) + (o.line_ending ?? "\n"));
    },
  };
}

/** A human-readable encoder: `time<TAB>LEVEL<TAB>logger<TAB>msg<TAB>{fields}`. */
export function consoleEncoder(o: EncoderOptions = {}): LogEncoder {
  const timeFormat = o.time_format ?? "wall_milli";
  formatTime(0, timeFormat);
  levelText("INFO", o.level_format, "upper");
  return {
    encode(entry) {
      // an empty time_key leaves the time out (journald stamps lines itself)
      const parts = o.time_key === ""
        ? []
        : [String(formatTime(entry.time, timeFormat, o.time_local))];
      parts.push(levelText(entry.level, o.level_format, "upper"));
      if (entry.logger) parts.push(entry.logger);
      parts.push(entry.msg);
      const fields = fieldsObject(entry);
      if (Object.keys(fields).length) parts.push(JSON.stringify(fields));
      return enc.encode(parts.join("\t") + (o.line_ending ?? "\n"));
    },
  };
}

/** `caddy.logging.encoders.json`. */
export const jsonEncoderModule: ModuleDefinition<LogEncoder> = {
  id: "caddy.logging.encoders.json",
  create: (c) => jsonEncoder(parseEncoderOptions(c, "caddy.logging.encoders.json")),
};

/** `caddy.logging.encoders.console`. */
export const consoleEncoderModule: ModuleDefinition<LogEncoder> = {
  id: "caddy.logging.encoders.console",
  create: (c) => consoleEncoder(parseEncoderOptions(c, "caddy.logging.encoders.console")),
};
