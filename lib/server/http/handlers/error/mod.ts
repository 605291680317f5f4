/**
 * `http.handlers.error`: fails the request with `status_code` (default 500) and `error`
 * message (both may hold placeholders), so the server's `errors` routes handle it. The config
 * is {@linkcode ErrorConfig} (`config.ts`); the Gatehousefile syntax is `caddyfile.ts` and the
 * writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { compileTemplate } from "../../replacer.ts";
import { decodeError, type ErrorConfig } from "./config.ts";

/** Builds an error handler from its decoded config. */
export function error(config: ErrorConfig): HttpHandler {
  const msg = compileTemplate(config.error ?? "");
  const status = compileTemplate(String(config.status_code ?? "500"));
  return {
    serveHTTP(c) {
      const code = Number(status.render(c));
      throw new HandlerError(Number.isInteger(code) ? code : 500, msg.render(c), "error");
    },
  };
}

/** Registry entry. */
export const errorModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.error",
  create: (config) => error(decodeError(config)),
};
