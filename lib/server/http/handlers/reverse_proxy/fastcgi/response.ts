/**
 * Reading a FastCGI response off a connection: records in (records.ts), the CGI head parsed
 * from the start of stdout (cgi_head.ts), then the body as stdout continues, until
 * `END_REQUEST`. Stderr is kept (up to 64 KiB) for `capture_stderr`. A connection that ends
 * before `END_REQUEST`, a responder that refuses the request, or a malformed record or head is
 * a `FastCGIProtocolError`: before the head the client gets 502, after it the body stream
 * errors (the client's response is cut short, never passed off as whole).
 *
 * @module
 */
import type { ByteConn } from "../byte_conn.ts";
import { ChunkedDecoder } from "../h1chunked.ts";
import { type CGIHead, headEnd, parseCGIHead } from "./cgi_head.ts";
import {
  concat,
  END_REQUEST,
  FastCGIProtocolError,
  protocolStatusText,
  RecordDecoder,
  type ResponseRecord,
  STDERR,
} from "./records.ts";

/** Most stderr bytes kept for `capture_stderr`; the rest is counted, not kept. */
export const MAX_STDERR = 64 * 1024;
const READ_SIZE = 32 * 1024;
/** Largest body chunk handed on at once. */
const MAX_CHUNK = 256 * 1024;

/** Records of one response, read as needed. */
export class RecordReader {
  #conn: ByteConn;
  #decoder = new RecordDecoder();
  #queue: ResponseRecord[] = [];
  #scratch = new Uint8Array(READ_SIZE);
  /** Stderr bytes kept. */
  stderr: Uint8Array[] = [];
  /** Stderr bytes received in all. */
  stderrBytes = 0;
  /** True once `END_REQUEST` was read. */
  ended = false;

  /** Reads from `conn`. */
  constructor(conn: ByteConn) {
    this.#conn = conn;
  }

  /** True when a record is decoded and waiting (no I/O needed for the next one). */
  get buffered(): boolean {
    return this.#queue.length > 0;
  }

  /**
   * The next stdout content, or null at `END_REQUEST`. Stderr is set aside on the way.
   * Throws when the connection ends first or the responder refused the request.
   */
  async stdout(): Promise<Uint8Array | null> {
    while (true) {
      if (this.ended) return null;
      while (this.#queue.length === 0) {
        const n = await this.#conn.read(this.#scratch);
        if (n === null || n === 0) {
          throw new FastCGIProtocolError("the responder closed the connection before END_REQUEST");
        }
        this.#queue = this.#decoder.push(this.#scratch.slice(0, n));
      }
      const r = this.#queue.shift()!;
      if (r.type === END_REQUEST) {
        this.ended = true;
        if (r.protocolStatus !== 0) {
          throw new FastCGIProtocolError(
            `the responder refused the request (${protocolStatusText(r.protocolStatus)})`,
          );
        }
        return null;
      }
      if (r.type === STDERR) {
        this.stderrBytes += r.content.length;
        const kept = this.stderr.reduce((s, b) => s + b.length, 0);
        if (kept < MAX_STDERR) this.stderr.push(r.content.subarray(0, MAX_STDERR - kept));
        continue;
      }
      if (r.content.length) return r.content;
    }
  }
}

/** The head and what of the body came with it. */
export interface HeadRead {
  /** The parsed head. */
  head: CGIHead;
  /** Body bytes received with the head. */
  rest: Uint8Array;
}

/**
 * Reads stdout until the head is complete. A response whose stdout ends without the empty
 * line is all head (Go's `ReadMIMEHeader` at EOF, as Caddy reads it); an empty stdout is a
 * 200 with no fields.
 */
export async function readHead(reader: RecordReader): Promise<HeadRead> {
  let buf: Uint8Array = new Uint8Array(0);
  while (true) {
    const chunk = await reader.stdout();
    if (chunk === null) {
      return { head: parseCGIHead(buf), rest: new Uint8Array(0) };
    }
    buf = buf.length ? concat([buf, chunk]) : chunk;
    const end = headEnd(buf);
    if (end >= 0) return { head: parseCGIHead(buf.subarray(0, end)), rest: buf.subarray(end) };
  }
}

/** Delivers body bytes as the head's framing says: all, exactly Content-Length, or de-chunked. */
export class BodyFramer {
  #left: number | null;
  #chunked: ChunkedDecoder | null;

  /** A framer for a head. */
  constructor(head: CGIHead) {
    this.#left = head.chunked ? null : head.contentLength;
    this.#chunked = head.chunked ? new ChunkedDecoder() : null;
  }

  /** The body bytes in `input` (bytes past the framed end are dropped). */
  push(input: Uint8Array): Uint8Array[] {
    if (this.#chunked) {
      if (this.#chunked.done) return [];
      return this.#chunked.push(input).data.filter((d) => d.length > 0);
    }
    if (this.#left === null) return input.length ? [input] : [];
    const part = input.subarray(0, this.#left);
    this.#left -= part.length;
    return part.length ? [part] : [];
  }

  /** Throws when stdout ended before the framed body did. */
  end(): void {
    if (this.#chunked && !this.#chunked.done) {
      throw new FastCGIProtocolError("the response ended inside a chunked body");
    }
    if (this.#left !== null && this.#left > 0) {
      throw new FastCGIProtocolError("the response ended before its Content-Length");
    }
  }
}

/**
 * The rest of the body. Records already read are consumed first: when `END_REQUEST` is among
 * them the body is returned whole as a byte array (no stream for small responses), else as a
 * stream that pulls the remaining records. `done(error)` runs once, when the body ended,
 * failed or was cancelled (at once for a whole body). Throws, before any byte is relayed, on
 * what is malformed in the records already read.
 */
export async function readBody(
  reader: RecordReader,
  framer: BodyFramer,
  first: Uint8Array,
  done: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array> | Uint8Array> {
  const parts = framer.push(first);
  while (reader.buffered && !reader.ended) {
    const chunk = await reader.stdout();
    if (chunk === null) break;
    parts.push(...framer.push(chunk));
  }
  if (reader.ended) {
    framer.end();
    done(null);
    return concat(parts.length ? parts : [new Uint8Array(0)]);
  }
  let finished = false;
  const finish = (e: unknown) => {
    if (!finished) {
      finished = true;
      done(e);
    }
  };
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      for (const p of parts) ctl.enqueue(p);
    },
    async pull(ctl) {
      try {
        // what is already read goes out as one chunk (fewer, larger writes to the client)
        const out: Uint8Array[] = [];
        let size = 0;
        while (true) {
          const chunk = await reader.stdout();
          if (chunk === null) {
            framer.end();
            if (out.length) ctl.enqueue(concat(out));
            ctl.close();
            finish(null);
            return;
          }
          for (const p of framer.push(chunk)) {
            out.push(p);
            size += p.length;
          }
          if (out.length && (!reader.buffered || size >= MAX_CHUNK)) {
            ctl.enqueue(concat(out));
            return;
          }
        }
      } catch (e) {
        finish(e);
        ctl.error(e);
      }
    },
    cancel() {
      finish(null);
    },
  });
}
