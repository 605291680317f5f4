/**
 * A web `Response` sent on an HTTP/3 request stream (RFC 9114 §4.1): one HEADERS frame
 * (`:status`, the fields in order, connection-specific ones dropped, `date` added when the
 * handler set none, as the other listener engines do), the body as DATA frames, then the
 * stream's end. A body that is all there at once (one piece) gets `content-length` and goes
 * out in the same write as the header section; a longer one is streamed piece by piece.
 * HEAD answers and 1xx/204/304 statuses carry no body.
 *
 * Deno's QUIC streams cannot be reset with an error code (their writer's abort ends them
 * cleanly), so a body that fails after its header section went out cannot be told apart
 * from a whole one by resetting its stream, as HTTP/3 would: the caller closes the whole
 * connection with H3_INTERNAL_ERROR instead (`"failed"`).
 *
 * @module
 */
import { FRAME, frameHeaderSize, writeFrameHeader } from "./frames.ts";
import { encodeFieldSection } from "./qpack/encoder.ts";

const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** Pieces up to this size are copied into one write with their frame header. */
const COPY_LIMIT = 16 * 1024;

let dateSecond = 0;
let dateValue = "";
/** The `date` field of now (computed once a second). */
function httpDate(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateValue = new Date(s * 1000).toUTCString();
  }
  return dateValue;
}

function bodyless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** How a response went: sent whole, the peer stopped it, or its body failed mid-way. */
export type SendResult = "sent" | "gone" | "failed";

/** The HEADERS frame of a response, `length` set as content-length when >= 0. */
function headersFrame(status: number, h: Headers, length: number, extra = 0): {
  frame: Uint8Array;
  end: number;
} {
  const fields: string[] = [":status", String(status)];
  let date = false;
  let hasLength = false;
  for (const [k, v] of h) {
    if (CONNECTION_SPECIFIC.has(k)) continue;
    if (k === "date") date = true;
    else if (k === "content-length") hasLength = true;
    fields.push(k, v);
  }
  if (length >= 0 && !hasLength) fields.push("content-length", String(length));
  if (!date) fields.push("date", httpDate());
  // the section is encoded with room in front for the largest frame header (1 + 8 bytes)
  const section = encodeFieldSection(fields, 9);
  const n = section.length - 9;
  const head = frameHeaderSize(FRAME.HEADERS, n);
  const start = 9 - head;
  writeFrameHeader(section, start, FRAME.HEADERS, n);
  if (extra === 0) return { frame: section.subarray(start), end: section.length - start };
  const out = new Uint8Array(section.length - start + extra);
  out.set(section.subarray(start));
  return { frame: out, end: section.length - start };
}

/** A DATA frame header for `n` bytes. */
function dataHeader(n: number): Uint8Array {
  const out = new Uint8Array(frameHeaderSize(FRAME.DATA, n));
  writeFrameHeader(out, 0, FRAME.DATA, n);
  return out;
}

/** One buffer: `head` then a DATA frame of `piece`. */
function withData(head: Uint8Array, headEnd: number, piece: Uint8Array): Uint8Array {
  const at = writeFrameHeader(head, headEnd, FRAME.DATA, piece.length);
  head.set(piece, at);
  return head.subarray(0, at + piece.length);
}

const NOT_YET = Symbol("not yet");

/**
 * Sends `res` on `w` and ends the stream. `head`: a HEAD request (the body is not sent).
 *
 * @example
 * ```ts ignore
 * const result = await sendResponse(stream.writable.getWriter(), new Response("hi"), false);
 * ```
 */
export async function sendResponse(
  w: WritableStreamDefaultWriter<Uint8Array>,
  res: Response,
  head: boolean,
): Promise<SendResult> {
  const status = res.status;
  const body = res.body;
  try {
    if (body === null || head || bodyless(status)) {
      if (body !== null) body.cancel().catch(() => {});
      const length = body === null && !head && !bodyless(status) ? 0 : -1;
      await w.write(headersFrame(status, res.headers, length).frame);
      await w.close();
      return "sent";
    }
  } catch {
    return "gone";
  }
  const reader = body.getReader();
  let headersSent = false;
  // set while a write (or the stream's close) is awaited: a failure then is the peer's
  let writing = false;
  const put = async (bytes: Uint8Array) => {
    writing = true;
    await w.write(bytes);
    writing = false;
  };
  const end = async () => {
    writing = true;
    await w.close();
    writing = false;
  };
  try {
    const first = await reader.read();
    if (first.done) {
      headersSent = true;
      await put(headersFrame(status, res.headers, 0).frame);
      await end();
      return "sent";
    }
    const pending = reader.read();
    const second = await Promise.race([pending, Promise.resolve(NOT_YET)]);
    const piece = first.value;
    const whole = second !== NOT_YET && second.done;
    headersSent = true;
    const { frame, end: at } = headersFrame(
      status,
      res.headers,
      whole ? piece.length : -1,
      9 + (piece.length <= COPY_LIMIT ? piece.length : 0),
    );
    if (piece.length <= COPY_LIMIT) await put(withData(frame, at, piece));
    else {
      await put(frame.subarray(0, writeFrameHeader(frame, at, FRAME.DATA, piece.length)));
      await put(piece);
    }
    if (!whole) {
      let next = second === NOT_YET ? await pending : second;
      while (!next.done) {
        const p = next.value;
        if (p.length > 0) {
          if (p.length <= COPY_LIMIT) await put(withData(new Uint8Array(9 + p.length), 0, p));
          else {
            await put(dataHeader(p.length));
            await put(p);
          }
        }
        next = await reader.read();
      }
    }
    await end();
    return "sent";
  } catch {
    reader.cancel().catch(() => {});
    if (writing) return "gone";
    if (!headersSent) {
      try {
        await w.write(headersFrame(500, new Headers(), 0).frame);
        await w.close();
      } catch { /* gone meanwhile */ }
      return "sent";
    }
    return "failed";
  }
}
