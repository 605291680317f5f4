/**
 * What every provisioned module is (an instance with an optional check and cleanup; an app
 * that starts and stops) and the logger every module is given: the ground the other contracts
 * of `module/` stand on.
 *
 * @module
 */

/** Levels of the logging pipeline, lowest first. */
export type LogLevel = "DEBUG" | "INFO" | "WARN" | "ERROR" | "PANIC" | "FATAL";

/** Typed fields attached to one log message. */
export type LogFields = Record<string, unknown>;

/** A named logger; messages go through every log of the logging pipeline that accepts them. */
export interface Logger {
  /** The logger's name, e.g. `http.log.access.srv0` or `admin.api`. */
  readonly name: string;
  /** Emits a DEBUG message. */
  debug(msg: string, fields?: LogFields): void;
  /** Emits an INFO message. */
  info(msg: string, fields?: LogFields): void;
  /** Emits a WARN message. */
  warn(msg: string, fields?: LogFields): void;
  /** Emits an ERROR message. */
  error(msg: string, fields?: LogFields): void;
  /** A child logger named `<name>.<sub>`. */
  named(sub: string): Logger;
  /** True when some log would accept a message of this level from this logger. */
  enabled(level: LogLevel): boolean;
}

/** Something that must be released when the config that created it goes away. */
export interface Cleanup {
  /** Releases resources (timers, sockets, files). Must be safe to call once. */
  cleanup?(): void | Promise<void>;
}

/** A provisioned module instance. */
export interface ModuleInstance extends Cleanup {
  /** Optional check run after every module of the config is provisioned. Throws on error. */
  validate?(): void | Promise<void>;
}

/** An app: a top-level module under `apps` that runs (e.g. `http`). */
export interface App extends ModuleInstance {
  /** Starts serving. Called only after the whole new config provisioned and validated. */
  start(): void | Promise<void>;
  /** Stops serving. Called on the old config after the new one started (or on unload/exit). */
  stop(): void | Promise<void>;
}
