/**
 * A UDP socket that several processes bind to one address (`SO_REUSEPORT`): the HTTP/3
 * sockets of worker processes, so that every worker serves HTTP/3 on the port its TCP
 * listeners share.
 *
 * `Deno.QuicEndpoint` binds a socket of its own and has no `reusePort` option, and
 * `Deno.listenDatagram`'s `reuseAddress` sets `SO_REUSEADDR` only on Linux (the last socket
 * bound would then get every datagram). So the socket is made here (Linux, through FFI: needs
 * `--allow-ffi`) and the endpoint takes it over as it takes an inherited one (see
 * `inherited.ts`).
 *
 * The kernel hands each datagram to one socket of the group by a hash of its addresses and
 * ports, so the packets of one QUIC connection (one client address) keep going to the worker
 * that accepted it while the group stays the same. A reload keeps every worker's endpoint (see
 * `endpoints.ts`). A worker that dies leaves the group and its replacement joins it: the
 * kernel then spreads the hashes anew, and HTTP/3 connections of the other workers whose
 * packets now reach another worker are lost (their clients connect again, over QUIC or TCP).
 * New connections and the TCP listeners are not affected.
 *
 * @module
 */
import { parseIP } from "../../net/ip.ts";
import { libc } from "./inherited.ts";

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_REUSEPORT = 15;

const WHAT = "worker processes serving HTTP/3 (a UDP socket shared with SO_REUSEPORT)";

/** The `sockaddr_in` or `sockaddr_in6` of an IP literal and port; null for no IP literal. */
export function socketAddress(hostname: string, port: number): Uint8Array | null {
  const ip = parseIP(hostname);
  if (ip === null || hostname.includes("%")) return null;
  const v6 = hostname.includes(":");
  const out = new Uint8Array(v6 ? 28 : 16);
  const v = new DataView(out.buffer);
  v.setUint16(0, v6 ? AF_INET6 : AF_INET, true);
  v.setUint16(2, port);
  if (v6) {
    for (let i = 0; i < 16; i++) out[8 + i] = Number((ip >> BigInt(8 * (15 - i))) & 0xffn);
  } else v.setUint32(4, Number(ip & 0xffffffffn));
  return out;
}

/**
 * A new non-blocking UDP socket with `SO_REUSEPORT`, bound to `hostname` (an IP literal) and
 * `port`; its descriptor. Throws with the reason when it cannot be made or bound.
 */
export function reusePortDatagramSocket(hostname: string, port: number): number {
  const addr = socketAddress(hostname, port);
  if (!addr) throw new Error(`${WHAT}: ${hostname} is no IP address`);
  const c = libc(WHAT);
  const family = addr.length === 16 ? AF_INET : AF_INET6;
  const fd = c.socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw new Error(`${WHAT}: a UDP socket cannot be made`);
  const one = new Uint8Array(new Int32Array([1]).buffer);
  if (c.setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, one, 4) !== 0) {
    c.close(fd);
    throw new Error(`${WHAT}: SO_REUSEPORT cannot be set`);
  }
  if (c.bind(fd, addr, addr.length) !== 0) {
    c.close(fd);
    // the one failure users meet: the port is taken by a socket without SO_REUSEPORT
    throw new Error(
      `${WHAT}: udp/${hostname.includes(":") ? `[${hostname}]` : hostname}:${port} cannot be ` +
        `bound: Address already in use, or not an address of this host`,
    );
  }
  return fd;
}

/** Closes a descriptor made by {@linkcode reusePortDatagramSocket}. */
export function closeDescriptor(fd: number): void {
  libc(WHAT).close(fd);
}
