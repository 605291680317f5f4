/**
 * `request_body` handler → `request_body { max_size <n>; set <body> }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";
import type { RequestBodyDirective } from "./config.ts";

/** `request_body`. */
export const writer: HandlerReverser<RequestBodyDirective> = (f) => {
  const block: Line[] = [];
  const max = f.num("max_size");
  if (max !== undefined) block.push(line(["max_size", String(max)]));
  const set = f.str("set");
  if (set !== undefined) block.push(line(["set", set]));
  return { name: "request_body", args: [], block: block.length ? block : undefined };
};
