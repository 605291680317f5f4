/**
 * The templates handler: lets the rest of the chain answer; when the answer's
 * `Content-Type` contains one of the MIME types, reads its body, runs it as a Go template
 * (context.ts) with the request path as the template's name, and answers with the result:
 * `Content-Length` set to it, `Accept-Ranges`, `Last-Modified` and `ETag` removed (the
 * content is made per request), the status kept. Other answers (a 304 without a
 * `Content-Type`, an image) pass through untouched; so does a failed chain. A template that
 * fails is a 500 (its message in the error log); `httpError` makes that status instead.
 *
 * @module
 */
import type { ServeInfo } from "../../../module/listener.ts";
import type { Logger } from "../../../module/instance.ts";
import type { RequestContext } from "../../context.ts";
import { errorResponse, HandlerError, responseError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { replaceAll } from "../../replacer.ts";
import { DEFAULT_MIME_TYPES, type TemplatesConfig } from "./config.ts";
import { type RunEnv, TemplateContext } from "./context.ts";
import { TemplateError } from "./gotemplate/mod.ts";

/** The largest body a template is made from (a larger one is a 500). */
export const MAX_TEMPLATE_BYTES = 64 * 1024 * 1024;

/** The templates handler, settled from its config. */
export class Templates implements HttpHandler {
  #mime: readonly string[];
  #root: string;
  #delims: [string, string];
  #log: Logger;

  constructor(config: TemplatesConfig, log: Logger) {
    this.#mime = config.mime_types ?? DEFAULT_MIME_TYPES;
    this.#root = config.file_root || "{http.vars.root}";
    const d = config.delimiters;
    this.#delims = d && d.length === 2 ? [d[0], d[1]] : ["{{", "}}"];
    this.#log = log;
  }

  /** Runs the chain and renders what it answered. */
  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    const res = await next(c);
    if (responseError(res)) return res;
    const type = res.headers.get("content-type") ?? "";
    if (!this.#mime.some((m) => type.includes(m))) return res;
    const bytes = res.body === null ? new Uint8Array() : new Uint8Array(await res.arrayBuffer());
    if (bytes.length > MAX_TEMPLATE_BYTES) {
      return errorResponse(new HandlerError(500, "template larger than the limit", "templates"));
    }
    const headers = new Headers(res.headers);
    const env: RunEnv = {
      c,
      root: replaceAll(c, this.#root, "."),
      respHeader: headers,
      delims: this.#delims,
      subrequest: c.server.handle ? (uri, h) => subrequest(c, uri, h) : undefined,
      warn: (msg, fields) => this.#log.named("maybe").warn(msg, fields),
    };
    let out: string;
    try {
      out = await new TemplateContext(env).execute(c.path, new TextDecoder().decode(bytes));
    } catch (e) {
      if (e instanceof TemplateError) {
        if (e.cause instanceof HandlerError) return errorResponse(e.cause);
        return errorResponse(new HandlerError(500, e.message, "templates", e));
      }
      throw e;
    }
    const body = new TextEncoder().encode(out);
    // a template that removed Content-Type gets Go's sniffed one, as Caddy's answer does
    if (!headers.has("content-type") && body.length > 0) headers.set("content-type", sniff(body));
    headers.set("content-length", String(body.length));
    headers.delete("accept-ranges");
    headers.delete("last-modified");
    headers.delete("etag");
    const noBody = c.method === "HEAD" || res.status === 204 || res.status === 304;
    return new Response(noBody ? null : body, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  }
}

const HTML_TAGS = [
  "<!DOCTYPE HTML",
  "<HTML",
  "<HEAD",
  "<SCRIPT",
  "<IFRAME",
  "<H1",
  "<DIV",
  "<FONT",
  "<TABLE",
  "<A",
  "<STYLE",
  "<TITLE",
  "<B",
  "<BODY",
  "<BR",
  "<P",
  "<!--",
];

/**
 * Go's `http.DetectContentType` for what a template makes: HTML, XML, text (no binary
 * bytes), or `application/octet-stream`.
 */
export function sniff(body: Uint8Array): string {
  const head = body.subarray(0, 512);
  let i = 0;
  while (i < head.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(head[i])) i++;
  const text = new TextDecoder().decode(head.subarray(i)).toUpperCase();
  for (const tag of HTML_TAGS) {
    const after = text[tag.length];
    if (text.startsWith(tag) && (after === " " || after === ">")) return "text/html; charset=utf-8";
  }
  if (text.startsWith("<?XML")) return "text/xml; charset=utf-8";
  for (const b of head) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)) {
      return "application/octet-stream";
    }
  }
  return "text/plain; charset=utf-8";
}

/** A virtual GET through the whole server (`httpInclude`), as Caddy makes it. */
async function subrequest(
  c: RequestContext,
  uri: string,
  headers: Headers,
): Promise<{ status: number; body: string }> {
  if (!uri.startsWith("/")) {
    throw new TypeError(`parse ${JSON.stringify(uri)}: not a path on this server`);
  }
  const url = `http://${c.host}${uri}`;
  let req: Request;
  try {
    req = new Request(url, { method: "GET", headers });
  } catch (e) {
    throw new TypeError(`parse ${JSON.stringify(uri)}: ${(e as Error).message}`);
  }
  const info: ServeInfo = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 10000 },
    localAddress: c.info.localAddress,
  };
  const res = await c.server.handle!(req, info);
  return { status: res.status, body: await res.text() };
}
