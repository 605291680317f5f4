/**
 * `log_append` handler → `log_append <key> <value>`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { word } from "../../../caddyfile/writer/tokens.ts";
import type { LogAppendConfig } from "./config.ts";

/** `log_append <key> <value>`. */
export const writer: HandlerReverser<LogAppendConfig> = (f) => {
  const key = f.str("key") ?? "", value = f.str("value") ?? "";
  return { name: "log_append", args: [word(key), word(value)] };
};
