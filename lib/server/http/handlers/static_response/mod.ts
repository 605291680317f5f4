/**
 * `static_response`: a fixed response: `status_code` (number or placeholder string),
 * `headers`, `body` (placeholders allowed, unknown ones kept; `application/json` when the body
 * sent is a JSON object or array, else `text/plain`), `close` (close the connection
 * after responding) and `abort` (drop the response). The response is precomputed when nothing
 * in it depends on the request.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { decodeStaticResponse, type StaticResponseConfig } from "./config.ts";
import type { RequestContext } from "../../context.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { compileTemplate, type Template } from "../../replacer.ts";

const encoder = new TextEncoder();

function isJSON(body: string): boolean {
  const t = body.trim();
  if (t.length <= 2) return false;
  if (!((t[0] === "{" && t.endsWith("}")) || (t[0] === "[" && t.endsWith("]")))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

/** A response whose body stream fails at once: the closest Deno gets to dropping a request. */
export function abortedResponse(): Response {
  return new Response(
    new ReadableStream({
      start(ctl) {
        ctl.error(new Error("request aborted by handler"));
      },
    }),
  );
}

/** Builds a static_response handler from its decoded config. */
export function staticResponse(config: StaticResponseConfig): HttpHandler {
  const rawStatus = config.status_code;
  const statusT = rawStatus === undefined || rawStatus === ""
    ? null
    : compileTemplate(String(rawStatus));
  const headers = config.headers ?? {};
  const bodySrc = config.body ?? "";
  const close = config.close ?? false;
  if (config.abort) return { serveHTTP: () => abortedResponse() };

  const headerTs: [Template, Template[]][] = Object.entries(headers).map((
    [k, vs],
  ) => [compileTemplate(k), vs.map((v) => compileTemplate(v))]);
  const hasContentType = Object.keys(headers).some((k) => k.toLowerCase() === "content-type");
  const bodyT = compileTemplate(bodySrc, { keepUnknown: true });
  const defaultType = isJSON(bodyT.constant ?? bodySrc)
    ? "application/json"
    : "text/plain; charset=utf-8";
  const constHeaders = headerTs.every(([k, vs]) =>
    k.constant !== null && vs.every((v) => v.constant !== null)
  );
  const fixedStatus = statusT === null
    ? 200
    : statusT.constant !== null
    ? Number(statusT.constant)
    : -1;

  // Precomputed pieces for the constant case.
  const fixedPairs: [string, string][] = [];
  if (constHeaders) {
    for (const [k, vs] of headerTs) for (const v of vs) fixedPairs.push([k.constant!, v.constant!]);
  }
  const fixedBody = bodyT.constant !== null ? encoder.encode(bodyT.constant) : null;
  const pairsWithType: [string, string][] = fixedBody && fixedBody.length && !hasContentType
    ? [...fixedPairs, ["content-type", defaultType]]
    : fixedPairs;
  if (close) {
    fixedPairs.push(["connection", "close"]);
    if (pairsWithType !== fixedPairs) pairsWithType.push(["connection", "close"]);
  }

  function status(c: RequestContext): number {
    if (fixedStatus > 0) return c.error && statusT === null ? c.error.status : fixedStatus;
    const s = Number(statusT!.render(c));
    if (!Number.isInteger(s)) {
      throw new HandlerError(500, `invalid status code: ${statusT!.render(c)}`);
    }
    return s;
  }

  if (constHeaders && fixedBody !== null) {
    // Hot path: the response is built once; each request gets a clone, which costs far less
    // than constructing a Response with a headers init (the init dictionary conversion).
    const body = fixedBody.length ? fixedBody : null;
    const code0 = fixedStatus > 0 ? fixedStatus : 200;
    const withServer = new Response(code0 === 103 ? null : body, {
      status: code0,
      headers: [...pairsWithType, ["server", "Gatehouse"]],
    });
    const withoutServer = new Response(code0 === 103 ? null : body, {
      status: code0,
      headers: pairsWithType,
    });
    return {
      serveHTTP(c) {
        if (c.error === null && fixedStatus > 0 && c.respHeaders === null) {
          if (c.serverHeader) {
            c.headersFinal = true;
            return withServer.clone();
          }
          return withoutServer.clone();
        }
        const code = status(c);
        const h = new Headers(fixedPairs);
        if (body && !hasContentType && !c.respHeaders?.has("content-type")) {
          h.set("content-type", defaultType);
        }
        return new Response(code === 103 ? null : body, { status: code, headers: h });
      },
    };
  }

  return {
    serveHTTP(c) {
      const h = new Headers();
      for (const [k, vs] of headerTs) {
        const name = k.render(c);
        h.delete(name);
        for (const v of vs) h.append(name, v.render(c));
      }
      const body = bodyT.render(c);
      if (body !== "" && !h.has("content-type") && !c.respHeaders?.has("content-type")) {
        // the type comes from the body as sent (Caddy since 2.8.0; 2.6.2 looked at the
        // configured text, so `respond {http.request.body}` was text/plain there)
        h.set("content-type", isJSON(body) ? "application/json" : "text/plain; charset=utf-8");
      }
      if (close) h.set("connection", "close");
      const code = status(c);
      return new Response(body === "" || code === 103 ? null : encoder.encode(body), {
        status: code,
        headers: h,
      });
    },
  };
}

/** Registry entry. */
export const staticResponseModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.static_response",
  create: (config) => staticResponse(decodeStaticResponse(config)),
};
