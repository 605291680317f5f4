/**
 * `encode` handler → `encode <formats...>` (with a block for `minimum_length`, encoder
 * options such as `gzip <level>`, and the response matcher `match { ... }`).
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { childPath, isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import type { EncodeConfig } from "./config.ts";
import { responseMatcherLines } from "../../../caddyfile/writer/response_matcher.ts";

/** `encode`. */
export const writer: HandlerReverser<EncodeConfig> = (f) => {
  const encodings = f.obj("encodings") ?? {};
  const prefer = f.strs("prefer") ?? [];
  const min = f.num("minimum_length");
  const names = Object.keys(encodings);
  if (prefer.length !== names.length || !names.every((n) => prefer.includes(n))) {
    f.problems.add(
      f.at("prefer"),
      "prefer must list exactly the configured encodings (the Gatehousefile writes one list)",
    );
    return null;
  }
  const args: Token[] = [];
  const block: Line[] = [];
  // the adapter lists block encoders before those on the line: with options, all go in the block
  const inBlock = prefer.some((n) => isObject(encodings[n]) && Object.keys(encodings[n]).length);
  for (const name of prefer) {
    const opts = encodings[name];
    if (!isObject(opts)) {
      f.problems.add(childPath(f.at("encodings"), name), "an encoder config must be an object");
      return null;
    }
    const keys = Object.keys(opts);
    if (keys.length === 0) {
      if (inBlock) block.push(line([name]));
      else args.push(word(name));
      continue;
    }
    if (keys.length === 1 && keys[0] === "level" && typeof opts.level === "number") {
      block.push(line([name, String(opts.level)]));
      continue;
    }
    if (
      name === "zstd" && keys.every((k) => k === "level" || k === "checksum") &&
      (opts.level === undefined || typeof opts.level === "string") &&
      (opts.checksum === undefined || opts.checksum === false)
    ) {
      const level = opts.level === undefined ? [] : [opts.level as string];
      const sub = opts.checksum === false ? [line(["disable_checksum"])] : undefined;
      block.push(line([name, ...level], sub));
      continue;
    }
    f.problems.add(
      childPath(f.at("encodings"), name),
      `options ${keys.join(", ")} of encoder ${name} have no Gatehousefile form`,
    );
    return null;
  }
  if (min !== undefined) block.unshift(line(["minimum_length", String(min)]));
  if (f.has("match")) {
    const lines = responseMatcherLines(f.take("match"), f.at("match"), f.problems);
    if (!lines) return null;
    block.push(line(["match"], lines));
  }
  return { name: "encode", args, block: block.length ? block : undefined };
};
