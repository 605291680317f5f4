/**
 * The logging pipeline (`logging.logs`): each named log applies include/exclude by logger
 * name, its level, sampling, then its encoder and writer. The `default` log always exists.
 *
 * @module
 */
import type { LogFields, Logger, LogLevel } from "../module/instance.ts";
import { levelRank, type LogEncoder, type LogEntry, type LogWriter, parseLevel } from "./entry.ts";
import { consoleEncoder, jsonEncoder } from "./encoders.ts";
import { Decoder } from "../config/decode.ts";
import { stderrWriter } from "./writers.ts";
import { durationMs } from "../config/duration.ts";

/** One log's raw config (Caddy's `logging.logs.<name>`). */
export interface CustomLogConfig {
  writer?: Record<string, unknown>;
  encoder?: Record<string, unknown>;
  level?: string;
  sampling?: { interval?: number | string; first?: number; thereafter?: number };
  include?: string[];
  exclude?: string[];
}

/** Loads a nested module by inline key (the engine's loader). */
export type ModuleLoader = <T>(namespace: string, inlineKey: string, raw: unknown) => Promise<T>;

/** Name of the log that always exists. */
export const DEFAULT_LOG = "default";

/**
 * Caddy's logger-name filter: longest matching include wins over longest matching exclude;
 * names match whole dot-separated segments; `*` excludes every module logger.
 */
export function loggerAllowed(name: string, include: string[], exclude: string[]): boolean {
  if (include.length === 0 && exclude.length === 0) return true;
  const n = name !== "" && name !== "*" && name !== "." ? name + "." : name;
  let accept = 0;
  let reject = 0;
  if (include.length) {
    for (const ns of include) if (n.startsWith(ns + ".") && ns.length > accept) accept = ns.length;
    if (accept === 0) return false;
  }
  for (const ns of exclude) {
    if ((ns === "*" && n !== ".") || (ns === "." && n === ".")) return false;
    if (n.startsWith(ns + ".") && ns.length > reject) reject = ns.length;
  }
  if (reject > accept) return false;
  return accept > reject || (include.length === 0 && reject === 0);
}

/**
 * Checks include/exclude lists as Caddy does: arrays of names, never intersecting, and when
 * both are set each include must be a super- or subspace of some exclude.
 */
function checkFilters(log: string, include: unknown, exclude: unknown): void {
  if (!Array.isArray(include) || !Array.isArray(exclude)) {
    throw new Error(`log ${log}: include and exclude must be arrays of logger names`);
  }
  if (include.length === 0 || exclude.length === 0) return;
  for (const allow of include) {
    if (exclude.includes(allow)) {
      throw new Error(
        `log ${log}: include and exclude must not intersect, but found ${allow} in both lists`,
      );
    }
    const nested = exclude.some((deny: string) =>
      (allow + ".").startsWith(deny + ".") || (deny + ".").startsWith(allow + ".")
    );
    if (!nested) {
      throw new Error(
        `log ${log}: when both include and exclude are populated, each element must be a superspace or subspace of one in the other list; check '${allow}' in include`,
      );
    }
  }
}

/**
 * Decodes one `logging.logs.<name>` strictly (field types as Caddy's `CustomLog`); its writer
 * and encoder modules decode their own fields when loaded.
 */
function decodeLog(name: string, raw: unknown): CustomLogConfig {
  if (raw === undefined || raw === null) return {};
  const d = Decoder.of(raw, `logging.logs.${name}`).fields([
    "writer",
    "encoder",
    "level",
    "sampling",
    "include",
    "exclude",
  ]);
  d.rawObject("writer");
  d.rawObject("encoder");
  const level = d.string("level");
  try {
    parseLevel(level);
  } catch (e) {
    d.failAt("level", (e as Error).message);
  }
  d.strings("include");
  d.strings("exclude");
  const sampling = d.object("sampling");
  if (sampling) {
    sampling.fields(["interval", "first", "thereafter"]);
    for (const k of ["first", "thereafter"]) {
      const n = sampling.number(k);
      if (n !== undefined && !Number.isSafeInteger(n)) sampling.fail(`"${k}" must be an integer`);
    }
    sampling.duration("interval");
  }
  return d.raw as CustomLogConfig;
}

class Sampler {
  #windowStart = 0;
  #counts = new Map<string, number>();
  constructor(readonly intervalMs: number, readonly first: number, readonly thereafter: number) {}
  keep(entry: LogEntry): boolean {
    if (entry.time - this.#windowStart >= this.intervalMs) {
      this.#windowStart = entry.time;
      this.#counts.clear();
    }
    const key = entry.level + "\0" + entry.msg;
    const n = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, n);
    if (n <= this.first) return true;
    return this.thereafter > 0 && (n - this.first) % this.thereafter === 0;
  }
}

/** A built log: filter, level, sampler, encoder, writer. */
export interface BuiltLog {
  name: string;
  level: LogLevel;
  include: string[];
  exclude: string[];
  sampler?: Sampler;
  encoder: LogEncoder;
  writer: LogWriter;
}

/**
 * A set of logs built from a `logging` config section.
 *
 * @example
 * ```ts
 * import { LogPipeline } from "./pipeline.ts";
 * const logs = LogPipeline.boot();
 * logs.logger("admin").info("hello", { n: 1 });
 * ```
 */
export class LogPipeline {
  readonly logs: BuiltLog[];
  constructor(logs: BuiltLog[]) {
    this.logs = logs;
  }

  /** The pipeline used before any config is loaded: INFO and above to stderr. */
  static boot(): LogPipeline {
    const writer = stderrWriter();
    const encoder = writer.isTerminal ? consoleEncoder() : jsonEncoder();
    return new LogPipeline([{
      name: DEFAULT_LOG,
      level: "INFO",
      include: [],
      exclude: [],
      encoder,
      writer,
    }]);
  }

  /** Builds the pipeline of a `logging` section, loading writer and encoder modules. */
  static async build(raw: unknown, load: ModuleLoader): Promise<LogPipeline> {
    const built: BuiltLog[] = [];
    try {
      const section = Decoder.of(raw === undefined || raw === null ? {} : raw, "logging")
        .fields(["sink", "logs"]);
      if (section.has("sink")) {
        section.failAt(
          "sink",
          "there is no standard-library logger here to redirect; every log goes through logging.logs",
        );
      }
      const logsRaw = { ...section.rawObject("logs") };
      logsRaw[DEFAULT_LOG] ??= {};
      for (const [name, cfg0] of Object.entries(logsRaw)) {
        const cfg = decodeLog(name, cfg0);
        const writer = await load<LogWriter>(
          "caddy.logging.writers",
          "output",
          cfg.writer ?? { output: "stderr" },
        );
        built.push(undefined as unknown as BuiltLog); // reserve order; filled below
        const encoder = cfg.encoder
          ? await load<LogEncoder>("caddy.logging.encoders", "format", cfg.encoder)
          : writer.isTerminal
          ? consoleEncoder()
          : jsonEncoder();
        encoder.configureDefault?.(writer.isTerminal ?? false);
        const include = cfg.include ?? [];
        const exclude = cfg.exclude ?? [];
        checkFilters(name, include, exclude);
        let sampler: Sampler | undefined;
        if (cfg.sampling) {
          const s = cfg.sampling;
          sampler = new Sampler(
            s.interval !== undefined && s.interval !== null ? durationMs(s.interval) : 1000,
            s.first ?? 100,
            s.thereafter ?? 100,
          );
        }
        built[built.length - 1] = {
          name,
          level: parseLevel(cfg.level),
          include,
          exclude,
          sampler,
          encoder,
          writer,
        };
      }
    } catch (e) {
      throw new Error(`setting up logs: ${(e as Error).message}`, { cause: e });
    }
    return new LogPipeline(built);
  }

  /** True when some log would accept a message of `level` from logger `name`. */
  accepts(name: string, level: LogLevel): boolean {
    const r = levelRank(level);
    return this.logs.some((l) =>
      r >= levelRank(l.level) && loggerAllowed(name, l.include, l.exclude)
    );
  }

  /** Sends one entry through every log. */
  emit(entry: LogEntry): void {
    const r = levelRank(entry.level);
    for (const l of this.logs) {
      if (r < levelRank(l.level) || !loggerAllowed(entry.logger, l.include, l.exclude)) continue;
      if (l.sampler && !l.sampler.keep(entry)) continue;
      let bytes: Uint8Array;
      try {
        bytes = l.encoder.encode(entry);
      } catch {
        continue;
      }
      l.writer.write(bytes);
    }
  }

  /** A logger bound to this pipeline. */
  logger(name: string): Logger {
    return makeLogger(name, () => this);
  }

  /** Waits for buffered writers. */
  async flush(): Promise<void> {
    await Promise.all(this.logs.map((l) => l.writer.flush?.()));
  }
}

/**
 * A logger that emits to whatever pipeline `current()` returns at the time of each message
 * (so loggers made before a reload follow the new logging config).
 */
export function makeLogger(name: string, current: () => LogPipeline): Logger {
  const emit = (level: LogLevel, msg: string, fields?: LogFields) =>
    current().emit({ level, time: Date.now(), logger: name, msg, fields: fields ?? {} });
  return {
    name,
    debug: (m, f) => emit("DEBUG", m, f),
    info: (m, f) => emit("INFO", m, f),
    warn: (m, f) => emit("WARN", m, f),
    error: (m, f) => emit("ERROR", m, f),
    named: (sub) => makeLogger(name ? `${name}.${sub}` : sub, current),
    enabled: (level) => current().accepts(name, level),
  };
}
