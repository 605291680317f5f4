/**
 * `request_body`: limits the request body to `max_size` bytes. A declared length over the
 * limit fails at once with 413; a streamed body fails with 413 when a handler reads past it.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { checkFields, optNumber } from "../config.ts";
import { HandlerError } from "../errors.ts";
import type { HttpHandler } from "../handler.ts";

/** Thrown through a body stream read past the limit. */
export class BodyTooLarge extends HandlerError {
  /** Creates the 413 error. */
  constructor() {
    super(413, "request body too large", "request_body");
  }
}

/** Registry entry. */
export const requestBodyModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.request_body",
  create(config) {
    const where = "http.handlers.request_body";
    checkFields(config, ["handler", "max_size"], where);
    const max = optNumber(config, "max_size", where) ?? 0;
    return {
      serveHTTP(c, next) {
        if (max <= 0) return next(c);
        const declared = Number(c.headers.get("content-length") ?? "NaN");
        if (declared > max) throw new BodyTooLarge();
        const body = c.requestBody();
        if (body) {
          let seen = 0;
          c.setRequestBody(body.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, ctl) {
                seen += chunk.byteLength;
                if (seen > max) ctl.error(new BodyTooLarge());
                else ctl.enqueue(chunk);
              },
            }),
          ));
        }
        return next(c);
      },
    };
  },
};
