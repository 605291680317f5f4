/**
 * Handlers with a short directive: `templates`, `request_body`, `authentication`
 * (`basic_auth`), `invoke`, `copy_response`, `copy_response_headers`, `log_append`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { type Line, line, statusText, word } from "../../../../caddyfile/writer/tokens.ts";

/** `templates`. */
export const templates: HandlerReverser = (f) => {
  const block: Line[] = [];
  const mime = f.strs("mime_types");
  if (mime) block.push(line(["mime", ...mime]));
  const delims = f.strs("delimiters");
  if (delims) block.push(line(["between", ...delims]));
  const root = f.str("file_root");
  if (root !== undefined) block.push(line(["root", root]));
  return { name: "templates", args: [], block: block.length ? block : undefined };
};

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
