/**
 * fast-check generators of upstream HTTP/1.1 responses (valid ones, with their model) and of
 * hostile mutations of them, plus a reader that applies the client's parsers
 * (`HeadScanner`, `parseResponseHead`, `framing`, `ChunkedDecoder`) to a whole byte string
 * fed in given pieces, the way the client reads a connection.
 */
import fc from "fast-check";
import { ChunkedDecoder } from "../../../lib/server/http/handlers/reverse_proxy/h1chunked.ts";
import {
  framing,
  H1_LIMITS,
  HeadScanner,
  parseResponseHead,
  UpstreamProtocolError,
} from "../../../lib/server/http/handlers/reverse_proxy/h1parse.ts";

/** A generated valid response and what it means. */
export interface ValidResponse {
  bytes: Uint8Array;
  status: number;
  /** End-to-end header fields as generated (names as sent). */
  headers: [string, string][];
  body: Uint8Array;
  chunked: boolean;
}

const enc = new TextEncoder();

/** Names the tests leave to the proxy or the listener (framing, hop-by-hop, Date, Server). */
const RESERVED = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "upgrade",
  "date",
  "server",
]);

const tokenArb = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,16}$/)
  .filter((n) => !RESERVED.has(n.toLowerCase()));
const valueArb = fc.oneof(
  fc.constant(""),
  fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,24}[\x21-\x7e])?$/),
);
const extArb = fc.oneof(
  fc.constant(""),
  tokenArb.map((n) => `;${n}`),
  fc.tuple(tokenArb, tokenArb).map(([n, v]) => `;${n}=${v}`),
  fc.tuple(tokenArb, fc.stringMatching(/^[\x20\x21\x23-\x5b\x5d-\x7e]{0,10}$/))
    .map(([n, v]) => ` ; ${n}="${v}"`),
);

function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Valid responses with a body framed by Content-Length or chunked coding. */
export const validResponseArb: fc.Arbitrary<ValidResponse> = fc.record({
  status: fc.integer({ min: 200, max: 599 }).filter((s) => s !== 204 && s !== 304),
  headers: fc.array(fc.tuple(tokenArb, valueArb), { maxLength: 12 }),
  body: fc.uint8Array({ maxLength: 2000 }),
  chunked: fc.boolean(),
  cuts: fc.array(fc.nat({ max: 2000 }), { maxLength: 6 }),
  exts: fc.array(extArb, { minLength: 8, maxLength: 8 }),
  trailers: fc.array(fc.tuple(tokenArb, valueArb), { maxLength: 3 }),
}).map((r) => {
  let head = `HTTP/1.1 ${r.status} Reason\r\n`;
  for (const [k, v] of r.headers) head += `${k}: ${v}\r\n`;
  const parts: Uint8Array[] = [];
  if (!r.chunked) {
    head += `Content-Length: ${r.body.length}\r\n\r\n`;
    parts.push(latin1Bytes(head), r.body);
  } else {
    head += "Transfer-Encoding: chunked\r\n\r\n";
    parts.push(latin1Bytes(head));
    const cuts = [...new Set(r.cuts.filter((c) => c > 0 && c < r.body.length))]
      .sort((a, b) => a - b);
    let from = 0;
    let i = 0;
    for (const to of [...cuts, r.body.length]) {
      if (to === from) continue;
      parts.push(latin1Bytes(`${(to - from).toString(16)}${r.exts[i++ % 8]}\r\n`));
      parts.push(r.body.subarray(from, to), latin1Bytes("\r\n"));
      from = to;
    }
    let tail = `0${r.exts[7]}\r\n`;
    for (const [k, v] of r.trailers) tail += `${k}: ${v}\r\n`;
    parts.push(latin1Bytes(tail + "\r\n"));
  }
  return {
    bytes: concat(parts),
    status: r.status,
    headers: r.headers,
    body: r.body,
    chunked: r.chunked,
  };
});

/** Fragments a hostile upstream likes to splice in. */
const HOSTILE = [
  "\r",
  "\n",
  "\0",
  " ",
  "\t",
  ":",
  ";",
  '"',
  "\r\n",
  "\r\n ",
  "\r\n\r\n",
  "-1",
  "+",
  ",",
  "0x",
  "ffffffffffffffffff",
  "Content-Length: 5\r\n",
  "Content-Length: abc\r\n",
  "Content-Length: 3, 4\r\n",
  "Transfer-Encoding: chunked\r\n",
  "Transfer-Encoding: gzip\r\n",
  "HTTP/1.1 100 Continue\r\n\r\n",
  "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL",
  "\x7f",
  "\xff",
].map(latin1Bytes);

/** One mutation of a byte string. */
const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), what: fc.nat() }),
  fc.record({ kind: fc.constant("byte" as const), at: fc.nat(), value: fc.nat({ max: 255 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), len: fc.nat({ max: 8 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
);

type Mutation = typeof mutationArb extends fc.Arbitrary<infer T> ? T : never;

function mutate(b: Uint8Array, ms: Mutation[]): Uint8Array {
  let out: Uint8Array = b;
  for (const m of ms) {
    const at = out.length ? m.at % (out.length + 1) : 0;
    if (m.kind === "insert") {
      const w = HOSTILE[m.what % HOSTILE.length];
      out = concat([out.subarray(0, at), w, out.subarray(at)]);
    } else if (m.kind === "byte") {
      if (!out.length) continue;
      out = out.slice();
      out[at % out.length] = m.value;
    } else if (m.kind === "delete") {
      out = concat([out.subarray(0, at), out.subarray(at + m.len)]);
    } else out = out.subarray(0, at);
  }
  return out;
}

/** A valid response with 1-3 hostile mutations. */
export const mutatedResponseArb: fc.Arbitrary<Uint8Array> = fc.tuple(
  validResponseArb,
  fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
).map(([r, ms]) => mutate(r.bytes, ms));

/** What reading a whole response off a connection that then closes gives. */
export type Read =
  | { kind: "head-error"; error: UpstreamProtocolError }
  | { kind: "body-error"; status: number; error: UpstreamProtocolError }
  | {
    kind: "ok";
    status: number;
    headers: [string, string][];
    body: Uint8Array;
    /** Bytes after the body (the connection must not be reused). */
    leftover: number;
  };

/**
 * Reads one response (interim 1xx skipped) from `bytes` delivered in pieces of the given
 * sizes (cycled), the connection closing after the last byte. Throws anything that is not an
 * `UpstreamProtocolError`.
 */
export function readWhole(bytes: Uint8Array, pieces: number[] = [bytes.length || 1]): Read {
  let pos = 0;
  let p = 0;
  let buf: Uint8Array = new Uint8Array(0);
  const fill = (): boolean => {
    if (pos >= bytes.length) return false;
    const n = Math.max(1, pieces[p++ % pieces.length] || 1);
    buf = concat([buf, bytes.subarray(pos, pos + n)]);
    pos = Math.min(bytes.length, pos + n);
    return true;
  };
  let status = 0;
  try {
    let head;
    for (let interim = 0;; interim++) {
      const s = new HeadScanner();
      let end = s.scan(buf);
      while (end < 0) {
        if (!fill()) throw new UpstreamProtocolError("closed in the head");
        end = s.scan(buf);
      }
      head = parseResponseHead(buf.subarray(0, end));
      buf = buf.subarray(end);
      if (head.status >= 200 || head.status === 101) break;
      if (interim >= H1_LIMITS.maxInterim) throw new UpstreamProtocolError("too many 1xx");
    }
    status = head.status;
    const kind = framing(head, "GET");
    const body: Uint8Array[] = [];
    if (kind === "length") {
      while (buf.length < head.contentLength!) {
        if (!fill()) throw new UpstreamProtocolError("short body");
      }
      body.push(buf.subarray(0, head.contentLength!));
      buf = buf.subarray(head.contentLength!);
    } else if (kind === "chunked") {
      const d = new ChunkedDecoder();
      while (true) {
        if (!buf.length && !fill()) throw new UpstreamProtocolError("short chunked body");
        const step = d.push(buf);
        body.push(...step.data);
        buf = buf.subarray(step.used);
        if (step.done) break;
      }
    } else if (kind === "close") {
      while (fill());
      body.push(buf);
      buf = new Uint8Array(0);
    }
    return {
      kind: "ok",
      status,
      headers: head.headers,
      body: concat(body),
      leftover: buf.length + (bytes.length - pos),
    };
  } catch (e) {
    if (!(e instanceof UpstreamProtocolError)) throw e;
    return status ? { kind: "body-error", status, error: e } : { kind: "head-error", error: e };
  }
}

/** The bytes as a latin1 string (for messages). */
export function show(b: Uint8Array): string {
  return JSON.stringify(String.fromCharCode(...b.subarray(0, 300)));
}

export { enc, latin1Bytes };
