/**
 * The config of the `fastcgi` transport (module `http.reverse_proxy.transport.fastcgi`), field
 * by field as Caddy's `Transport` (`modules/caddyhttp/reverseproxy/fastcgi/fastcgi.go`), its
 * decoder, and the settings the FastCGI client runs on. Every field is honoured.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../../config/decode.ts";
import { type Duration, durationMs } from "../../../../config/duration.ts";

/** `http.reverse_proxy.transport.fastcgi`. */
export type FastCGITransportConfig = {
  /** The module name. */
  protocol: "fastcgi";
  /**
   * The document root the script path is joined to (placeholders allowed; default
   * `{http.vars.root}`, and the working directory when that is empty).
   */
  root?: string;
  /**
   * The path is split after the first of these (ASCII, compared without case) into the
   * script (`SCRIPT_NAME`) and `PATH_INFO`.
   */
  split_path?: string[];
  /** `DOCUMENT_ROOT` is the root with symbolic links resolved. */
  resolve_root_symlink?: boolean;
  /** Extra CGI variables; values may hold placeholders. */
  env?: Record<string, string>;
  /** How long connecting may take (default 3s). */
  dial_timeout?: Duration;
  /** The whole response must be read within it (default: no limit). */
  read_timeout?: Duration;
  /** The whole request must be written within it (default: no limit). */
  write_timeout?: Duration;
  /** The script's stderr is logged (WARN, or ERROR for a 4xx/5xx). */
  capture_stderr?: boolean;
};

/** The fields of {@linkcode FastCGITransportConfig}. */
export const FASTCGI_FIELDS: readonly (keyof FastCGITransportConfig)[] = [
  "protocol",
  "root",
  "split_path",
  "resolve_root_symlink",
  "env",
  "dial_timeout",
  "read_timeout",
  "write_timeout",
  "capture_stderr",
];

/** The settings of a FastCGI transport, as the client runs them. */
export interface FastCGIOptions {
  /** The document root (placeholders allowed). */
  root: string;
  /** `split_path`, in lower case. */
  splitPath: string[];
  /** `resolve_root_symlink`. */
  resolveRootSymlink: boolean;
  /** `env`. */
  env: Record<string, string>;
  /** `dial_timeout` in ms (default 3s). */
  dialTimeout: number;
  /** `read_timeout` in ms (0 = no limit). */
  readTimeout: number;
  /** `write_timeout` in ms (0 = no limit). */
  writeTimeout: number;
  /** `capture_stderr`. */
  captureStderr: boolean;
}

/**
 * Decodes and checks a `fastcgi` transport; throws a `ConfigError` naming the field at fault.
 *
 * @example
 * ```ts
 * import { decodeFastCGITransport } from "./config.ts";
 * decodeFastCGITransport({ protocol: "fastcgi", split_path: [".php"] }, "transport").split_path;
 * // [".php"]
 * ```
 */
export function decodeFastCGITransport(raw: Raw, where: string): FastCGITransportConfig {
  const d = new Decoder(raw, where).fields(FASTCGI_FIELDS);
  const out: FastCGITransportConfig = { protocol: "fastcgi" };
  const split = d.strings("split_path");
  for (const s of split ?? []) {
    if ([...s].some((ch) => ch.charCodeAt(0) > 0x7f)) {
      d.failAt(
        "split_path",
        `${JSON.stringify(s)} has non-ASCII characters (split paths are ASCII)`,
      );
    }
  }
  if (split) out.split_path = split;
  const env = d.object("env");
  if (env) {
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(env.raw)) {
      if (typeof v !== "string") env.failAt(k, "must be a string");
      if (k === "" || /[=\0]/.test(k)) env.fail(`${JSON.stringify(k)} is not a variable name`);
      vars[k] = v as string;
    }
    out.env = vars;
  }
  const root = d.string("root");
  if (root !== undefined) out.root = root;
  const symlink = d.bool("resolve_root_symlink");
  if (symlink !== undefined) out.resolve_root_symlink = symlink;
  for (const key of ["dial_timeout", "read_timeout", "write_timeout"] as const) {
    const ms = d.duration(key);
    if (ms === undefined) continue;
    if (ms < 0) d.failAt(key, "must not be negative");
    out[key] = raw[key] as Duration;
  }
  const stderr = d.bool("capture_stderr");
  if (stderr !== undefined) out.capture_stderr = stderr;
  return out;
}

/**
 * The settings a FastCGI client runs on, from a decoded transport.
 *
 * @example
 * ```ts
 * import { fastcgiOptions } from "./config.ts";
 * fastcgiOptions({ protocol: "fastcgi", split_path: [".PHP"] }).splitPath; // [".php"]
 * ```
 */
export function fastcgiOptions(c: FastCGITransportConfig): FastCGIOptions {
  const ms = (v: Duration | undefined) => v === undefined ? 0 : durationMs(v);
  return {
    root: c.root || "{http.vars.root}",
    splitPath: (c.split_path ?? []).map((s) => s.toLowerCase()),
    resolveRootSymlink: c.resolve_root_symlink ?? false,
    env: { ...c.env },
    dialTimeout: ms(c.dial_timeout) || 3000,
    readTimeout: ms(c.read_timeout),
    writeTimeout: ms(c.write_timeout),
    captureStderr: c.capture_stderr ?? false,
  };
}
