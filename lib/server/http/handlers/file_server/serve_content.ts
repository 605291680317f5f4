/**
 * Conditional and range requests for files, as Go's `http.ServeContent` answers them:
 * `If-Match`/`If-Unmodified-Since` (412), `If-None-Match`/`If-Modified-Since` (304),
 * `If-Range`, `Range` (settled by range.ts) with one range (206 + Content-Range), several
 * (multipart/byteranges), none satisfiable or malformed (416 + `Content-Range: bytes *` and
 * the size), `Last-Modified`, `Accept-Ranges`, `Content-Length`.
 *
 * @module
 */
import { type ByteRange, planRange } from "./range.ts";

/** What ServeContent needs to know about the content. */
export interface Content {
  /** Size in bytes. */
  size: number;
  /** Modification time, or null when unknown. */
  mtime: Date | null;
  /** `Last-Modified` value when already formatted. */
  lastModified?: string;
  /** Reads `length` bytes from `start` as a stream. */
  read(start: number, length: number): ReadableStream<Uint8Array> | Uint8Array;
  /**
   * Reads from `start` to the end, for a whole answer or a single range that ends where the
   * content does (`bytes=N-`, what players and resumed downloads ask); `read` when absent.
   */
  tail?(start: number): ReadableStream<Uint8Array>;
}

type Cond = "none" | "true" | "false";

function etagList(header: string): { tag: string; weak: boolean }[] | "*" {
  if (header.trim() === "*") return "*";
  const out: { tag: string; weak: boolean }[] = [];
  const re = /\s*(W\/)?("[^"]*")\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(header)) !== null && m[0] !== "") out.push({ tag: m[2], weak: !!m[1] });
  return out;
}

function strongMatch(etag: string, header: string): boolean {
  const list = etagList(header);
  if (list === "*") return true;
  if (etag.startsWith("W/")) return false;
  return list.some((e) => !e.weak && e.tag === etag);
}

function weakMatch(etag: string, header: string): boolean {
  const list = etagList(header);
  if (list === "*") return true;
  const bare = etag.startsWith("W/") ? etag.slice(2) : etag;
  return list.some((e) => e.tag === bare);
}

function parseHTTPDate(s: string): number | null {
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : Math.floor(t / 1000);
}

function checkPreconditions(h: Headers, method: string, etag: string, mtime: Date | null) {
  const getOrHead = method === "GET" || method === "HEAD";
  const mSec = mtime ? Math.floor(mtime.getTime() / 1000) : null;
  let ch: Cond = "none";
  const im = h.get("if-match");
  if (im !== null) ch = strongMatch(etag, im) ? "true" : "false";
  else {
    const ius = h.get("if-unmodified-since");
    if (ius && mSec !== null) {
      const t = parseHTTPDate(ius);
      if (t !== null) ch = mSec <= t ? "true" : "false";
    }
  }
  if (ch === "false") return { status: 412 as const };
  const inm = h.get("if-none-match");
  if (inm !== null) {
    if (weakMatch(etag, inm)) return { status: getOrHead ? 304 as const : 412 as const };
  } else if (getOrHead) {
    const ims = h.get("if-modified-since");
    if (ims && mSec !== null) {
      const t = parseHTTPDate(ims);
      if (t !== null && mSec <= t) return { status: 304 as const };
    }
  }
  let range = h.get("range");
  const ir = h.get("if-range");
  if (range && getOrHead && ir) {
    if (ir.startsWith('"') || ir.startsWith('W/"')) {
      if (!strongMatch(etag, ir)) range = null;
    } else {
      const t = parseHTTPDate(ir);
      if (t === null || mSec === null || t !== mSec) range = null;
    }
  }
  return { status: 0 as const, range };
}

function notModified(h: Headers, status: number): Response {
  h.delete("content-type");
  h.delete("content-length");
  h.delete("content-encoding");
  if (h.has("etag")) h.delete("last-modified");
  return new Response(null, { status, headers: h });
}

function textError(h: Headers, status: number, msg: string): Response {
  h.set("content-type", "text/plain; charset=utf-8");
  h.set("x-content-type-options", "nosniff");
  h.delete("content-length");
  return new Response(msg + "\n", { status, headers: h });
}

const enc = new TextEncoder();

async function* multipart(
  content: Content,
  ranges: ByteRange[],
  boundary: string,
  type: string,
): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i];
    const head = `${i ? "\r\n" : ""}--${boundary}\r\nContent-Range: bytes ${r.start}-${
      r.start + r.length - 1
    }/${content.size}\r\n${type ? `Content-Type: ${type}\r\n` : ""}\r\n`;
    yield enc.encode(head);
    const part = content.read(r.start, r.length);
    if (part instanceof Uint8Array) yield part;
    else for await (const chunk of part) yield chunk;
  }
  yield enc.encode(`\r\n--${boundary}--\r\n`);
}

/**
 * Answers a GET/HEAD for content with preconditions and ranges. `h` holds the response
 * headers so far (ETag, Content-Type...). `statusOverride` replaces every status written.
 */
export function serveContent(
  reqHeaders: Headers,
  method: string,
  h: Headers,
  content: Content,
  statusOverride = 0,
): Response {
  const st = (s: number) => statusOverride || s;
  if (content.mtime && content.mtime.getTime() > 0) {
    h.set("last-modified", content.lastModified ?? content.mtime.toUTCString());
  }
  const pre = checkPreconditions(reqHeaders, method, h.get("etag") ?? "", content.mtime);
  if (pre.status === 412) return new Response(null, { status: st(412), headers: h });
  if (pre.status === 304) return notModified(h, st(304));
  const size = content.size;
  const plan = planRange(pre.range ?? null, size);
  if (plan.kind === "unsatisfiable" || plan.kind === "invalid") {
    h.set("content-range", `bytes */${size}`);
    return textError(
      h,
      st(416),
      plan.kind === "invalid" ? "invalid range" : "invalid range: failed to overlap",
    );
  }
  h.set("accept-ranges", "bytes");
  const noLength = h.has("content-encoding");
  if (plan.kind === "full") {
    if (!noLength) h.set("content-length", String(size));
    const body = method === "HEAD" ? null : content.tail ? content.tail(0) : content.read(0, size);
    return new Response(body as BodyInit, {
      status: st(200),
      headers: h,
    });
  }
  const ranges: ByteRange[] = plan.ranges;
  if (ranges.length === 1) {
    const r = ranges[0];
    h.set("content-range", `bytes ${r.start}-${r.start + r.length - 1}/${size}`);
    if (!noLength) h.set("content-length", String(r.length));
    const body = method === "HEAD"
      ? null
      : content.tail && r.start + r.length === size
      ? content.tail(r.start)
      : content.read(r.start, r.length);
    return new Response(body as BodyInit, {
      status: st(206),
      headers: h,
    });
  }
  const boundary = [...crypto.getRandomValues(new Uint8Array(30))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const type = h.get("content-type") ?? "";
  h.set("content-type", `multipart/byteranges; boundary=${boundary}`);
  let total = 0;
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i];
    total += enc.encode(
      `${i ? "\r\n" : ""}--${boundary}\r\nContent-Range: bytes ${r.start}-${
        r.start + r.length - 1
      }/${size}\r\n${type ? `Content-Type: ${type}\r\n` : ""}\r\n`,
    ).length + r.length;
  }
  total += enc.encode(`\r\n--${boundary}--\r\n`).length;
  if (!noLength) h.set("content-length", String(total));
  const gen = multipart(content, ranges, boundary, type);
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const n = await gen.next();
      if (n.done) ctl.close();
      else ctl.enqueue(n.value);
    },
  });
  return new Response(method === "HEAD" ? null : body, { status: st(206), headers: h });
}
