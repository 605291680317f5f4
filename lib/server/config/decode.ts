/**
 * The one config decoder of the server. A {@linkcode Decoder} holds one JSON object and the
 * path it stands at (`http.handlers.file_server`, `tls.automation.policies[0]`); its readers
 * check each field's type, its children carry their own paths (`browse`, `issuers[1]`), and
 * every refusal is a {@linkcode ConfigError} that names the place: the way Caddy's
 * `Dispenser.Errf` adds file and line to every Caddyfile error, without the module spelling
 * the path out at each check. Decoding is strict: `fields` refuses any key not listed (and
 * tells the field audit what the decoder accepts, see {@linkcode recordAcceptedFields}).
 *
 * @example
 * ```ts
 * import { Decoder } from "./decode.ts";
 * const d = Decoder.of({ root: "/srv", browse: { file_limit: 10 } }, "http.handlers.file_server");
 * d.fields(["root", "browse"]);
 * d.string("root"); // "/srv"
 * const browse = d.object("browse")!.fields(["file_limit"]);
 * browse.number("file_limit"); // 10
 * ```
 *
 * @module
 */
import { durationMs } from "./duration.ts";
import { ConfigError, type ConfigErrorCode } from "./error.ts";
import { type IPRange, parseRanges } from "../net/ip.ts";

/** A raw JSON object. */
export type Raw = Record<string, unknown>;

let recorder: ((where: string, allowed: readonly string[]) => void) | null = null;

/**
 * Calls `fn` with the field list of every {@linkcode Decoder.fields} from now on (null stops
 * it): the field audit (tests/server/fields/audit.test.ts) learns from it which fields each
 * decoder accepts.
 *
 * @example
 * ```ts
 * import { Decoder, recordAcceptedFields } from "./decode.ts";
 * const seen: string[] = [];
 * recordAcceptedFields((where, allowed) => seen.push(`${where}: ${allowed.join(",")}`));
 * Decoder.of({}, "x").fields(["a"]);
 * recordAcceptedFields(null);
 * ```
 */
export function recordAcceptedFields(
  fn: ((where: string, allowed: readonly string[]) => void) | null,
): void {
  recorder = fn;
}

/**
 * Tells the field audit the fields a decoder that checks its keys another way (a map of
 * names, a Caddyfile-shaped list) accepts at `where`.
 *
 * @example
 * ```ts
 * import { noteAcceptedFields } from "./decode.ts";
 * noteAcceptedFields("tls.automation", ["policies"]);
 * ```
 */
export function noteAcceptedFields(where: string, allowed: readonly string[]): void {
  recorder?.(where, allowed);
}

function isObject(v: unknown): v is Raw {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One JSON object of a config and where it stands; see the module documentation. */
export class Decoder {
  /** The object itself. */
  readonly raw: Raw;
  /** Where it stands, for messages (`http.handlers.file_server.browse`). */
  readonly path: string;

  /** A decoder of `raw` at `path`. */
  constructor(raw: Raw, path: string) {
    this.raw = raw;
    this.path = path;
  }

  /** A decoder of `v`, which must be a JSON object ("must be an object" otherwise). */
  static of(v: unknown, path: string): Decoder {
    if (!isObject(v)) {
      throw new ConfigError("invalid_config", `${path}: must be an object`, { path });
    }
    return new Decoder(v, path);
  }

  /** The path of the field `key` (`<path>.<key>`). */
  at(key: string): string {
    return `${this.path}.${key}`;
  }

  /** A ConfigError at this object: `<path>: <detail>`. */
  error(detail: string, code: ConfigErrorCode = "invalid_config"): ConfigError {
    return new ConfigError(code, `${this.path}: ${detail}`, { path: this.path });
  }

  /** Throws {@linkcode Decoder.error}. */
  fail(detail: string, code: ConfigErrorCode = "invalid_config"): never {
    throw this.error(detail, code);
  }

  /** Throws a ConfigError at the field `key`: `<path>.<key>: <detail>`. */
  failAt(key: string, detail: string, code: ConfigErrorCode = "invalid_config"): never {
    const path = this.at(key);
    throw new ConfigError(code, `${path}: ${detail}`, { path });
  }

  /** Refuses any key but `allowed` (and `@id`); tells the field audit what is accepted. */
  fields(allowed: readonly string[]): this {
    recorder?.(this.path, allowed);
    for (const k of Object.keys(this.raw)) {
      if (k === "@id" || allowed.includes(k)) continue;
      this.fail(`unknown field "${k}"`, "unknown_field");
    }
    return this;
  }

  /** The raw value of `key` (undefined when absent). */
  value(key: string): unknown {
    return this.raw[key];
  }

  /** True when `key` is set to something other than null. */
  has(key: string): boolean {
    const v = this.raw[key];
    return v !== undefined && v !== null;
  }

  /** An optional string. */
  string(key: string): string | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") this.fail(`"${key}" must be a string`);
    return v;
  }

  /** An optional boolean. */
  bool(key: string): boolean | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") this.fail(`"${key}" must be a boolean`);
    return v;
  }

  /** An optional finite number. */
  number(key: string): number | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(`"${key}" must be a number`);
    return v;
  }

  /** An optional array of strings. */
  strings(key: string): string[] | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
      this.fail(`"${key}" must be an array of strings`);
    }
    return v as string[];
  }

  /** An optional array (elements unchecked). */
  array(key: string): unknown[] | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) this.fail(`"${key}" must be an array`);
    return v;
  }

  /** An optional object, as a raw value. */
  rawObject(key: string): Raw | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v)) this.fail(`"${key}" must be an object`);
    return v;
  }

  /** An optional object, as a decoder at `<path>.<key>`. */
  object(key: string): Decoder | undefined {
    const v = this.rawObject(key);
    return v === undefined ? undefined : new Decoder(v, this.at(key));
  }

  /**
   * An optional array of objects, each as a decoder at `<path>.<key>[i]` (null elements are
   * skipped, as Go's decoder leaves them zero).
   */
  objects(key: string): Decoder[] | undefined {
    const list = this.array(key);
    if (list === undefined) return undefined;
    const out: Decoder[] = [];
    list.forEach((v, i) => {
      if (v !== null) out.push(Decoder.of(v, `${this.at(key)}[${i}]`));
    });
    return out;
  }

  /** A map of header name to string list (Go's `http.Header` JSON). */
  headerMap(key: string): Record<string, string[]> | undefined {
    const o = this.rawObject(key);
    if (!o) return undefined;
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(o)) {
      if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
        this.fail(`"${key}.${k}" must be an array of strings`);
      }
      out[k] = v as string[];
    }
    return out;
  }

  /**
   * An optional list of IP ranges (`10.0.0.0/8`, a bare address, `private_ranges`), parsed;
   * a range that does not parse is refused with its text.
   */
  ipRanges(key: string): IPRange[] | undefined {
    const list = this.strings(key);
    if (list === undefined) return undefined;
    try {
      return parseRanges(list);
    } catch (e) {
      throw new ConfigError("invalid_config", (e as Error).message, { path: this.at(key) });
    }
  }

  /** An optional duration in milliseconds (an integer of nanoseconds or a duration string). */
  duration(key: string): number | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    return durationMs(v, this.at(key));
  }
}
