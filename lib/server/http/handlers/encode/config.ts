/**
 * The config of `http.handlers.encode`, field by field as Caddy's `Encode`
 * (`modules/caddyhttp/encode/encode.go`) and its encoders `http.encoders.gzip` and
 * `http.encoders.zstd` (`encode/gzip`, `encode/zstd`), and its decoder. The JSON decoder, the
 * `encode` directive and the encoders' syntax (`caddyfile.ts`) and the writer (`writer.ts`)
 * make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { decodeResponseMatcher, type ResponseMatcherConfig } from "../../response_matcher.ts";

/** `http.encoders.gzip`. */
export type GzipConfig = {
  /** The compression level, 1 (fastest) to 9 (smallest); 5 by default. */
  level?: number;
};

/** `http.encoders.zstd`. */
export type ZstdConfig = {
  /** The level: `fastest`, `default`, `better` or `best` (or a zstd level number). */
  level?: string | number;
  /** Frames carry their XXH64 checksum (default true). */
  checksum?: boolean;
};

/** The encoders, by name (`br` has no options). */
export type EncodingsConfig = {
  /** gzip. */
  gzip?: GzipConfig;
  /** Zstandard. */
  zstd?: ZstdConfig;
  /** Brotli. */
  br?: Record<string, never>;
};

/** `http.handlers.encode`. */
export type EncodeConfig = {
  /** The module name. */
  handler: "encode";
  /** The encodings to choose from; the client's `Accept-Encoding` picks the best. */
  encodings?: EncodingsConfig;
  /** When the client has no strong preference, these encodings in order. */
  prefer?: string[];
  /** Only responses longer than this many bytes are encoded (512 when 0 or absent). */
  minimum_length?: number;
  /** Only responses this matches are encoded; by default text-like content types. */
  match?: ResponseMatcherConfig;
};

/** The fields of {@linkcode EncodeConfig}. */
export const ENCODE_FIELDS: readonly (keyof EncodeConfig)[] = [
  "handler",
  "encodings",
  "prefer",
  "minimum_length",
  "match",
];

/** The responses encoded when the config has no `match`: text-like content types. */
export const DEFAULT_MATCH: ResponseMatcherConfig = {
  headers: {
    "Content-Type": [
      "text/*",
      "application/json*",
      "application/javascript*",
      "application/xhtml+xml*",
      "application/atom+xml*",
      "application/rss+xml*",
      "image/svg+xml*",
    ],
  },
};

function decodeEncodings(d: Decoder, where: string): EncodingsConfig {
  const out: EncodingsConfig = {};
  for (const [name, raw] of Object.entries(d.raw)) {
    const o = raw ? Decoder.of(raw, d.at(name)) : new Decoder({}, d.at(name));
    if (name === "gzip") {
      o.fields(["level"]);
      // a mistyped level is named at the handler, as before the encoders had their own paths
      const level = new Decoder(o.raw, where).number("level");
      out.gzip = level !== undefined ? { level } : {};
    } else if (name === "zstd") {
      o.fields(["level", "checksum"]);
      const z: ZstdConfig = {};
      const level = o.raw.level;
      if (typeof level === "string" || typeof level === "number") z.level = level;
      const checksum = o.bool("checksum");
      if (checksum !== undefined) z.checksum = checksum;
      out.zstd = z;
    } else if (name === "br") {
      out.br = {};
    } else {
      throw new Decoder(d.raw, where).error(`unknown encoding ${name}`);
    }
  }
  return out;
}

/**
 * Decodes and checks an `encode` config (types, known fields, the encoders).
 *
 * @example
 * ```ts
 * import { decodeEncode } from "./config.ts";
 * decodeEncode({ handler: "encode", encodings: { gzip: {} } }).encodings; // { gzip: {} }
 * ```
 */
export function decodeEncode(raw: Raw): EncodeConfig {
  const d = new Decoder(raw, "http.handlers.encode").fields(ENCODE_FIELDS);
  const out: EncodeConfig = { handler: "encode" };
  const encodings = d.object("encodings");
  if (encodings) out.encodings = decodeEncodings(encodings, d.path);
  const prefer = d.strings("prefer");
  if (prefer) out.prefer = prefer;
  const min = d.number("minimum_length");
  if (min !== undefined) out.minimum_length = min;
  const match = d.object("match");
  if (match) out.match = decodeResponseMatcher(match);
  return out;
}
