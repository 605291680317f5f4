/**
 * The `json5` config adapter (`Content-Type: application/json5`, `--adapter json5`).
 *
 * @module
 */
import JSON5 from "json5";
import { type ConfigAdapter, registerAdapter } from "../adapter.ts";

/** Adapts JSON5 (comments, trailing commas, unquoted keys) to native JSON. */
export const json5Adapter: ConfigAdapter = {
  name: "json5",
  adapt(body) {
    return { result: JSON5.parse(body), warnings: [] };
  },
};

registerAdapter(json5Adapter);
