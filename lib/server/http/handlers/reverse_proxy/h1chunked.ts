/**
 * A strict decoder of the chunked transfer coding (RFC 9112 §7.1), fed bytes as they arrive.
 * Chunk sizes are 1-16 hex digits within 2^53-1; extensions must be `;name` or
 * `;name=token|"quoted"`; a size line is at most `H1_LIMITS.maxChunkLine` bytes; chunk data
 * must be followed by CRLF; trailer lines must be well-formed fields and are dropped. Every
 * line ends in CRLF (a bare CR or LF is an error). Errors are `UpstreamProtocolError`s.
 *
 * @module
 */
import { H1_LIMITS, isToken, latin1, parseFieldLine, UpstreamProtocolError } from "./h1parse.ts";

const SIZE = 0;
const DATA = 1;
const DATA_CR = 2;
const DATA_LF = 3;
const TRAILER = 4;
const DONE = 5;

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function skipWS(s: string, i: number): number {
  while (i < s.length && (s.charCodeAt(i) === 0x20 || s.charCodeAt(i) === 0x09)) i++;
  return i;
}

function tokenEnd(s: string, i: number): number {
  let j = i;
  while (j < s.length && isToken(s[j])) j++;
  return j;
}

/** The end of a quoted-string starting at `i` (on the opening quote), or -1. */
function quotedEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c === 0x5c) {
      const n = s.charCodeAt(++j);
      if (!(n === 0x09 || (n >= 0x20 && n <= 0x7e) || (n >= 0x80 && n <= 0xff))) return -1;
      continue;
    }
    if (!(c === 0x09 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff))) return -1;
  }
  return -1;
}

/**
 * Parses a chunk-size line (without CRLF): the size, extensions checked and ignored.
 *
 * @example
 * ```ts
 * import { parseChunkSize } from "./h1chunked.ts";
 * parseChunkSize('1a;name="v"'); // 26
 * ```
 */
export function parseChunkSize(line: string): number {
  let i = 0;
  while (i < line.length && isHex(line.charCodeAt(i))) i++;
  if (i === 0 || i > 16) {
    throw new UpstreamProtocolError(`invalid chunk size line ${JSON.stringify(line.slice(0, 40))}`);
  }
  const size = parseInt(line.slice(0, i), 16);
  if (!Number.isSafeInteger(size)) throw new UpstreamProtocolError("chunk size too large");
  while (true) {
    i = skipWS(line, i);
    if (i === line.length) return size;
    if (line[i] !== ";") {
      throw new UpstreamProtocolError(
        `invalid chunk size line ${JSON.stringify(line.slice(0, 40))}`,
      );
    }
    i = skipWS(line, i + 1);
    const nameEnd = tokenEnd(line, i);
    if (nameEnd === i) throw new UpstreamProtocolError("chunk extension without a name");
    i = skipWS(line, nameEnd);
    if (line[i] !== "=") continue;
    i = skipWS(line, i + 1);
    const end = line[i] === '"' ? quotedEnd(line, i) : tokenEnd(line, i);
    if (end <= i) throw new UpstreamProtocolError("invalid chunk extension value");
    i = end;
  }
}

/** What one `push` found. */
export interface ChunkedStep {
  /** Body bytes (views into the input). */
  data: Uint8Array[];
  /** Input bytes consumed; all of them unless `done`. */
  used: number;
  /** The last chunk and the trailer section have been read. */
  done: boolean;
}

/**
 * Decodes a chunked body incrementally.
 *
 * @example
 * ```ts
 * import { ChunkedDecoder } from "./h1chunked.ts";
 * const d = new ChunkedDecoder();
 * const step = d.push(new TextEncoder().encode("3\r\nabc\r\n0\r\n\r\n"));
 * step.done; // true
 * ```
 */
export class ChunkedDecoder {
  #state = SIZE;
  #left = 0;
  /** A size or trailer line received in part (latin1, CR included). */
  #line = "";
  #trailerBytes = 0;
  #trailerLines = 0;

  /** True once the whole body has been read. */
  get done(): boolean {
    return this.#state === DONE;
  }

  /** Consumes bytes; throws `UpstreamProtocolError` on anything malformed. */
  push(input: Uint8Array): ChunkedStep {
    const data: Uint8Array[] = [];
    let i = 0;
    while (i < input.length && this.#state !== DONE) {
      switch (this.#state) {
        case SIZE:
        case TRAILER: {
          let j = i;
          while (j < input.length && input[j] !== 10) j++;
          const limit = this.#state === SIZE
            ? H1_LIMITS.maxChunkLine + 1
            : H1_LIMITS.maxTrailerBytes - this.#trailerBytes;
          if (this.#line.length + (j - i) > limit) {
            throw new UpstreamProtocolError(
              this.#state === SIZE ? "chunk size line too long" : "chunked trailer too large",
            );
          }
          this.#line += latin1(input.subarray(i, j));
          i = j;
          if (j === input.length) break;
          i++; // the LF
          const line = this.#line;
          this.#line = "";
          if (!line.endsWith("\r")) throw new UpstreamProtocolError("chunked body: LF without CR");
          const text = line.slice(0, -1);
          if (text.includes("\r")) throw new UpstreamProtocolError("chunked body: bare CR");
          if (this.#state === SIZE) {
            this.#left = parseChunkSize(text);
            this.#state = this.#left === 0 ? TRAILER : DATA;
          } else if (text === "") {
            this.#state = DONE;
          } else {
            this.#trailerBytes += line.length + 1;
            if (++this.#trailerLines > H1_LIMITS.maxFieldLines) {
              throw new UpstreamProtocolError("too many trailer fields");
            }
            parseFieldLine(text, "chunked trailer");
          }
          break;
        }
        case DATA: {
          const n = Math.min(this.#left, input.length - i);
          data.push(input.subarray(i, i + n));
          i += n;
          this.#left -= n;
          if (this.#left === 0) this.#state = DATA_CR;
          break;
        }
        case DATA_CR:
          if (input[i++] !== 13) throw new UpstreamProtocolError("chunk data not followed by CRLF");
          this.#state = DATA_LF;
          break;
        case DATA_LF:
          if (input[i++] !== 10) throw new UpstreamProtocolError("chunk data not followed by CRLF");
          this.#state = SIZE;
          break;
      }
    }
    return { data, used: i, done: this.#state === DONE };
  }
}
