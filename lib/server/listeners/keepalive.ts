/**
 * TCP keep-alive of a listener's connections (`keepalive_interval`, `keepalive_idle`,
 * `keepalive_count`). Deno has no API for the keep-alive times, so they are set with
 * `setsockopt` (through FFI, on Linux) on the listening socket: Linux copies a listening
 * socket's `SO_KEEPALIVE`, `TCP_KEEPIDLE`, `TCP_KEEPINTVL` and `TCP_KEEPCNT` to every
 * connection it accepts, whichever engine then reads it. The listening socket is found among
 * this process's descriptors (`/proc/self/fd`) by its inode in `/proc/net/tcp{,6}`.
 *
 * @module
 */
import type { TcpKeepAlive } from "../module/listener.ts";

/** A socket option of Linux: its level, its number, and its name for messages. */
interface SocketOption {
  level: number;
  name: number;
  what: string;
}

const SOL_SOCKET = 1;
const IPPROTO_TCP = 6;
const SO_KEEPALIVE: SocketOption = { level: SOL_SOCKET, name: 9, what: "SO_KEEPALIVE" };
const TCP_KEEPIDLE: SocketOption = { level: IPPROTO_TCP, name: 4, what: "TCP_KEEPIDLE" };
const TCP_KEEPINTVL: SocketOption = { level: IPPROTO_TCP, name: 5, what: "TCP_KEEPINTVL" };
const TCP_KEEPCNT: SocketOption = { level: IPPROTO_TCP, name: 6, what: "TCP_KEEPCNT" };

type Libc = {
  symbols: {
    setsockopt(fd: number, level: number, name: number, value: Uint8Array, len: number): number;
    getsockopt(fd: number, level: number, name: number, value: Uint8Array, len: Uint8Array): number;
  };
};

let libc: Libc | undefined;

function openLibc(): Libc {
  if (libc) return libc;
  const symbols = {
    setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
    getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  } as const;
  let last: unknown;
  for (const name of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      libc = Deno.dlopen(name, symbols) as unknown as Libc;
      return libc;
    } catch (e) {
      last = e;
    }
  }
  throw new Error(`cannot load the C library for setsockopt: ${(last as Error)?.message}`);
}

/**
 * Why TCP keep-alive times cannot be set in this process, or null when they can.
 *
 * @example
 * ```ts
 * import { keepAliveUnavailable } from "./keepalive.ts";
 * keepAliveUnavailable(); // null on Linux with --allow-ffi
 * ```
 */
export function keepAliveUnavailable(): string | null {
  if (Deno.build.os !== "linux") {
    return `TCP keep-alive times can be set on Linux only (this is ${Deno.build.os})`;
  }
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    return "setting TCP keep-alive times needs the FFI permission (run with --allow-ffi or -A)";
  }
  return null;
}

function hexPort(addr: string): number {
  return parseInt(addr.slice(addr.lastIndexOf(":") + 1), 16);
}

/** An IPv4 literal as /proc/net/tcp writes it (little-endian hex), null for anything else. */
function v4Hex(host: string): string | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!m || host === "0.0.0.0") return null;
  return [m[4], m[3], m[2], m[1]].map((b) => Number(b).toString(16).padStart(2, "0")).join("")
    .toUpperCase();
}

/** Inodes of TCP sockets in /proc/net/tcp{,6} matching `pred`. */
function socketInodes(
  pred: (local: number, remote: number, state: string, localAddr: string) => boolean,
): Set<string> {
  const out = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = Deno.readTextFileSync(file);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (pred(hexPort(f[1]), hexPort(f[2]), f[3], f[1])) out.add(f[9]);
    }
  }
  return out;
}

/** This process's descriptors of the sockets with these inodes. */
function descriptors(inodes: Set<string>): number[] {
  const fds: number[] = [];
  if (inodes.size === 0) return fds;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/self/fd/${e.name}`));
      if (m && inodes.has(m[1])) fds.push(Number(e.name));
    } catch { /* closed meanwhile */ }
  }
  return fds;
}

function int(v: number): Uint8Array {
  return new Uint8Array(new Int32Array([v]).buffer);
}

function set(lib: Libc, fd: number, opt: SocketOption, v: number): void {
  if (lib.symbols.setsockopt(fd, opt.level, opt.name, int(v), 4) !== 0) {
    throw new Error(`setsockopt ${opt.what}=${v} failed on descriptor ${fd}`);
  }
}

/**
 * This process's descriptors of its listening TCP sockets bound to `port` (on `host` when it
 * is an IPv4 literal other than 0.0.0.0, else on any address), found through /proc.
 *
 * @example
 * ```ts ignore
 * listeningDescriptors(8080); // [27]
 * ```
 */
export function listeningDescriptors(port: number, host = ""): number[] {
  const ip = v4Hex(host);
  return descriptors(
    socketInodes((local, _r, state, addr) =>
      state === "0A" && local === port && (ip === null || addr.startsWith(ip))
    ),
  );
}

/**
 * Sets TCP keep-alive on this process's listening sockets bound to `port` (every address it
 * listens on with that port); returns how many sockets were set.
 *
 * @example
 * ```ts ignore
 * applyKeepAlive(8443, { enabled: true, idleS: 20, intervalS: 20, count: 10 });
 * ```
 */
export function applyKeepAlive(port: number, ka: TcpKeepAlive, host = ""): number {
  const why = keepAliveUnavailable();
  if (why) throw new Error(why);
  const lib = openLibc();
  const fds = listeningDescriptors(port, host);
  for (const fd of fds) {
    set(lib, fd, SO_KEEPALIVE, ka.enabled ? 1 : 0);
    if (!ka.enabled) continue;
    if (ka.idleS !== undefined) set(lib, fd, TCP_KEEPIDLE, ka.idleS);
    if (ka.intervalS !== undefined) set(lib, fd, TCP_KEEPINTVL, ka.intervalS);
    if (ka.count !== undefined) set(lib, fd, TCP_KEEPCNT, ka.count);
  }
  return fds.length;
}

/**
 * The keep-alive settings of this process's connection from local port `port` to peer port
 * `peerPort` (a test reads what an accepted connection inherited), or null when not found.
 *
 * @example
 * ```ts ignore
 * readKeepAlive(8443, 51000); // { enabled: true, idleS: 20, intervalS: 20, count: 10 }
 * ```
 */
export function readKeepAlive(port: number, peerPort: number): Required<TcpKeepAlive> | null {
  const lib = openLibc();
  const fds = descriptors(
    socketInodes((local, remote, state) => state === "01" && local === port && remote === peerPort),
  );
  if (!fds.length) return null;
  const get = (opt: SocketOption) => {
    const v = new Uint8Array(4);
    const size = new Uint8Array(new Uint32Array([4]).buffer);
    lib.symbols.getsockopt(fds[0], opt.level, opt.name, v, size);
    return new Int32Array(v.buffer)[0];
  };
  return {
    enabled: get(SO_KEEPALIVE) !== 0,
    idleS: get(TCP_KEEPIDLE),
    intervalS: get(TCP_KEEPINTVL),
    count: get(TCP_KEEPCNT),
  };
}

/**
 * Sets TCP keep-alive probes every `seconds` (idle time and interval, as Go's
 * `Dialer.KeepAlive`) on this process's connection from local port `port` to peer port
 * `peerPort`; false when it is not found.
 *
 * @example
 * ```ts ignore
 * applyConnectionKeepAlive(51000, 8080, 30);
 * ```
 */
export function applyConnectionKeepAlive(port: number, peerPort: number, seconds: number): boolean {
  const why = keepAliveUnavailable();
  if (why) throw new Error(why);
  const lib = openLibc();
  const fds = descriptors(
    socketInodes((local, remote, state) => state === "01" && local === port && remote === peerPort),
  );
  for (const fd of fds) {
    set(lib, fd, SO_KEEPALIVE, 1);
    set(lib, fd, TCP_KEEPIDLE, seconds);
    set(lib, fd, TCP_KEEPINTVL, seconds);
  }
  return fds.length > 0;
}
