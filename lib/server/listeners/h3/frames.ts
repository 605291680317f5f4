/**
 * HTTP/3 frames and stream types (RFC 9114 §6.2, §7): their codes, the payload parsers of the
 * control frames (SETTINGS, GOAWAY, MAX_PUSH_ID, CANCEL_PUSH), and the encoders of the frames
 * a server sends. A frame is `type` and `length` (two varints) and a payload of that length;
 * a frame type this code does not know (reserved or future, §7.2.8, §9) is skipped wherever it
 * appears, while the HTTP/2 frame types HTTP/3 reserved (PRIORITY, PING, WINDOW_UPDATE,
 * CONTINUATION) are connection errors.
 *
 * Every parser takes the whole payload and throws `H3Error` on bad bytes, nothing else.
 *
 * @module
 */
import { H3, H3Error } from "./errors.ts";
import { Cursor, varintSize, writeVarint } from "./varint.ts";

/** Frame types (RFC 9114 §7.2). */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  CANCEL_PUSH: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  GOAWAY: 0x7,
  MAX_PUSH_ID: 0xd,
} as const;

/** HTTP/2's frame types that HTTP/3 reserved: receiving one is H3_FRAME_UNEXPECTED (§7.2.8). */
export function isHttp2OnlyFrame(type: number): boolean {
  return type === 0x2 || type === 0x6 || type === 0x8 || type === 0x9;
}

/** Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2). */
export const STREAM_TYPE = {
  CONTROL: 0x0,
  PUSH: 0x1,
  QPACK_ENCODER: 0x2,
  QPACK_DECODER: 0x3,
} as const;

/** Setting identifiers (RFC 9114 §7.2.4.1, RFC 9204 §5, RFC 9220 §3). */
export const SETTING = {
  QPACK_MAX_TABLE_CAPACITY: 0x1,
  MAX_FIELD_SECTION_SIZE: 0x6,
  QPACK_BLOCKED_STREAMS: 0x7,
  ENABLE_CONNECT_PROTOCOL: 0x8,
} as const;

/** The largest control frame payload accepted (SETTINGS with many reserved entries fit). */
export const MAX_CONTROL_FRAME = 16 * 1024;

/** A peer's SETTINGS, with RFC 9114's defaults for what it left out. */
export interface Settings {
  /** SETTINGS_QPACK_MAX_TABLE_CAPACITY: the dynamic table the peer's decoder allows (0). */
  qpackMaxTableCapacity: number;
  /** SETTINGS_QPACK_BLOCKED_STREAMS (0). */
  qpackBlockedStreams: number;
  /** SETTINGS_MAX_FIELD_SECTION_SIZE (unlimited). */
  maxFieldSectionSize: number;
  /** SETTINGS_ENABLE_CONNECT_PROTOCOL (false). */
  enableConnectProtocol: boolean;
}

/** The settings of a peer that sent none yet. */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  qpackMaxTableCapacity: 0,
  qpackBlockedStreams: 0,
  maxFieldSectionSize: Infinity,
  enableConnectProtocol: false,
});

/**
 * Parses a SETTINGS payload: each identifier once (H3_SETTINGS_ERROR otherwise), none of
 * HTTP/2's (0x2 to 0x5: H3_SETTINGS_ERROR), unknown ones ignored.
 *
 * @example
 * ```ts
 * import { parseSettings } from "./frames.ts";
 * parseSettings(new Uint8Array([0x01, 0x50, 0x00])).qpackMaxTableCapacity; // 4096
 * ```
 */
export function parseSettings(payload: Uint8Array, start = 0, end = payload.length): Settings {
  const out: Settings = { ...DEFAULT_SETTINGS };
  const seen = new Set<number>();
  const c = new Cursor(payload, start, end);
  while (c.left > 0) {
    const id = c.varint();
    const value = id < 0 ? -1 : c.varint();
    if (value < 0) throw new H3Error(H3.FRAME_ERROR, "SETTINGS frame ends inside a setting");
    if (seen.has(id)) {
      throw new H3Error(H3.SETTINGS_ERROR, `setting 0x${id.toString(16)} given twice`);
    }
    seen.add(id);
    if (id >= 0x2 && id <= 0x5) {
      throw new H3Error(H3.SETTINGS_ERROR, `HTTP/2 setting 0x${id.toString(16)} in HTTP/3`);
    }
    if (id === SETTING.QPACK_MAX_TABLE_CAPACITY) out.qpackMaxTableCapacity = value;
    else if (id === SETTING.QPACK_BLOCKED_STREAMS) out.qpackBlockedStreams = value;
    else if (id === SETTING.MAX_FIELD_SECTION_SIZE) out.maxFieldSectionSize = value;
    else if (id === SETTING.ENABLE_CONNECT_PROTOCOL) {
      if (value > 1) {
        throw new H3Error(H3.SETTINGS_ERROR, "SETTINGS_ENABLE_CONNECT_PROTOCOL must be 0 or 1");
      }
      out.enableConnectProtocol = value === 1;
    }
  }
  return out;
}

/**
 * The one varint of a GOAWAY, MAX_PUSH_ID or CANCEL_PUSH payload, which must be exactly that
 * (H3_FRAME_ERROR otherwise).
 */
export function parseIdPayload(
  payload: Uint8Array,
  frame: string,
  start = 0,
  end = payload.length,
): number {
  const c = new Cursor(payload, start, end);
  const id = c.varint();
  if (id < 0 || c.left !== 0) {
    throw new H3Error(H3.FRAME_ERROR, `${frame} frame must hold exactly one integer`);
  }
  return id;
}

/** The bytes of a frame header (type and payload length). */
export function frameHeaderSize(type: number, length: number): number {
  return varintSize(type) + varintSize(length);
}

/** Writes a frame header at `at`; returns the offset after it. */
export function writeFrameHeader(
  buf: Uint8Array,
  at: number,
  type: number,
  length: number,
): number {
  return writeVarint(buf, writeVarint(buf, at, type), length);
}

/** A whole frame: header and `payload`. */
export function encodeFrame(type: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(frameHeaderSize(type, payload.length) + payload.length);
  out.set(payload, writeFrameHeader(out, 0, type, payload.length));
  return out;
}

/** A SETTINGS frame of `[identifier, value]` pairs, in order. */
export function encodeSettings(pairs: [number, number][]): Uint8Array {
  let size = 0;
  for (const [id, v] of pairs) size += varintSize(id) + varintSize(v);
  const payload = new Uint8Array(size);
  let at = 0;
  for (const [id, v] of pairs) at = writeVarint(payload, writeVarint(payload, at, id), v);
  return encodeFrame(FRAME.SETTINGS, payload);
}

/** A frame whose payload is one varint (GOAWAY, MAX_PUSH_ID, CANCEL_PUSH). */
export function encodeIdFrame(type: number, id: number): Uint8Array {
  const payload = new Uint8Array(varintSize(id));
  writeVarint(payload, 0, id);
  return encodeFrame(type, payload);
}

/**
 * A reserved frame type of the form 0x1f * N + 0x21 (RFC 9114 §7.2.8), for sending frames a
 * peer must ignore (tests use them to check that they are ignored).
 */
export function reservedFrameType(n: number): number {
  return 0x1f * n + 0x21;
}
