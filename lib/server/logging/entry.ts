/**
 * Log entries, levels and the encoder/writer contracts of the logging pipeline.
 *
 * @module
 */
import type { LogFields, LogLevel, ModuleInstance } from "../module/instance.ts";

/** Levels in order; a log accepts messages at or above its level. */
export const LEVELS: readonly LogLevel[] = ["DEBUG", "INFO", "WARN", "ERROR", "PANIC", "FATAL"];

/** Rank of a level (DEBUG = 0). */
export function levelRank(level: LogLevel): number {
  return LEVELS.indexOf(level);
}

/** Parses a configured level name (case-insensitive; `WARNING` = `WARN`); throws when unknown. */
export function parseLevel(raw: unknown): LogLevel {
  if (raw === undefined || raw === null || raw === "") return "INFO";
  const up = String(raw).toUpperCase();
  const level = (up === "WARNING" ? "WARN" : up) as LogLevel;
  if (!LEVELS.includes(level)) throw new Error(`unrecognized log level: ${String(raw)}`);
  return level;
}

/** One message on its way through the pipeline. */
export interface LogEntry {
  /** Level of the message. */
  level: LogLevel;
  /** Time in milliseconds since the epoch. */
  time: number;
  /** Logger name, e.g. `admin.api`. */
  logger: string;
  /** The message. */
  msg: string;
  /** Typed fields. */
  fields: LogFields;
}

/** Turns an entry into bytes (`caddy.logging.encoders.*`). */
export interface LogEncoder extends ModuleInstance {
  /** Encodes one entry, newline included. */
  encode(entry: LogEntry): Uint8Array;
  /**
   * Told whether the writer is a terminal, once it is known: an encoder that wraps the
   * default format then uses `console` for terminals and `json` otherwise.
   */
  configureDefault?(writerIsTerminal: boolean): void;
}

/** Writes encoded entries somewhere (`caddy.logging.writers.*`). */
export interface LogWriter extends ModuleInstance {
  /** Writes one encoded entry. Must not throw. */
  write(bytes: Uint8Array): void;
  /** True when the writer is a terminal (the default encoder is then `console`). */
  readonly isTerminal?: boolean;
  /** Waits until everything written so far is flushed. */
  flush?(): Promise<void>;
}

/** Turns a field value into plain JSON (errors become their message). */
export function fieldValue(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (v instanceof Headers) {
    const out: Record<string, string[]> = {};
    for (const [k, val] of v) (out[k] ??= []).push(val);
    return out;
  }
  if (typeof v === "bigint") return Number(v);
  return v;
}
