/**
 * `reverse_proxy`'s response handlers: `copy_response` and `copy_response_headers`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { type Line, line, statusText, word } from "../../../../caddyfile/writer/tokens.ts";

/** `copy_response`. */
export const copyResponse: HandlerReverser = (f) => {
  const status = statusText(f.take("status_code"));
  return { name: "copy_response", args: status !== undefined ? [word(status)] : [] };
};

/** `copy_response_headers`. */
export const copyResponseHeaders: HandlerReverser = (f) => {
  const block: Line[] = [];
  for (const h of f.strs("include") ?? []) block.push(line(["include", h]));
  for (const h of f.strs("exclude") ?? []) block.push(line(["exclude", h]));
  return { name: "copy_response_headers", args: [], block: block.length ? block : undefined };
};
