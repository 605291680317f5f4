/**
 * What a listener handover (see `handover.ts`) asks the Linux kernel about this
 * process's listening sockets, through FFI on the C library:
 *
 * - which sockets listen on an address, with their inode and how many completed connections
 *   wait in their accept queue, and which handshakes are half done on a port: netlink
 *   `sock_diag` (`NETLINK_SOCK_DIAG`, what `ss` reads), filtered by state in the kernel so a
 *   query stays cheap with many connections open;
 * - the descriptor that holds a socket of this process, by inode: `socket()` hands out the
 *   lowest free descriptor, so the one a listener is about to get is known beforehand and
 *   checked after (`fstat`, or `getsockname` and `SO_ACCEPTCONN`); `/proc/self/fd` when that
 *   fails and it may be read (Deno asks for `--allow-all` there);
 * - steering the new connections of an SO_REUSEPORT group to its sockets: a classic BPF
 *   program (see `reuseport_bpf.ts`) that returns an index into the group
 *   (`SO_ATTACH_REUSEPORT_CBPF`, Linux 4.5+; unprivileged, unlike eBPF), removed again with
 *   `SO_DETACH_REUSEPORT_BPF` (5.3+).
 *
 * Needs Linux and the `ffi` permission; {@linkcode linuxSockets} says which is missing instead.
 *
 * @module
 */
import { errno, type Libc, libc, type LibcUnavailable } from "./_libc.ts";

/** A socket listening on the queried address. */
export interface ListeningSocket {
  /** The socket's inode (as in `/proc/self/fd` links, `socket:[inode]`). */
  inode: number;
  /** Completed connections waiting in its accept queue. */
  queued: number;
}

/** Where a listener is bound. */
export interface BoundAddress {
  /** 4 or 6. */
  family: 4 | 6;
  /** The bound IP address, as Deno reports it (`0.0.0.0`, `::`, `127.0.0.1`...). */
  address: string;
  /** The port. */
  port: number;
}

/** The kernel calls of a listener handover. */
export interface LinuxSockets {
  /** The sockets listening on exactly `at` (its SO_REUSEPORT group). */
  listeners(at: BoundAddress): ListeningSocket[];
  /**
   * Handshakes in progress towards `port` (the server answered the client's SYN and waits for
   * its ACK), on any address and family, as `remote address|remote port|local address` keys.
   */
  halfOpen(port: number): Set<string>;
  /** The lowest descriptor free now: the one the next socket of this process is likely to get. */
  nextDescriptor(): number;
  /**
   * The descriptor of this process that holds the socket `inode`, listening on `at`, looked
   * for from `from` (see {@linkcode LinuxSockets.nextDescriptor}) on, leaving out `not`; null
   * when it is not found.
   */
  descriptorOf(inode: number, at: BoundAddress, from: number, not: number[]): number | null;
  /**
   * Attaches `program` (classic BPF instructions, see `reuseport_bpf.ts`) to the SO_REUSEPORT
   * group of socket `fd`, replacing the one it had: the kernel then sends each new connection
   * to the socket at the index it returns (sockets are indexed in the order they started
   * listening; when one closes, the last takes its index; an index past the end falls back to
   * the kernel's hash). Throws with the errno on failure.
   */
  steer(fd: number, program: Uint8Array): void;
  /** Removes the steering program of the group of socket `fd` (hashing again). */
  unsteer(fd: number): void;
}

/** Why {@linkcode linuxSockets} is not available: not Linux, no `ffi` permission, no C library. */
export type Unavailable = LibcUnavailable;

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const IPPROTO_TCP = 6;
const TCP_SYN_RECV = 3;
const TCP_LISTEN = 10;
const TCP_NEW_SYN_RECV = 12; // request sockets (reported as SYN_RECV)
const SOL_SOCKET = 1;
const SO_RCVTIMEO = 20;
const SO_ATTACH_REUSEPORT_CBPF = 51;
const SO_DETACH_REUSEPORT_BPF = 68;

let cached: LinuxSockets | undefined;

/**
 * The kernel calls of a listener handover, or why they are unavailable here.
 *
 * @example
 * ```ts ignore
 * const k = linuxSockets();
 * if (typeof k !== "string") console.log(k.listeners({ family: 4, address: "0.0.0.0", port: 443 }));
 * ```
 */
export function linuxSockets(): LinuxSockets | Unavailable {
  if (cached) return cached;
  const c = libc();
  if (typeof c === "string") return c;
  cached = bind(c);
  return cached;
}

function bind(c: Libc): LinuxSockets {
  const err = () => errno(c);
  const setOption = (fd: number, level: number, name: number, value: Uint8Array) => {
    if (c.setsockopt(fd, level, name, value, value.length) !== 0) {
      throw new Error(`setsockopt(${name}) failed: errno ${err()}`);
    }
  };
  const diag = (family: number, states: number, port: number) =>
    dump(c, err, setOption, family, states).filter((e) => e.localPort === port);
  return {
    listeners(at) {
      const want = canonicalIp(at.address);
      return diag(at.family === 6 ? AF_INET6 : AF_INET, 1 << TCP_LISTEN, at.port)
        .filter((e) => e.state === TCP_LISTEN && canonicalIp(e.local) === want)
        .map((e) => ({ inode: e.inode, queued: e.rqueue }));
    },
    halfOpen(port) {
      const states = (1 << TCP_SYN_RECV) | (1 << TCP_NEW_SYN_RECV);
      const out = new Set<string>();
      for (const family of [AF_INET, AF_INET6]) {
        for (const e of diag(family, states, port)) {
          out.add(`${e.remote}|${e.remotePort}|${e.local}`);
        }
      }
      return out;
    },
    nextDescriptor() {
      const fd = c.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) c.close(fd);
      return fd;
    },
    descriptorOf(inode, at, from, not) {
      // the descriptor the socket was expected to get, or one a little past it when another
      // thread took that one meanwhile
      for (let fd = Math.max(from, 0); fd < from + 64; fd++) {
        if (!not.includes(fd) && holds(c, fd, inode, at)) return fd;
      }
      const link = `socket:[${inode}]`;
      try {
        for (const e of Deno.readDirSync("/proc/self/fd")) {
          try {
            if (Deno.readLinkSync(`/proc/self/fd/${e.name}`) === link) return Number(e.name);
          } catch { /* closed meanwhile */ }
        }
      } catch { /* not readable */ }
      return null;
    },
    steer(fd, program) {
      // struct sock_fprog { u16 len; struct sock_filter *filter; } (64-bit layout)
      const prog = new Uint8Array(16);
      const pv = new DataView(prog.buffer);
      pv.setUint16(0, program.length / 8, true);
      pv.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(program))), true);
      setOption(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, prog);
    },
    unsteer(fd) {
      setOption(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, new Uint8Array(4));
    },
  };
}

const SO_ACCEPTCONN = 30;
const S_IFMT = 0o170000;
const S_IFSOCK = 0o140000;

/** True when `fd` is the socket `inode` (or, without `fstat`, a socket listening on `at`). */
function holds(c: Libc, fd: number, inode: number, at: BoundAddress): boolean {
  if (c.fstat) {
    // struct stat (x86_64 and aarch64): st_dev u64, st_ino u64, then st_mode (u32) at 24 on
    // x86_64 (after st_nlink u64) and at 16 on aarch64
    const st = new Uint8Array(256);
    if (c.fstat(fd, st) !== 0) return false;
    const v = new DataView(st.buffer);
    const mode = v.getUint32(Deno.build.arch === "aarch64" ? 16 : 24, true);
    return (mode & S_IFMT) === S_IFSOCK && v.getBigUint64(8, true) === BigInt(inode);
  }
  const value = new Uint8Array(4);
  const size = new Uint8Array(4);
  new DataView(size.buffer).setUint32(0, 4, true);
  if (c.getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, value, size) !== 0) return false;
  if (new DataView(value.buffer).getInt32(0, true) !== 1) return false;
  const addr = new Uint8Array(28);
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, addr.length, true);
  if (c.getsockname(fd, addr, len) !== 0) return false;
  const v = new DataView(addr.buffer);
  return v.getUint16(0, true) === (at.family === 6 ? AF_INET6 : AF_INET) &&
    v.getUint16(2) === at.port;
}

interface DiagEntry {
  state: number;
  local: string;
  localPort: number;
  remote: string;
  remotePort: number;
  rqueue: number;
  inode: number;
}

/** One `SOCK_DIAG_BY_FAMILY` dump of TCP sockets of `family` in `states`. */
function dump(
  c: Libc,
  errno: () => number,
  setOption: (fd: number, level: number, name: number, value: Uint8Array) => void,
  family: number,
  states: number,
): DiagEntry[] {
  const fd = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) throw new Error(`netlink socket failed: errno ${errno()}`);
  try {
    // a reply is produced as it is read, so recv never waits; the timeout is a safety net
    const timeout = new Uint8Array(16);
    new DataView(timeout.buffer).setBigInt64(0, 1n, true); // struct timeval { 1 s, 0 µs }
    setOption(fd, SOL_SOCKET, SO_RCVTIMEO, timeout);
    // struct nlmsghdr (16 bytes) + struct inet_diag_req_v2 (56 bytes)
    const req = new Uint8Array(72);
    const rv = new DataView(req.buffer);
    rv.setUint32(0, req.length, true);
    rv.setUint16(4, SOCK_DIAG_BY_FAMILY, true);
    rv.setUint16(6, NLM_F_REQUEST | NLM_F_DUMP, true);
    rv.setUint32(8, 1, true);
    req[16] = family;
    req[17] = IPPROTO_TCP;
    rv.setUint32(20, states, true);
    if (Number(c.send(fd, req, BigInt(req.length), 0)) !== req.length) {
      throw new Error(`netlink send failed: errno ${errno()}`);
    }
    const buf = new Uint8Array(64 * 1024); // more than the 32 KiB a dump message can take
    const v = new DataView(buf.buffer);
    const out: DiagEntry[] = [];
    for (;;) {
      const n = Number(c.recv(fd, buf, BigInt(buf.length), 0));
      if (n <= 0) throw new Error(`netlink recv failed: errno ${errno()}`);
      for (let off = 0; off + 16 <= n;) {
        const len = v.getUint32(off, true);
        const type = v.getUint16(off + 4, true);
        if (type === NLMSG_DONE) return out;
        if (type === NLMSG_ERROR) {
          throw new Error(`sock_diag: errno ${-v.getInt32(off + 16, true)}`);
        }
        if (len < 16 + 72) break;
        // struct inet_diag_msg: family, state, timer, retrans, inet_diag_sockid (sport, dport
        // big-endian, src[16], dst[16], if, cookie[2]), expires, rqueue, wqueue, uid, inode
        const m = off + 16;
        const fam = buf[m];
        out.push({
          state: buf[m + 1],
          localPort: v.getUint16(m + 4),
          remotePort: v.getUint16(m + 6),
          local: ipText(fam, buf.subarray(m + 8, m + 24)),
          remote: ipText(fam, buf.subarray(m + 24, m + 40)),
          rqueue: v.getUint32(m + 56, true),
          inode: v.getUint32(m + 68, true),
        });
        off += (len + 3) & ~3;
      }
    }
  } finally {
    c.close(fd);
  }
}

function ipText(family: number, b: Uint8Array): string {
  if (family === AF_INET) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(":");
}

/** One spelling per IP address (IPv6 compressed as URLs write it). */
function canonicalIp(ip: string): string {
  if (!ip.includes(":")) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname;
  } catch {
    return ip;
  }
}
