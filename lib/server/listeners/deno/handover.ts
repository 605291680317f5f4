/**
 * Handing a port from a listening socket to its replacement without resetting a connection.
 *
 * The `deno` engine replaces its TLS listener when certificates change (see
 * `listener.ts`): a new socket listens on the same address (SO_REUSEPORT) and the old one
 * closes. Left alone, the kernel spreads new connections over both by a hash of their
 * addresses, and closing a listening socket resets what the kernel still holds for it: the
 * completed connections in its accept queue and the handshakes under way (the server answered
 * the client's SYN and waits for its ACK). Linux hands both to another socket of the group
 * only with `net.ipv4.tcp_migrate_req=1`, a system-wide setting that needs root and is 0 by
 * default. So the port is handed over instead, with classic BPF programs on the group (see
 * `reuseport_bpf.ts`; unprivileged, Linux 4.5+) that pick the socket of each new connection:
 *
 * 1. **Pin**: before the new socket listens, every new connection goes to index 0, the old
 *    socket. The new socket joins the group last: the group is [old, new].
 * 2. **Warm** (a listener that picks certificates by server name): probes from this process
 *    ask the new listener for every name its predecessor was asked for, while clients still
 *    reach the old one only (see `resolver_warmup.ts`).
 * 3. **Steer**: every new connection goes to index 1, the new socket. The handshakes under way
 *    are listed {@link STEER_SETTLE_MS} later, so that a SYN the kernel was taking in on another
 *    CPU as the program changed is among them.
 * 4. **Drain**: the old socket keeps accepting. The handshakes that were under way at step 3
 *    are the only connections that can still reach it; each ends within a round trip or so
 *    (completed into the accept queue, or given up by its client). When none of them is under
 *    way any more and its accept queue is empty, nothing can reach it again: it closes, and
 *    nothing is reset. A handshake still unfinished after {@link HANDOVER_LIMIT_MS} (a client
 *    gone silent, a SYN flood) does not hold it open longer; such a handshake is reset.
 * 5. Once the kernel no longer lists the old socket (the new one is index 0), the program is
 *    removed.
 *
 * One handover at a time on a port (two sockets, so the indexes are known), and only when the
 * group holds exactly the two (another process's socket on the address makes it impossible).
 * The kernel is asked through netlink `sock_diag` and the programs attached through FFI (see
 * `linux_sockets.ts`); where that is impossible the caller falls back to closing the old
 * listener when its queue looks empty.
 *
 * @module
 */
import type { BoundAddress, LinuxSockets, Unavailable } from "./linux_sockets.ts";
import { warmResolver } from "./resolver_warmup.ts";
import { toIndex } from "./reuseport_bpf.ts";
import { sleep } from "../../module/storage.ts";

/** Longest wait for the handshakes an old listener had under way (ms). */
export const HANDOVER_LIMIT_MS = 5000;

/** How long after the steer the handshakes under way are listed (ms). */
const STEER_SETTLE_MS = 5;

/** Longest wait for a new listener's answers to the names of the old one (ms). */
export const WARM_LIMIT_MS = 3000;

/** Longest wait for a closed socket to leave the kernel's listening table (ms). */
const GONE_LIMIT_MS = 1000;

/** A listening socket of this process. */
export interface OwnSocket {
  /** Its inode. */
  inode: number;
  /** The descriptor holding it (valid while the listener is open). */
  fd: number;
}

/** A handover past step 3: new connections go to the new socket. */
export interface Handover {
  /** Probes the new listener answered, and those it did not (step 2). */
  warmed: { answered: number; unanswered: number };
  /**
   * Resolves when the old socket may close without resetting anything (its accept loop must
   * keep running meanwhile), or when `abandon()` says to stop waiting; `unfinished` counts the
   * handshakes still under way when it gave up.
   */
  drained(abandon: () => boolean): Promise<{ unfinished: number }>;
  /**
   * After the old socket was closed: waits until the kernel no longer lists it, then removes
   * the program (when `stillOpen()` says the new socket is still open).
   */
  finish(stillOpen: () => boolean): Promise<void>;
}

/**
 * This process's socket that just started listening on `at`: the one listening there that is
 * not in `ours` (the caller's sockets on that address, inode to descriptor, kept up to date
 * here: the new one is added, those the kernel no longer lists are removed), with its
 * descriptor (looked for from `expected`, what {@linkcode LinuxSockets.nextDescriptor} said
 * before the socket was opened); a sentence saying why not.
 *
 * @example
 * ```ts ignore
 * const ours = new Map<number, number>();
 * const at = { family: 4, address: "0.0.0.0", port: 443 } as const;
 * const expected = k.nextDescriptor();
 * const listener = Deno.listenTls({ port: 443, cert, key, reusePort: true });
 * const socket = newListener(k, at, ours, expected);
 * ```
 */
export function newListener(
  k: LinuxSockets,
  at: BoundAddress,
  ours: Map<number, number>,
  expected: number,
): OwnSocket | string {
  let listed: number[];
  try {
    listed = k.listeners(at).map((s) => s.inode);
  } catch (e) {
    return `the kernel's socket table could not be read (${(e as Error).message})`;
  }
  for (const i of ours.keys()) if (!listed.includes(i)) ours.delete(i);
  const found = listed.filter((i) => !ours.has(i));
  if (found.length !== 1) {
    return found.length === 0
      ? "the new listening socket was not found"
      : "another process's socket listens on the same address (SO_REUSEPORT)";
  }
  const fd = k.descriptorOf(found[0], at, expected, [...ours.values()]);
  ours.set(found[0], fd ?? -1);
  if (fd === null) return "the new listening socket's descriptor was not found";
  return { inode: found[0], fd };
}

/**
 * Step 1: new connections to `old` only, until {@linkcode beginHandover} or
 * {@linkcode cancelHandover}. A sentence saying why not on failure (nothing changed).
 *
 * @example
 * ```ts ignore
 * if (pin(k, old) === undefined) openTheNewListener();
 * ```
 */
export function pin(k: LinuxSockets, old: OwnSocket): string | undefined {
  try {
    k.steer(old.fd, toIndex(0));
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Undoes a {@linkcode pin} when the handover does not go ahead: the kernel's hash again.
 *
 * @example
 * ```ts ignore
 * cancelHandover(k, old);
 * ```
 */
export function cancelHandover(k: LinuxSockets, old: OwnSocket): void {
  try {
    k.unsteer(old.fd);
  } catch { /* the old socket is closed: nothing to undo */ }
}

/**
 * Steps 2 and 3, after {@linkcode pin} and the new socket listening on `at`: probes the new
 * listener with `names` (none for a listener with one certificate), then sends every new
 * connection to it. A sentence saying why not (the pin is still in place: see
 * {@linkcode cancelHandover}).
 *
 * @example
 * ```ts ignore
 * const h = await beginHandover(k, at, old, next, ["example.com"]);
 * if (typeof h !== "string") {
 *   await h.drained(() => stopping);
 *   await closeTheOldListener();
 *   await h.finish(() => !stopping);
 * }
 * ```
 */
export async function beginHandover(
  k: LinuxSockets,
  at: BoundAddress,
  old: OwnSocket,
  next: OwnSocket,
  names: string[],
): Promise<Handover | string> {
  let underWay: Set<string>;
  let warmed = { answered: 0, unanswered: 0 };
  try {
    const group = k.listeners(at).map((s) => s.inode);
    if (group.length !== 2 || !group.includes(old.inode) || !group.includes(next.inode)) {
      return `${group.length} sockets listen on the address, not the old and the new listener`;
    }
    if (names.length > 0) {
      warmed = await warmResolver(k, at, old.fd, names, Date.now() + WARM_LIMIT_MS);
    }
    k.steer(old.fd, toIndex(1));
    // from now on the old socket gets no SYN: what may still reach it is under way now, or a
    // SYN the kernel was taking in on another CPU as the program changed, whose handshake is
    // listed a moment later: the list is read after that moment (missing one reset it when
    // the old socket closed, 1 in ~2,000 new connections under load on Linux 6.18)
    await sleep(STEER_SETTLE_MS);
    underWay = k.halfOpen(at.port);
  } catch (e) {
    return (e as Error).message;
  }
  const listed = () => k.listeners(at).find((s) => s.inode === old.inode);
  return {
    warmed,
    async drained(abandon) {
      const limit = Date.now() + HANDOVER_LIMIT_MS;
      for (let round = 0;; round++) {
        const socket = listed();
        if (!socket) return { unfinished: 0 };
        if (underWay.size > 0) {
          const now = k.halfOpen(at.port);
          for (const h of underWay) if (!now.has(h)) underWay.delete(h);
        }
        if (underWay.size === 0 && socket.queued === 0) return { unfinished: 0 };
        if (abandon() || Date.now() > limit) return { unfinished: underWay.size };
        // a round trip on loopback is microseconds, across the world a few hundred ms
        await sleep(Math.min(50, 1 + round * 2));
      }
    },
    async finish(stillOpen) {
      const limit = Date.now() + GONE_LIMIT_MS;
      while (Date.now() < limit && listed()) await sleep(2);
      if (stillOpen() && !listed()) k.unsteer(next.fd);
    },
  };
}

/** `net.ipv4.tcp_migrate_req`: "1" when Linux hands a closing listener's queue to another. */
function migrateRequests(): string | null {
  try {
    return Deno.readTextFileSync("/proc/sys/net/ipv4/tcp_migrate_req").trim();
  } catch {
    return null; // unreadable without --allow-all
  }
}

const UNAVAILABLE: Record<Unavailable, string> = {
  not_linux: "not Linux",
  no_ffi: "the ffi permission is not granted",
  no_libc: "the C library cannot be opened",
};

/**
 * Why the kernel calls are unavailable, in words.
 *
 * @example
 * ```ts
 * import { unavailableWhy } from "./handover.ts";
 * unavailableWhy("no_ffi"); // "the ffi permission is not granted"
 * ```
 */
export function unavailableWhy(why: Unavailable): string {
  return UNAVAILABLE[why];
}

let said = false;

/**
 * Says once per process (through `log`) that a listener was replaced without a handover, why,
 * and what that can cost.
 *
 * @example
 * ```ts ignore
 * handoverUnavailable((msg) => console.warn(msg), "the ffi permission is not granted", 443);
 * ```
 */
export function handoverUnavailable(
  log: ((msg: string, fields?: Record<string, unknown>) => void) | undefined,
  why: string,
  port: number,
): void {
  if (said) return;
  said = true;
  const migrates = migrateRequests() === "1";
  log?.(
    `TLS listener handover unavailable (${why}): when certificates change, ` +
      (migrates ? "" : "a new connection the kernel queued for the replaced TLS listener in " +
        "the instant it closes is reset (net.ipv4.tcp_migrate_req=1 makes Linux hand it over), " +
        "and ") +
      "a new listener that picks certificates by server name may fail handshakes that come " +
      'with its first ones; listener_engine "node" has neither',
    { port },
  );
}
