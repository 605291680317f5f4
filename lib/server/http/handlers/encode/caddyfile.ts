/**
 * Gatehousefile syntax of the `encode` handler:
 * `encode [<matcher>] [<formats...>] { gzip [<level>]; zstd [<level>] {...}; minimum_length <n>; match <response matcher> }`
 * (default formats: zstd and gzip).
 *
 * @module
 */
import { didYouMean, type Dispenser } from "../../../caddyfile/dispenser.ts";
import {
  getSyntax,
  syntaxNames,
  type SyntaxSet,
  unmarshalModule,
} from "../../../caddyfile/registry.ts";
import { goAtoiStrict } from "../../../caddyfile/values.ts";
import { parseNamedResponseMatcher, type ResponseMatcher } from "../../matchers/caddyfile.ts";
import type { EncodeConfig, EncodingsConfig, GzipConfig, ZstdConfig } from "./config.ts";

/** `encode`. */
export function parseEncode(d: Dispenser): EncodeConfig {
  d.next();
  const enc: EncodeConfig = { handler: "encode" };
  const prefer: string[] = [];
  let args = d.remainingArgs();
  const encodings: Record<string, unknown> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "minimum_length":
        if (!d.nextArg()) throw d.argErr();
        try {
          const v = goAtoiStrict(d.val());
          if (v !== 0) enc.minimum_length = v;
        } catch (e) {
          throw d.err((e as Error).message);
        }
        break;
      case "match": {
        const m = new Map<string, ResponseMatcher>();
        parseNamedResponseMatcher(d.newFromNextSegment(), m);
        enc.match = m.get("match");
        break;
      }
      default: {
        const name = d.val();
        encodings[name] = unmarshalModule(d, `http.encoders.${name}`);
        prefer.push(name);
      }
    }
  }
  if (prefer.length === 0 && args.length === 0) args = ["zstd", "gzip"];
  for (const a of args) {
    if (!getSyntax(`http.encoders.${a}`)) {
      throw d.err(
        `finding encoder module '${a}': module not registered: http.encoders.${a}${
          didYouMean(a, syntaxNames("http.encoders"))
        }`,
      );
    }
    encodings[a] = {};
    prefer.push(a);
  }
  if (Object.keys(encodings).length > 0) enc.encodings = encodings as EncodingsConfig;
  if (prefer.length > 0) enc.prefer = prefer;
  return enc;
}

/** `gzip [<level>]`. */
export function gzipEncoding(d: Dispenser): GzipConfig {
  d.next();
  if (!d.nextArg()) return {};
  const level = goAtoiStrict(d.val());
  return level !== 0 ? { level } : {};
}

const ZSTD_LEVELS = ["fastest", "default", "better", "best"];

/** `zstd [<level>] { level <l>; disable_checksum }`. */
export function zstdEncoding(d: Dispenser): ZstdConfig {
  d.next();
  const z: ZstdConfig = {};
  const level = (s: string) => {
    if (!ZSTD_LEVELS.includes(s.toLowerCase())) {
      throw d.err(
        "unexpected compression level, use one of 'fastest', 'better', 'best', 'default'",
      );
    }
    return s;
  };
  const args = d.remainingArgs();
  if (args.length === 1) z.level = level(args[0]);
  else if (args.length > 1) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "level": {
        const a = d.remainingArgs();
        if (a.length !== 1) throw d.argErr();
        if (z.level) throw d.err("compression level already specified");
        z.level = level(a[0]);
        break;
      }
      case "disable_checksum":
        if (d.nextArg()) throw d.argErr();
        if (z.checksum !== undefined) throw d.err("checksum already specified");
        z.checksum = false;
        break;
      default:
        throw d.unknownSubdirective(["level", "disable_checksum"], "unknown subdirective '%s'");
    }
  }
  return z;
}

/** The Gatehousefile syntax of `encode` and its encoders. */
export const syntax: SyntaxSet = {
  handlerDirectives: { encode: parseEncode },
  modules: { "http.encoders.gzip": gzipEncoding, "http.encoders.zstd": zstdEncoding },
};
