/**
 * The config of `http.handlers.invoke`, as Caddy's `Invoke` (`modules/caddyhttp/invoke.go`),
 * and its decoder. The JSON decoder, the `invoke` directive (`caddyfile.ts`) and the writer
 * (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/** `http.handlers.invoke`: runs one of the server's named routes. */
export type InvokeConfig = {
  /** The module name. */
  handler: "invoke";
  /** The name of the route (a key of the server's `named_routes`); required. */
  name: string;
};

/** The fields of {@linkcode InvokeConfig}. */
export const INVOKE_FIELDS: readonly (keyof InvokeConfig)[] = ["handler", "name"];

/**
 * Decodes and checks an `invoke` config (a name is required).
 *
 * @example
 * ```ts
 * import { decodeInvoke } from "./config.ts";
 * decodeInvoke({ handler: "invoke", name: "api" }).name; // "api"
 * ```
 */
export function decodeInvoke(raw: Raw): InvokeConfig {
  const d = new Decoder(raw, "http.handlers.invoke").fields(INVOKE_FIELDS);
  const name = d.string("name") ?? "";
  if (name === "") d.fail('"name" is required');
  return { handler: "invoke", name };
}
