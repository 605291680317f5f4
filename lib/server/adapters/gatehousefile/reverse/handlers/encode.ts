/**
 * `encode` handler → `encode <formats...>` (with a block for `minimum_length` and encoder
 * options such as `gzip <level>`).
 *
 * @module
 */
import type { Token } from "../../lexer.ts";
import type { HandlerReverser } from "../context.ts";
import { childPath, isObject } from "../problems.ts";
import { type Line, line, word } from "../tokens.ts";

/** `encode`. */
export const encode: HandlerReverser = (f) => {
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
  for (const name of prefer) {
    const opts = encodings[name];
    if (!isObject(opts)) {
      f.problems.add(childPath(f.at("encodings"), name), "an encoder config must be an object");
      return null;
    }
    const keys = Object.keys(opts);
    if (keys.length === 0) {
      if (block.length === 0) args.push(word(name));
      else block.push(line([name]));
      continue;
    }
    if (keys.length === 1 && keys[0] === "level" && typeof opts.level === "number") {
      // once one encoder needs a block line, the later ones go in the block too (order)
      block.push(line([name, String(opts.level)]));
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
    f.problems.add(f.at("match"), "encode's response matcher is not written yet");
    f.take("match");
    return null;
  }
  return { name: "encode", args, block: block.length ? block : undefined };
};
