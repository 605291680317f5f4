/**
 * HTTP/3 on an inherited UDP socket (`fdgram/N`, e.g. from systemd socket activation).
 *
 * `Deno.QuicEndpoint` binds a socket of its own and cannot adopt a descriptor. So the
 * endpoint is made on a port of its own, and then its socket is replaced by the inherited
 * one, in place (Linux, through FFI: needs `--allow-ffi`):
 *
 * 1. the endpoint's socket is found among the process's descriptors (the UDP socket bound to
 *    the endpoint's port), and the event poll that watches it with it (`/proc/self/fdinfo`
 *    lists, per epoll descriptor, each watched descriptor with its events and data);
 * 2. the inherited socket gets the socket options the endpoint set on its own (ECN and
 *    packet-info reception, path MTU discovery, receive offload) and is made non-blocking;
 * 3. `dup2` puts the inherited socket at the endpoint's descriptor number (closing the
 *    endpoint's own socket), and the descriptor is registered again with the same poll, events
 *    and data, so the runtime's reads and writes on it now go to the inherited socket.
 *
 * Every step is checked (the endpoint must then report the inherited socket's address); where
 * one cannot be done, listening fails with the reason, and the inherited descriptor is left
 * as it was.
 *
 * @module
 */

const SYMBOLS = {
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  dup2: { parameters: ["i32", "i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
let lib: Libc | undefined;

function libc(): Libc {
  if (lib) return lib;
  if (Deno.build.os !== "linux") {
    throw new Error("fdgram/ listeners (HTTP/3 on an inherited UDP socket) need Linux");
  }
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    throw new Error(
      "fdgram/ listeners (HTTP/3 on an inherited UDP socket) need the ffi permission " +
        "(--allow-ffi): Deno's QUIC endpoint cannot adopt a descriptor without it",
    );
  }
  for (const name of ["libc.so.6", "libc.so"]) {
    try {
      lib = Deno.dlopen(name, SYMBOLS).symbols;
      return lib;
    } catch { /* next */ }
  }
  throw new Error("fdgram/ listeners: the C library cannot be opened");
}

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOL_SOCKET = 1;
const SO_TYPE = 3;
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
const EPOLL_CTL_ADD = 1;

/** Socket options the endpoint may have set on its own socket (level, option), copied over. */
const COPIED_OPTIONS: [number, number][] = [
  [0, 13], // IP_RECVTOS
  [0, 8], // IP_PKTINFO
  [0, 10], // IP_MTU_DISCOVER
  [0, 11], // IP_RECVERR
  [17, 104], // UDP_GRO
  [41, 66], // IPV6_RECVTCLASS
  [41, 49], // IPV6_RECVPKTINFO
  [41, 23], // IPV6_MTU_DISCOVER
  [41, 25], // IPV6_RECVERR
];

/** The address a socket is bound to, or null for a descriptor that is no IP socket. */
function boundAddress(fd: number): { family: number; hostname: string; port: number } | null {
  const c = libc();
  const buf = new Uint8Array(128);
  const len = new Uint32Array([128]);
  if (c.getsockname(fd, buf, new Uint8Array(len.buffer)) !== 0) return null;
  const v = new DataView(buf.buffer);
  const family = v.getUint16(0, true);
  if (family === AF_INET) {
    return { family, hostname: [...buf.subarray(4, 8)].join("."), port: v.getUint16(2) };
  }
  if (family === AF_INET6) {
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(v.getUint16(8 + i * 2).toString(16));
    const text = groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::").replace(/:{3,}/, "::");
    return { family, hostname: text, port: v.getUint16(2) };
  }
  return null;
}

function intOption(fd: number, level: number, option: number): number | null {
  const c = libc();
  const value = new Int32Array(1);
  const len = new Uint32Array([4]);
  const r = c.getsockopt(
    fd,
    level,
    option,
    new Uint8Array(value.buffer),
    new Uint8Array(len.buffer),
  );
  return r === 0 ? value[0] : null;
}

/**
 * The address of inherited UDP socket `fd` (the QUIC endpoint is made for its family).
 * Throws when `fd` is not a UDP socket bound to an IP address.
 */
export function inheritedDatagramAddress(fd: number): { hostname: string; port: number } {
  const a = boundAddress(fd);
  if (!a) throw new Error(`fdgram/${fd}: descriptor ${fd} is not an inherited IP socket`);
  if (intOption(fd, SOL_SOCKET, SO_TYPE) !== SOCK_DGRAM) {
    throw new Error(`fdgram/${fd}: descriptor ${fd} is not a datagram (UDP) socket`);
  }
  return { hostname: a.hostname, port: a.port };
}

/** The wildcard host of a socket's family (what the endpoint is first bound to). */
export function wildcardFor(fd: number): string {
  return boundAddress(fd)?.family === AF_INET6 ? "::" : "0.0.0.0";
}

/**
 * Replaces the socket of `endpoint` (bound to `endpointPort`) by inherited socket `fd` (see
 * the module doc). Throws, leaving `fd` as it was, when a step cannot be done.
 */
export function adoptDatagramSocket(endpoint: Deno.QuicEndpoint, fd: number): void {
  const c = libc();
  const want = inheritedDatagramAddress(fd);
  const own = endpoint.addr.port;
  let target = -1;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    const n = Number(e.name);
    if (!Number.isInteger(n) || n === fd) continue;
    let link = "";
    try {
      link = Deno.readLinkSync(`/proc/self/fd/${n}`);
    } catch {
      continue;
    }
    if (!link.startsWith("socket:")) continue;
    if (intOption(n, SOL_SOCKET, SO_TYPE) !== SOCK_DGRAM) continue;
    if (boundAddress(n)?.port === own) target = n;
  }
  if (target < 0) throw new Error(`fdgram/${fd}: the QUIC endpoint's own socket was not found`);
  let poll = -1;
  let events = 0;
  let data = 0n;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    const n = Number(e.name);
    let link = "";
    try {
      link = Deno.readLinkSync(`/proc/self/fd/${n}`);
    } catch {
      continue;
    }
    if (link !== "anon_inode:[eventpoll]") continue;
    let info = "";
    try {
      info = Deno.readTextFileSync(`/proc/self/fdinfo/${n}`);
    } catch {
      continue;
    }
    for (const line of info.split("\n")) {
      const m = /^tfd:\s+(\d+)\s+events:\s+([0-9a-f]+)\s+data:\s+([0-9a-f]+)/.exec(line);
      if (m && Number(m[1]) === target) {
        poll = n;
        events = parseInt(m[2], 16);
        data = BigInt(`0x${m[3]}`);
      }
    }
  }
  if (poll < 0) {
    throw new Error(`fdgram/${fd}: the event poll of the QUIC endpoint's socket was not found`);
  }
  for (const [level, option] of COPIED_OPTIONS) {
    const v = intOption(target, level, option);
    if (v === null) continue;
    const buf = new Int32Array([v]);
    c.setsockopt(fd, level, option, new Uint8Array(buf.buffer), 4);
  }
  const flags = c.fcntl(fd, F_GETFL, 0);
  if (flags < 0 || c.fcntl(fd, F_SETFL, flags | O_NONBLOCK) !== 0) {
    throw new Error(`fdgram/${fd}: the inherited socket cannot be made non-blocking`);
  }
  if (c.dup2(fd, target) !== target) {
    throw new Error(`fdgram/${fd}: the inherited socket cannot take the endpoint's place`);
  }
  const ev = new Uint8Array(12);
  const view = new DataView(ev.buffer);
  view.setUint32(0, events, true);
  view.setBigUint64(4, data, true);
  if (c.epoll_ctl(poll, EPOLL_CTL_ADD, target, ev) !== 0) {
    throw new Error(`fdgram/${fd}: the inherited socket cannot be watched by the endpoint's poll`);
  }
  const now = endpoint.addr;
  if (now.port !== want.port) {
    throw new Error(`fdgram/${fd}: the endpoint did not take the inherited socket over`);
  }
}
