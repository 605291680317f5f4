/**
 * Flags that several commands declare the same way.
 *
 * @module
 */
import type { FlagSpec } from "./command.ts";

/** `-c/--config <path>`, where `-` reads standard input. */
export const CONFIG_FLAG = {
  name: "config",
  short: "c",
  type: "string",
  value: "<path>",
  help: "Config file (- for stdin)",
} as const satisfies FlagSpec;

/** `-a/--adapter <name>`: the config adapter. */
export const ADAPTER_FLAG = {
  name: "adapter",
  short: "a",
  type: "string",
  value: "<name>",
  help: "Name of the config adapter",
} as const satisfies FlagSpec;
