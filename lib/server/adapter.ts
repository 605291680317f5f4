/**
 * Config adapters: turn another config format into native JSON. `/load` and `/adapt` pick
 * one by the subtype of `Content-Type` (`application/json5` → `json5`); the CLI by `-a`.
 *
 * @module
 */
import { AdminError, jsonErrorMessage } from "./errors.ts";

/** A problem an adapter noticed but could work around. */
export interface AdapterWarning {
  /** Source file, when known. */
  file?: string;
  /** 1-based line, when known. */
  line?: number;
  /** The directive concerned, when known. */
  directive?: string;
  /** What is wrong. */
  message: string;
}

/** Result of adapting a config. */
export interface AdaptResult {
  /** The native JSON config. */
  result: unknown;
  /** Warnings (empty when none). */
  warnings: AdapterWarning[];
}

/** A config adapter. */
export interface ConfigAdapter {
  /** Name as used in `Content-Type` subtypes and `--adapter`, e.g. `json5`. */
  name: string;
  /**
   * Converts `body` to native JSON; throws on errors. `options.filename` names the source;
   * `options.as` is the name the adapter was asked by (one of its aliases, e.g. the subtype of
   * `text/caddyfile`), for a source without a file name.
   */
  adapt(
    body: string,
    options?: { filename?: string; as?: string },
  ): AdaptResult | Promise<AdaptResult>;
}

const adapters = new Map<string, ConfigAdapter>();

/**
 * Registers an adapter under one or more names.
 *
 * @example
 * ```ts
 * import { registerAdapter } from "./adapter.ts";
 * registerAdapter({ name: "upper", adapt: (b) => ({ result: JSON.parse(b), warnings: [] }) });
 * ```
 */
export function registerAdapter(adapter: ConfigAdapter, ...aliases: string[]): void {
  for (const name of [adapter.name, ...aliases]) {
    if (adapters.has(name)) throw new Error(`config adapter already registered: ${name}`);
    adapters.set(name, adapter);
  }
}

/**
 * Finds an adapter by name.
 *
 * @example
 * ```ts
 * import { getAdapter } from "./adapter.ts";
 * getAdapter("json5");
 * ```
 */
export function getAdapter(name: string): ConfigAdapter | undefined {
  return adapters.get(name);
}

/**
 * Names of the registered adapters, sorted.
 *
 * @example
 * ```ts
 * import { listAdapters } from "./adapter.ts";
 * console.log(listAdapters()); // e.g. ["json5"]
 * ```
 */
export function listAdapters(): string[] {
  return [...adapters.keys()].sort();
}

/**
 * Adapts `body` according to a `Content-Type` header: empty or `.../json` is native JSON;
 * otherwise the subtype names the adapter. Throws a 400 AdminError on failure.
 *
 * @example
 * ```ts
 * import { adaptByContentType } from "./adapter.ts";
 * await adaptByContentType("application/json", "{}"); // { result: {}, warnings: [] }
 * ```
 */
export async function adaptByContentType(
  contentType: string | null,
  body: string,
): Promise<AdaptResult> {
  const ct = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (ct === "" || ct.endsWith("/json")) {
    try {
      return { result: body.trim() === "" ? null : JSON.parse(body), warnings: [] };
    } catch (e) {
      throw new AdminError("bad_request", `decoding request body: ${jsonErrorMessage(e)}`);
    }
  }
  const slash = ct.indexOf("/");
  if (slash < 0) throw new AdminError("bad_request", "malformed Content-Type");
  const name = ct.slice(slash + 1).replace(/^x-/, "");
  const adapter = adapters.get(name);
  if (!adapter) throw new AdminError("bad_request", `unrecognized config adapter '${name}'`);
  try {
    return await adapter.adapt(body, { as: name });
  } catch (e) {
    throw new AdminError(
      "bad_request",
      `adapting config using ${name} adapter: ${(e as Error).message}`,
    );
  }
}
