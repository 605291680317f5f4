/**
 * Plain HTTP to an HTTPS port on the deno engine (see `listeners/plain_http.ts` for the answer
 * and how it is recognised). Deno's TLS listener starts each handshake in Rust once it has
 * accepted the connection, so the first bytes cannot be read in JavaScript; they are looked at
 * in the kernel instead (`recv` with `MSG_PEEK`, which leaves them for the handshake), in the
 * same turn of the event loop as the accept, before Deno's handshake task runs:
 *
 * 1. the listening socket defers accepting until a connection has sent its first bytes
 *    (`TCP_DEFER_ACCEPT`: TLS and HTTP clients both speak first), so they are there;
 * 2. the accepted connection's descriptor is found near the lowest free one (where the kernel
 *    put it), checked by its two addresses (`getpeername`, `getsockname`);
 * 3. plain HTTP gets the answer written straight to the socket, whose unread request is dropped
 *    (so the close is a FIN, not a reset), then Deno's connection is closed.
 *
 * A few system calls per connection through FFI. Needs Linux and the `ffi` permission (the same
 * as the listener handover); without them, or when the descriptor is not found, the connection
 * goes to the TLS handshake as before (which refuses what is not TLS).
 *
 * @module
 */
import { errno, type Libc } from "./_libc.ts";
import { looksLikeHttp, PLAIN_HTTP_ANSWER, PLAIN_HTTP_PREFIX } from "../plain_http.ts";
import { listeningDescriptors } from "../keepalive.ts";

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const IPPROTO_TCP = 6;
const TCP_DEFER_ACCEPT = 9;
const MSG_PEEK = 0x2;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const SHUT_RDWR = 2;
const EINTR = 4;

/** How long a connection that sends nothing waits before it is accepted anyway (seconds). */
export const DEFER_ACCEPT_SECONDS = 10;

/** How many descriptors on each side of the lowest free one are looked at. */
const PROBES = 32;

/**
 * Makes the listening socket `fd` accept a connection once it has sent its first bytes
 * (`TCP_DEFER_ACCEPT`); false when the kernel refused.
 */
export function deferAccept(c: Libc, fd: number): boolean {
  const value = new Uint8Array(4);
  new DataView(value.buffer).setInt32(0, DEFER_ACCEPT_SECONDS, true);
  return c.setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, value, 4) === 0;
}

/**
 * Makes a Deno TCP listener's socket defer accepting (see {@linkcode deferAccept}): this
 * process's listening sockets on its port (and address), found through /proc; false when none
 * was found or the kernel refused.
 */
export function deferListenerAccept(c: Libc, listener: Deno.Listener): boolean {
  const local = listener.addr as Deno.NetAddr;
  if (local.transport !== "tcp") return false;
  let fds: number[];
  try {
    fds = listeningDescriptors(local.port, local.hostname);
  } catch {
    return false;
  }
  let done = fds.length > 0;
  for (const fd of fds) done = deferAccept(c, fd) && done;
  return done;
}

/** The bytes of an IPv4 or IPv6 address as Deno writes it, or null. */
export function addressBytes(host: string): Uint8Array | null {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return new Uint8Array(host.split(".").map(Number));
  if (!host.includes(":") || host.split("::").length > 2) return null;
  const [head, tail] = host.includes("::") ? host.split("::") : [host, undefined];
  const group = (s: string) => s === "" ? [] : s.split(":");
  const parts = (g: string[]) =>
    g.flatMap((x) => {
      if (x.includes(".")) {
        const v4 = x.split(".").map(Number);
        return [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
      }
      return [parseInt(x, 16)];
    });
  const a = parts(group(head));
  const b = tail === undefined ? [] : parts(group(tail));
  const words = tail === undefined ? a : [...a, ...Array(8 - a.length - b.length).fill(0), ...b];
  if (words.length !== 8 || words.some((w) => !(w >= 0 && w <= 0xffff))) return null;
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** Whether a `sockaddr` (from getpeername/getsockname) is `host`:`port`. */
function sameAddress(addr: Uint8Array, host: Uint8Array, port: number): boolean {
  const v = new DataView(addr.buffer);
  const family = v.getUint16(0, true);
  if (v.getUint16(2) !== port) return false;
  const bytes = family === AF_INET
    ? addr.subarray(4, 8)
    : family === AF_INET6
    ? addr.subarray(8, 24)
    : null;
  if (!bytes) return false;
  if (bytes.length === host.length) return bytes.every((b, i) => b === host[i]);
  // IPv4 written as IPv4-mapped IPv6 (::ffff:a.b.c.d) on a dual-stack socket
  return bytes.length === 16 && host.length === 4 && bytes.subarray(0, 10).every((b) => b === 0) &&
    bytes[10] === 0xff && bytes[11] === 0xff && bytes.subarray(12).every((b, i) => b === host[i]);
}

function addressOf(
  call: (fd: number, addr: Uint8Array, len: Uint8Array) => number,
  fd: number,
): Uint8Array | null {
  const addr = new Uint8Array(28);
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, addr.length, true);
  return call(fd, addr, len) === 0 ? addr : null;
}

/** The descriptor of the connected socket between `remote` and `local`, or -1. */
function descriptorOf(c: Libc, remote: Deno.NetAddr, local: Deno.NetAddr): number {
  const peerHost = addressBytes(remote.hostname);
  const localHost = addressBytes(local.hostname);
  if (!peerHost || !localHost) return -1;
  const lowest = c.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (lowest < 0) return -1;
  c.close(lowest);
  // the connection took the lowest free descriptor when it was accepted: just below the
  // lowest free one now, unless others were opened or closed meanwhile
  for (let i = 1; i <= PROBES; i++) {
    for (const fd of [lowest - i, lowest + i]) {
      if (fd < 0) continue;
      const peer = addressOf(c.getpeername, fd);
      if (!peer || !sameAddress(peer, peerHost, remote.port)) continue;
      const self = addressOf(c.getsockname, fd);
      if (self && sameAddress(self, localHost, local.port)) return fd;
    }
  }
  return -1;
}

/**
 * The first bytes (up to `max`) a just-accepted TCP connection has sent, left in the socket
 * (`MSG_PEEK`), with its descriptor; null when its descriptor is not found or nothing came yet.
 */
function peekFirst(
  c: Libc,
  conn: Deno.Conn,
  max: number,
): { fd: number; bytes: Uint8Array } | null {
  const remote = conn.remoteAddr as Deno.NetAddr;
  const local = conn.localAddr as Deno.NetAddr;
  if (remote.transport !== "tcp") return null;
  const fd = descriptorOf(c, remote, local);
  if (fd < 0) return null;
  const first = new Uint8Array(max);
  let n: number;
  do {
    n = Number(c.recv(fd, first, BigInt(first.length), MSG_PEEK | MSG_DONTWAIT));
  } while (n < 0 && errno(c) === EINTR);
  return n > 0 ? { fd, bytes: first.subarray(0, n) } : null;
}

/**
 * Answers plain HTTP on a just-accepted TLS connection and closes it; false (the connection
 * untouched) when its first bytes are not plain HTTP or cannot be seen.
 */
export function answeredPlainHttp(c: Libc, conn: Deno.TlsConn): boolean {
  const seen = peekFirst(c, conn, PLAIN_HTTP_PREFIX);
  if (!seen || seen.bytes.length !== PLAIN_HTTP_PREFIX || !looksLikeHttp(seen.bytes)) {
    return false;
  }
  const fd = seen.fd;
  const answer = PLAIN_HTTP_ANSWER as Uint8Array<ArrayBuffer>;
  c.send(fd, answer, BigInt(answer.length), MSG_DONTWAIT | MSG_NOSIGNAL);
  const rest = new Uint8Array(64 * 1024);
  c.recv(fd, rest, BigInt(rest.length), MSG_DONTWAIT);
  c.shutdown(fd, SHUT_RDWR);
  try {
    conn.close();
  } catch { /* closed */ }
  return true;
}

const LATIN1 = new TextDecoder("latin1");

/** How many bytes of a cleartext connection's first request are looked at for an upgrade. */
export const UPGRADE_PEEK_BYTES = 4096;

/**
 * Whether a just-accepted cleartext connection may ask for a protocol switch (WebSocket): its
 * first bytes are looked at in the kernel (`MSG_PEEK`, which leaves them for Deno's server).
 * False only when a whole first request head is there without an `Upgrade` field, or the
 * connection starts HTTP/2 (which has no upgrade); true when the bytes cannot be seen or the
 * head is not all there yet (the caller then takes the way that can upgrade).
 */
export function mayUpgrade(c: Libc, conn: Deno.Conn): boolean {
  const seen = peekFirst(c, conn, UPGRADE_PEEK_BYTES);
  return seen ? headMayUpgrade(seen.bytes) : true;
}

/**
 * Whether the first bytes of a cleartext connection may lead to an upgrade (see
 * {@linkcode mayUpgrade}).
 *
 * @example
 * ```ts
 * import { headMayUpgrade } from "./plain_http_peek.ts";
 * headMayUpgrade(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); // false
 * ```
 */
export function headMayUpgrade(bytes: Uint8Array): boolean {
  const text = LATIN1.decode(bytes);
  if (text.startsWith("PRI * HTTP/2.0\r\n")) return false;
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return true;
  return /\r\nupgrade[ \t]*:/i.test(text.slice(0, end + 2));
}

/** The connection preface of HTTP/2 with prior knowledge (RFC 9113 section 3.4). */
const HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/** What the first bytes of a cleartext connection say, looked at in the kernel. */
export interface CleartextStart {
  /** True: it starts with the HTTP/2 preface; false: it does not; undefined: not known yet. */
  http2: boolean | undefined;
  /** Its first request may ask for a protocol switch (see {@linkcode headMayUpgrade}). */
  mayUpgrade: boolean;
}

/**
 * What a just-accepted cleartext connection's first bytes say (left in the socket for Deno's
 * server): whether it speaks HTTP/2 with prior knowledge, whether it may upgrade. `upgrade`:
 * its first request head is looked at too (up to {@linkcode UPGRADE_PEEK_BYTES}; else only the
 * preface's 24 bytes). Unknown (`http2` undefined, `mayUpgrade` true) when the bytes cannot be
 * seen or are not all there yet.
 */
export function cleartextStart(c: Libc, conn: Deno.Conn, upgrade: boolean): CleartextStart {
  const seen = peekFirst(c, conn, upgrade ? UPGRADE_PEEK_BYTES : HTTP2_PREFACE.length);
  return seen ? startOf(seen.bytes) : { http2: undefined, mayUpgrade: true };
}

/**
 * What the first bytes of a cleartext connection say (see {@linkcode cleartextStart}).
 *
 * @example
 * ```ts
 * import { startOf } from "./plain_http_peek.ts";
 * startOf(new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")).http2; // true
 * startOf(new TextEncoder().encode("GET / HTTP/1.1\r\n")).http2; // false
 * startOf(new TextEncoder().encode("PRI * HTTP/2")).http2; // undefined
 * ```
 */
export function startOf(bytes: Uint8Array): CleartextStart {
  const n = Math.min(bytes.length, HTTP2_PREFACE.length);
  let prefix = true;
  for (let i = 0; i < n && prefix; i++) prefix = bytes[i] === HTTP2_PREFACE.charCodeAt(i);
  const http2 = !prefix ? false : n === HTTP2_PREFACE.length ? true : undefined;
  return { http2, mayUpgrade: http2 === true ? false : headMayUpgrade(bytes) };
}
