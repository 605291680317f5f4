/**
 * `templates` handler → `templates { mime <types...>; between <open> <close>; root <path> }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";
import type { TemplatesConfig } from "./config.ts";

/** `templates`. */
export const writer: HandlerReverser<TemplatesConfig> = (f) => {
  const block: Line[] = [];
  const mime = f.strs("mime_types");
  if (mime) block.push(line(["mime", ...mime]));
  const delims = f.strs("delimiters");
  if (delims) block.push(line(["between", ...delims]));
  const root = f.str("file_root");
  if (root !== undefined) block.push(line(["root", root]));
  return { name: "templates", args: [], block: block.length ? block : undefined };
};
