/**
 * The `fastcgi` transport's config (module `http.reverse_proxy.transport.fastcgi`, Caddy's
 * JSON field by field). Decoded once at provision time; every field is honoured.
 *
 * @module
 */
import {
  checkFields,
  optBool,
  optDuration,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "../../../config.ts";
import { ConfigError } from "../../../../config/error.ts";

/** The decoded `transport` of a `reverse_proxy` whose `protocol` is `fastcgi`. */
export interface FastCGIConfig {
  /**
   * `root`: the document root the script path is joined to (placeholders allowed; default
   * `{http.vars.root}`, and the working directory when that is empty).
   */
  root: string;
  /**
   * `split_path`: the path is split after the first of these (ASCII, compared without
   * case) into the script (`SCRIPT_NAME`) and `PATH_INFO`. Stored in lower case.
   */
  splitPath: string[];
  /** `resolve_root_symlink`: `DOCUMENT_ROOT` is the root with symbolic links resolved. */
  resolveRootSymlink: boolean;
  /** `env`: extra CGI variables; values may hold placeholders. */
  env: Record<string, string>;
  /** `dial_timeout` in ms (default 3s). */
  dialTimeout: number;
  /** `read_timeout` in ms: the whole response must be read within it (0 = no limit). */
  readTimeout: number;
  /** `write_timeout` in ms: the whole request must be written within it (0 = no limit). */
  writeTimeout: number;
  /** `capture_stderr`: the script's stderr is logged (WARN, or ERROR for a 4xx/5xx). */
  captureStderr: boolean;
}

const FIELDS = [
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

/**
 * Decodes the `fastcgi` transport; throws an `ConfigError` naming the field at fault.
 *
 * @example
 * ```ts
 * import { parseFastCGIConfig } from "./config.ts";
 * const c = parseFastCGIConfig({ protocol: "fastcgi", split_path: [".PHP"] }, "transport");
 * c.splitPath; // [".php"]
 * ```
 */
export function parseFastCGIConfig(raw: Raw, where: string): FastCGIConfig {
  checkFields(raw, FIELDS, where);
  const splitPath = (optStrings(raw, "split_path", where) ?? []).map((s) => {
    if ([...s].some((ch) => ch.charCodeAt(0) > 0x7f)) {
      throw new ConfigError(
        "invalid_config",
        `${where}.split_path: ${
          JSON.stringify(s)
        } has non-ASCII characters (split paths are ASCII)`,
      );
    }
    return s.toLowerCase();
  });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(optObject(raw, "env", where) ?? {})) {
    if (typeof v !== "string") {
      throw new ConfigError("invalid_config", `${where}.env.${k}: must be a string`);
    }
    if (k === "" || /[=\0]/.test(k)) {
      throw new ConfigError(
        "invalid_config",
        `${where}.env: ${JSON.stringify(k)} is not a variable name`,
      );
    }
    env[k] = v;
  }
  const nonNegative = (key: string, fallback: number): number => {
    const ms = optDuration(raw, key, where) ?? fallback;
    if (ms < 0) {
      throw new ConfigError("invalid_config", `${where}.${key}: must not be negative`);
    }
    return ms;
  };
  return {
    root: optString(raw, "root", where) || "{http.vars.root}",
    splitPath,
    resolveRootSymlink: optBool(raw, "resolve_root_symlink", where) ?? false,
    env,
    dialTimeout: nonNegative("dial_timeout", 0) || 3000,
    readTimeout: nonNegative("read_timeout", 0),
    writeTimeout: nonNegative("write_timeout", 0),
    captureStderr: optBool(raw, "capture_stderr", where) ?? false,
  };
}
