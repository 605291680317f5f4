/**
 * Asking a new TLS listener's certificate resolver for names before any client reaches it.
 *
 * Deno's resolver (Deno 2.9, `ext/tls/tls_key.rs`) caches its answer per server name, but a
 * handshake that asks for a name in the instant between the answer arriving and the cache
 * recording it waits on a channel that was just closed, and fails ("channel closed"). A new
 * listener that takes over a busy port gets many handshakes at once and would fail some of
 * them. So before the handover (see `handover.ts`) sends clients to it, the new
 * listener is asked for every name its predecessor was asked for, by probes: connections from
 * this process, each from its own source port, which a BPF program on the port's SO_REUSEPORT
 * group sends to the new socket while every other connection still goes to the old one. Each
 * probe sends a ClientHello for its name and waits for the server's first answer (by then the
 * resolver answered and its cache holds the name), then closes.
 *
 * @module
 */
import { errno, type Libc, libc } from "./_libc.ts";
import { clientHello } from "./client_hello.ts";
import type { BoundAddress, LinuxSockets } from "./linux_sockets.ts";
import { bySourcePort } from "./reuseport_bpf.ts";
import { sleep } from "../../module/storage.ts";

/** Probes open at once. */
const BATCH = 32;

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const EAGAIN = 11;
const EINPROGRESS = 115;
const ENOTCONN = 107;

/** What a warm-up did. */
export interface WarmUp {
  /** Names whose probe got an answer. */
  answered: number;
  /** Names whose probe failed or got no answer in time. */
  unanswered: number;
}

/**
 * Probes the listener at index 1 of the group of socket `fd` (bound to `at`) once per name in
 * `names` ("" for a ClientHello without a server name); gives up on what has no answer by
 * `deadline` (a `Date.now()` value). Leaves the group's program sending every other connection
 * to index 0; the caller attaches the next one.
 *
 * @example
 * ```ts ignore
 * await warmResolver(k, at, oldFd, ["example.com", ""], Date.now() + 2000);
 * ```
 */
export async function warmResolver(
  k: LinuxSockets,
  at: BoundAddress,
  fd: number,
  names: string[],
  deadline: number,
): Promise<WarmUp> {
  const c = libc();
  if (typeof c === "string") throw new Error(`no C library (${c})`);
  const result: WarmUp = { answered: 0, unanswered: 0 };
  for (let i = 0; i < names.length; i += BATCH) {
    const batch = names.slice(i, i + BATCH);
    if (Date.now() > deadline) {
      result.unanswered += batch.length;
      continue;
    }
    const probes = batch.map((name) => new Probe(c, at, name));
    try {
      const open = probes.filter((p) => p.port > 0);
      if (open.length > 0) {
        k.steer(fd, bySourcePort(open.map((p) => p.port), 1, 0));
        for (const p of open) p.connect();
        while (open.some((p) => p.state === "waiting") && Date.now() < deadline) {
          await sleep(1); // the server runs on this thread too
          for (const p of open) p.step();
        }
      }
      for (const p of probes) {
        if (p.state === "answered") result.answered++;
        else result.unanswered++;
      }
    } finally {
      for (const p of probes) p.close();
    }
  }
  return result;
}

/** One non-blocking probe connection. */
class Probe {
  state: "waiting" | "answered" | "failed" = "waiting";
  port = 0;
  #fd: number;
  #sent = false;
  #hello: Uint8Array;
  #buf = new Uint8Array(64);
  private c: Libc;
  private at: BoundAddress;

  constructor(c: Libc, at: BoundAddress, serverName: string) {
    this.c = c;
    this.at = at;
    this.#hello = clientHello(serverName);
    const family = at.family === 6 ? AF_INET6 : AF_INET;
    this.#fd = c.socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (this.#fd < 0) {
      this.state = "failed";
      return;
    }
    // an ephemeral port of its own, known before the SYN leaves: the BPF program matches it
    const any = sockaddr(at.family, at.family === 6 ? "::" : "0.0.0.0", 0);
    const name = new Uint8Array(any.length);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, name.length, true);
    if (
      c.bind(this.#fd, any, any.length) !== 0 || c.getsockname(this.#fd, name, len) !== 0
    ) {
      this.state = "failed";
      return;
    }
    this.port = new DataView(name.buffer).getUint16(2);
  }

  connect(): void {
    const to = sockaddr(this.at.family, destination(this.at.address), this.at.port);
    if (this.c.connect(this.#fd, to, to.length) !== 0 && errno(this.c) !== EINPROGRESS) {
      this.state = "failed";
    }
  }

  step(): void {
    if (this.state !== "waiting") return;
    if (!this.#sent) {
      const n = Number(
        this.c.send(this.#fd, this.#hello, BigInt(this.#hello.length), MSG_DONTWAIT | MSG_NOSIGNAL),
      );
      if (n === this.#hello.length) this.#sent = true;
      else if (n >= 0 || ![EAGAIN, ENOTCONN, EINPROGRESS].includes(errno(this.c))) {
        this.state = "failed";
      }
      return;
    }
    const n = Number(this.c.recv(this.#fd, this.#buf, BigInt(this.#buf.length), MSG_DONTWAIT));
    // bytes (a ServerHello or an alert) or the server closing: the resolver has answered
    if (n >= 0 || errno(this.c) !== EAGAIN) this.state = "answered";
  }

  close(): void {
    if (this.#fd >= 0) this.c.close(this.#fd);
    this.#fd = -1;
  }
}

/** Where a probe connects: the bound address, or loopback for a wildcard one. */
function destination(address: string): string {
  if (address === "0.0.0.0") return "127.0.0.1";
  if (address === "::") return "::1";
  return address;
}

/** `struct sockaddr_in` / `sockaddr_in6`. */
function sockaddr(family: 4 | 6, ip: string, port: number): Uint8Array {
  if (family === 4) {
    const s = new Uint8Array(16);
    const v = new DataView(s.buffer);
    v.setUint16(0, AF_INET, true);
    v.setUint16(2, port);
    s.set(ip.split(".").map(Number), 4);
    return s;
  }
  const s = new Uint8Array(28);
  const v = new DataView(s.buffer);
  v.setUint16(0, AF_INET6, true);
  v.setUint16(2, port);
  s.set(ipv6Bytes(ip), 8);
  return s;
}

/** The 16 bytes of an IPv6 address in text (with `::` and a trailing dotted quad). */
function ipv6Bytes(text: string): Uint8Array {
  const groups = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      if (g.includes(".")) {
        const [a, b, c, d] = g.split(".").map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const [head, tail] = text.split("::");
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}
