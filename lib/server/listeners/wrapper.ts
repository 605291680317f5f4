/**
 * Listener wrappers (Caddy's `caddy.listeners.*` modules, a server's `listener_wrappers`): code
 * that sees each new connection before TLS and HTTP do. A wrapper reads the first bytes of the
 * connection through a `PendingConnection` (which keeps every byte it was given, so the next
 * wrapper, TLS and the HTTP parser still see what nobody consumed), may consume a header
 * (`proxy_protocol`), replace the peer address, or answer the connection itself and close it
 * (`http_redirect`).
 *
 * The `tls` wrapper is a marker: the wrappers before it run on the raw bytes; on a server that
 * terminates TLS, nothing may come after it here (see `server_options.ts`).
 *
 * @module
 */
import type { ModuleDefinition, ModuleInstance, ServeInfo } from "../module.ts";
import { checkFields } from "../http/config.ts";

/** Where a connection comes from, as handlers will see it. */
export type PeerAddress = ServeInfo["remoteAddr"];

/** A connection before TLS and HTTP, as listener wrappers see it. */
export interface PendingConnection {
  /** The peer: the socket's, or what a wrapper (a PROXY header) replaced it with. */
  remote: PeerAddress;
  /** The socket's own peer address (never replaced). */
  readonly socketRemote: PeerAddress;
  /** Bytes received and not yet consumed. */
  readonly buffered: Uint8Array;
  /**
   * Waits for more bytes: `data` when some arrived, `eof` when the peer finished sending (or
   * the connection closed), `timeout` when `deadline` (a `performance.now()` time) passed.
   */
  fill(deadline?: number): Promise<"data" | "eof" | "timeout">;
  /** Drops the first `n` buffered bytes (a header a wrapper consumed). */
  consume(n: number): void;
  /** Writes `bytes` and closes the connection (a wrapper answering it itself). */
  answer(bytes: Uint8Array): void;
  /** Closes the connection at once. */
  close(): void;
}

/** A provisioned listener wrapper. */
export interface ListenerWrapper extends ModuleInstance {
  /** The wrapper's name (`proxy_protocol`, `http_redirect`, `tls`). */
  readonly name: string;
  /**
   * Runs on a new connection, before TLS. Resolves true to hand the connection on, false when
   * the wrapper answered or closed it.
   */
  accept(conn: PendingConnection): Promise<boolean>;
}

/** Runs `wrappers` in order on a connection; true when it goes on to TLS/HTTP. */
export async function runWrappers(
  wrappers: readonly ListenerWrapper[],
  conn: PendingConnection,
): Promise<boolean> {
  for (const w of wrappers) {
    let go: boolean;
    try {
      go = await w.accept(conn);
    } catch {
      go = false;
    }
    if (!go) {
      conn.close();
      return false;
    }
  }
  return true;
}

/** `caddy.listeners.tls`: marks where TLS goes in the chain (it does nothing itself). */
export const tlsMarkerModule: ModuleDefinition<ListenerWrapper> = {
  id: "caddy.listeners.tls",
  create(config) {
    checkFields(config, ["wrapper"], "caddy.listeners.tls");
    return { name: "tls", accept: () => Promise.resolve(true) };
  },
};
