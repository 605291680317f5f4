/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes of a connection: a pure
 * function from bytes to a verdict, called again as more bytes arrive. The node engine needs it
 * for connections that went through listener wrappers: their TLS runs over a stream, where
 * Deno's TLS cannot wait for an asynchronous certificate lookup, so the certificate is looked
 * up from this name first.
 *
 * A ClientHello may span several TLS records; at most `MAX_HELLO` bytes of handshake are read.
 *
 * @module
 */

import { concatBytes } from "../pki/der.ts";

/** Longest ClientHello accepted (bytes of handshake message). */
export const MAX_HELLO = 16 * 1024;

/** What the bytes so far say. */
export type HelloVerdict =
  /** More bytes are needed. */
  | { kind: "more" }
  /** A whole ClientHello: its server name, or "" when it sent none. */
  | { kind: "hello"; serverName: string }
  /** Not a TLS ClientHello, or a malformed one. */
  | { kind: "invalid"; reason: string };

const MORE: HelloVerdict = { kind: "more" };

function invalid(reason: string): HelloVerdict {
  return { kind: "invalid", reason };
}

/** The handshake bytes carried by the records at the start of `buf`; null when malformed. */
function handshakeBytes(buf: Uint8Array): { bytes: Uint8Array; complete: boolean } | string {
  const parts: Uint8Array[] = [];
  let total = 0;
  let want = -1;
  let i = 0;
  while (i + 5 <= buf.length) {
    if (buf[i] !== 0x16) return "not a TLS handshake record";
    if (buf[i + 1] !== 0x03) return "not a TLS record version";
    const len = (buf[i + 3] << 8) | buf[i + 4];
    if (len === 0 || len > 16384 + 2048) return "bad TLS record length";
    const body = buf.subarray(i + 5, Math.min(buf.length, i + 5 + len));
    parts.push(body);
    total += body.length;
    if (want < 0 && total >= 4) {
      const head = join(parts);
      if (head[0] !== 0x01) return "not a ClientHello";
      want = 4 + ((head[1] << 16) | (head[2] << 8) | head[3]);
      if (want > MAX_HELLO) return `ClientHello longer than ${MAX_HELLO} bytes`;
    }
    if (body.length < len) break; // the record is not all here
    if (want >= 0 && total >= want) return { bytes: join(parts).subarray(0, want), complete: true };
    i += 5 + len;
  }
  if (buf.length > 0 && buf[0] !== 0x16) return "not a TLS handshake record";
  if (buf.length > 1 && buf[1] !== 0x03) return "not a TLS record version";
  return { bytes: join(parts), complete: false };
}

/** The parts as one array: the part itself when there is one (the usual one-record hello). */
function join(parts: Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0] : concatBytes(...parts);
}

function serverName(hello: Uint8Array): HelloVerdict {
  // msg type, length (4), version (2), random (32)
  let i = 4 + 2 + 32;
  const need = (n: number) => i + n <= hello.length;
  if (!need(1)) return invalid("ClientHello cut short");
  i += 1 + hello[i]; // session id
  if (!need(2)) return invalid("ClientHello cut short");
  i += 2 + ((hello[i] << 8) | hello[i + 1]); // cipher suites
  if (!need(1)) return invalid("ClientHello cut short");
  i += 1 + hello[i]; // compression methods
  if (i === hello.length) return { kind: "hello", serverName: "" }; // no extensions
  if (!need(2)) return invalid("ClientHello cut short");
  const end = i + 2 + ((hello[i] << 8) | hello[i + 1]);
  if (end > hello.length) return invalid("extensions longer than the ClientHello");
  i += 2;
  while (i + 4 <= end) {
    const type = (hello[i] << 8) | hello[i + 1];
    const len = (hello[i + 2] << 8) | hello[i + 3];
    const start = i + 4;
    if (start + len > end) return invalid("an extension longer than the extensions");
    if (type === 0) {
      // server_name: list length, then (type, length, name) entries
      let j = start + 2;
      const listEnd = start + 2 + (len >= 2 ? (hello[start] << 8) | hello[start + 1] : 0);
      if (len < 2 || listEnd > start + len) return invalid("bad server_name extension");
      while (j + 3 <= listEnd) {
        const nameType = hello[j];
        const n = (hello[j + 1] << 8) | hello[j + 2];
        if (j + 3 + n > listEnd) return invalid("bad server_name entry");
        if (nameType === 0) {
          const name = hello.subarray(j + 3, j + 3 + n);
          for (const c of name) {
            if (c <= 0x20 || c >= 0x7f) return invalid("a server name that is not ASCII");
          }
          return { kind: "hello", serverName: String.fromCharCode(...name).toLowerCase() };
        }
        j += 3 + n;
      }
      return { kind: "hello", serverName: "" };
    }
    i = start + len;
  }
  return { kind: "hello", serverName: "" };
}

/**
 * Reads the ClientHello at the start of `buf`.
 *
 * @example
 * ```ts
 * import { parseClientHello } from "./client_hello.ts";
 * parseClientHello(new TextEncoder().encode("GET / HTTP/1.1\r\n")).kind; // "invalid"
 * parseClientHello(new Uint8Array([0x16, 0x03, 0x01])).kind; // "more"
 * ```
 */
export function parseClientHello(buf: Uint8Array): HelloVerdict {
  const hs = handshakeBytes(buf);
  if (typeof hs === "string") return invalid(hs);
  if (!hs.complete) return MORE;
  return serverName(hs.bytes);
}
