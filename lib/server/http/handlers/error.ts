/**
 * `error`: fails the request with `status_code` (default 500) and `error` message (both may
 * hold placeholders), so the server's `errors` routes handle it.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { checkFields, optString } from "../config.ts";
import { HandlerError } from "../errors.ts";
import type { HttpHandler } from "../handler.ts";
import { compileTemplate } from "../replacer.ts";

/** Registry entry. */
export const errorModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.error",
  create(config) {
    const where = "http.handlers.error";
    checkFields(config, ["handler", "error", "status_code"], where);
    const msg = compileTemplate(optString(config, "error", where) ?? "");
    const status = compileTemplate(String(config.status_code ?? "500"));
    return {
      serveHTTP(c) {
        const code = Number(status.render(c));
        throw new HandlerError(Number.isInteger(code) ? code : 500, msg.render(c), "error");
      },
    };
  },
};
