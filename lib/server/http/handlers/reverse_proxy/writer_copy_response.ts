/**
 * `copy_response` → `copy_response [<status>]` and `copy_response_headers` →
 * `copy_response_headers { include <field>; exclude <field> }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Line, line, statusText, word } from "../../../caddyfile/writer/tokens.ts";
import type { CopyResponseConfig, CopyResponseHeadersConfig } from "./copy_response.ts";

/** `copy_response`. */
export const copyResponseWriter: HandlerReverser<CopyResponseConfig> = (f) => {
  const status = statusText(f.take("status_code"));
  return { name: "copy_response", args: status !== undefined ? [word(status)] : [] };
};

/** `copy_response_headers`. */
export const copyResponseHeadersWriter: HandlerReverser<CopyResponseHeadersConfig> = (f) => {
  const block: Line[] = [];
  for (const h of f.strs("include") ?? []) block.push(line(["include", h]));
  for (const h of f.strs("exclude") ?? []) block.push(line(["exclude", h]));
  return { name: "copy_response_headers", args: [], block: block.length ? block : undefined };
};
