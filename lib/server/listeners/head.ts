/**
 * HEAD answers: what is sent in place of a handler's answer to a HEAD request.
 *
 * @module
 */
/** How much of a HEAD answer's body is read to tell its length (as Go buffers before chunking). */
const HEAD_LENGTH_LIMIT = 64 * 1024;

/**
 * A HEAD answer without its body (Deno.serve's HTTP/2 would send the body; the node engine
 * sends none but gave no length). The `Content-Length` the body would have had stays: the
 * handler's, or the body's own length when it ends within 64 KiB (Go's server computes it the
 * same way); a longer body of unknown length gets none, as in Go.
 *
 * @example
 * ```ts
 * import { headAnswer } from "./head.ts";
 * const res = await headAnswer(new Response("hello"));
 * console.log(res.body, res.headers.get("content-length")); // null "5"
 * ```
 */
export async function headAnswer(res: Response): Promise<Response> {
  if (res.body === null) return res;
  const headers = new Headers(res.headers);
  if (!headers.has("content-length")) {
    const reader = res.body.getReader();
    let n = 0;
    let ended = false;
    try {
      while (n <= HEAD_LENGTH_LIMIT) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        n += value.byteLength;
      }
    } catch {
      // a body that fails: the length is unknown
    }
    if (ended) headers.set("content-length", String(n));
    else reader.cancel().catch(() => {});
  } else res.body.cancel().catch(() => {});
  return new Response(null, { status: res.status, statusText: res.statusText, headers });
}
