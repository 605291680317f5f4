/**
 * `push` handler → `push [<resource>] { [GET|HEAD] <resource>; headers { <header ops> } }`.
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import type { HeaderOpsConfig } from "../headers/config.ts";
import { headerOpLines } from "../headers/writer.ts";
import type { PushConfig } from "./config.ts";

/** `push [<resources...>] { <METHOD> <target>; <header ops> }`. */
export const writer: HandlerReverser<PushConfig> = (f) => {
  const args: Token[] = [];
  const block: Line[] = [];
  (f.arr("resources") ?? []).forEach((r, i) => {
    if (!isObject(r) || typeof r.target !== "string") return;
    // the first target without a method may stand on the directive's line
    if (r.method === undefined && i === 0) args.push(word(r.target));
    else if (r.method === undefined) block.push(line([r.target]));
    else block.push(line([String(r.method), r.target]));
  });
  const h = f.fields<HeaderOpsConfig>("headers");
  if (h) {
    block.unshift(line(["headers"], headerOpLines(h) ?? []));
    h.done("push headers");
  }
  return { name: "push", args, block: block.length ? block : undefined };
};
