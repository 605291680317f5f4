/**
 * The `json5` config adapter (`Content-Type: application/json5`, `--adapter json5`). The
 * JSON5 parser loads on first use, so a server that never adapts JSON5 does not carry it.
 *
 * @module
 */
import type JSON5Type from "json5";
import { type ConfigAdapter, registerAdapter } from "../adapter.ts";

let JSON5: typeof JSON5Type | undefined;

/** Adapts JSON5 (comments, trailing commas, unquoted keys) to native JSON. */
export const json5Adapter: ConfigAdapter = {
  name: "json5",
  async adapt(body) {
    JSON5 ??= (await import("json5")).default;
    return { result: JSON5.parse(body), warnings: [] };
  },
};

registerAdapter(json5Adapter);
