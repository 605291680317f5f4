/**
 * `error` handler → `error` directive.
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Line, line, statusText, word } from "../../../caddyfile/writer/tokens.ts";
import type { ErrorConfig } from "./config.ts";

/** `error`. */
export const writer: HandlerReverser<ErrorConfig> = (f) => {
  const status = statusText(f.take("status_code"));
  const message = f.str("error") ?? "";
  const block: Line[] = [];
  const args: Token[] = [];
  if (status === undefined) {
    if (message === "") {
      f.problems.add(
        f.path,
        "an error handler without message or status has no Gatehousefile form",
      );
      return null;
    }
    if (/^\d{3}$/.test(message)) block.push(line(["message", message]));
    else args.push(word(message));
  } else if (message === "" && /^\d{3}$/.test(status) && Number(status) > 0) {
    args.push(word(status));
  } else args.push(word(message), word(status));
  return { name: "error", args, block: block.length ? block : undefined };
};
