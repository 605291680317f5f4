/**
 * `request_body`: limits the request body to `max_size` bytes. A declared length over the
 * limit fails at once with 413; a streamed body fails with 413 when a handler reads past it.
 * The config is {@linkcode RequestBodyConfig} (`config.ts`); the Gatehousefile syntax is
 * `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeRequestBody, type RequestBodyConfig } from "./config.ts";

/** Thrown through a body stream read past the limit. */
export class BodyTooLarge extends HandlerError {
  /** Creates the 413 error. */
  constructor() {
    super(413, "request body too large", "request_body");
  }
}

/** Builds a request_body handler from its decoded config. */
export function requestBody(config: RequestBodyConfig): HttpHandler {
  const max = config.max_size ?? 0;
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
}

/** Registry entry. */
export const requestBodyModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.request_body",
  create: (config) => requestBody(decodeRequestBody(config)),
};
