/**
 * `intercept` handler → `intercept { @m status ...; handle_response @m { ... }; replace_status ... }`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { handleResponseLines } from "../../../caddyfile/writer/response_matcher.ts";
import type { InterceptConfig } from "./config.ts";

/** `intercept`. */
export const writer: HandlerReverser<InterceptConfig> = (f, ctx) => {
  const block = handleResponseLines(f, ctx);
  return { name: "intercept", args: [], block: block.length ? block : undefined };
};
