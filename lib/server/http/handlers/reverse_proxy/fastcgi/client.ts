/**
 * The FastCGI client of `reverse_proxy` (`transport.protocol: "fastcgi"`): one connection per
 * request, as Caddy and nginx use by default (php-fpm closes it after the response). The
 * request goes out as `BEGIN_REQUEST` (responder role), the CGI environment (env.ts) and the
 * body on `STDIN`; the response comes back as records (response.ts) and is handed to the
 * proxy in the same shape as the HTTP/1.1 client's, so header operations, `handle_response`
 * and the access log work alike. Writing and reading run together, so a responder that
 * answers before reading the whole body is not stuck behind it.
 *
 * Limits: a request body without Content-Length (chunked) is buffered to learn its length
 * (php-fpm needs `CONTENT_LENGTH`), up to 1 MiB, else 411; one CGI variable over 65500 bytes
 * is 431; the response head is at most 64 KiB; stderr keeps 64 KiB.
 *
 * @module
 */
import type { Logger } from "../../../../module/instance.ts";
import type { RequestContext } from "../../../context.ts";
import { HandlerError } from "../../../errors.ts";
import type { H1Response, RoundTrip } from "../h1client.ts";
import { writeAll } from "../byte_conn.ts";
import { dialUpstream } from "../upstream_dial.ts";
import type { ByteConn } from "../byte_conn.ts";
import { UpstreamTimeout } from "../transport.ts";
import type { FastCGIOptions } from "./config.ts";
import { EnvBuilder } from "./env.ts";
import {
  beginRequest,
  concat,
  encodeParams,
  encodeRecord,
  encodeStdin,
  ParamTooLarge,
  STDIN,
} from "./records.ts";
import { BodyFramer, MAX_STDERR, readBody, readHead, RecordReader } from "./response.ts";

/** Largest request body buffered to learn its length (no Content-Length). */
export const MAX_BUFFERED_BODY = 1 << 20;

/** What the proxy handler calls for each attempt on a FastCGI upstream. */
export interface FastCGITransport {
  /** One request/response exchange; resolves at the response head. */
  roundTrip(c: RequestContext, o: RoundTrip): Promise<H1Response>;
}

/** Reads a body stream whole, at most `max` bytes; null when it is longer. */
async function bufferBody(
  body: ReadableStream<Uint8Array>,
  max: number,
): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let n = 0;
  const reader = body.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    parts.push(value);
  }
  return concat(parts.length ? parts : [new Uint8Array(0)]);
}

/** Sends the `STDIN` stream: the body (buffered bytes or a stream), then the empty record. */
async function writeStdin(
  conn: ByteConn,
  body: Uint8Array | ReadableStream<Uint8Array> | null,
): Promise<void> {
  if (body instanceof Uint8Array) {
    if (body.length) await writeAll(conn, encodeStdin(body));
  } else if (body) {
    for await (const chunk of body) if (chunk.length) await writeAll(conn, encodeStdin(chunk));
  }
  await writeAll(conn, encodeRecord(STDIN, new Uint8Array(0)));
}

/**
 * A FastCGI transport for a handler: the config decoded, its templates compiled.
 *
 * @example
 * ```ts
 * import { fastCGITransport } from "./client.ts";
 * import { fastcgiOptions } from "./config.ts";
 * const t = fastCGITransport(fastcgiOptions({ protocol: "fastcgi" }), console as never);
 * ```
 */
export function fastCGITransport(cfg: FastCGIOptions, logger: Logger): FastCGITransport {
  const builder = new EnvBuilder(cfg);
  return {
    async roundTrip(c, o) {
      let conn: ByteConn | null = null;
      const close = () => {
        try {
          conn?.close();
        } catch { /* already closed */ }
      };
      let settled = false;
      let headRead = false;
      const timers: ReturnType<typeof setTimeout>[] = [];
      let timedOut: string | null = null;
      const end = () => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        close();
        o.onDone();
      };
      try {
        const method = o.method.toUpperCase();
        const env = await builder.build(c, o);
        let body: Uint8Array | ReadableStream<Uint8Array> | null = o.body;
        if (method === "HEAD" || method === "OPTIONS") {
          o.body?.cancel().catch(() => {});
          body = null;
          env.set("CONTENT_LENGTH", "0");
        } else {
          let length = o.contentLength ? env.get("CONTENT_LENGTH") ?? "" : "";
          if (!/^\d+$/.test(length)) {
            if (o.body === null) length = "0";
            else {
              body = await bufferBody(o.body, MAX_BUFFERED_BODY);
              if (body === null) {
                throw new HandlerError(
                  411,
                  `a request body without Content-Length is over ${MAX_BUFFERED_BODY} bytes ` +
                    `(the FastCGI responder needs its length)`,
                  "reverse_proxy",
                );
              }
              length = String(body.length);
            }
          }
          env.set("CONTENT_LENGTH", length);
          if (method !== "GET" && !env.get("CONTENT_TYPE")) {
            env.set("CONTENT_TYPE", "application/x-www-form-urlencoded");
          }
        }
        env.set("REQUEST_METHOD", method);
        let params: Uint8Array;
        try {
          params = encodeParams(env);
        } catch (e) {
          if (e instanceof ParamTooLarge) throw new HandlerError(431, e.message, "reverse_proxy");
          throw e;
        }
        if (cfg.readTimeout > 0) {
          timers.push(setTimeout(() => {
            timedOut = `FastCGI upstream ${o.dial}: response not read within read_timeout`;
            close();
          }, cfg.readTimeout));
        }
        conn = await dialUpstream(o.dial, cfg.dialTimeout, null);
        if (timedOut) close();
        const opened = conn;
        // the client went away while the response head was awaited
        const gone = () => {
          if (!settled && !headRead) close();
        };
        o.clientDone?.then(gone, gone);
        // the request is written while the response is read
        let writeTimer: ReturnType<typeof setTimeout> | undefined;
        if (cfg.writeTimeout > 0) {
          writeTimer = setTimeout(() => {
            timedOut = `FastCGI upstream ${o.dial}: request not written within write_timeout`;
            close();
          }, cfg.writeTimeout);
          timers.push(writeTimer);
        }
        let writeError: unknown = null;
        const writing = (async () => {
          if (body === null || body instanceof Uint8Array) {
            // the whole request in one write
            const parts = [beginRequest(), params];
            if (body?.length) parts.push(encodeStdin(body));
            parts.push(encodeRecord(STDIN, new Uint8Array(0)));
            await writeAll(opened, concat(parts));
            return;
          }
          await writeAll(opened, concat([beginRequest(), params]));
          await writeStdin(opened, body);
        })().then(
          () => clearTimeout(writeTimer),
          (e) => {
            writeError = e;
          },
        );
        const reader = new RecordReader(opened);
        let headResult;
        try {
          headResult = await readHead(reader);
        } catch (e) {
          await Promise.race([writing, new Promise((r) => setTimeout(r, 0))]);
          throw writeError && !reader.ended ? writeError : e;
        }
        headRead = true;
        const { head, rest } = headResult;
        const logStderr = (status: number) => {
          if (!cfg.captureStderr || reader.stderrBytes === 0) return;
          const text = new TextDecoder().decode(concat(reader.stderr));
          const fields: Record<string, unknown> = { body: text, upstream: o.dial };
          if (reader.stderrBytes > MAX_STDERR) {
            fields.truncated_bytes = reader.stderrBytes - MAX_STDERR;
          }
          if (status >= 400) logger.error("stderr", fields);
          else logger.warn("stderr", fields);
        };
        const done = (e: unknown) => {
          logStderr(head.status);
          if (e && timedOut) o.onBodyError?.(new UpstreamTimeout(timedOut));
          else if (e) o.onBodyError?.(e);
          end();
        };
        const noBody = method === "HEAD" || head.status === 204 || head.status === 304;
        if (noBody) {
          done(null);
          return { status: head.status, headers: head.headers, body: null };
        }
        const bodyOut = await readBody(reader, new BodyFramer(head), rest, done);
        return { status: head.status, headers: head.headers, body: bodyOut };
      } catch (e) {
        end();
        if (timedOut && !(e instanceof HandlerError)) throw new UpstreamTimeout(timedOut);
        throw e;
      }
    },
  };
}
