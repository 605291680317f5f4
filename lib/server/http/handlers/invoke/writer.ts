/**
 * `invoke` handler → `invoke <name>`.
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { word } from "../../../caddyfile/writer/tokens.ts";
import type { InvokeConfig } from "./config.ts";

/** `invoke`. */
export const writer: HandlerReverser<InvokeConfig> = (f) => {
  const name = f.str("name");
  if (name === undefined) {
    f.problems.add(f.path, "invoke needs the name of a route");
    return null;
  }
  return { name: "invoke", args: [word(name)] };
};
