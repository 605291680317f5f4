/**
 * HTTP/3 and QPACK error codes (RFC 9114 §8.1, RFC 9204 §6) and the one error every parser of
 * network bytes here throws: `H3Error`, with its code and whether it ends the connection or
 * only its stream. Anything else thrown while reading a peer's bytes is a bug.
 *
 * @module
 */

/** HTTP/3 error codes (RFC 9114 §8.1) and QPACK's (RFC 9204 §6). */
export const H3 = {
  NO_ERROR: 0x100,
  GENERAL_PROTOCOL_ERROR: 0x101,
  INTERNAL_ERROR: 0x102,
  STREAM_CREATION_ERROR: 0x103,
  CLOSED_CRITICAL_STREAM: 0x104,
  FRAME_UNEXPECTED: 0x105,
  FRAME_ERROR: 0x106,
  EXCESSIVE_LOAD: 0x107,
  ID_ERROR: 0x108,
  SETTINGS_ERROR: 0x109,
  MISSING_SETTINGS: 0x10a,
  REQUEST_REJECTED: 0x10b,
  REQUEST_CANCELLED: 0x10c,
  REQUEST_INCOMPLETE: 0x10d,
  MESSAGE_ERROR: 0x10e,
  CONNECT_ERROR: 0x10f,
  VERSION_FALLBACK: 0x110,
  QPACK_DECOMPRESSION_FAILED: 0x200,
  QPACK_ENCODER_STREAM_ERROR: 0x201,
  QPACK_DECODER_STREAM_ERROR: 0x202,
} as const;

/** One of the codes above. */
export type H3ErrorCode = (typeof H3)[keyof typeof H3];

/** The name of an error code (for logs), `0x...` for one this code does not know. */
export function h3ErrorName(code: number): string {
  for (const [name, c] of Object.entries(H3)) if (c === code) return `H3_${name}`;
  return `0x${code.toString(16)}`;
}

/**
 * A peer broke the protocol. `connection` errors close the whole QUIC connection with `code`
 * (RFC 9114 §8); stream errors end one request.
 *
 * @example
 * ```ts
 * import { H3, H3Error } from "./errors.ts";
 * const e = new H3Error(H3.FRAME_UNEXPECTED, "DATA before HEADERS");
 * e.connection; // true
 * ```
 */
export class H3Error extends Error {
  constructor(
    readonly code: H3ErrorCode,
    message: string,
    readonly connection = true,
  ) {
    super(message);
    this.name = "H3Error";
  }
}
